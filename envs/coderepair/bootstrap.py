# Sandbox bootstrap for feedrun's CodeRepair environment; sandbox.go runs it
# with `python3 -s -B -u -c` in a fresh directory holding solution.py.
#
# Go cannot set resource limits on a child it execs, so the limits are set
# here, before any candidate code runs. The audit hook is the second wall: it
# cannot be removed once added, and it refuses what the limits and the
# unprivileged user do not stop (writes to world-writable places, sockets,
# signals, new processes).
#
# argv: CPU seconds, address-space bytes, file-size bytes, process count,
# open files, last line of the candidate code, first line of the tests.
# fd 4 holds the run's nonce, read and closed before any candidate code
# runs. Progress and verdict go to fd 3 as tab-separated lines that start
# with the nonce, so nothing the code prints or writes to fd 3 itself can be
# mistaken for them; "ready" says the bootstrap started, "test" lines say
# which test is running, should a limit end the run, and the last line is
# the verdict:
#   <nonce> ready
#   <nonce> test  <test index, from 1>
#   <nonce> pass
#   <nonce> exit  <exit code>
#   <nonce> error <exception name> <builtin 0/1> <message>
import os
import resource
import sys

_DENIED = {
    "os.fork": "creating processes",
    "os.forkpty": "creating processes",
    "os.system": "creating processes",
    "os.exec": "creating processes",
    "os.posix_spawn": "creating processes",
    "os.spawn": "creating processes",
    "subprocess.Popen": "creating processes",
    "os.kill": "sending signals",
    "os.killpg": "sending signals",
    "signal.pthread_kill": "sending signals",
    "socket.__new__": "opening network connections",
    "socket.connect": "opening network connections",
    "socket.bind": "opening network connections",
    "socket.sendto": "opening network connections",
    "ctypes.dlopen": "loading native code",
    "ctypes.dlsym": "loading native code",
    "resource.setrlimit": "changing resource limits",
    "resource.prlimit": "changing resource limits",
}

# subprocess reaches fork_exec through _posixsubprocess without an audit
# event of its own on older Pythons; ctypes could call anything.
_DENIED_IMPORTS = {"_posixsubprocess", "_ctypes", "ctypes"}

_PATH_EVENTS = {
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
    "os.truncate", "os.link", "os.symlink", "os.utime", "os.setxattr",
    "os.removexattr", "shutil.rmtree", "shutil.copyfile", "shutil.copytree",
    "shutil.move", "shutil.chown",
}

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _guard(work):
    realpath, fspath, fsdecode = os.path.realpath, os.fspath, os.fsdecode
    inside_prefix = work.rstrip(os.sep) + os.sep

    def inside(path):
        p = fspath(path)
        if isinstance(p, bytes):
            p = fsdecode(p)
        p = realpath(p)
        return p == work or p.startswith(inside_prefix)

    def deny(what):
        raise PermissionError("sandbox: " + what + " is not allowed")

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writing = (flags or 0) & _WRITE_FLAGS or (
                isinstance(mode, str) and any(c in mode for c in "wax+"))
            if not writing:
                return
            if isinstance(path, int):
                if path not in (1, 2):
                    deny("writing to inherited files")
            elif not inside(path):
                deny("writing files outside the working directory")
        elif event in _DENIED:
            deny(_DENIED[event])
        elif event == "import":
            if args[0] in _DENIED_IMPORTS:
                deny("loading native code or creating processes")
        elif event in _PATH_EVENTS:
            for a in args:
                if isinstance(a, (str, bytes, os.PathLike)) and not inside(a):
                    deny("changing files outside the working directory")

    hook.internal = {hook.__code__, deny.__code__, inside.__code__}
    return hook


def _main(argv):
    cpu, mem, fsize, nproc, nofile, code_end, tests_start = (int(a) for a in argv)
    write, exit_now, excepthook = os.write, os._exit, sys.__excepthook__
    nonce = b""
    while True:
        part = os.read(4, 64)
        if not part:
            break
        nonce += part
    os.close(4)
    for limit, soft, hard in (
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, mem, mem),
        (resource.RLIMIT_FSIZE, fsize, fsize),
        (resource.RLIMIT_NPROC, nproc, nproc),
        (resource.RLIMIT_NOFILE, nofile, nofile),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        # An unprivileged caller may already have lower hard limits, which
        # cannot be raised; the lower one stands.
        _, cur_hard = resource.getrlimit(limit)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
        resource.setrlimit(limit, (min(soft, hard), hard))

    work = os.path.realpath(os.getcwd())
    # The only variable the interpreter was given is PYTHONHASHSEED, read at
    # start-up; the candidate code sees an empty environment.
    os.environ.clear()
    sys.argv[:] = ["solution.py"]
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != work]
    with open("solution.py", "rb") as f:
        lines = f.read().split(b"\n")

    # Each chunk is compiled on its own, padded to its line in solution.py,
    # so tracebacks quote the file while a test can never be swallowed by an
    # unclosed bracket or string in the candidate code.
    def chunk(first, last):
        return b"\n" * (first - 1) + b"\n".join(lines[first - 1:last])

    steps = [(0, chunk(1, code_end)), (0, chunk(code_end + 1, tests_start - 1))]
    steps += [(k + 1, chunk(n, n)) for k, n in enumerate(range(tests_start, len(lines) + 1))
              if lines[n - 1].strip()]

    def verdict(*fields):
        write(3, nonce + ("\t" + "\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields) + "\n").encode())

    verdict("ready")

    guard = _guard(work)
    ours = guard.internal | {_main.__code__}
    sys.addaudithook(guard)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        for test, source in steps:
            if test:
                verdict("test", test)
            exec(compile(source, "solution.py", "exec", dont_inherit=True), namespace)
    except SystemExit as e:
        verdict("exit", e.code)
        exit_now(1)
    except BaseException as e:
        # Show only the candidate's frames, so that the traceback reads like
        # `python3 solution.py`; the hook prints the exception's own
        # traceback, not the one passed to it.
        frames = []
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code not in ours:
                frames.append(tb)
            tb = tb.tb_next
        for a, b in zip(frames, frames[1:] + [None]):
            a.tb_next = b
        e.__traceback__ = frames[0] if frames else None
        try:
            excepthook(type(e), e, e.__traceback__)
        except BaseException:
            pass
        kind = type(e)
        # Named as the interpreter prints it, which leaves out these two modules.
        name = kind.__qualname__
        if kind.__module__ not in ("builtins", "__main__"):
            name = kind.__module__ + "." + name
        try:
            text = e.msg if isinstance(e, SyntaxError) else str(e)
        except BaseException:
            text = ""
        message = name + ": " + text if text else name
        verdict("error", name, int(kind.__module__ == "builtins"), message[:500])
        exit_now(1)
    verdict("pass")
    exit_now(0)


_main(sys.argv[1:])

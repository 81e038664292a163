# Sandbox bootstrap for feedrun's CodeRepair environment: the candidate's
# side. sandbox.go runs it with `python3 -s -B -u -c` in the OS sandbox, in a
# fresh directory holding solution.py; checker.py, in a process of its own
# outside the sandbox, runs the tests and asks this one for the values they
# need.
#
# Go cannot set resource limits on a child it execs, so the limits are set
# here, before any candidate code runs. The audit hook is the second wall: it
# cannot be removed once added, and it refuses what the limits and the
# unprivileged user do not stop (writes to world-writable places, sockets,
# signals, new processes).
#
# argv: CPU seconds, address-space bytes, file-size bytes, process count,
# open files, last line of the candidate code, first line of the tests, and
# the checker's budget of values and levels of nesting (a value past either
# is not sent: the checker would refuse it).
# Messages to the checker go to fd 3 and requests come on fd 4, one JSON
# object a line each. Nothing here decides a verdict: this process runs the
# program, so a program controls it, and the checker takes what arrives as
# claims about values, never as a pass. The messages:
#   {"ready": true}        the bootstrap started, before any candidate code
#   {"loaded": true}       the candidate code and the test imports ran
#   {"value": V}           the answer to a request, V encoded by _encoder
#   {"unsendable": text}   the value cannot be sent as data (too large, too deep)
#   {"error": [name, builtin, message]}  an exception ended the program
#   {"exit": code}         SystemExit ended the program
# A request {"eval": [line, column, end line, end column]} names an
# expression of a test line (a call of the function under test, or a name
# the test takes from the program) by its place in solution.py; it is
# evaluated in the program's namespace, compiled from that place, so that
# tracebacks read as they would with the test run in the program.
import ast
import collections
import json
import os
import resource
import sys
import types

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


# The encoding of a value as JSON, which checker.py decodes: plain JSON for
# None, booleans, strings and lists; a one-key object for the rest.
# Subclasses are sent as their base type (a Counter as a dict, a namedtuple
# as a tuple), iterators as the items they yield, Fractions and Decimals
# as their numbers. Anything else is sent as
# its type name and truth value alone, which the checker turns into an
# object equal only to itself: an object cannot cross as data, so neither
# can an __eq__ that says yes to everything. The bound on bytes is the
# channel's (checker.py's _MAX_BYTES); those on values and depth are the
# checker's budget, from argv.
_MAX_BYTES = 1 << 20


class _Unsendable(Exception):
    pass


def _encoder(max_nodes, max_depth):
    keys, values, items = type({}.keys()), type({}.values()), type({}.items())
    deque, module = collections.deque, types.ModuleType

    def encode(v):
        count = [0]

        def enc(v, depth):
            count[0] += 1
            if count[0] > max_nodes:
                raise _Unsendable("it holds more than %d values" % max_nodes)
            if depth > max_depth:
                raise _Unsendable("it is nested more than %d levels deep" % max_depth)
            t = type(v)
            d = depth + 1
            if v is None or t is bool:
                return v
            if isinstance(v, int):
                return {"i": "%x" % int(v)}
            if isinstance(v, float):
                return {"f": repr(float(v))}
            if isinstance(v, complex):
                c = complex(v)
                return {"c": [repr(c.real), repr(c.imag)]}
            if isinstance(v, str):
                return str(v)
            if isinstance(v, bytes):
                return {"b": bytes(v).hex()}
            if isinstance(v, bytearray):
                return {"y": bytes(v).hex()}
            if isinstance(v, list):
                return [enc(x, d) for x in v]
            if isinstance(v, tuple):
                return {"t": [enc(x, d) for x in v]}
            if isinstance(v, dict):
                return {"d": [[enc(k, d), enc(x, d)] for k, x in v.items()]}
            if isinstance(v, frozenset):
                return {"z": [enc(x, d) for x in v]}
            if isinstance(v, set):
                return {"s": [enc(x, d) for x in v]}
            if isinstance(v, deque):
                return {"q": [enc(x, d) for x in v]}
            if isinstance(v, range):
                return {"r": [enc(v.start, d), enc(v.stop, d), enc(v.step, d)]}
            if t is keys:
                return {"k": [enc(x, d) for x in v]}
            if t is values:
                return {"v": [enc(x, d) for x in v]}
            if t is items:
                return {"e": [[enc(k, d), enc(x, d)] for k, x in v]}
            if isinstance(v, module):
                return {"m": str(v.__name__)}
            # Numbers of the standard library, whose modules are loaded only
            # if the program loaded them.
            fractions, decimal = sys.modules.get("fractions"), sys.modules.get("decimal")
            if fractions is not None and isinstance(v, fractions.Fraction):
                return {"p": [enc(v.numerator, d), enc(v.denominator, d)]}
            if decimal is not None and isinstance(v, decimal.Decimal):
                return {"x": str(v)}
            if hasattr(t, "__next__") and hasattr(t, "__iter__"):
                return {"n": [enc(x, d) for x in v]}
            # Whether its class has an == of its own, which the checker will
            # not ask: then the checker says so when the test fails.
            eq = getattr(t, "__eq__", None)
            own = eq is not object.__eq__ and type(eq) is not type(object.__eq__)
            return {"o": [str(t.__name__)[:100], bool(v), own]}

        data = json.dumps({"value": enc(v, 0)})
        if len(data) > _MAX_BYTES:
            raise _Unsendable("it takes more than 1 MiB as data")
        return data

    return encode


def _main(argv):
    cpu, mem, fsize, nproc, nofile, code_end, tests_start, max_nodes, max_depth = (int(a) for a in argv)
    write, read, exit_now, excepthook = os.write, os.read, os._exit, sys.__excepthook__
    dumps, loads, parse, compile_, Expression = json.dumps, json.loads, ast.parse, compile, ast.Expression
    encode = _encoder(max_nodes, max_depth)
    # Descriptors feedrun's own parent leaked to it without close-on-exec
    # pass through exec; the program keeps its two pipes and stdio alone.
    os.closerange(5, 1 << 16)
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

    def send(data):
        data = (data + "\n").encode()
        while data:
            data = data[write(3, data):]

    def final(message):
        # The program may have closed fd 3; then the checker sees it gone.
        try:
            send(dumps(message))
        except BaseException:
            pass
        exit_now(1)

    pending = [b""]

    def receive():
        while b"\n" not in pending[0]:
            part = read(4, 65536)
            if not part:
                exit_now(0)  # the checker is done, or gone
            pending[0] += part
        line, _, pending[0] = pending[0].partition(b"\n")
        return line

    def answer(value):
        try:
            return encode(value)
        except _Unsendable as e:
            return dumps({"unsendable": str(e)})

    # The answer is made inside the evaluated expression, at its place, so
    # that an exception raised while an iterator the program returned is
    # read still shows the test's line.
    helper = {"__feedrun_answer__": answer}

    def expression(place):
        line, col, end_line, end_col = place
        for node in ast.walk(parse(chunk(line, line), "solution.py")):
            if (isinstance(node, ast.expr) and node.lineno == line and node.col_offset == col
                    and node.end_lineno == end_line and node.end_col_offset == end_col):
                call = ast.Call(func=ast.Name(id="__feedrun_answer__", ctx=ast.Load()), args=[node], keywords=[])
                for n in (call, call.func):
                    ast.copy_location(n, node)
                return compile_(Expression(call), "solution.py", "eval", dont_inherit=True)
        raise LookupError("no expression at %r" % (place,))

    send(dumps({"ready": True}))

    guard = _guard(work)
    ours = guard.internal | _codes(_main.__code__, _encoder.__code__, _trimmed.__code__, _described.__code__)
    sys.addaudithook(guard)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        for first, last in ((1, code_end), (code_end + 1, tests_start - 1)):
            exec(compile_(chunk(first, last), "solution.py", "exec", dont_inherit=True), namespace)
        send(dumps({"loaded": True}))
        while True:
            request = loads(receive())
            send(eval(expression(request["eval"]), namespace, helper))
    except SystemExit as e:
        try:
            code = str(e.code)[:200]
        except BaseException:
            code = "?"
        final({"exit": code})
    except BaseException as e:
        # Show only the candidate's frames, so that the traceback reads like
        # `python3 solution.py`; the hook prints the exception's own
        # traceback, not the one passed to it.
        _trimmed(e, ours)
        try:
            excepthook(type(e), e, e.__traceback__)
        except BaseException:
            pass
        final({"error": list(_described(e))})


_main(sys.argv[1:])

# The BFCL worker: one process per episode, in the OS sandbox CodeRepair
# uses, holding the episode's instances of BFCL's API classes. worker.go
# runs it with `python3 -s -B -u -c`, the limits as argv (CPU seconds,
# address-space bytes, seconds one call may take), and speaks JSON lines:
# requests on stdin, one answer each on stdout.
#
# The call strings come from a model and are hostile. They are never
# evaluated: each is parsed with ast into name(literal, ..., key=literal),
# the name must be a public method of one of the entry's classes, and every
# argument must be a literal (ast.literal_eval). Nothing here decides a
# verdict: the worker reports each call's result and the instances' state,
# and worker.go compares them with the ground truth's.
#
# The first line is the modules: {"sources": {module: source}}, BFCL's
# classes (and mpmath) as read from their wheels; they are imported from
# memory, so that nothing of either package is installed or mounted. Then:
#   {"op": "start", "set": S, "classes": [...], "config": {...}}
#       new instances of the classes, loaded with the entry's initial config
#   {"op": "copy", "from": S, "to": T}   T becomes a deep copy of S
#   {"op": "clear"}                      every set is dropped
#   {"op": "call", "set": S, "call": text}
#       -> {"result": text, "error": null or {kind, function, argument, message}}
#   {"op": "state", "set": S}  -> {"state": {class: {attribute: canonical value}}}
# Any other answer is {"fail": message}: a broken request, worker.go's fault.
# A call stopped by its time limit answers with the error kind "timeout";
# worker.go then starts a fresh worker, so that no half-done call stays in
# the state.
import ast
import copy
import datetime
import decimal
import importlib.abc
import importlib.util
import inspect
import json
import math
import os
import re
import resource
import signal
import sys

_DENIED = {
    "os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn",
    "os.spawn", "subprocess.Popen", "os.kill", "os.killpg",
    "signal.pthread_kill", "socket.__new__", "socket.connect", "socket.bind",
    "socket.sendto", "ctypes.dlopen", "ctypes.dlsym", "resource.setrlimit",
    "resource.prlimit", "os.remove", "os.rename", "os.rmdir", "os.mkdir",
    "os.chmod", "os.chown", "os.truncate", "os.link", "os.symlink",
    "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move",
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _hook(event, args):
    # The second wall, behind bubblewrap's read-only root: the classes keep
    # their state in memory and need no process, socket or written file.
    if event == "open":
        _, mode, flags = args
        if (flags or 0) & _WRITE_FLAGS or (isinstance(mode, str) and any(c in mode for c in "wax+")):
            raise PermissionError("sandbox: writing files is not allowed")
    elif event in _DENIED:
        raise PermissionError("sandbox: %s is not allowed" % event)


class _Memory(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports modules from sources held in memory. A name that prefixes
    others is a package; BFCL's parent packages, whose own modules pull in
    the whole harness, are empty ones."""

    def __init__(self, sources):
        self.sources = sources
        self.packages = set()
        for name in sources:
            parts = name.split(".")
            for i in range(1, len(parts)):
                self.packages.add(".".join(parts[:i]))

    def find_spec(self, name, path=None, target=None):
        if name not in self.sources and name not in self.packages:
            return None
        return importlib.util.spec_from_loader(name, self, is_package=name in self.packages)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        src = self.sources.get(module.__name__, "")
        filename = "<%s>" % module.__name__
        exec(compile(src, filename, "exec", dont_inherit=True), module.__dict__)


class CallError(Exception):
    def __init__(self, kind, function, argument, message):
        Exception.__init__(self, message)
        self.error = {"kind": kind, "function": function, "argument": argument, "message": message}


class _Timeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


# Exceptions a class method raises, by kind; the rest are "exception".
_EXCEPTION_KINDS = {
    "TypeError": "type_error", "ValueError": "value_error", "KeyError": "key_error",
    "IndexError": "index_error", "AttributeError": "attribute_error",
    "ZeroDivisionError": "zero_division", "OverflowError": "overflow",
    "RecursionError": "recursion_error", "MemoryError": "memory_limit",
    "PermissionError": "sandbox_violation",
}

_MAX_CALL = 1 << 16  # bytes of one call string; worker.go refuses longer ones first
_MAX_RESULT = 1 << 20
_MAX_DEPTH = 200


def parse(text, methods):
    """name and arguments of a call string, or CallError."""
    if len(text) > _MAX_CALL:
        raise CallError("too_long", "", "", "the call is longer than %d bytes" % _MAX_CALL)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise CallError("syntax_error", "", "", "%s: %s" % (type(e).__name__, getattr(e, "msg", None) or e))
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallError("not_a_call", "", "", "expected a call of a function by its name, as name(argument=value)")
    name = node.func.id
    if name not in methods:
        raise CallError("unknown_function", name, "", "no function named %s" % name)
    args, kwargs = [], {}
    for i, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            raise CallError("not_a_literal", name, "argument %d" % (i + 1), "*arguments are not allowed")
        args.append(literal(a, name, "argument %d" % (i + 1)))
    for k in node.keywords:
        if k.arg is None:
            raise CallError("not_a_literal", name, "**", "**arguments are not allowed")
        if k.arg in kwargs:
            raise CallError("syntax_error", name, k.arg, "argument %s given twice" % k.arg)
        kwargs[k.arg] = literal(k.value, name, k.arg)
    return name, args, kwargs


def literal(node, name, argument):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as e:
        raise CallError("not_a_literal", name, argument,
                        "the value of %s is not a literal (a string, number, boolean, None, list, tuple, dict or set)" % argument)


# Python's own words for a call whose arguments do not fit the method.
_ARGUMENT_AT_FAULT = re.compile(
    r"unexpected keyword argument '(\w+)'|missing \d+ required (?:positional |keyword-only )?arguments?: '(\w+)'")


def argument_at_fault(e):
    """The argument a TypeError of a call's arguments names, or ""."""
    if not isinstance(e, TypeError):
        return ""
    m = _ARGUMENT_AT_FAULT.search(str(e))
    return (m.group(1) or m.group(2)) if m else ""


def bfcl_result(value):
    """The result as BFCL's execute_multi_turn_func_call records it."""
    if type(value) == str:
        return value
    if type(value) == dict:
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


class Canon:
    """Values encoded so that two are equal as JSON exactly when Python's ==
    holds between them, for the types BFCL's state holds: numbers by value
    (True == 1 == 1.0), dicts and sets in a sorted order, lists apart from
    tuples, BFCL's File and Directory by the fields their __eq__ compares.
    Any other object is equal only to itself, which an instance of another
    set never is, as Python's default == says."""

    def __init__(self):
        self.serial = 0

    def encode(self, v, depth=0):
        if depth > _MAX_DEPTH:
            raise ValueError("the state is nested more than %d levels deep" % _MAX_DEPTH)
        d = depth + 1
        if v is None:
            return None
        if isinstance(v, str):
            return str(v)
        if isinstance(v, (bool, int)):
            return {"n": str(int(v))}
        if isinstance(v, float):
            if math.isnan(v):
                return self.opaque("nan")
            if math.isinf(v) or not v.is_integer():
                return {"f": repr(v)}
            return {"n": str(int(v))}
        if isinstance(v, complex):
            if v.imag == 0:
                return self.encode(v.real, d)
            return {"c": [repr(v.real), repr(v.imag)]}
        if isinstance(v, decimal.Decimal):
            if v.is_finite() and v == v.to_integral_value():
                return {"n": str(int(v))}
            return {"x": str(v.normalize())}
        if isinstance(v, list):
            return {"l": [self.encode(x, d) for x in v]}
        if isinstance(v, tuple):
            return {"t": [self.encode(x, d) for x in v]}
        if isinstance(v, dict):
            pairs = [[self.encode(k, d), self.encode(x, d)] for k, x in v.items()]
            return {"d": sorted(pairs, key=lambda p: json.dumps(p[0], sort_keys=True))}
        if isinstance(v, (set, frozenset)):
            return {"S": sorted((self.encode(x, d) for x in v), key=lambda x: json.dumps(x, sort_keys=True))}
        if isinstance(v, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
            return {"dt": [type(v).__name__, str(v)]}
        fields = _EQ_FIELDS.get((type(v).__module__, type(v).__qualname__))
        if fields is not None:
            return {"o": [type(v).__qualname__, {f: self.encode(getattr(v, f), d) for f in fields}]}
        return self.opaque(type(v).__qualname__)

    def opaque(self, name):
        self.serial += 1
        return {"opaque": [name, self.serial]}


# Classes of BFCL's state whose __eq__ compares fields: the file system's.
_FS = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.gorilla_file_system"
_EQ_FIELDS = {(_FS, "File"): ("name", "content"), (_FS, "Directory"): ("name", "contents")}


def main(argv):
    cpu, mem, call_seconds = int(argv[0]), int(argv[1]), float(argv[2])
    for limit, soft, hard in (
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, mem, mem),
        (resource.RLIMIT_FSIZE, 0, 0),
        (resource.RLIMIT_NPROC, 1, 1),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        _, cur = resource.getrlimit(limit)
        if cur != resource.RLIM_INFINITY:
            hard = min(hard, cur)
        resource.setrlimit(limit, (min(soft, hard), hard))
    os.environ.clear()
    sys.setrecursionlimit(2000)
    stdin, stdout = sys.stdin.buffer, sys.stdout
    read, dumps, loads = stdin.readline, json.dumps, json.loads

    def send(obj):
        stdout.write(dumps(obj) + "\n")
        stdout.flush()

    finder = _Memory(loads(read())["sources"])
    sys.meta_path.insert(0, finder)
    # Every module is imported before the first call, and the audit hook is
    # added after: a call can then load nothing new.
    for module in _MODULES.values():
        importlib.import_module(module)
    sys.addaudithook(_hook)
    signal.signal(signal.SIGALRM, _on_alarm)
    sets = {}
    canon = Canon()
    send({"ready": True})
    while True:
        line = read()
        if not line:
            return
        try:
            req = loads(line)
            op = req["op"]
            if op == "start":
                sets[req["set"]] = start(req["classes"], req["config"])
                send({"ok": True})
            elif op == "clear":
                sets.clear()
                send({"ok": True})
            elif op == "copy":
                sets[req["to"]] = copy.deepcopy(sets[req["from"]])
                send({"ok": True})
            elif op == "call":
                send(call(sets[req["set"]], req["call"], call_seconds))
            elif op == "state":
                send({"state": {name: {k: canon.encode(v) for k, v in vars(inst).items() if not k.startswith("_")}
                                for name, inst in sets[req["set"]].items()}})
            else:
                send({"fail": "unknown op %r" % op})
        except _Timeout:
            send({"fail": "timed out outside a call"})
        except Exception as e:
            send({"fail": "%s: %s" % (type(e).__name__, e)})


def start(classes, config):
    instances = {}
    for name in classes:
        module = importlib.import_module(_MODULES[name])
        inst = getattr(module, name)()
        if name not in _STATELESS:
            inst._load_scenario(copy.deepcopy(config.get(name, {})), long_context=False)
        instances[name] = inst
    return instances


_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code."
_MODULES = {
    "GorillaFileSystem": _PREFIX + "gorilla_file_system", "MathAPI": _PREFIX + "math_api",
    "MessageAPI": _PREFIX + "message_api", "TwitterAPI": _PREFIX + "posting_api",
    "TicketAPI": _PREFIX + "ticket_api", "TradingBot": _PREFIX + "trading_bot",
    "TravelAPI": _PREFIX + "travel_booking", "VehicleControlAPI": _PREFIX + "vehicle_control",
}
_STATELESS = {"MathAPI"}


def methods_of(instances):
    """Public method name -> bound method, a later class's winning a shared
    name, as BFCL maps them."""
    out = {}
    for inst in instances.values():
        for name, m in inspect.getmembers(inst, predicate=inspect.ismethod):
            if not name.startswith("_"):
                out[name] = m
    return out


def call(instances, text, seconds):
    try:
        name, args, kwargs = parse(text, methods_of(instances))
    except CallError as e:
        return {"result": "Error during execution: " + str(e), "error": e.error}
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        try:
            value = methods_of(instances)[name](*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        message = "the call did not finish within %g seconds" % seconds
        return {"result": "Error during execution: " + message,
                "error": {"kind": "timeout", "function": name, "argument": "", "message": message}}
    except BaseException as e:
        if isinstance(e, (SystemExit, KeyboardInterrupt)):
            e = RuntimeError(type(e).__name__)
        kind = _EXCEPTION_KINDS.get(type(e).__name__, "exception")
        message = "%s: %s" % (type(e).__name__, e)
        return {"result": "Error during execution: " + str(e),
                "error": {"kind": kind, "function": name, "argument": argument_at_fault(e), "message": message[:2000]}}
    try:
        result = bfcl_result(value)
    except BaseException as e:
        result = "Error during execution: " + type(e).__name__
    if len(result) > _MAX_RESULT:
        message = "the result is longer than %d characters" % _MAX_RESULT
        return {"result": "Error during execution: " + message,
                "error": {"kind": "result_too_large", "function": name, "argument": "", "message": message}}
    error = None
    if type(value) == dict and "error" in value:
        # BFCL's classes report a failure by returning {"error": message}.
        error = {"kind": "backend_error", "function": name, "argument": "", "message": str(value["error"])[:2000]}
    return {"result": result, "error": error}


# Run as `python3 -c`; the tests load the module under another name to
# try its parts.
if __name__ == "__main__":
    main(sys.argv[1:])

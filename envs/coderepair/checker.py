# The checker of feedrun's CodeRepair environment: it runs a problem's tests
# and gives the verdict. sandbox.go runs it with `python3 -s -B -u -c`,
# outside the OS sandbox, as the same unprivileged user as the program, in a
# directory of its own that holds a copy of solution.py; the program runs
# under bootstrap.py in the OS sandbox, in a PID namespace of its own, where
# this process is not there to see, trace or signal. The two share nothing
# but two pipes, and what comes over them is parsed as data: a message that
# is not one of bootstrap.py's, longer than _MAX_BYTES or nested deeper than
# _MAX_DEPTH ends the run as a violation.
#
# Each test line is run here, in this interpreter, with its builtins and
# test imports; each call of the function under test, and each name the test
# takes from the program (MBPP task 596's `sys`), is replaced by a request
# to the program for that expression's value, so that a value is all the
# program can give: the comparison, the test's own calls (set, sorted,
# math.isclose) and the assert are this interpreter's. The program
# evaluates such an expression whole, arguments included, in its own
# namespace: MBPP's tests pass literals, and none calls the function from
# inside a lambda or comprehension of its own, whose names the program
# would not have.
#
#
# What one value costs this interpreter is bounded by the budget (_Budget in
# prelude.py, Budget in budget.go): its size and depth are counted as it is
# decoded, before a set or dict of it is made, and each test line gets so
# many seconds of CPU time, past which the kernel ends this process.
#
# argv: CPU seconds, address-space bytes, last line of the candidate code,
# first line of the tests, name of the function under test, then the
# budget: size, depth, seconds.
# fd 3: the verdict, to Go, as tab-separated lines:
#   ready                    the program's bootstrap started
#   test  <index, from 1>    the test now running
#   pass
#   exit  <code>             the program's SystemExit, as it reported it
#   error <exception name> <builtin 0/1> <message>
#   gone                     the program stopped answering (Go asks its exit status)
#   violation <what>         the program broke the protocol
#   costly <what>            a value past the budget's size or depth
# fd 4: messages from the program; fd 5: requests to it.
import ast
import builtins
import collections
import importlib
import json
import os
import re
import resource
import sys


_MAX_BYTES = 1 << 20
_MAX_DEPTH = 100
_REMOTE = "__feedrun_remote__"


class _Gone(BaseException):
    pass


class _Violation(BaseException):
    pass


class _Ended(BaseException):
    """The program reported the exception or exit that ended it."""


class _Opaque:
    """A value the program could not send as data: equal only to itself."""
    __slots__ = ("_truth",)

    def __bool__(self):
        return self._truth

    def __repr__(self):
        return "<%s object>" % type(self).__name__


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}\Z")
_HEX = re.compile(r"-?[0-9a-f]+\Z")


def _decoder(budget):
    kinds = {}

    def opaque(name, truth):
        if not _NAME.match(name):
            name = "object"
        if name not in kinds:
            kinds[name] = type(name, (_Opaque,), {"__slots__": ()})
        o = object.__new__(kinds[name])
        o._truth = truth
        return o

    def text(j, most):
        if type(j) is not str or len(j) > most:
            raise _Violation("a malformed value")
        return j

    def items(j):
        if type(j) is not list:
            raise _Violation("a malformed value")
        return j

    def decode(j, depth, module, seen):
        """j as a value; module is the name a module may stand for."""
        if depth > _MAX_DEPTH:
            raise _Violation("a value nested too deeply")
        budget.nested(depth)
        budget.add(1, "a value of more values")
        if j is None or j is True or j is False:
            return j
        t = type(j)
        if t is str:
            return j
        d = depth + 1

        def each(js):
            return [decode(x, d, None, seen) for x in items(js)]

        def members(js):
            xs = each(js)
            budget.members(xs)
            return xs

        if t is list:
            return each(j)
        if t is not dict or len(j) != 1:
            raise _Violation("a malformed value")
        (tag, body), = j.items()
        if tag == "i":
            if not _HEX.match(text(body, 2 * _MAX_BYTES)):
                raise _Violation("a malformed integer")
            return int(body, 16)
        if tag == "f":
            return float(text(body, 64))
        if tag == "c":
            re_, im = items(body)
            return complex(float(text(re_, 64)), float(text(im, 64)))
        if tag == "b":
            return bytes.fromhex(text(body, 2 * _MAX_BYTES))
        if tag == "y":
            return bytearray.fromhex(text(body, 2 * _MAX_BYTES))
        if tag == "t":
            return tuple(each(body))
        if tag in ("d", "e"):
            pairs = [tuple(each(p)) for p in items(body)]
            if any(len(p) != 2 for p in pairs):
                raise _Violation("a malformed dict")
            budget.members([k for k, _ in pairs])
            return dict(pairs) if tag == "d" else dict(pairs).items()
        if tag == "s":
            return set(members(body))
        if tag == "z":
            return frozenset(members(body))
        if tag == "q":
            return collections.deque(each(body))
        if tag == "n":
            return iter(each(body))
        if tag == "k":
            return dict.fromkeys(members(body)).keys()
        if tag == "v":
            return dict(enumerate(each(body))).values()
        if tag == "r":
            bounds = each(body)
            if len(bounds) != 3 or any(type(b) is not int for b in bounds) or bounds[2] == 0:
                raise _Violation("a malformed range")
            r = range(*bounds)
            budget.range(r)
            return r
        if tag == "p":
            parts = each(body)
            if len(parts) != 2 or any(type(x) is not int for x in parts):
                raise _Violation("a malformed fraction")
            return importlib.import_module("fractions").Fraction(*parts)
        if tag == "x":
            return importlib.import_module("decimal").Decimal(text(body, 100))
        if tag == "o":
            name, truth, own_eq = items(body)
            if type(truth) is not bool or type(own_eq) is not bool:
                raise _Violation("a malformed value")
            if own_eq:
                seen.append(text(name, 100))
            return opaque(text(name, 100), truth)
        if tag == "m":
            if module is not None and text(body, 100) == module:
                return importlib.import_module(module)
            return opaque("module", True)
        raise _Violation("a value of unknown kind")

    return decode


def _main(argv):
    cpu, mem, code_end, tests_start = (int(a) for a in argv[:4])
    function = argv[4]
    budget = _Budget(*(int(a) for a in argv[5:8]))
    write, read, exit_now, excepthook = os.write, os.read, os._exit, sys.__excepthook__
    # Descriptors leaked to feedrun without close-on-exec: the program may
    # hold them too, and they are no channel of the checker's.
    os.closerange(6, 1 << 16)
    with open("solution.py", "rb") as f:
        lines = f.read().split(b"\n")
    tests = [n for n in range(tests_start, len(lines) + 1) if lines[n - 1].strip()]
    # The CPU time before the tests is the program's limit; each test line
    # then gets the budget's seconds (budget.clock), all of them together
    # the hard limit.
    for limit, soft, hard in ((resource.RLIMIT_CPU, cpu + 1, cpu + 1 + len(tests) * (budget.seconds + 1)),
                              (resource.RLIMIT_AS, mem, mem), (resource.RLIMIT_CORE, 0, 0)):
        _, cur_hard = resource.getrlimit(limit)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
        resource.setrlimit(limit, (min(soft, hard), hard))
    work = os.path.realpath(os.getcwd())
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != work]
    decode = _decoder(budget)

    def verdict(*fields):
        write(3, ("\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields) + "\n").encode())

    pending = [b""]

    def receive():
        while b"\n" not in pending[0]:
            if len(pending[0]) > _MAX_BYTES + 64:
                raise _Violation("a message longer than 1 MiB")
            try:
                part = read(4, 1 << 16)
            except OSError:
                part = b""
            if not part:
                raise _Gone()
            pending[0] += part
        line, _, pending[0] = pending[0].partition(b"\n")
        if len(line) > _MAX_BYTES + 64:
            raise _Violation("a message longer than 1 MiB")
        try:
            message = json.loads(line, parse_int=_refuse, parse_float=_refuse, parse_constant=_refuse)
        except _Violation:
            raise
        except Exception:
            raise _Violation("a message that is not JSON") from None
        if type(message) is not dict or len(message) != 1:
            raise _Violation("a message of unknown form")
        (key, body), = message.items()
        return key, body

    def request(place):
        data = (json.dumps({"eval": place}) + "\n").encode()
        try:
            while data:
                data = data[write(5, data):]
        except OSError:
            raise _Gone() from None

    def ended(key, body):
        """The program's report of what ended it, as a verdict."""
        if key == "exit" and type(body) is str:
            return ("exit", body[:200])
        if key == "error" and type(body) is list and len(body) == 3:
            name, builtin, message = body
            if type(name) is str and type(builtin) is bool and type(message) is str:
                return ("error", name[:200], int(builtin), message[:500])
        raise _Violation("a message of unknown form")

    places, names, seen = [], [], []

    def remote(i):
        request(places[i])
        key, body = receive()
        if key == "value":
            budget.start()
            try:
                return decode(body, 0, names[i], seen)
            except (_Violation, _TooCostly):
                raise
            except Exception:
                raise _Violation("a malformed value") from None
        if key == "unsendable" and type(body) is str:
            raise ValueError("%s returned a value the tests cannot compare: %s" % (function, body[:200]))
        raise _Ended(ended(key, body))

    ours = _codes(_main.__code__, _decoder.__code__, *(f.__code__ for f in vars(_Budget).values() if hasattr(f, "__code__")))

    class Remote(ast.NodeTransformer):
        """Replaces the calls of the function under test, and the names the
        test takes from the program, by requests for their values; the
        replacement keeps the place, so tracebacks point where they did."""

        def __init__(self, local):
            self.local = local

        def replace(self, node, name):
            places.append([node.lineno, node.col_offset, node.end_lineno, node.end_col_offset])
            names.append(name)
            call = ast.Call(func=ast.Name(id=_REMOTE, ctx=ast.Load()), args=[ast.Constant(len(places) - 1)], keywords=[])
            for n in (call, call.func, call.args[0]):
                ast.copy_location(n, node)
            return call

        def visit_Call(self, node):
            if isinstance(node.func, ast.Name) and node.func.id == function:
                return self.replace(node, None)
            return self.generic_visit(node)

        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Load) and (node.id == function or node.id not in self.local):
                return self.replace(node, node.id)
            return node

    def chunk(first, last):
        return b"\n" * (first - 1) + b"\n".join(lines[first - 1:last])

    namespace = {"__name__": "__main__", "__builtins__": builtins, _REMOTE: remote}
    try:
        key, body = receive()
        if (key, body) != ("ready", True):
            raise _Violation("a message of unknown form")
        verdict("ready")
        key, body = receive()
        if (key, body) != ("loaded", True):
            raise _Ended(ended(key, body))
        exec(compile(chunk(code_end + 1, tests_start - 1), "solution.py", "exec", dont_inherit=True), namespace)
        local = set(namespace) | set(dir(builtins))
        for k, n in enumerate(tests, 1):
            verdict("test", k)
            seen.clear()
            budget.clock()
            try:
                tree = Remote(local).visit(ast.parse(chunk(n, n), "solution.py"))
                exec(compile(ast.fix_missing_locations(tree), "solution.py", "exec", dont_inherit=True), namespace)
            except (_Gone, _Violation, _Ended, _TooCostly):
                raise
            except BaseException as e:
                fail(e, ours, excepthook, verdict, function, seen)
                exit_now(1)
    except _Gone:
        verdict("gone")
        exit_now(1)
    except _Violation as e:
        verdict("violation", e.args[0] if e.args else "")
        exit_now(1)
    except _Ended as e:
        verdict(*e.args[0])
        exit_now(1)
    except _TooCostly as e:
        verdict("costly", e.args[0])
        exit_now(1)
    verdict("pass")
    exit_now(0)


def _refuse(text):
    raise _Violation("a bare JSON number")


def fail(e, ours, excepthook, verdict, function, seen):
    """Prints e as `python3 solution.py` would, with this file's frames
    left out, and gives the failing verdict."""
    _trimmed(e, ours)
    try:
        excepthook(type(e), e, e.__traceback__)
    except BaseException:
        pass
    if seen:
        print("Note: %s returned a value of type %s, whose own == the tests do not use: they compare "
              "plain values (None, bool, numbers, str, bytes, and lists, tuples, dicts, sets, ranges "
              "and iterators of them) and any other object only with itself." % (function, seen[0]),
              file=sys.stderr)
    name, builtin, message = _described(e)
    verdict("error", name, int(builtin), message)


_main(sys.argv[1:])

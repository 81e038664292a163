# The prelude of feedrun's sandbox scripts: sandbox.go joins it in front of
# bootstrap.py and of checker.py when it embeds them (and a checker of
# another environment may join it in front of its own), so that what both
# sides do alike is written once:
#   - _codes and _trimmed: a traceback cut to the program's own frames, so
#     that it reads as `python3 solution.py` would print it;
#   - _described: an exception as its name, whether it is a builtin, and
#     its message, as the verdict carries it;
#   - _Budget: the work a checker may spend on one value a program returns
#     (Budget in budget.go, which documents the limits).
import resource as _resource
import types as _types


def _codes(*codes):
    """The code objects of codes and of every function and comprehension
    inside them: the frames a traceback leaves out."""
    found = set()
    while codes:
        found.update(codes)
        codes = [c for code in codes for c in code.co_consts if isinstance(c, _types.CodeType)]
    return found


def _trimmed(e, ours):
    """e with the frames of the code objects in ours cut from its
    traceback; printing it shows the program's frames alone."""
    frames = []
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code not in ours:
            frames.append(tb)
        tb = tb.tb_next
    for a, b in zip(frames, frames[1:] + [None]):
        a.tb_next = b
    e.__traceback__ = frames[0] if frames else None
    return e


def _described(e):
    """e as (name, builtin, message): named as the interpreter prints it,
    which leaves out the builtins and __main__ modules; the message cut to
    500 characters."""
    kind = type(e)
    name = kind.__qualname__
    if kind.__module__ not in ("builtins", "__main__"):
        name = kind.__module__ + "." + name
    try:
        text = e.msg if isinstance(e, SyntaxError) else str(e)
    except BaseException:
        text = ""
    message = name + ": " + text if text else name
    return name, kind.__module__ == "builtins", message[:500]


class _TooCostly(BaseException):
    """A value past the checker's budget: what it is, in words."""


class _Budget:
    """The work one compared value may cost: size (values it holds, a
    range counting every value it stands for and a set or dict every pair
    of its members whose hashes are equal, which a set compares one by
    one), depth (levels of nesting) and time (whole seconds of CPU time per
    test line, after which the kernel's SIGXCPU ends the checker, which the
    caller reads as the value being too costly: a builtin like max() over a
    range does not stop for Python's own signal handlers)."""

    def __init__(self, size, depth, seconds):
        self.size, self.depth, self.seconds = size, depth, seconds
        self.spent = 0

    def start(self):
        """A new value: its size counts from zero."""
        self.spent = 0

    def add(self, n, what):
        """Counts n more values; past the size, what says why."""
        self.spent += n
        if self.spent > self.size:
            raise _TooCostly("%s, past the limit of %d values" % (what, self.size))

    def nested(self, depth):
        if depth > self.depth:
            raise _TooCostly("a value nested more than %d levels deep" % self.depth)

    def range(self, r):
        """Counts the values of the range r (len() fails past sys.maxsize)."""
        n = max(0, (r.stop - r.start + r.step - (1 if r.step > 0 else -1)) // r.step)
        self.add(n, "a range of %d values" % n)

    def members(self, items):
        """Counts the pairs of items (a set's or dict's members, before
        the set is made) whose hashes are equal; unhashable items are left
        to the set, which refuses them."""
        try:
            hashes = sorted(hash(x) for x in items)
        except TypeError:
            return
        pairs, run = 0, 1
        for a, b in zip(hashes, hashes[1:]):
            if a == b:
                pairs += run
                run += 1
            else:
                run = 1
        if pairs:
            self.add(pairs, "a set or dict with %d pairs of members whose hashes are equal" % pairs)

    def check(self, value, depth=0):
        """Walks a value made some other way (not by a decoder that counts
        as it goes) and counts it."""
        self.nested(depth)
        self.add(1, "the value")
        if isinstance(value, range):
            self.range(value)
        elif isinstance(value, (set, frozenset, dict)):
            self.members(list(value))
        if isinstance(value, dict):
            for k, v in value.items():
                self.check(k, depth + 1)
                self.check(v, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for x in value:
                self.check(x, depth + 1)

    def clock(self):
        """Gives the next test line its seconds of CPU time from now."""
        used = _resource.getrusage(_resource.RUSAGE_SELF)
        soft, hard = _resource.getrlimit(_resource.RLIMIT_CPU)
        limit = int(used.ru_utime + used.ru_stime + self.seconds) + 1
        if hard != _resource.RLIM_INFINITY:
            limit = min(limit, hard)
        _resource.setrlimit(_resource.RLIMIT_CPU, (limit, hard))

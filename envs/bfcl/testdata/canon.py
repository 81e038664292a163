# Tries the worker's encoding of state values (Canon) against Python's ==
# on pairs of values: the encodings must be equal exactly when the values
# are. argv[1] is worker.py. Prints one line per pair that disagrees.
import decimal
import json
import sys

worker = {"__name__": "worker"}
exec(compile(open(sys.argv[1]).read(), "worker.py", "exec"), worker)
canon = worker["Canon"]()


class Plain:
    pass


same = Plain()
pairs = [
    (1, 1.0), (True, 1), (False, 0.0), (1, 1.5), (0.1 + 0.2, 0.3), (2**60 + 1, float(2**60)),
    (float("inf"), float("inf")), (float("nan"), float("nan")), (complex(1, 0), 1), (complex(1, 2), complex(1, 2)),
    (decimal.Decimal("1.0"), 1), (decimal.Decimal("0.10"), decimal.Decimal("0.1")),
    ("a", "a"), ("a", "b"), (None, None), (None, 0), ("1", 1),
    ((1, 2), [1, 2]), ((1, 2), (1, 2)), ([1, [2]], [1.0, [2.0]]),
    ({1: "a", 2: "b"}, {2: "b", 1.0: "a"}), ({"a": 1}, {"a": 1, "b": 2}), ({"k": [1]}, {"k": (1,)}),
    ({1, 2}, {2, 1}), (frozenset({1}), {1}), ({1}, {2}),
    (Plain(), Plain()),
]
bad = 0
for a, b in pairs:
    want = a == b
    got = json.dumps(canon.encode(a)) == json.dumps(canon.encode(b))
    if got != want:
        bad += 1
        print("%r and %r: Python says %s, the encoding %s" % (a, b, want, got))
print("checked %d pairs" % len(pairs))

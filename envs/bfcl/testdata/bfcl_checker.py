# BFCL's own verdict, for the tests alone: runs multi_turn_checker from the
# extracted bfcl-eval wheel (argv[1]) with mpmath's wheel (argv[2]) on the
# path, on cases read as JSON lines from stdin, each
#   {"entry": {id, involved_classes, initial_config}, "ground_truth": [[call]],
#    "model": [[[call]]]}   (turns, steps, calls)
# and prints {"valid": bool, "error_type": str} for each.
import json
import sys

sys.path[:0] = [sys.argv[1], sys.argv[2]]
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

for n, line in enumerate(sys.stdin):
    case = json.loads(line)
    # Instances are kept in globals() by model name and entry id: a name of
    # its own per case starts each from the initial config.
    got = multi_turn_checker(case["model"], case["ground_truth"], case["entry"], "multi_turn_base", "case%d" % n)
    print(json.dumps({"valid": got["valid"], "error_type": got.get("error_type", "")}), flush=True)

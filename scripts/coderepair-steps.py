#!/usr/bin/env python3
"""What a CodeRepair rollout's steps ran into, counted from rollout_steps.csv.

Table 4 counts passes, repeats and loops; this counts the outcome of every
step by the last line of its observation, per run folder and harness, so
that docs/results.md can say how an agent's programs fail:

  passed          the tests passed
  loop stop       the loop detector ended the episode
  no function     the reply defined no function, so nothing ran
  NameError, renamed
                  a NameError at module level (the tests) for a name that
                  the action does not define with `def`: the model wrote the
                  function under another name than the tests call
  <exception>     any other failure, by the exception that ended the run
                  (AssertionError, TypeError, SyntaxError, ...)

and, per run folder, three checks on the action as the environment ran it:
actions whose last top-level statement is not a `def` (the action is the
function, so 0 unless it does not parse), steps with text dropped from the
reply (the `dropped` column; runs older than that column show "-"), and
"unexpected indent" errors.

Usage: scripts/coderepair-steps.py RUN_FOLDER...   (stdlib only; prints Markdown)
"""

import ast
import os
import re
import sys
from collections import Counter, defaultdict

from rollout_steps import read_steps

EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(:|$)")
NAME_ERROR = re.compile(r"NameError: name '([^']+)' is not defined")
FRAME = re.compile(r'File "solution.py", line \d+, in (\S+)')
COLUMNS = ["passed", "loop stop", "no function", "AssertionError", "NameError, renamed", "NameError", "TypeError",
           "SyntaxError", "IndentationError"]


def last_line(text):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def kind(step):
    obs = step["observation"]
    if step["looped"] == "true":
        return "loop stop"
    if step["failed"] != "true":
        return "passed"
    if "defines no function" in obs:
        return "no function"
    last = last_line(obs)
    m = EXCEPTION.match(last)
    name = m.group(1) if m else "other"
    if name == "NameError":
        called = NAME_ERROR.search(obs)
        frames = FRAME.findall(obs)
        if called and frames and frames[-1] == "<module>" and f"def {called.group(1)}(" not in step["action"]:
            return "NameError, renamed"
    return name


def ends_in_def(action):
    try:
        body = ast.parse(action).body
    except (SyntaxError, ValueError):
        return True  # not parsed: nothing to say about its statements
    return not body or isinstance(body[-1], (ast.FunctionDef, ast.AsyncFunctionDef))


def count(folder):
    steps = read_steps(folder, "coderepair")
    kinds = defaultdict(Counter)
    for s in steps:
        k = kind(s)
        kinds[s["harness"]][k] += 1
        kinds["all"][k] += 1
    checks = {
        "not a def last": sum(not ends_in_def(s["action"]) for s in steps),
        "dropped": sum(bool(s["dropped"].strip()) for s in steps) if steps and "dropped" in steps[0] else "-",
        "unexpected indent": sum("unexpected indent" in s["observation"] for s in steps),
    }
    return kinds, checks


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    results = [(os.path.basename(os.path.normpath(f)), *count(f)) for f in sys.argv[1:]]
    print("| run | harness | steps | " + " | ".join(COLUMNS) + " | other |")
    print("|---|---|---:|" + "---:|" * (len(COLUMNS) + 1))
    for name, kinds, _ in results:
        for harness, c in kinds.items():
            other = sum(n for k, n in c.items() if k not in COLUMNS)
            print(f"| {name} | {harness} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in COLUMNS) + f" | {other} |")
    print()
    print("| run | actions whose last statement is not a def | steps with dropped text | unexpected indent |")
    print("|---|---:|---:|---:|")
    for name, _, checks in results:
        print(f"| {name} | {checks['not a def last']} | {checks['dropped']} | {checks['unexpected indent']} |")


if __name__ == "__main__":
    main()

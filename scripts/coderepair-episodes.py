#!/usr/bin/env python3
"""How a CodeRepair rollout's episodes go after a failure, counted from
rollout_steps.csv.

Table 4 gives the rates (passed, repeated, looped); docs/results.md also
says when an agent passes, whether it repairs a failure, how its replies
after one open and what it repeats. This counts those, per run folder and
harness:

  episodes, passed     as Table 4 counts them
  at first reply       passed with the first reply (step 0)
  failed               episodes with a failed step
  recovered            of those, the ones that end passing
  repeated             episodes with an exact repeat (the `repeat` column)
  re-spelled steps     steps whose repeat came back through other tokens
                       (the `respelled` column; "-" where the run has none)
  later replies        replies after the first
  echo                 later replies that write the environment's "The
                       reply defines no function" observation back
  "The error"          later replies that open "The error"
  answered "The error" failed episodes whose reply right after the first
                       failure opens "The error"

and, for the repeated episodes, what the first repeated action is:

  first failed         the program the first failed step ran
  later failed         another program that had failed before
  observation          the observation, written back
  prose                a reply with no function in it

and how the later replies most often open: a fenced block, or their first
three words.

Usage: scripts/coderepair-episodes.py RUN_FOLDER...   (stdlib only; prints Markdown)
"""

import os
import sys
from collections import Counter, defaultdict

from rollout_steps import read_steps

ECHO = "The reply defines no function"
COUNTS = ["episodes", "passed", "at first reply", "failed", "recovered", "repeated", "re-spelled steps",
          "later replies", "echo", '"The error"', 'answered "The error"']
REPEATS = ["first failed", "later failed", "observation", "prose"]
OPENINGS = 4


def opening(reply):
    """How a reply opens: a fenced block, or its first three words."""
    if reply.startswith("```"):
        return "a fenced block"
    return '"' + " ".join(reply.split()[:3]).replace("|", "\\|") + '"'


def what_repeats(steps):
    """What the episode's first repeated action is, or None if it repeats none."""
    first = next((s for s in steps if s["repeat"] == "true"), None)
    if first is None:
        return None
    action = first["action"]
    failed = [s["action"] for s in steps if s["failed"] == "true"]
    if action.lstrip().startswith(ECHO):
        return "observation"
    if failed and action == failed[0]:
        return "first failed"
    if "def " in action:
        return "later failed"
    return "prose"


def count(folder):
    rows = read_steps(folder, "coderepair")
    episodes = defaultdict(list)
    for s in rows:
        episodes[(s["harness"], s["task"], s["seed"])].append(s)
    # Runs made before re-spelled repeats were recorded have no such column.
    respelled = bool(rows) and "respelled" in rows[0]
    counts = defaultdict(lambda: dict.fromkeys(COUNTS + REPEATS, 0))
    openings = defaultdict(Counter)
    for (harness, _, _), steps in episodes.items():
        steps.sort(key=lambda s: int(s["step"]))
        c = counts[harness]
        passed = steps[-1]["failed"] == "false" and steps[-1]["looped"] == "false"
        failed = any(s["failed"] == "true" for s in steps)
        c["episodes"] += 1
        c["passed"] += passed
        c["at first reply"] += passed and len(steps) == 1
        c["failed"] += failed
        c["recovered"] += passed and failed
        if respelled:
            c["re-spelled steps"] += sum(s["respelled"] == "true" for s in steps)
        later = [s["reply"].lstrip() for s in steps[1:]]
        c["later replies"] += len(later)
        c["echo"] += sum(r.startswith(ECHO) for r in later)
        c['"The error"'] += sum(r.startswith("The error") for r in later)
        openings[harness].update(opening(r) for r in later)
        after = next((i + 1 for i, s in enumerate(steps) if s["failed"] == "true"), len(steps))
        c['answered "The error"'] += after < len(steps) and steps[after]["reply"].lstrip().startswith("The error")
        kind = what_repeats(steps)
        if kind:
            c["repeated"] += 1
            c[kind] += 1
    if not respelled:
        for c in counts.values():
            c["re-spelled steps"] = "-"
    return counts, openings


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    results = [(os.path.basename(os.path.normpath(f)), count(f)) for f in sys.argv[1:]]
    for columns in (COUNTS, ["repeated"] + REPEATS):
        print("| run | harness | " + " | ".join(columns) + " |")
        print("|---|---|" + "---:|" * len(columns))
        for name, (counts, _) in results:
            for harness, c in counts.items():
                print(f"| {name} | {harness} | " + " | ".join(str(c[k]) for k in columns) + " |")
        print()
    print(f"| run | harness | later replies open (the {OPENINGS} most common) |")
    print("|---|---|---|")
    for name, (_, openings) in results:
        for harness, o in openings.items():
            common = sorted(o.items(), key=lambda kv: (-kv[1], kv[0]))[:OPENINGS]
            print(f"| {name} | {harness} | " + "; ".join(f"{k} {n}" for k, n in common) + " |")


if __name__ == "__main__":
    main()

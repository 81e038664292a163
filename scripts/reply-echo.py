#!/usr/bin/env python3
"""What a ToolShed rollout's replies copy, counted from rollout_steps.csv.

A free-decoding agent can fail without ever acting: its reply may copy the
last observation, a tool's signature from the system prompt, or the system
prompt's example call. Table 4 counts repeats and passes; this counts the
copies behind them, per run folder and harness, so that docs/results.md can
say whether an echo comes from the model or from the prompt's format:

  first replies   the replies of step 0
    signature     ... that are a tool's signature ("name(arg: type) -> type")
    example       ... that are create_event with the system prompt's example
                  date and time (2026-07-13, 10:00), whatever the task
  later replies   the replies of every later step
    "Observation" ... that open with "Observation"
    echo          ... whose first line is the previous observation's first line
    repeat ok     ... whose action equals an earlier action of the episode
                  that succeeded (a loop on a call that worked)

Usage: scripts/reply-echo.py RUN_FOLDER...   (stdlib only; prints Markdown)
"""

import os
import re
import sys
from collections import defaultdict

from rollout_steps import read_steps

SIGNATURE = re.compile(r"^\s*\w+\(.*\)\s*->")
EXAMPLE = re.compile(r'^\s*create_event\(.*date="2026-07-13".*time="10:00"')


def first_line(text):
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def count(folder):
    steps = read_steps(folder, "toolshed")
    episodes = defaultdict(list)
    for s in steps:
        episodes[(s["harness"], s["task"], s["seed"])].append(s)
    rows = defaultdict(lambda: defaultdict(int))
    for (harness, _, _), ss in episodes.items():
        ss.sort(key=lambda s: int(s["step"]))
        r = rows[harness]
        r["episodes"] += 1
        ok_actions = set()
        for i, s in enumerate(ss):
            reply = s["reply"]
            if i == 0:
                r["first"] += 1
                r["signature"] += bool(SIGNATURE.match(reply))
                r["example"] += bool(EXAMPLE.match(reply))
            else:
                r["later"] += 1
                r["observation"] += first_line(reply).startswith("Observation")
                prev = first_line(ss[i - 1]["observation"])
                r["echo"] += bool(prev) and first_line(reply) == prev
                r["repeat_ok"] += s["action"] in ok_actions
            if s["failed"] != "true":
                ok_actions.add(s["action"])
    return rows


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    print("| run | harness | episodes | first replies | signature | example | later replies | \"Observation\" | echo | repeat ok |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for folder in sys.argv[1:]:
        for harness, r in count(folder).items():
            print(f"| {os.path.basename(os.path.normpath(folder))} | {harness} | {r['episodes']} | {r['first']} | {r['signature']} | "
                  f"{r['example']} | {r['later']} | {r['observation']} | {r['echo']} | {r['repeat_ok']} |")


if __name__ == "__main__":
    main()

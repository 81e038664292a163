#!/usr/bin/env python3
"""Read logs that `feedrun export --format inspect` wrote with Inspect's own
reader and check them against the run folders they came from.

    check-inspect.py LOGDIR SAMPLES RUNDIR...

Every log in LOGDIR must be listed by Inspect (as inspect view lists a
folder) and read by read_eval_log; together they must hold SAMPLES samples.
Each rollout_episodes.csv row of the RUNDIRs must be one sample whose
passed, finished, repeated and looped scores are the row's; each
probe_items.csv row one sample whose G, G_per_token and P_repeat are the
row's. Messages may only be system, user or assistant turns, and a rollout
sample's messages after its input alternate reply and observation, one
pair per step. Exits 1 with one line per problem.
"""

import csv
import json
import math
import os
import sys
from collections import Counter
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

ROLES = {"system", "user", "assistant"}


# A rollout made before the study's token ban (its manifest records no
# "ban": "tokens") played the text ban under the names ban and
# abstract+ban; feedrun reads, and exports, those rows as ban-text and
# abstract+ban-text.
TEXT_BAN = {"ban": "ban-text", "abstract+ban": "abstract+ban-text"}


def harness_names(d):
    """How feedrun names the harnesses of the run folder d's rows."""
    with open(d / "manifest.json") as f:
        config = json.load(f).get("config", {})
    if config.get("ban") == "tokens":
        return lambda name: name
    return lambda name: TEXT_BAN.get(name, name)


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    logdir, want, rundirs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    problems = []

    files = sorted(Path(logdir).glob("*.json"))
    listed = {Path(info.name.removeprefix("file://")).name for info in list_eval_logs(logdir)}
    for f in files:
        if f.name not in listed:
            problems.append(f"{f}: not listed by Inspect (inspect view would not show it)")

    # sample by (run folder, harness, id, seed; 0 for an item)
    samples = {}
    kinds = Counter()
    total = 0
    for f in files:
        log = read_eval_log(str(f))
        kind = log.eval.task.split("-", 1)[0]
        harness = log.eval.task_args["harness"]
        if log.status != "success" or log.results is None:
            problems.append(f"{f}: status {log.status}, results {log.results}")
        if log.results and log.results.total_samples != len(log.samples):
            problems.append(f"{f}: results say {log.results.total_samples} samples, the log holds {len(log.samples)}")
        for s in log.samples:
            total += 1
            roles = [m.role for m in s.messages]
            if not set(roles) <= ROLES:
                problems.append(f"{f}: sample {s.id}: roles {sorted(set(roles) - ROLES)}")
            key = s.metadata["seed"] if kind == "rollout" else 0
            samples[(os.path.normpath(s.metadata["run"]), harness, str(s.id), key)] = (f, s)
            kinds[kind] += 1

    if total != want:
        problems.append(f"{logdir}: {total} samples, expected {want}")

    for d in rundirs:
        run = os.path.normpath(d)
        d = Path(d)
        if (d / "rollout_episodes.csv").exists():
            named = harness_names(d)
            for r in rows(d / "rollout_episodes.csv"):
                k = (run, named(r["harness"]), r["task"], int(r["seed"]))
                if k not in samples:
                    problems.append(f"{d}: episode {k[1:]} has no sample")
                    continue
                f, s = samples[k]
                expect = {
                    "passed": r["passed"] == "true",
                    "finished": r["finished"] == "true",
                    "repeated": int(r["exact_repeats"]) > 0,
                    "looped": r["looped"] == "true",
                }
                for name, on in expect.items():
                    if s.scores[name].value != float(on):
                        problems.append(f"{f}: sample {s.id}: {name} {s.scores[name].value}, the row says {on}")
                if "recovered" in s.scores and s.scores["recovered"].value != float(expect["passed"]):
                    problems.append(f"{f}: sample {s.id}: recovered {s.scores['recovered'].value} but passed {expect['passed']}")
                replies = [m for m in s.messages if m.source == "generate"]
                if len(replies) != int(r["steps"]):
                    problems.append(f"{f}: sample {s.id}: {len(replies)} replies, the row says {r['steps']} steps")
                steps = s.messages[len(s.messages) - 2 * len(replies):]
                if [m.role for m in steps] != ["assistant", "user"] * len(replies):
                    problems.append(f"{f}: sample {s.id}: steps are not reply, observation pairs: {[m.role for m in steps]}")
        if (d / "probe_items.csv").exists():
            for r in rows(d / "probe_items.csv"):
                k = (run, r["harness"], r["item_id"], 0)
                if k not in samples:
                    problems.append(f"{d}: item {k[1:]} has no sample")
                    continue
                f, s = samples[k]
                for name, col in (("G", "gain"), ("G_per_token", "gain_per_token"), ("P_repeat", "p_repeat_post")):
                    if r[col] == "":
                        if name in s.scores:
                            problems.append(f"{f}: sample {s.id}: {name} scored for a banned action")
                    elif name not in s.scores or not math.isclose(s.scores[name].value, float(r[col]), rel_tol=1e-12):
                        problems.append(f"{f}: sample {s.id}: {name} {s.scores.get(name)}, the row says {r[col]}")

    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(files)} logs read by Inspect's reader: {total} samples ({dict(kinds)}), scores and message roles as the run folders say")


if __name__ == "__main__":
    main()

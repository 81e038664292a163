#!/usr/bin/env python3
"""Read logs that `feedrun export --format inspect` wrote with Inspect's own
reader, data frames and viewer, and check them against the run folders they
came from.

    check-inspect.py LOGDIR SAMPLES RUNDIR...

Every log in LOGDIR must be listed by Inspect (as inspect view lists a
folder) and read by read_eval_log, whole and header only (what the viewer's
list of logs reads); together they must hold SAMPLES samples (or, with
SAMPLES "rows", one per row of the RUNDIRs' tables). Each
rollout_episodes.csv row of the RUNDIRs must be one sample whose passed,
finished, repeated and looped scores are the row's; each probe_items.csv
row one sample whose G, G_per_token and P_repeat are the row's. Messages
may only be system, user or assistant turns, each with an id that no other
message of the logs has; a rollout sample's messages after its input
alternate reply and observation, one pair per step, and an episode of a run
made before the context record opens with a system note that says so. A
rollout sample's events are a model event per step whose output is the
step's reply and a tool event per step whose result is its observation as
rollout_steps.csv has it (an error where the step failed, an approval error
where a ban harness refused it); a probe sample's are the greedy replies
before and after the failure and the failed action between them, or a note
where its context is not known. evals_df, samples_df and messages_df
(inspect_ai.analysis) must read LOGDIR with a row per log, sample and
message, and `inspect view --log-dir LOGDIR` must list every log and answer
/api/log-headers for each with a 2xx. Exits 1 with one line per problem.
"""

import csv
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

from inspect_ai.analysis import evals_df, messages_df, samples_df
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


NOT_RECORDED = "context not recorded"


def steps_by_episode(d, named):
    """rollout_steps.csv of the run folder d, by (harness, task, seed), in step order."""
    out = defaultdict(list)
    if (d / "rollout_steps.csv").exists():
        for r in rows(d / "rollout_steps.csv"):
            out[(named(r["harness"]), r["task"], int(r["seed"]))].append(r)
    for steps in out.values():
        steps.sort(key=lambda r: int(r["step"]))
    return out


def events_of(s, kind):
    return [e for e in s.events if e.event == kind]


def check_episode_events(f, s, steps, recorded, problems):
    """The events of a rollout sample against its rows of rollout_steps.csv."""
    where = f"{f}: sample {s.id} epoch {s.epoch}"
    replies = [m for m in s.messages if m.source == "generate"]
    models, tools = events_of(s, "model"), events_of(s, "tool")
    if len(models) != len(steps) or len(tools) != len(steps):
        problems.append(f"{where}: {len(models)} model and {len(tools)} tool events, want one each per step ({len(steps)})")
        return
    if not recorded:
        first = s.messages[0] if s.messages else None
        if first is None or first.role != "system" or NOT_RECORDED not in first.text:
            problems.append(f"{where}: a run made before the context record, and the messages do not open with a note that says so")
        if not s.events or s.events[0].event != "info" or NOT_RECORDED not in str(s.events[0].data):
            problems.append(f"{where}: a run made before the context record, and the events do not open with a note that says so")
    for k, (st, model, tool, reply) in enumerate(zip(steps, models, tools, replies)):
        if model.input_refs is not None:
            problems.append(f"{where}: step {k}: the model event's input was not resolved from events_data")
        if model.output.completion != st["reply"] or model.output.message.id != reply.id:
            problems.append(f"{where}: step {k}: the model event's output is not the step's reply")
        if k == 0 and isinstance(s.input, list) and [(m.role, m.text) for m in model.input] != [(m.role, m.text) for m in s.input]:
            problems.append(f"{where}: the first model event's input is not the sample's input")
        said = tool.error.message if tool.error else tool.result
        if said != st["observation"] or tool.arguments.get("action") != st["action"]:
            problems.append(f"{where}: step {k}: the tool event is not the step's action and observation")
        want = "approval" if st.get("gate_blocked") == "true" else "unknown" if st["failed"] == "true" else None
        if (tool.error.type if tool.error else None) != want:
            problems.append(f"{where}: step {k}: tool error {tool.error}, want {want}")


def check_item_events(f, s, r, problems):
    """The events of a probe sample against its probe_items.csv row."""
    where = f"{f}: sample {s.id}"
    kinds = [e.event for e in s.events]
    if not isinstance(s.input, list):
        if kinds != ["info"]:
            problems.append(f"{where}: the context is not known and the events are {kinds}, want a note")
        return
    want = (["model"] if r["greedy_reply_pre"] else []) + ["tool"] + (["model"] if r["greedy_reply_post"] else [])
    if kinds != want:
        problems.append(f"{where}: events {kinds}, want {want}")
        return
    models = events_of(s, "model")
    completions = [m.output.completion for m in models]
    if completions != [c for c in (r["greedy_reply_pre"], r["greedy_reply_post"]) if c]:
        problems.append(f"{where}: model events' outputs {completions} are not the greedy replies")
    if r["greedy_reply_pre"] and [(m.role, m.text) for m in models[0].input] != [(m.role, m.text) for m in s.input]:
        problems.append(f"{where}: the model event before the failure does not read the sample's input")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url):
    """(status, body) of a GET; an HTTP error is a status, not an exception."""
    try:
        with urllib.request.urlopen(url, timeout=120) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def check_view(logdir, files, problems):
    """inspect view on logdir: every log listed, and the header of each read."""
    port = free_port()
    base = f"http://127.0.0.1:{port}/api"
    inspect = Path(sys.executable).parent / "inspect"
    with tempfile.TemporaryFile() as err:
        view = subprocess.Popen(
            [str(inspect), "view", "--log-dir", logdir, "--port", str(port)],
            stdout=subprocess.DEVNULL, stderr=err,
        )
        try:
            listing = None
            deadline = time.monotonic() + 120
            while listing is None and time.monotonic() < deadline and view.poll() is None:
                try:
                    status, body = get(f"{base}/log-files")
                    listing = (status, body)
                except OSError:
                    time.sleep(0.5)
            if listing is None:
                err.seek(0)
                problems.append(f"inspect view --log-dir {logdir} did not answer: {err.read().decode(errors='replace')[-2000:]}")
                return
            status, body = listing
            if not 200 <= status < 300:
                problems.append(f"inspect view: /api/log-files answered {status}")
                return
            names = [entry["name"] for entry in json.loads(body)["files"]]
            listed = {Path(urllib.parse.urlparse(n).path).name for n in names}
            for f in files:
                if f.name not in listed:
                    problems.append(f"{f}: inspect view does not list it")
            failed = 0
            for name in names:
                status, body = get(f"{base}/log-headers?" + urllib.parse.urlencode({"file": name}))
                if not 200 <= status < 300:
                    failed += 1
                    problems.append(f"{name}: inspect view's /api/log-headers answered {status}")
                elif len(json.loads(body)) != 1:
                    problems.append(f"{name}: inspect view's /api/log-headers gave {len(json.loads(body))} headers, want 1")
            print(f"inspect view: {len(names)} logs listed, {len(names) - failed} headers read", file=sys.stderr)
        finally:
            view.terminate()
            try:
                view.wait(timeout=20)
            except subprocess.TimeoutExpired:
                view.kill()
                view.wait()


def check_frames(logdir, files, samples, written, problems):
    """Inspect's data frames read the logs: a row per log and sample, and
    for messages_df (which Inspect makes from the model events' inputs and
    outputs, not from the samples' messages) rows named by ids the export
    wrote."""
    for name, frame, want in (
        ("evals_df", evals_df, len(files)),
        ("samples_df", samples_df, samples),
        ("messages_df", messages_df, None),
    ):
        try:
            df = frame(logdir, quiet=True)
        except Exception as e:  # the frame's failure is the finding
            problems.append(f"{logdir}: {name} failed: {type(e).__name__}: {e}")
            continue
        if want is not None and len(df) != want:
            problems.append(f"{logdir}: {name} has {len(df)} rows, want {want}")
        if name == "messages_df":
            if written and len(df) == 0:
                problems.append(f"{logdir}: messages_df has no rows")
            if df["message_id"].isna().any() or not set(df["message_id"]) <= written:
                problems.append(f"{logdir}: messages_df has messages without an id the export wrote")


def expected(rundirs):
    """What each sample must be, by (run folder, harness, id, seed; 0 for
    an item): ("episode", row, its steps or None, recorded) for a
    rollout_episodes.csv row, ("item", row) for a probe_items.csv row."""
    want = {}
    for d in rundirs:
        run = os.path.normpath(d)
        d = Path(d)
        if (d / "rollout_episodes.csv").exists():
            named = harness_names(d)
            stepped = (d / "rollout_steps.csv").exists()
            step_rows = steps_by_episode(d, named)
            recorded = (d / "rollout_contexts.csv").exists()
            for r in rows(d / "rollout_episodes.csv"):
                k = (run, named(r["harness"]), r["task"], int(r["seed"]))
                want[k] = ("episode", r, step_rows[k[1:]] if stepped else None, recorded)
        if (d / "probe_items.csv").exists():
            for r in rows(d / "probe_items.csv"):
                want[(run, r["harness"], r["item_id"], 0)] = ("item", r)
    return want


def check_episode(f, s, r, steps, recorded, problems):
    """A rollout sample against its rollout_episodes.csv row and steps."""
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
    if recorded:
        check_shown(f, s, problems)
    else:
        turns = s.messages[len(s.messages) - 2 * len(replies):]
        if [m.role for m in turns] != ["assistant", "user"] * len(replies):
            problems.append(f"{f}: sample {s.id}: steps are not reply, observation pairs: {[m.role for m in turns]}")
    if steps is not None:
        check_episode_events(f, s, steps, recorded, problems)


def check_shown(f, s, problems):
    """In a run with the context record, the messages after the input are
    the replies, each followed by its observation or by what the harness
    showed instead (marked shown_before_reply; nothing where drop removed
    the turn), and the last by its observation."""
    start = len(s.input) if isinstance(s.input, list) else 0
    turns = s.messages[start:]
    at = [i for i, m in enumerate(turns) if m.role == "assistant"]
    if turns and (not at or at[0] != 0):
        problems.append(f"{f}: sample {s.id}: the messages after the input do not start with a reply")
        return
    for a, b in zip(at, at[1:] + [len(turns)]):
        between = turns[a + 1:b]
        observed = len(between) == 1 and between[0].role == "user" and "failed" in (between[0].metadata or {})
        shown = all((m.metadata or {}).get("shown_before_reply") for m in between)
        if not observed and (b == len(turns) or not shown):
            problems.append(f"{f}: sample {s.id}: after reply {a} come {[m.role for m in between]}, neither its observation nor what the harness showed")
            return


def check_item(f, s, r, problems):
    """A probe sample against its probe_items.csv row."""
    for name, col in (("G", "gain"), ("G_per_token", "gain_per_token"), ("P_repeat", "p_repeat_post")):
        if r[col] == "":
            if name in s.scores:
                problems.append(f"{f}: sample {s.id}: {name} scored for a banned action")
        elif name not in s.scores or not math.isclose(s.scores[name].value, float(r[col]), rel_tol=1e-12):
            problems.append(f"{f}: sample {s.id}: {name} {s.scores.get(name)}, the row says {r[col]}")
    check_item_events(f, s, r, problems)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    logdir, want, rundirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    problems = []

    files = sorted(Path(logdir).glob("*.json"))
    listed = {Path(info.name.removeprefix("file://")).name for info in list_eval_logs(logdir)}
    for f in files:
        if f.name not in listed:
            problems.append(f"{f}: not listed by Inspect (inspect view would not show it)")

    rowed = expected(rundirs)
    want = len(rowed) if want == "rows" else int(want)
    seen = set()
    kinds = Counter()
    total = 0
    ids = Counter()
    written = set()  # the ids of the model events' messages
    # One log at a time: the logs of every committed run do not fit in
    # memory at once as Inspect's objects.
    for f in files:
        try:
            head = read_eval_log(str(f), header_only=True)
            log = read_eval_log(str(f))
        except Exception as e:  # Inspect's reader refusing the log is the finding
            problems.append(f"{f}: Inspect's reader failed: {type(e).__name__}: {e}")
            continue
        if head.plan is None or head.eval.task != log.eval.task or head.results is None or head.results.total_samples != len(log.samples):
            problems.append(f"{f}: the header read alone is not the log's: plan {head.plan}, results {head.results}")
        kind = log.eval.task.split("-", 1)[0]
        harness = log.eval.task_args["harness"]
        if log.status != "success" or log.results is None:
            problems.append(f"{f}: status {log.status}, results {log.results}")
        if log.results and log.results.total_samples != len(log.samples):
            problems.append(f"{f}: results say {log.results.total_samples} samples, the log holds {len(log.samples)}")
        for s in log.samples:
            total += 1
            kinds[kind] += 1
            roles = [m.role for m in s.messages]
            if not set(roles) <= ROLES:
                problems.append(f"{f}: sample {s.id}: roles {sorted(set(roles) - ROLES)}")
            ids.update(m.id for m in s.messages)
            for e in events_of(s, "model"):
                written.update(m.id for m in e.input + [e.output.message])
            k = (os.path.normpath(s.metadata["run"]), harness, str(s.id), s.metadata["seed"] if kind == "rollout" else 0)
            if k not in rowed:
                continue
            seen.add(k)
            if rowed[k][0] == "episode":
                check_episode(f, s, *rowed[k][1:], problems)
            else:
                check_item(f, s, rowed[k][1], problems)

    for k, what in rowed.items():
        if k not in seen:
            problems.append(f"{k[0]}: {what[0]} {k[1:]} has no sample")
    if total != want:
        problems.append(f"{logdir}: {total} samples, expected {want}")
    if None in ids:
        problems.append(f"{logdir}: {ids[None]} messages without an id")
    repeated = [i for i, n in ids.items() if n > 1 and i is not None]
    if repeated:
        problems.append(f"{logdir}: {len(repeated)} message ids name more than one message, e.g. {repeated[0]}")

    check_frames(logdir, files, total, written, problems)
    check_view(logdir, files, problems)

    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(files)} logs read by Inspect's reader (whole and header only), data frames and viewer: {total} samples ({dict(kinds)}); scores, messages and events as the run folders say")


if __name__ == "__main__":
    main()

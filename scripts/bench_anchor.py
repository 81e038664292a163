"""Raw llama.cpp beside feedrun on one GGUF and thread count: the ratio
table of `make bench-anchor` (scripts/bench-anchor.sh sets it up and runs
this in the virtual environment that holds llama-cpp-python).

There are two raw sides. The default, "vendored", is plain C on the very
llama.cpp feedrun links (internal/llama/anchor.go, compiled into the
benchmark binary under the build tag anchor), so that a ratio compares
feedrun with llama.cpp on one commit: its figures come from the
BenchmarkRaw* benchmarks of that binary. The other, "python", drives
another llama.cpp (the one a pinned llama-cpp-python vendors) through
llama-cpp-python's low-level C API, never its Llama class, so that it does the work of feedrun's benchmarks in
internal/llama/bench_test.go and nothing more: the same tokens, the same
context settings as internal/llama's Load, a greedy choice with the same
log-probability per token. It feeds llama.cpp the way a plain llama.cpp
program would (a prompt in one llama_decode call, every sequence's token
of a step in one batch), so each ratio also shows what feedrun's own ways
cost: prompts evaluated in aligned 64-token blocks so that reuse changes no
figure, the Go code around each call.

The two sides take turns at each row's work, alternating which goes
first from round to round, and each figure is the median of its turns, so
that a machine that slows down or speeds up during the run moves both
sides alike.
"""

import argparse
import csv
import ctypes
import datetime
import hashlib
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The text of benchPrompt in internal/llama/bench_test.go, tokenized the
# same way (special tokens added, none parsed).
BENCH_TEXT = "The agent called create_event and the tool said the date was wrong. " * 64

# Settings of internal/llama's Load (Options.withDefaults and the context
# parameters it sets): the raw side must not run with more or less room.
CONTEXT = 8192
BATCH = 512
DEFAULT_SEQUENCES = 16

# The work, as benchDecode and BenchmarkScore4 define it.
DECODE_PROMPT = 32
DECODE_STEPS = 64
SCORE_PREFIX = 400
SCORE_CONTINUATIONS = 4
SCORE_LENGTH = 20

# The go test benchmark behind each row, and the metric it reports.
FEEDRUN_BENCHMARKS = {
    "prompt": ("BenchmarkPromptProcessing512", "tokens/s"),
    "decode1": ("BenchmarkDecode1", "tokens/s"),
    "decode8": ("BenchmarkDecode8", "tokens/s"),
    "score": ("BenchmarkScore4/shared", "effective-tokens/s"),
}
# The vendored raw side's benchmarks, the same work in plain C.
RAW_BENCHMARKS = {
    "prompt": ("BenchmarkRawPromptProcessing512", "tokens/s"),
    "decode1": ("BenchmarkRawDecode1", "tokens/s"),
    "decode8": ("BenchmarkRawDecode8", "tokens/s"),
    "score": ("BenchmarkRawScore4", "effective-tokens/s"),
}

# The fixed rollout: every rollout harness but memory (which needs a
# store) on three ToolShed tasks, one seed, free greedy decoding, a short
# step budget: the study's ban and the text ban both, since they decode
# differently. The harnesses are feedrun's own list, which main reads
# before anything plays (rollout_harnesses), so that a new harness is
# timed too.
ROLLOUT_HARNESSES = []


def rollout_harnesses(feedrun):
    """The harnesses the timed rollouts play: those `feedrun harnesses
    --format json` lists, in its order, but any that reads a memory store
    (guided), which the rollout does not build."""
    listed = subprocess.run([feedrun, "harnesses", "--format", "json"], capture_output=True, text=True, check=True).stdout
    return [h["name"] for h in json.loads(listed) if not h["guided"]]


def rollout_args(tasks, *split):
    """A rollout's work: every harness but memory on tasks ToolShed tasks (of
    split, e.g. "--split", "test"), one seed, free greedy decoding, a short
    step budget."""
    return ["--env", "toolshed", "--harness", ",".join(ROLLOUT_HARNESSES), *split, "--tasks", str(tasks), "--seeds", "1", "--max-steps", "6"]


def grid_args(tasks, env="toolshed", decode="free", shots=0, temperature=0.0):
    """The larger grid, the test of throughput rather than of correctness:
    the same harnesses and budget on the first tasks of ToolShed's test
    split, or on the first MBPP problems of CodeRepair, whose replies are
    whole programs (up to 384 tokens), so that decoding, where batching
    gains, takes a larger share of the time than in ToolShed's short
    calls; free greedy decoding unless decode, shots (demonstrations) and
    temperature say otherwise."""
    if env == "coderepair":
        args = ["--env", "coderepair", "--harness", ",".join(ROLLOUT_HARNESSES), "--tasks", str(tasks), "--seeds", "1", "--max-steps", "6"]
    else:
        args = rollout_args(tasks, "--split", "test")
    if decode != "free":
        args += ["--decode", decode]
    if shots:
        args += ["--shots", str(shots)]
    if temperature:
        args += ["--temperature", f"{temperature:g}"]
    return args


FREE_GREEDY = "free greedy decoding"


def decoding_words(decode, shots, temperature):
    """How a grid decodes, for its rows: the study's free greedy decoding
    unless a grammar, demonstrations or a temperature are set."""
    words = f"{decode} {'greedy' if temperature == 0 else f'T = {temperature:g}'} decoding"
    return words + (f", {count(shots, 'shot')}" if shots else "")


GRID_WORK = {"toolshed": "ToolShed test split", "coderepair": "CodeRepair, MBPP problems"}


def status(msg):
    print(msg, file=sys.stderr, flush=True)


class Raw:
    """The raw llama.cpp side: one model, a context per sequence count."""

    def __init__(self, path, threads):
        import numpy as np
        import llama_cpp as L

        self.np, self.L, self.threads = np, L, threads
        # llama-cpp-python routes llama.cpp's log through this logger and
        # prints everything unless it is raised.
        logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
        L.llama_backend_init()
        mp = L.llama_model_default_params()
        mp.use_mmap = True
        mp.n_gpu_layers = 0
        self.model = L.llama_model_load_from_file(path.encode(), mp)
        if not self.model:
            raise SystemExit(f"raw llama.cpp could not load {path}")
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        self.eog = np.array([bool(L.llama_vocab_is_eog(self.vocab, t)) for t in range(self.n_vocab)])
        self.contexts = {}
        self.toks = self.tokenize(BENCH_TEXT)
        if len(self.toks) < 512:
            raise SystemExit(f"the benchmark text is {len(self.toks)} tokens, want 512 or more")

    def tokenize(self, text):
        data = text.encode()
        buf = (self.L.llama_token * (len(data) + 8))()
        n = self.L.llama_tokenize(self.vocab, data, len(data), buf, len(buf), True, False)
        if n < 0:
            raise SystemExit("raw llama.cpp could not tokenize the benchmark text")
        return list(buf[:n])

    def context(self, sequences):
        if sequences in self.contexts:
            return self.contexts[sequences]
        L = self.L
        cp = L.llama_context_default_params()
        cp.n_ctx = CONTEXT
        cp.n_batch = BATCH
        cp.n_ubatch = BATCH
        cp.n_seq_max = sequences
        cp.n_threads = self.threads
        cp.n_threads_batch = self.threads
        cp.kv_unified = True
        cp.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_ENABLED
        cp.no_perf = True
        ctx = L.llama_init_from_model(self.model, cp)
        if not ctx:
            raise SystemExit(f"raw llama.cpp could not create a context of {sequences} sequences")
        batch = L.llama_batch_init(BATCH, 0, sequences)
        self.contexts[sequences] = (ctx, batch)
        return ctx, batch

    def decode(self, ctx, batch, entries):
        """Evaluates (token, position, sequence, wants logits) entries."""
        batch.n_tokens = len(entries)
        for i, (tok, pos, seq, logits) in enumerate(entries):
            batch.token[i] = tok
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = logits
        rc = self.L.llama_decode(ctx, batch)
        if rc != 0:
            raise SystemExit(f"raw llama.cpp: llama_decode returned {rc}")

    def row(self, ctx, i):
        ptr = self.L.llama_get_logits_ith(ctx, i)
        return self.np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def log_z(self, row):
        np = self.np
        mx = float(row.max())
        return mx + float(np.log(np.exp(row.astype(np.float64) - mx).sum()))

    def logprob(self, row, tok):
        return float(row[tok]) - self.log_z(row)

    def greedy(self, row):
        """The most likely token that does not end the generation, and its
        log-probability, as feedrun's greedy choice with every
        end-of-generation token banned."""
        tok = int(self.np.where(self.eog, -self.np.inf, row).argmax())
        return tok, float(row[tok]) - self.log_z(row)

    def prompt(self, toks, iterations):
        """BenchmarkPromptProcessing512: a 512-token prompt from an empty
        cache, then the log-probability of one token after it."""
        L = self.L
        ctx, batch = self.context(DEFAULT_SEQUENCES)
        mem = L.llama_get_memory(ctx)
        n = len(toks)
        start = time.perf_counter()
        for _ in range(iterations):
            L.llama_memory_clear(mem, False)
            self.decode(ctx, batch, [(t, i, 0, i == n - 1) for i, t in enumerate(toks)])
            self.logprob(self.row(ctx, n - 1), toks[0])
        return n * iterations / (time.perf_counter() - start)

    def generate(self, prompt, sequences, iterations):
        """benchDecode: the prompt is cached in sequence 0 before the timer;
        each iteration copies it to every sequence but its last token, feeds
        that token, and then every chosen token back, one token per sequence
        per llama_decode, until each has DECODE_STEPS tokens."""
        L = self.L
        ctx, batch = self.context(sequences + 1)
        mem = L.llama_get_memory(ctx)
        L.llama_memory_clear(mem, False)
        self.decode(ctx, batch, [(t, i, 0, i == len(prompt) - 1) for i, t in enumerate(prompt)])
        seqs = range(1, sequences + 1)
        start = time.perf_counter()
        for _ in range(iterations):
            for s in seqs:
                L.llama_memory_seq_rm(mem, s, -1, -1)
                L.llama_memory_seq_cp(mem, 0, s, 0, len(prompt) - 1)
            feed = {s: prompt[-1] for s in seqs}
            for step in range(DECODE_STEPS):
                pos = len(prompt) - 1 + step
                self.decode(ctx, batch, [(feed[s], pos, s, True) for s in seqs])
                for b, s in enumerate(seqs):
                    feed[s], _ = self.greedy(self.row(ctx, b))
        elapsed = time.perf_counter() - start
        for s in seqs:
            L.llama_memory_seq_rm(mem, s, -1, -1)
        return sequences * DECODE_STEPS * iterations / elapsed

    def score(self, toks, iterations):
        """BenchmarkScore4/shared: a 400-token prefix evaluated once, four
        20-token continuations forked from it and scored in one batch; the
        figure counts prefix and continuation for every continuation
        ("effective" tokens, as feedrun reports them)."""
        L = self.L
        ctx, batch = self.context(DEFAULT_SEQUENCES)
        mem = L.llama_get_memory(ctx)
        prefix = toks[:SCORE_PREFIX]
        conts = [toks[SCORE_PREFIX + i:SCORE_PREFIX + i + SCORE_LENGTH] for i in range(SCORE_CONTINUATIONS)]
        start = time.perf_counter()
        for _ in range(iterations):
            L.llama_memory_clear(mem, False)
            self.decode(ctx, batch, [(t, i, 0, i == len(prefix) - 1) for i, t in enumerate(prefix)])
            first = self.row(ctx, len(prefix) - 1)
            for c in conts:
                self.logprob(first, c[0])
            entries, wanted = [], []
            for j, c in enumerate(conts):
                L.llama_memory_seq_cp(mem, 0, j + 1, -1, -1)
                for t in range(len(c) - 1):
                    entries.append((c[t], len(prefix) + t, j + 1, True))
                    wanted.append(c[t + 1])
            self.decode(ctx, batch, entries)
            for b, tok in enumerate(wanted):
                self.logprob(self.row(ctx, b), tok)
            for j in range(len(conts)):
                L.llama_memory_seq_rm(mem, j + 1, -1, -1)
        effective = len(conts) * (len(prefix) + SCORE_LENGTH)
        return effective * iterations / (time.perf_counter() - start)

    def run(self, work, iterations):
        """One turn of a row's work, as feedrun's benchmark does it."""
        toks = self.toks
        if work == "prompt":
            return self.prompt(toks[:512], iterations)
        if work == "decode1":
            return self.generate(toks[:DECODE_PROMPT], 1, iterations)
        if work == "decode8":
            return self.generate(toks[:DECODE_PROMPT], 8, iterations)
        return self.score(toks[:SCORE_PREFIX + SCORE_CONTINUATIONS - 1 + SCORE_LENGTH], iterations)


def bench_pattern(name):
    """The -test.bench pattern that runs benchmark name alone: go test
    splits it at slashes, one part per level, and a benchmark that matches
    only the first part of a longer pattern runs once without reporting, so
    each benchmark is run by its own pattern."""
    return "/".join(f"^{re.escape(part)}$" for part in name.split("/"))


def parse_bench(output):
    """The custom metrics of go test -bench output, by benchmark name
    (without the -GOMAXPROCS suffix)."""
    got = {}
    for line in output.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[0].startswith("Benchmark"):
            continue
        name = re.sub(r"-\d+$", "", fields[0])
        metrics = got.setdefault(name, {})
        for value, unit in zip(fields[2::2], fields[3::2]):
            try:
                metrics[unit] = float(value)
            except ValueError:
                pass
    return got


def bench_run(binary, model, threads, name, unit, iterations):
    """One go test benchmark of binary, run alone; its unit's figure."""
    env = dict(os.environ, FEEDRUN_BENCH_MODEL=model, FEEDRUN_BENCH_THREADS=str(threads))
    cmd = [binary, "-test.run", "^$", "-test.bench", bench_pattern(name), "-test.benchtime", f"{iterations}x", "-test.timeout", "60m"]
    run = subprocess.run(cmd, env=env, cwd=os.path.dirname(binary), capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{name} failed:\n{run.stdout}{run.stderr}")
    got = parse_bench(run.stdout).get(name, {})
    if unit not in got:
        raise SystemExit(f"{name} reported no {unit}:\n{run.stdout}")
    return got[unit]


def side_run(benchmarks, binary, model, threads, work, iterations):
    """One turn of a row's work on one side, benchmarks being that side's
    table (FEEDRUN_BENCHMARKS or RAW_BENCHMARKS)."""
    name, unit = benchmarks[work]
    return bench_run(binary, model, threads, name, unit, iterations)


def weights_read(binary, model, threads):
    """Bytes of weights one generated token reads (the GGUF's tensors, the
    token embedding counted as one row where the file has a separate output
    matrix), as BenchmarkRawDecode1 reports it."""
    return bench_run(binary, model, threads, "BenchmarkRawDecode1", "weight-MB/token", 1) * 1e6


def bandwidth(binary, threads):
    """The machine's memory read bandwidth in GB/s with threads threads:
    the median of three runs of BenchmarkMemoryRead (a 1 GiB buffer summed
    in C)."""
    name = f"BenchmarkMemoryRead/threads-{threads}"
    return statistics.median(bench_run(binary, "", threads, name, "GB/s", 3) for _ in range(3))


def manifest_seconds(out):
    """Seconds from the run folder's manifest: started (stamped once the
    model is loaded) to finished, the rollout alone."""
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    return (parse_time(man["finished"]) - parse_time(man["started"])).total_seconds(), man.get("replies")


def parse_time(stamp):
    """An RFC 3339 time as Go writes it (nanoseconds, Z), to the microsecond."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z", stamp)
    if not m:
        raise SystemExit(f"bench_anchor.py: manifest time {stamp!r}: expected RFC 3339 in UTC")
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t + datetime.timedelta(microseconds=int((m.group(2) or "0")[:6].ljust(6, "0")))


class Play:
    """One play of a rollout: its episodes, the seconds of the rollout
    alone (the manifest's started to finished: model loading and the
    process's start excluded) and of the whole process, its run folder,
    the replies its manifest records (computed and shared), the 1-minute
    load average before and after it, and, when its flags ask for
    --count-tokens, the distinct prompt tokens and the generated tokens
    it decoded (else None)."""

    def __init__(self, episodes, seconds, whole, out, replies, load, tokens):
        self.episodes, self.seconds, self.whole, self.out = episodes, seconds, whole, out
        self.replies, self.load, self.tokens = replies, load, tokens


def rollout(feedrun, model, threads, workdir, grid, extra):
    """One play of a rollout (grid, its flags; extra, the variant's:
    --batch N, --lanes N, --share=false, --count-tokens), as a Play. With
    --lanes the manifest read is the merged one, whose started and
    finished span the lanes'."""
    out = tempfile.mkdtemp(prefix="rollout-", dir=workdir)
    cmd = [feedrun, "-q", "rollout", "--model", model, "--threads", str(threads), *grid, *extra, "--out", out]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    whole = time.perf_counter() - start
    load = (load, os.getloadavg()[0])
    if run.returncode != 0:
        raise SystemExit(f"the rollout failed: {' '.join(cmd)}\n{run.stdout}{run.stderr}")
    with open(os.path.join(out, "rollout_episodes.csv"), newline="") as f:
        episodes = sum(1 for _ in csv.DictReader(f))
    seconds, replies = manifest_seconds(out)
    tokens = None
    if "--count-tokens" in extra:
        m = re.search(r"(\d+) distinct prompt tokens, (\d+) generated tokens", run.stdout)
        if not m:
            raise SystemExit(f"the rollout did not count its tokens: {' '.join(cmd)}\n{run.stdout}")
        tokens = (int(m.group(1)), int(m.group(2)))
    return Play(episodes, seconds, whole, out, replies, load, tokens)


ROLLOUT_FILES = ("rollout_episodes.csv", "rollout_steps.csv")


def differing_rows(a, b):
    """The result files in which run folders a and b differ, byte for
    byte. A batched play must write exactly what one episode at a time
    writes, or its speed would be that of other work."""
    differ = []
    for name in ROLLOUT_FILES:
        with open(os.path.join(a, name), "rb") as f, open(os.path.join(b, name), "rb") as g:
            if f.read() != g.read():
                differ.append(name)
    return differ


def play_variants(feedrun, model, threads, workdir, grid, variants):
    """Plays grid once under each (label, flags) variant, the first being
    --batch 1 (which also counts the tokens the job decodes); the labels
    with (episodes, seconds), and those counts. Each variant but the lane
    runs must write --batch 1's rows byte for byte, sharing on or off. Lane
    runs are not held to them: whether their merged files keep the plan's
    order was not checked."""
    played, first, tokens = [], None, None
    for label, extra in variants:
        play = play_checked(feedrun, model, threads, workdir, grid, extra, label, first if "--lanes" not in extra else None)
        if first is None:
            first, tokens = play.out, play.tokens
        played.append((label, (play.episodes, play.seconds)))
    return played, tokens


def play_checked(feedrun, model, threads, workdir, grid, extra, label, first):
    """One play, as a Play, said on standard error; given the run folder
    first, it must have written first's rows byte for byte."""
    status("rollout: " + " ".join(grid + extra))
    play = rollout(feedrun, model, threads, workdir, grid, extra)
    status(f"rollout {label}: {play.episodes} episodes in {play.seconds:.1f} s ({play.whole:.1f} s with model loading), "
           f"load average {play.load[0]:.2f} before, {play.load[1]:.2f} after; replies {play.replies}"
           + (f"; {play.tokens[0]} distinct prompt tokens, {play.tokens[1]} generated" if play.tokens else ""))
    if first is not None and (differ := differing_rows(first, play.out)):
        raise SystemExit(f"rollout {label} wrote other rows than the first play ({', '.join(differ)}): its speed is not comparable")
    return play


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def feedrun_version(feedrun):
    lines = subprocess.run([feedrun, "version"], capture_output=True, text=True, check=True).stdout.splitlines()
    return lines[0], lines[1]


def count(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def ratio(a, b):
    return f"{a / b:.2f}×"


def rollout_variants(batch):
    """The fixed rollout's variants: one episode at a time, batch episodes
    decoding together (when batch > 1), two lanes of one thread each (the
    threads split between processes), and two such lanes each decoding
    batch episodes together (on one thread, 8 streams gained more over one
    than on two in a profile of the AMD machine)."""
    variants = [("--batch 1", ["--batch", "1", "--count-tokens"]), ("--batch 1 --share=false", ["--batch", "1", "--share=false"])]
    if batch > 1:
        variants.append((f"--batch {batch}", ["--batch", str(batch)]))
        variants.append((f"--batch {batch} --share=false", ["--batch", str(batch), "--share=false"]))
    variants.append(("--lanes 2", ["--lanes", "2"]))
    if batch > 1:
        variants.append((f"--lanes 2 --batch {batch}", ["--lanes", "2", "--batch", str(batch)]))
    return variants


def grid_variants(batches):
    """The larger grid's variants: one episode at a time, each batch size
    of batches (above 1) in turn, then two lanes of one thread each, the
    other way to use two cores."""
    return ([("--batch 1", ["--batch", "1", "--count-tokens"]), ("--batch 1 --share=false", ["--batch", "1", "--share=false"])]
            + [v for b in batches if b > 1 for v in ((f"--batch {b}", ["--batch", str(b)]),
                                                     (f"--batch {b} --share=false", ["--batch", str(b), "--share=false"]))]
            + [("--lanes 2", ["--lanes", "2"])])


def rollout_rows(work, played, raw=None, decoding=FREE_GREEDY):
    """Table rows of one rollout's variants, each against --batch 1, and,
    given raw llama.cpp's prompt and single-sequence decode rates, the
    --batch 1 job's time against its floor. Every time is the rollout's
    alone, model loading excluded."""
    (variants, tokens), lines, first = played, [], None
    for label, (episodes, elapsed) in variants:
        rate = episodes / elapsed * 60
        first = first or rate
        lines.append(f"| {work} ({episodes} episodes), at most 6 steps, {decoding}, `{label}` | "
                     f"{rate:.1f} episodes/min | — | {rate / first:.2f}× `--batch 1` |")
    if raw and tokens:
        lines.append(floor_row(f"{work}, `--batch 1`", variants[0][1][1], tokens, raw))
    return lines


def floor_row(work, elapsed, tokens, raw):
    """The row of a job's time (the rollout alone) against its floor: the
    distinct prompt tokens the job must evaluate at raw's prompt rate
    plus the tokens it must generate at raw's single-sequence decode
    rate."""
    prompt, generated = tokens
    floor = prompt / raw["prompt"] + generated / raw["decode1"]
    return (f"| {work}, the whole job against its floor: {prompt} distinct prompt tokens at raw's prompt rate "
            f"+ {generated} generated tokens at raw's 1-sequence decode rate | {elapsed:.1f} s | {floor:.1f} s floor | "
            f"{ratio(floor, elapsed)} of the floor's speed |")


TABLE_HEAD = ["| work | feedrun | raw llama.cpp | ratio |", "|---|---|---|---|"]


def grid_work(env, tasks):
    return f"larger grid, {GRID_WORK[env]}, {len(ROLLOUT_HARNESSES)} harnesses × {tasks} tasks × 1 seed"


def grid_rows(grid, raw=None):
    """Table rows of the larger grid, (env, tasks, played, decoding)."""
    env, tasks, played, decoding = grid
    return rollout_rows(grid_work(env, tasks), played, raw, decoding)


def table(f, r, rollouts, grid, weight_bytes, bandwidths, threads):
    rows = [
        ("prompt processing, 512-token prompt (target ≥ 1.0×)", f["prompt"], r["prompt"], "tokens/s"),
        (f"decode, 1 sequence, {DECODE_STEPS} greedy tokens after a cached prompt (target ≥ 1.0×)", f["decode1"], r["decode1"], "tokens/s"),
        ("decode, 8 sequences batched, against raw 8 batched", f["decode8"], r["decode8"], "tokens/s"),
        ("decode, 8 sequences batched, against raw 1 sequence (target ≥ 2×)", f["decode8"], r["decode1"], "tokens/s"),
        (f"score {SCORE_CONTINUATIONS} × {SCORE_LENGTH}-token continuations after a {SCORE_PREFIX}-token prefix, prefix shared", f["score"], r["score"], "effective tokens/s"),
    ]
    lines = list(TABLE_HEAD)
    for work, fv, rv, unit in rows:
        lines.append(f"| {work} | {fv:.0f} {unit} | {rv:.0f} {unit} | {ratio(fv, rv)} |")
    lines += rollout_rows(f"rollout, ToolShed, {len(ROLLOUT_HARNESSES)} harnesses × 3 tasks × 1 seed", rollouts, r)
    if grid:
        lines += grid_rows(grid, r)
    lines.append("")
    lines.append("| decode limit | figure |")
    lines.append("|---|---|")
    lines.append(f"| weights read per generated token | {weight_bytes / 1e6:.0f} MB |")
    for n, bw in bandwidths:
        lines.append(f"| memory read bandwidth, {count(n, 'thread')} (1 GiB summed in C) | {bw:.1f} GB/s |")
    n, bw = bandwidths[-1]
    limit = bw * 1e9 / weight_bytes
    lines.append(f"| single-sequence decode limit at {count(n, 'thread')}: bandwidth ÷ weights | {limit:.0f} tokens/s |")
    lines.append(f"| feedrun's decode, 1 sequence, {count(threads, 'thread')}, against that limit | {f['decode1']:.0f} tokens/s, {f['decode1'] / limit:.2f} of it |")
    lines.append(f"| raw llama.cpp's decode, 1 sequence, against that limit | {r['decode1']:.0f} tokens/s, {r['decode1'] / limit:.2f} of it |")
    return "\n".join(lines)


def args_grid(args):
    """The larger grid's flags as args set them."""
    return grid_args(args.grid_tasks, args.grid_env, args.grid_decode, args.grid_shots, args.grid_temperature)


def args_decoding(args):
    return decoding_words(args.grid_decode, args.grid_shots, args.grid_temperature)


def play_grid(args):
    """The larger grid as args set it, played under each of its variants:
    (env, tasks, played, decoding) for grid_rows."""
    return (args.grid_env, args.grid_tasks, play_variants(args.feedrun, args.model, args.threads, args.workdir,
                                                          args_grid(args), grid_variants(args.grid_batches)), args_decoding(args))


# The sharing comparison's two plays of the larger grid: one episode at a
# time, each distinct step decoded once (counting the tokens the job must
# decode) or every step decoded.
SHARING = {"on": ["--batch", "1", "--count-tokens"], "off": ["--batch", "1", "--share=false"]}


def play_sharing(args, raw_turn=None):
    """The larger grid with --batch 1, sharing on and off, args.rounds
    plays of each: the two alternate and the one that goes first alternates
    from round to round (on off, off on, ...), so that load that drifts
    during the run moves both alike. After each round, raw_turn, when
    given, takes one turn of raw llama.cpp's prompt and 1-sequence decode
    rows, the floor's rates. Every play must write the first's rows byte
    for byte. Returns the plays by side, the sides in the order played,
    and the raw figures by row."""
    plays, order, rates, first = {"on": [], "off": []}, [], {"prompt": [], "decode1": []}, None
    for i in range(args.rounds):
        for side in (["on", "off"] if i % 2 == 0 else ["off", "on"]):
            play = play_checked(args.feedrun, args.model, args.threads, args.workdir, args_grid(args), SHARING[side],
                                f"sharing {side}, round {i + 1}/{args.rounds}", first)
            first = first or play.out
            plays[side].append(play)
            order.append((side, play))
        if raw_turn:
            for work in rates:
                rates[work].append(raw_turn(work))
                status(f"round {i + 1}/{args.rounds}, raw {work}: {rates[work][-1]:.1f}")
    counted = {p.tokens for p in plays["on"]}
    if len(counted) != 1:
        raise SystemExit(f"the plays with sharing counted different tokens: {sorted(counted)}")
    return plays, order, rates


def spread(figures, unit="s", digits=1):
    """A median with the range of its figures."""
    return (f"{statistics.median(figures):.{digits}f} {unit} (median of {len(figures)}, "
            f"{min(figures):.{digits}f}–{max(figures):.{digits}f})")


def sharing_table(args, played):
    """The sharing comparison's rows: each side's rollout time and rate,
    sharing's speed-up (off's median time over on's, and the range of the
    rounds' own ratios), the replies each side decoded, the job against
    its floor when the raw rates were measured, and the load averages
    (played is play_sharing's)."""
    plays, order, rates = played
    work = grid_work(args.grid_env, args.grid_tasks)
    decoding = args_decoding(args)
    on = [p.seconds for p in plays["on"]]
    off = [p.seconds for p in plays["off"]]
    episodes = plays["on"][0].episodes
    lines = list(TABLE_HEAD)
    for side, secs in (("on", on), ("off", off)):
        replies = plays[side][0].replies or {}
        lines.append(f"| {work} ({episodes} episodes), at most 6 steps, {decoding}, `--batch 1`, sharing {side} "
                     f"({replies.get('computed', '?')} replies decoded, {replies.get('shared', '?')} shared): the rollout alone, "
                     f"model loading excluded | {spread(secs)}, {episodes / statistics.median(secs) * 60:.1f} episodes/min | — | — |")
    rounds = [b / a for a, b in zip(on, off)]
    lines.append(f"| sharing on against off (target ≥ 1.15×): off's median time ÷ on's; the rounds' own ratios "
                 f"{min(rounds):.2f}×–{max(rounds):.2f}× | {ratio(statistics.median(off), statistics.median(on))} | — | — |")
    if rates["prompt"]:
        raw = {work: statistics.median(figures) for work, figures in rates.items()}
        lines.append(f"| raw llama.cpp's prompt rate (512-token prompt) and 1-sequence decode rate, the floor's | — | "
                     f"{spread(rates['prompt'], 'tokens/s', 0)}; {spread(rates['decode1'], 'tokens/s', 0)} | — |")
        lines.append(floor_row(f"{work}, `--batch 1`, sharing on (median)", statistics.median(on), plays["on"][0].tokens, raw))
    lines.append("")
    lines.append("1-minute load average before and after each play, in the order played: " + "; ".join(
        f"{side} {p.load[0]:.1f}→{p.load[1]:.1f}" for side, p in order) + ".")
    loads = [p.whole - p.seconds for _, p in order]
    lines.append(f"Model loading and process start, outside every time above: {min(loads):.1f}–{max(loads):.1f} s a play.")
    return "\n".join(lines)


def header_line(args, what):
    """The line above a table: the model file, threads, machine, time and
    build, then what the table measured."""
    version, llama = feedrun_version(args.feedrun)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{os.path.basename(args.gguf)} (sha256 {sha256(args.gguf)[:12]}), {count(args.threads, 'thread')}, "
            f"{cpu_model()}, {when}; {version}, {llama}; {what}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", required=True, help="the model file both sides load")
    ap.add_argument("--model", required=True, help="its registry name, for feedrun")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--feedrun", required=True, help="the feedrun binary (rollout, version)")
    ap.add_argument("--bench-binary", required=True, help="internal/llama's compiled test binary")
    ap.add_argument("--workdir", required=True, help="a scratch folder for the rollout")
    ap.add_argument("--rounds", type=int, default=5, help="turns of each side")
    ap.add_argument("--iterations", type=int, default=3, help="iterations of each benchmark per turn")
    ap.add_argument("--raw-build", required=True, help="what the raw side is, for the header")
    ap.add_argument("--raw", choices=["vendored", "python"], default="vendored",
                    help="the raw side: plain C on feedrun's own llama.cpp, or llama-cpp-python's")
    ap.add_argument("--batch", type=int, default=8, help="episodes decoding together in the batched rollout variant")
    ap.add_argument("--grid-tasks", type=int, default=0,
                    help="also play the larger grid on this many test tasks (0: not)")
    ap.add_argument("--grid-batches", type=lambda v: [int(b) for b in v.split()], default=[],
                    help="the larger grid's batch sizes besides 1, space-separated")
    ap.add_argument("--grid-env", choices=sorted(GRID_WORK), default="toolshed", help="the larger grid's environment")
    ap.add_argument("--grid-decode", choices=["free", "grammar"], default="free", help="the larger grid's --decode")
    ap.add_argument("--grid-shots", type=int, default=0, help="the larger grid's --shots")
    ap.add_argument("--grid-temperature", type=float, default=0.0, help="the larger grid's --temperature")
    ap.add_argument("--grid-only", action="store_true",
                    help="play the larger grid alone: no raw side, no kernel rows, no fixed rollout")
    ap.add_argument("--sharing", action="store_true",
                    help="play the larger grid with --batch 1, sharing on and off, --rounds times each in turns, "
                         "and raw llama.cpp's prompt and 1-sequence decode rows between rounds, for the floor")
    args = ap.parse_args()
    ROLLOUT_HARNESSES[:] = rollout_harnesses(args.feedrun)

    if args.sharing:
        if args.grid_tasks <= 0:
            raise SystemExit("bench_anchor.py: --sharing needs --grid-tasks above 0")
        if args.rounds < 2:
            raise SystemExit(f"bench_anchor.py: --rounds {args.rounds}: --sharing needs 2 or more, so that each side goes first once")
        raw_turn = None
        if args.raw == "python":
            raw = Raw(args.gguf, args.threads)
            raw_turn = lambda work: raw.run(work, args.iterations)
        else:
            raw_turn = lambda work: side_run(RAW_BENCHMARKS, args.bench_binary, args.model, args.threads, work, args.iterations)
        played = play_sharing(args, raw_turn)
        print(header_line(args, f"raw: {args.raw_build}. The larger grid with sharing on and off, {count(args.rounds, 'play')} of each, "
                          f"taking turns (on off, off on, ...), every play writing the same rows byte for byte; raw turns of "
                          f"{count(args.iterations, 'iteration')} after each round."))
        print()
        print(sharing_table(args, played))
        return

    if args.grid_only:
        if args.grid_tasks <= 0:
            raise SystemExit("bench_anchor.py: --grid-only needs --grid-tasks above 0")
        grid = play_grid(args)
        print(header_line(args, "the larger grid alone, one play per variant, each timed from the manifest's started to finished (model loading excluded)."))
        print()
        print("\n".join(TABLE_HEAD + grid_rows(grid)))
        return

    if args.raw == "python":
        raw = Raw(args.gguf, args.threads)
        raw_side = lambda work: raw.run(work, args.iterations)
    else:
        raw_side = lambda work: side_run(RAW_BENCHMARKS, args.bench_binary, args.model, args.threads, work, args.iterations)
    sides = {"raw": raw_side,
             "feedrun": lambda work: side_run(FEEDRUN_BENCHMARKS, args.bench_binary, args.model, args.threads, work, args.iterations)}
    turns = {side: {work: [] for work in FEEDRUN_BENCHMARKS} for side in sides}
    for i in range(args.rounds):
        order = ["raw", "feedrun"] if i % 2 == 0 else ["feedrun", "raw"]
        for work in FEEDRUN_BENCHMARKS:
            for side in order:
                got = sides[side](work)
                turns[side][work].append(got)
                status(f"round {i + 1}/{args.rounds}, {work}, {side}: {got:.1f}")
    rollouts = play_variants(args.feedrun, args.model, args.threads, args.workdir, rollout_args(3), rollout_variants(args.batch))
    grid = play_grid(args) if args.grid_tasks > 0 else None
    bandwidths = [(n, bandwidth(args.bench_binary, n)) for n in sorted({1, args.threads})]
    for n, bw in bandwidths:
        status(f"memory read, {count(n, 'thread')}: {bw:.1f} GB/s")

    median = {side: {work: statistics.median(figures) for work, figures in works.items()} for side, works in turns.items()}
    print(header_line(args, f"raw: {args.raw_build}. "
                      f"Median of {count(args.rounds, 'turn')} of {count(args.iterations, 'iteration')} per side and row, the sides taking turns; "
                      f"ratio = feedrun ÷ raw llama.cpp (above 1: feedrun is faster)."))
    print()
    weights = weights_read(args.bench_binary, args.model, args.threads)
    print(table(median["feedrun"], median["raw"], rollouts, grid, weights, bandwidths, args.threads))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The float32 reference for feedrun's engines, and the comparison with it.

    reference_logprobs.py score GGUF IN OUT
        reads the sequences IN (written by feedrun reference-items: prompt
        and continuation token ids) and writes OUT, the same sequences with
        per-token log-probabilities computed by transformers from the GGUF:
        every tensor dequantised to float32 and the model run in float32 on
        the CPU (eager attention, one thread). No quantised kernel, no F16
        KV cache: the model's own arithmetic, up to float32 rounding.

    reference_logprobs.py compare REF A [B ...]
        prints, as a Markdown table, each engine's largest and mean |delta|
        in nats per token against REF (and the number of tokens), per
        environment and over all, on the sequences both hold, and the same
        for each pair of engines. Needs no torch.

    reference_logprobs.py lines IN [N]
    reference_logprobs.py fromlines IN TSV ENGINE OUT
        turn sequences into scripts/engine-toggles' input lines (with N,
        only the first N failed actions after a post-failure context of each
        environment), and its output lines back into a sequences file
        labelled ENGINE.

    reference_logprobs.py fixture REF A OUT IDS...
        writes the test fixture: the sequences named IDS with the
        reference's log-probabilities, and A's largest |delta| on them.

make reference-logprobs runs all of it (scripts/reference-logprobs.sh).
"""

import copy
import json
import math
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def score(gguf, src, dst):
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    torch.set_grad_enabled(False)
    model = AutoModelForCausalLM.from_pretrained(
        os.path.dirname(gguf),
        gguf_file=os.path.basename(gguf),
        dtype=torch.float32,
        attn_implementation="eager",
    )
    model.eval()
    doc = load(src)
    engine = f"float32 reference (transformers {transformers.__version__}, torch {torch.__version__}, eager attention)"
    # The prompts of one item share their opening (the pre-failure context
    # is a prefix of the post-failure one), so the cache of the previous
    # prompt is cut back to the shared tokens rather than recomputed.
    prev, prev_cache = [], None
    for n, seq in enumerate(doc["sequences"]):
        prompt, cont = seq["prompt"], seq["continuation"]
        shared = 0
        while shared < min(len(prev), len(prompt) - 1) and prev[shared] == prompt[shared]:
            shared += 1
        if shared == 0:
            cache = None
        else:
            cache = copy.deepcopy(prev_cache)
            # Keep the shared tokens only (a negative crop drops that many
            # from the end).
            drop = cache.get_seq_length() - shared
            if drop > 0:
                cache.crop(-drop)
        out = model(
            torch.tensor([prompt[shared:]]), past_key_values=cache, use_cache=True, logits_to_keep=1
        )
        prev, prev_cache = prompt, out.past_key_values
        rows = [out.logits[0, -1]]
        if len(cont) > 1:
            more = model(
                torch.tensor([cont[:-1]]), past_key_values=copy.deepcopy(prev_cache), use_cache=True
            )
            rows.extend(more.logits[0])
        lps = []
        for row, tok in zip(rows, cont):
            lps.append(torch.log_softmax(row.double(), dim=-1)[tok].item())
        seq["logprobs"] = lps
        print(f"{n + 1}/{len(doc['sequences'])} {seq['id']}: {len(prompt)}+{len(cont)} tokens", file=sys.stderr)
        # Written after every sequence, with the sequences done so far, so
        # that a run stopped early still leaves what it measured (the
        # caller renames the file once it is whole).
        part = dict(doc, engine=engine, sequences=doc["sequences"][: n + 1])
        with open(dst, "w") as f:
            json.dump(part, f)


def deltas(ref, other, env=None):
    """Per-token |delta| of other against ref, on the sequences (of env)
    that both hold."""
    theirs = {s["id"]: s for s in other["sequences"]}
    out = []
    for s in ref["sequences"]:
        t = theirs.get(s["id"])
        if t is None or (env is not None and s["env"] != env):
            continue
        if t["continuation"] != s["continuation"] or t["prompt"] != s["prompt"]:
            sys.exit(f"compare: sequence {s['id']} has other token ids in {other['engine']}")
        out.extend(abs(a - b) for a, b in zip(s["logprobs"], t["logprobs"]))
    return out


def compare(paths):
    docs = [load(p) for p in paths]
    ref = docs[0]
    envs = sorted({s["env"] for s in ref["sequences"]})
    pairs = [(ref, d) for d in docs[1:]]
    pairs += [(a, b) for i, a in enumerate(docs[1:]) for b in docs[i + 2:]]
    head = "| against | engine | " + " | ".join(f"{e}: max, mean |Δ|" for e in envs) + " | all: max, mean |Δ| |"
    print(head)
    print("|" + "---|" * (len(envs) + 3))
    for a, b in pairs:
        cells = []
        for env in envs + [None]:
            d = deltas(a, b, env)
            cells.append(f"{max(d):.4f}, {sum(d) / len(d):.4f} ({len(d)})" if d else "–")
        print(f"| {a['engine']} | {b['engine']} | " + " | ".join(cells) + " |")
    for env in envs + [None]:
        seqs = [s for s in ref["sequences"] if env is None or s["env"] == env]
        print(f"{env or 'all'}: {len(seqs)} sequences, {sum(len(s['continuation']) for s in seqs)} tokens", file=sys.stderr)


def fixture(ref_path, a_path, dst, ids):
    ref, a = load(ref_path), load(a_path)
    byid = {s["id"]: s for s in ref["sequences"]}
    missing = [i for i in ids if i not in byid]
    if missing:
        sys.exit(f"fixture: no sequence {missing[0]} in {ref_path}")
    sub = {"engine": ref["engine"], "model": ref["model"], "sequences": [byid[i] for i in ids]}
    d = deltas(sub, a)
    sub["measured"] = {"engine": a["engine"], "max_abs_delta": max(d), "mean_abs_delta": sum(d) / len(d)}
    with open(dst, "w") as f:
        json.dump(sub, f, indent=1)
        f.write("\n")


def lines(src, n=None):
    taken = {}
    for s in load(src)["sequences"]:
        if n is not None:
            if not s["id"].endswith("/post/failed") or taken.get(s["env"], 0) >= n:
                continue
            taken[s["env"]] = taken.get(s["env"], 0) + 1
        print(f"{s['id']}\t{' '.join(map(str, s['prompt']))}\t{' '.join(map(str, s['continuation']))}")


def fromlines(src, tsv, engine, dst):
    doc = load(src)
    got = {}
    with open(tsv) as f:
        for line in f:
            sid, lps = line.rstrip("\n").split("\t")
            got[sid] = [float(x) for x in lps.split()]
    doc["sequences"] = [s for s in doc["sequences"] if s["id"] in got]
    for s in doc["sequences"]:
        if len(got[s["id"]]) != len(s["continuation"]):
            sys.exit(f"fromlines: {tsv} has {len(got[s['id']])} log-probabilities for the {len(s['continuation'])} tokens of {s['id']}")
        s["logprobs"] = got[s["id"]]
    doc["engine"] = engine
    with open(dst, "w") as f:
        json.dump(doc, f)


def main(argv):
    if len(argv) >= 4 and argv[0] == "score":
        score(*argv[1:4])
    elif len(argv) >= 3 and argv[0] == "compare":
        compare(argv[1:])
    elif len(argv) in (2, 3) and argv[0] == "lines":
        lines(argv[1], int(argv[2]) if len(argv) == 3 else None)
    elif len(argv) == 5 and argv[0] == "fromlines":
        fromlines(*argv[1:5])
    elif len(argv) >= 5 and argv[0] == "fixture":
        fixture(argv[1], argv[2], argv[3], argv[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

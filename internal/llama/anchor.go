//go:build anchor

package llama

// The anchor: raw llama.cpp, in C, on the very library feedrun links, so
// that make bench-anchor can set feedrun's benchmarks beside a plain
// program on the same llama.cpp commit, GGUF and threads. It is compiled
// only into the benchmark binary (build tag anchor), never into feedrun.
//
// The C below feeds llama.cpp the way a plain program does: a prompt in one
// llama_decode call, every sequence's token of a step in one batch, a
// threadpool attached as llama.cpp's own tools attach one, and the same
// context settings as scripts/bench_anchor.py's other raw side. Each
// function does one iteration of the work of a feedrun benchmark
// (bench_test.go), down to a log-probability per scored or chosen token.
// A memory read loop measures the bandwidth that bounds single-sequence
// decode.

/*
#cgo CFLAGS: -O3
#cgo LDFLAGS: -lpthread
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "llama.h"
#include "ggml-cpu.h"
#include "helpers.h"

typedef struct {
	struct llama_model * model;
	struct llama_context * ctx;
	struct ggml_threadpool * pool;
	const struct llama_vocab * vocab;
	struct llama_batch batch;
	int n_vocab;
	int n_seq;
	unsigned char * eog;
} anchor_raw;

static void anchor_free(anchor_raw * r) {
	if (r == NULL) return;
	if (r->ctx) llama_free(r->ctx);
	if (r->pool) ggml_threadpool_free(r->pool);
	if (r->model) llama_model_free(r->model);
	llama_batch_free(r->batch);
	free(r->eog);
	free(r);
}

// anchor_open loads the model and a context of n_seq sequences: 8192
// cells, batch and micro-batch 512, one unified cache, flash attention on.
static anchor_raw * anchor_open(const char * path, int n_seq, int threads) {
	anchor_raw * r = calloc(1, sizeof *r);
	struct llama_model_params mp = llama_model_default_params();
	mp.n_gpu_layers = 0;
	r->model = llama_model_load_from_file(path, mp);
	if (r->model == NULL) { free(r); return NULL; }
	struct llama_context_params cp = llama_context_default_params();
	cp.n_ctx = 8192;
	cp.n_batch = 512;
	cp.n_ubatch = 512;
	cp.n_seq_max = n_seq;
	cp.n_threads = threads;
	cp.n_threads_batch = threads;
	cp.kv_unified = true;
	cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
	cp.no_perf = true;
	r->ctx = llama_init_from_model(r->model, cp);
	if (r->ctx == NULL) { anchor_free(r); return NULL; }
	struct ggml_threadpool_params tp = ggml_threadpool_params_default(threads);
	r->pool = ggml_threadpool_new(&tp);
	llama_attach_threadpool(r->ctx, r->pool, r->pool);
	r->vocab = llama_model_get_vocab(r->model);
	r->n_vocab = llama_vocab_n_tokens(r->vocab);
	r->n_seq = n_seq;
	r->batch = llama_batch_init(512, 0, n_seq);
	r->eog = calloc(r->n_vocab, 1);
	for (int t = 0; t < r->n_vocab; t++) r->eog[t] = llama_vocab_is_eog(r->vocab, t);
	return r;
}

static int anchor_tokenize(anchor_raw * r, const char * text, llama_token * out, int max) {
	return llama_tokenize(r->vocab, text, (int32_t) strlen(text), out, max, true, false);
}

// anchor_prompt evaluates n tokens from an empty cache and the
// log-probability of one token after them (BenchmarkPromptProcessing512).
static int anchor_prompt(anchor_raw * r, const llama_token * toks, int n, double * lp) {
	llama_memory_clear(llama_get_memory(r->ctx), false);
	r->batch.n_tokens = 0;
	for (int i = 0; i < n; i++) feedrun_batch_add(&r->batch, toks[i], i, 0, i == n - 1);
	int rc = llama_decode(r->ctx, r->batch);
	if (rc != 0) return rc;
	*lp = feedrun_logprob(llama_get_logits_ith(r->ctx, n - 1), r->n_vocab, toks[0]);
	return 0;
}

// anchor_prime caches a prompt in sequence 0.
static int anchor_prime(anchor_raw * r, const llama_token * toks, int n) {
	llama_memory_clear(llama_get_memory(r->ctx), false);
	r->batch.n_tokens = 0;
	for (int i = 0; i < n; i++) feedrun_batch_add(&r->batch, toks[i], i, 0, i == n - 1);
	return llama_decode(r->ctx, r->batch);
}

// anchor_generate is one iteration of benchDecode: the primed prompt but
// its last token is copied to sequences 1..seqs, that token is fed, and
// then each greedy choice (every end-of-generation token banned) is fed
// back, one token per sequence per call, steps times. It returns the
// tokens generated, or -1 when a decode fails.
static int anchor_generate(anchor_raw * r, const llama_token * prompt, int n, int seqs, int steps, double * sum) {
	llama_memory_t mem = llama_get_memory(r->ctx);
	llama_token feed[512];
	for (int s = 1; s <= seqs; s++) {
		llama_memory_seq_rm(mem, s, -1, -1);
		llama_memory_seq_cp(mem, 0, s, 0, n - 1);
		feed[s] = prompt[n - 1];
	}
	int made = 0;
	for (int step = 0; step < steps; step++) {
		r->batch.n_tokens = 0;
		for (int s = 1; s <= seqs; s++) feedrun_batch_add(&r->batch, feed[s], n - 1 + step, s, 1);
		if (llama_decode(r->ctx, r->batch) != 0) return -1;
		for (int s = 1; s <= seqs; s++) {
			const float * row = llama_get_logits_ith(r->ctx, s - 1);
			int best = -1;
			for (int t = 0; t < r->n_vocab; t++) {
				if (!r->eog[t] && (best < 0 || row[t] > row[best])) best = t;
			}
			*sum += feedrun_logprob(row, r->n_vocab, best);
			feed[s] = best;
			made++;
		}
	}
	for (int s = 1; s <= seqs; s++) llama_memory_seq_rm(mem, s, -1, -1);
	return made;
}

// anchor_score is one iteration of BenchmarkScore4/shared: a prefix
// evaluated once from an empty cache, nconts continuations of len tokens
// (continuation j starts at toks[prefix + j]) forked from it and scored in
// one batch.
static int anchor_score(anchor_raw * r, const llama_token * toks, int prefix, int nconts, int len, double * sum) {
	llama_memory_t mem = llama_get_memory(r->ctx);
	llama_memory_clear(mem, false);
	r->batch.n_tokens = 0;
	for (int i = 0; i < prefix; i++) feedrun_batch_add(&r->batch, toks[i], i, 0, i == prefix - 1);
	int rc = llama_decode(r->ctx, r->batch);
	if (rc != 0) return rc;
	const float * first = llama_get_logits_ith(r->ctx, prefix - 1);
	for (int j = 0; j < nconts; j++) *sum += feedrun_logprob(first, r->n_vocab, toks[prefix + j]);
	r->batch.n_tokens = 0;
	for (int j = 0; j < nconts; j++) {
		llama_memory_seq_cp(mem, 0, j + 1, -1, -1);
		for (int t = 0; t < len - 1; t++) feedrun_batch_add(&r->batch, toks[prefix + j + t], prefix + t, j + 1, 1);
	}
	rc = llama_decode(r->ctx, r->batch);
	if (rc != 0) return rc;
	int b = 0;
	for (int j = 0; j < nconts; j++) {
		for (int t = 0; t < len - 1; t++) {
			*sum += feedrun_logprob(llama_get_logits_ith(r->ctx, b), r->n_vocab, toks[prefix + j + t + 1]);
			b++;
		}
	}
	for (int j = 0; j < nconts; j++) llama_memory_seq_rm(mem, j + 1, -1, -1);
	return 0;
}

// The bandwidth loop: each thread sums its share of a buffer in 64-bit
// words, which the compiler vectorises, so the loop is bound by how fast
// memory delivers bytes, as decode is by how fast it delivers weights.
typedef struct {
	const uint64_t * p;
	size_t n;
	uint64_t sum;
} anchor_span;

static void * anchor_read_span(void * arg) {
	anchor_span * s = arg;
	uint64_t a = 0, b = 0, c = 0, d = 0;
	size_t i = 0;
	for (; i + 4 <= s->n; i += 4) {
		a += s->p[i];
		b += s->p[i + 1];
		c += s->p[i + 2];
		d += s->p[i + 3];
	}
	for (; i < s->n; i++) a += s->p[i];
	s->sum = a + b + c + d;
	return NULL;
}

// anchor_read reads words 64-bit words with threads threads once.
static uint64_t anchor_read(const uint64_t * p, size_t words, int threads) {
	pthread_t ids[64];
	anchor_span spans[64];
	if (threads > 64) threads = 64;
	size_t per = words / threads;
	for (int t = 0; t < threads; t++) {
		spans[t].p = p + per * t;
		spans[t].n = t == threads - 1 ? words - per * t : per;
		pthread_create(&ids[t], NULL, anchor_read_span, &spans[t]);
	}
	uint64_t sum = 0;
	for (int t = 0; t < threads; t++) {
		pthread_join(ids[t], NULL);
		sum += spans[t].sum;
	}
	return sum;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// cToken is llama.cpp's token id, for the tests (which cannot use cgo).
type cToken = C.llama_token

// rawAnchor is raw llama.cpp on one model and context, driven from C.
type rawAnchor struct {
	r    *C.anchor_raw
	path string
	// sum keeps the log-probabilities the work computes, so that none of
	// it can be optimised away, and lets a test check they are finite.
	sum float64
}

func openRawAnchor(path string, sequences, threads int) (*rawAnchor, error) {
	backendInit()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	r := C.anchor_open(cpath, C.int(sequences), C.int(threads))
	if r == nil {
		return nil, fmt.Errorf("model file %s: raw llama.cpp could not load it or create a context%s", path, lastError())
	}
	return &rawAnchor{r: r, path: path}, nil
}

func (a *rawAnchor) Close() { C.anchor_free(a.r) }

func (a *rawAnchor) tokenize(text string) ([]C.llama_token, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	out := make([]C.llama_token, len(text)+8)
	n := C.anchor_tokenize(a.r, ctext, &out[0], C.int(len(out)))
	if n < 0 {
		return nil, fmt.Errorf("raw llama.cpp could not tokenize %d bytes", len(text))
	}
	return out[:n], nil
}

func (a *rawAnchor) prompt(toks []C.llama_token) error {
	var lp C.double
	if rc := C.anchor_prompt(a.r, &toks[0], C.int(len(toks)), &lp); rc != 0 {
		return fmt.Errorf("raw llama.cpp: llama_decode returned %d", rc)
	}
	a.sum += float64(lp)
	return nil
}

func (a *rawAnchor) prime(toks []C.llama_token) error {
	if rc := C.anchor_prime(a.r, &toks[0], C.int(len(toks))); rc != 0 {
		return fmt.Errorf("raw llama.cpp: llama_decode returned %d", rc)
	}
	return nil
}

func (a *rawAnchor) generate(prompt []C.llama_token, sequences, steps int) (int, error) {
	var sum C.double
	n := C.anchor_generate(a.r, &prompt[0], C.int(len(prompt)), C.int(sequences), C.int(steps), &sum)
	if n < 0 {
		return 0, fmt.Errorf("raw llama.cpp: a decode of %d sequences failed", sequences)
	}
	a.sum += float64(sum)
	return int(n), nil
}

func (a *rawAnchor) score(toks []C.llama_token, prefix, continuations, length int) error {
	var sum C.double
	if rc := C.anchor_score(a.r, &toks[0], C.int(prefix), C.int(continuations), C.int(length), &sum); rc != 0 {
		return fmt.Errorf("raw llama.cpp: llama_decode returned %d", rc)
	}
	a.sum += float64(sum)
	return nil
}

// readMemory reads buf once with threads threads and returns a sum of its
// words, which the caller keeps so that the read cannot be dropped.
func readMemory(buf []uint64, threads int) uint64 {
	return uint64(C.anchor_read((*C.uint64_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.int(threads)))
}

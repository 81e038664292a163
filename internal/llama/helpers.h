// C helpers that feedrun's binding (llama.go) and the anchor (anchor.go)
// both call, so that the anchor's raw llama.cpp fills a batch and computes
// a log-probability exactly as feedrun does. Each cgo preamble is its own
// C file and a package may define C functions in one preamble only, so
// they are static inline here and each preamble includes this header.

#ifndef FEEDRUN_HELPERS_H
#define FEEDRUN_HELPERS_H

#include <math.h>
#include "llama.h"

static inline void feedrun_batch_add(struct llama_batch * b, llama_token tok, llama_pos pos, llama_seq_id seq, int logits) {
	int i = b->n_tokens;
	b->token[i] = tok;
	b->pos[i] = pos;
	b->n_seq_id[i] = 1;
	b->seq_id[i][0] = seq;
	b->logits[i] = (int8_t) logits;
	b->n_tokens = i + 1;
}

// Log-probability of token under the logits row, in double precision: the
// vocabulary is tens of thousands wide and the per-token sums are what the
// study reports.
static inline double feedrun_logprob(const float * logits, int n, int token) {
	float mx = logits[0];
	for (int i = 1; i < n; i++) if (logits[i] > mx) mx = logits[i];
	double s = 0.0;
	for (int i = 0; i < n; i++) s += exp((double) (logits[i] - mx));
	return (double) (logits[token] - mx) - log(s);
}

#endif

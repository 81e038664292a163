// engine-toggles: scores token sequences on the candidate engine (llama.cpp
// 0c1e57098, the static libraries scripts/engine-build.sh leaves in the
// cache) with one setting changed at a time, to tell which kernel moves its
// log-probabilities away from the float32 reference. feedrun itself cannot
// change these settings (internal/llama fixes them), and the vendored
// engine has no per-row/tiled split to toggle.
//
// Input on stdin, one sequence per line: id, a tab, the prompt's token ids,
// a tab, the continuation's (space-separated). Output: id, a tab, the
// continuation's log-probabilities. Settings from the environment:
//   FA=0|1 (flash attention, default 1)   UBATCH (default 512)
//   KV=f16|f32 (cache type, default f16)   REPACK=0|1 (extra buffer types:
//   weight repacking, default 1)           THREADS (default 1)
// scripts/reference-logprobs.sh builds and runs it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

static int env_int(const char *name, int def) {
	const char *v = getenv(name);
	return v && *v ? atoi(v) : def;
}

static void quiet(enum ggml_log_level level, const char *text, void *) {
	if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static std::vector<llama_token> ids(const std::string &s) {
	std::vector<llama_token> out;
	std::istringstream in(s);
	long v;
	while (in >> v) out.push_back((llama_token)v);
	return out;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: engine-toggles GGUF < sequences\n");
		return 2;
	}
	llama_log_set(quiet, nullptr);
	llama_backend_init();
	llama_model_params mp = llama_model_default_params();
	mp.n_gpu_layers = 0;
	mp.use_extra_bufts = env_int("REPACK", 1) != 0;
	llama_model *model = llama_model_load_from_file(argv[1], mp);
	if (!model) {
		fprintf(stderr, "engine-toggles: cannot load %s\n", argv[1]);
		return 1;
	}
	const llama_vocab *vocab = llama_model_get_vocab(model);
	const int n_vocab = llama_vocab_n_tokens(vocab);
	const bool f32 = getenv("KV") && std::string(getenv("KV")) == "f32";
	const int threads = env_int("THREADS", 1);

	std::string line;
	while (std::getline(std::cin, line)) {
		size_t a = line.find('\t'), b = line.find('\t', a + 1);
		if (a == std::string::npos || b == std::string::npos) {
			fprintf(stderr, "engine-toggles: line without two tabs: %.60s\n", line.c_str());
			return 2;
		}
		std::string id = line.substr(0, a);
		std::vector<llama_token> prompt = ids(line.substr(a + 1, b - a - 1)), cont = ids(line.substr(b + 1));
		std::vector<llama_token> all = prompt;
		all.insert(all.end(), cont.begin(), cont.end());
		// A fresh context per sequence, so that each is computed from
		// scratch with the same calls, as the reference computes it.
		llama_context_params cp = llama_context_default_params();
		cp.n_ctx = 4096;
		cp.n_batch = 512;
		cp.n_ubatch = env_int("UBATCH", 512);
		cp.n_seq_max = 1;
		cp.n_threads = cp.n_threads_batch = threads;
		cp.flash_attn_type = env_int("FA", 1) ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
		cp.type_k = cp.type_v = f32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
		cp.no_perf = true;
		llama_context *ctx = llama_init_from_model(model, cp);
		if (!ctx) {
			fprintf(stderr, "engine-toggles: cannot create a context\n");
			return 1;
		}
		llama_batch batch = llama_batch_init(512, 0, 1);
		std::vector<double> lps;
		for (size_t start = 0; start < all.size(); start += 512) {
			size_t end = std::min(all.size(), start + 512);
			batch.n_tokens = 0;
			for (size_t i = start; i < end; i++) {
				int k = batch.n_tokens++;
				batch.token[k] = all[i];
				batch.pos[k] = (llama_pos)i;
				batch.n_seq_id[k] = 1;
				batch.seq_id[k][0] = 0;
				// Logits where they predict a continuation token.
				batch.logits[k] = i + 1 >= prompt.size() && i + 1 < all.size();
			}
			if (llama_decode(ctx, batch) != 0) {
				fprintf(stderr, "engine-toggles: decode failed on %s\n", id.c_str());
				return 1;
			}
			for (size_t i = start; i < end; i++) {
				if (!(i + 1 >= prompt.size() && i + 1 < all.size())) continue;
				const float *row = llama_get_logits_ith(ctx, (int)(i - start));
				double mx = -INFINITY, sum = 0;
				for (int v = 0; v < n_vocab; v++) mx = std::max(mx, (double)row[v]);
				for (int v = 0; v < n_vocab; v++) sum += std::exp((double)row[v] - mx);
				lps.push_back((double)row[all[i + 1]] - mx - std::log(sum));
			}
		}
		printf("%s\t", id.c_str());
		for (size_t i = 0; i < lps.size(); i++) printf("%s%.9g", i ? " " : "", lps[i]);
		printf("\n");
		fflush(stdout);
		llama_batch_free(batch);
		llama_free(ctx);
	}
	llama_model_free(model);
	return 0;
}

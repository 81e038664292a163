package llama

/*
#cgo CXXFLAGS: -std=c++17
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <signal.h>
#include <unistd.h>
#include "llama.h"
#include "ggml-cpu.h"
#include "helpers.h"

// A threadpool that outlives decode calls. Without one, ggml creates the
// compute threads for every graph and joins them after it (a disposable
// pool), which a decode step of a small model pays on every token. Polling
// is ggml's default, as llama.cpp's own tools use it.
static struct ggml_threadpool * feedrun_threadpool(int n_threads) {
	struct ggml_threadpool_params p = ggml_threadpool_params_default(n_threads);
	return ggml_threadpool_new(&p);
}

// An assertion that fails inside llama.cpp calls abort(). Go's runtime
// would report the SIGABRT as a crash with exit code 2, which feedrun
// documents as bad usage; a failed assertion is a bug in feedrun or
// llama.cpp, so the process says so and exits 1 (the work failed).
static void feedrun_on_abort(int sig) {
	static const char msg[] = "feedrun: llama.cpp aborted on a failed check (its message is above); this is a bug in feedrun or llama.cpp, not a usage error\n";
	ssize_t n = write(2, msg, sizeof msg - 1);
	(void) n;
	(void) sig;
	_exit(1);
}

static void feedrun_exit_on_abort(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = feedrun_on_abort;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGABRT, &sa, NULL);
}

// Logging: llama.cpp and ggml log through one callback. We keep the last
// error line so that a failed load can say why, and print everything only
// when verbose logging was asked for.
static char feedrun_last_error[1024];
static int feedrun_verbose = 0;

static void feedrun_log(enum ggml_log_level level, const char * text, void * user_data) {
	(void) user_data;
	if (feedrun_verbose) {
		fputs(text, stderr);
	}
	if (level == GGML_LOG_LEVEL_ERROR && text != NULL && text[0] != '\0' && text[0] != '\n') {
		strncpy(feedrun_last_error, text, sizeof(feedrun_last_error) - 1);
		feedrun_last_error[sizeof(feedrun_last_error) - 1] = '\0';
	}
}

static void feedrun_log_init(int verbose) {
	feedrun_verbose = verbose;
	llama_log_set(feedrun_log, NULL);
}

static void feedrun_clear_error(void) { feedrun_last_error[0] = '\0'; }
static const char * feedrun_get_error(void) { return feedrun_last_error; }

static int feedrun_chat(const char * tmpl, const char ** roles, const char ** contents, int n, int add_ass, char * buf, int len) {
	struct llama_chat_message msgs[n > 0 ? n : 1];
	for (int i = 0; i < n; i++) {
		msgs[i].role = roles[i];
		msgs[i].content = contents[i];
	}
	return llama_chat_apply_template(tmpl, msgs, (size_t) n, add_ass != 0, buf, len);
}

*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/feedrun/feedrun/internal/kvcache"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/transcript"
)

var initOnce sync.Once

func backendInit() {
	initOnce.Do(func() {
		verbose := 0
		if os.Getenv("FEEDRUN_LLAMA_LOG") != "" {
			verbose = 1
		}
		C.feedrun_log_init(C.int(verbose))
		C.llama_backend_init()
	})
}

// SystemInfo is llama.cpp's system-info line: which vector extensions the
// build uses. A build without -march flags shows no AVX here.
func SystemInfo() string {
	backendInit()
	return C.GoString(C.llama_print_system_info())
}

// abortOnce installs the handler that turns an abort inside llama.cpp into
// exit code 1, once, before the first model is loaded.
var abortOnce sync.Once

// Options configure a loaded model.
type Options struct {
	Threads int // 0: all cores
	Context int // KV cache size in tokens; 0: 8192
	Batch   int // tokens per decode call; 0: 512
	// Sequences is how many sequences share the KV cache at once to score
	// or generate; one of them holds the cached prefix. 0: 16, or 2 with
	// Streams, where each costs a stream of Context cells.
	Sequences int
	// Kept is how many transcripts a unit keeps cached, one per episode
	// that a Generate call advances (lm.GenerateRequest.Keep); 0: 1. Each
	// has a sequence of its own beside Sequences, and the KV cache holds
	// Context cells for each beside Context for the rest, because a kept
	// transcript frees no cell until the unit ends (see kvcache.Continue).
	Kept int
	// Streams gives every sequence a KV stream of its own (llama.cpp's
	// non-unified cache) instead of one stream that all share. Flash
	// attention then reads, for each token, only its own stream's cells,
	// where in one stream it visits every episode's cells (masked or not);
	// and a kept transcript can start afresh while the others play on
	// (lm.GenerateRequest.KeepFresh). Batched rollouts want it; scoring,
	// whose forks share the prefix's cells without copying them, does
	// not. The KV cache then holds Context cells for every sequence.
	Streams bool
	// NoPrefixReuse scores each prefix+continuation from scratch. It exists
	// to measure what prefix sharing buys and to check that it changes no
	// figure; runs never need it.
	NoPrefixReuse bool
	// GrammarFullMask masks the whole vocabulary with the grammar at every
	// step instead of testing the chosen token first. It exists to check
	// that the shortcut changes no reply; runs never need it.
	GrammarFullMask bool
}

func (o Options) withDefaults() Options {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.Context <= 0 {
		o.Context = 8192
	}
	if o.Batch <= 0 {
		o.Batch = 512
	}
	if o.Sequences <= 1 {
		o.Sequences = 16
		if o.Streams {
			o.Sequences = 2
		}
	}
	if o.Kept <= 0 {
		o.Kept = 1
	}
	return o
}

// cacheOptions are the KV cache's books for these options.
func (o Options) cacheOptions() kvcache.Options {
	return kvcache.Options{Batch: o.Batch, NoPrefixReuse: o.NoPrefixReuse, Forks: o.Sequences - 1, Kept: o.Kept, Streams: o.Streams}
}

// cells is the size of the KV cache in tokens: in one stream, Context for
// each kept transcript and once more for sequence 0 and the forks; in
// streams of their own, Context for every sequence.
func (o Options) cells() int {
	if o.Streams {
		return o.Context * o.cacheOptions().Sequences()
	}
	return o.Context * (o.Kept + 1)
}

// layout names the KV cache's layout, for errors.
func (o Options) layout() string {
	if o.Streams {
		return fmt.Sprintf("--context %d for each of %d streams", o.Context, o.cacheOptions().Sequences())
	}
	return fmt.Sprintf("--context %d for each of %d kept transcripts and once more", o.Context, o.Kept)
}

// Model is a GGUF checkpoint with one llama.cpp context. It is not safe for
// concurrent use: like ollama's runner, one goroutine owns a context.
type Model struct {
	mu     sync.Mutex
	model  *C.struct_llama_model
	ctx    *C.struct_llama_context
	vocab  *C.struct_llama_vocab
	batch  C.struct_llama_batch
	opts   Options
	info   lm.Info
	nVocab int
	tmpl   *C.char // owned by the model; nil when the GGUF has no template
	// attention names the attention kernel the context was created with,
	// for the run's manifest.
	attention string
	// path is the model file, for errors that name the model.
	path string
	// fixes add what the GGUF's template writes beyond the format
	// llama.cpp recognises in it (see chatFixes).
	fixes chatFixes
	// cache decides what the KV cache keeps and reuses; it acts through
	// kvMemory.
	cache *kvcache.Cache
	// pool holds the context's compute threads between decode calls;
	// without it ggml starts and joins them for every call.
	pool *C.struct_ggml_threadpool
	// weights is the sampling draw's buffer, one weight per token.
	weights []float64
}

var _ lm.Model = (*Model)(nil)

// Load opens a GGUF file (memory-mapped) and creates a context for it.
func Load(path string, opts Options) (*Model, error) {
	backendInit()
	opts = opts.withDefaults()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	abortOnce.Do(func() { C.feedrun_exit_on_abort() })
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))

	mp := C.llama_model_default_params()
	memoryMap(&mp)
	mp.n_gpu_layers = 0
	C.feedrun_clear_error()
	model := C.llama_model_load_from_file(cpath, mp)
	if model == nil {
		return nil, fmt.Errorf("model file %s: llama.cpp could not load it%s", path, lastError())
	}

	cp := C.llama_context_default_params()
	kv := opts.cacheOptions()
	cp.n_ctx = C.uint32_t(opts.cells())
	cp.n_batch = C.uint32_t(opts.Batch)
	cp.n_ubatch = C.uint32_t(opts.Batch)
	cp.n_seq_max = C.uint32_t(kv.Sequences())
	cp.n_threads = C.int32_t(opts.Threads)
	cp.n_threads_batch = C.int32_t(opts.Threads)
	// One unified KV buffer makes forking a sequence a bookkeeping step
	// rather than a copy: every continuation shares the prefix's cells.
	// Streams of their own (Options.Streams) cost a copy of the prefix's
	// stream per fork, and spare each token the other sequences' cells.
	cp.kv_unified = C.bool(!opts.Streams)
	cp.flash_attn_type = C.LLAMA_FLASH_ATTN_TYPE_ENABLED
	cp.no_perf = true
	ctx := C.llama_init_from_model(model, cp)
	if ctx == nil {
		C.llama_model_free(model)
		return nil, fmt.Errorf("model file %s: could not create a llama.cpp context%s", path, lastError())
	}

	pool := C.feedrun_threadpool(C.int(opts.Threads))
	if pool == nil {
		C.llama_free(ctx)
		C.llama_model_free(model)
		return nil, fmt.Errorf("model file %s: could not start %d compute threads%s", path, opts.Threads, lastError())
	}
	C.llama_attach_threadpool(ctx, pool, pool)

	m := &Model{
		model: model,
		ctx:   ctx,
		pool:  pool,
		vocab: C.llama_model_get_vocab(model),
		batch: C.llama_batch_init(C.int32_t(opts.Batch), 0, C.int32_t(kv.Sequences())),
		opts:  opts,
	}
	m.cache = kvcache.New(kvMemory{m}, kv)
	m.nVocab = int(C.llama_vocab_n_tokens(m.vocab))
	m.attention = "flash attention " + C.GoString(C.llama_flash_attn_type_name(cp.flash_attn_type))
	m.tmpl = C.llama_model_chat_template(model, nil)
	m.info = lm.Info{
		Name:          m.meta("general.name"),
		Architecture:  m.meta("general.architecture"),
		Description:   m.desc(),
		Parameters:    uint64(C.llama_model_n_params(model)),
		SizeBytes:     uint64(C.llama_model_size(model)),
		VocabSize:     m.nVocab,
		ContextLength: int(C.llama_model_n_ctx_train(model)),
	}
	m.path = path
	if m.tmpl != nil {
		m.info.ChatTemplate = C.GoString(m.tmpl)
		m.fixes = chatFixesFor(m.info.ChatTemplate)
	} else {
		m.info.ReplyDelimiter = plainReplyDelimiter
	}
	return m, nil
}

// clearError forgets the last error llama.cpp logged, before a call whose
// failure lastError then explains.
func clearError() { C.feedrun_clear_error() }

func lastError() string {
	s := strings.TrimSpace(C.GoString(C.feedrun_get_error()))
	if s == "" {
		return ""
	}
	return ": " + s
}

// Close frees the context and the model. It is safe to call twice.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx != nil {
		C.llama_batch_free(m.batch)
		C.llama_free(m.ctx)
		m.ctx = nil
	}
	if m.pool != nil {
		C.ggml_threadpool_free(m.pool)
		m.pool = nil
	}
	if m.model != nil {
		C.llama_model_free(m.model)
		m.model = nil
	}
	return nil
}

// Info describes the checkpoint from its metadata.
func (m *Model) Info() lm.Info { return m.info }

// PromptTokensEvaluated is how many prompt tokens the context has
// evaluated since it was loaded (lm.PromptCounter).
func (m *Model) PromptTokensEvaluated() (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cache.Evaluated(), true
}

var _ lm.PromptCounter = (*Model)(nil)

// ContextWindow is the context each sequence was loaded with (--context),
// which Generate holds every request's prompt and new tokens to
// (lm.Windowed).
func (m *Model) ContextWindow() int { return m.opts.Context }

var _ lm.Windowed = (*Model)(nil)

// Attention names the attention kernel the context runs, as llama.cpp
// names the setting ("flash attention enabled"): it changes per-token
// log-probabilities in the fourth decimal, so runs record it.
func (m *Model) Attention() string { return m.attention }

func (m *Model) meta(key string) string {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	buf := make([]byte, 256)
	for {
		n := C.llama_model_meta_val_str(m.model, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
		if n < 0 {
			return ""
		}
		if int(n) < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, int(n)+1)
	}
}

func (m *Model) desc() string {
	buf := make([]byte, 256)
	n := C.llama_model_desc(m.model, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if n < 0 {
		return ""
	}
	return string(buf[:min(int(n), len(buf)-1)])
}

// Tokenize encodes text with the model's vocabulary.
func (m *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]lm.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil {
		return nil, lm.ErrClosed
	}
	return m.tokenize(text, addSpecial, parseSpecial)
}

func (m *Model) tokenize(text string, addSpecial, parseSpecial bool) ([]lm.Token, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	out := make([]lm.Token, len(text)+8)
	for {
		n := C.llama_tokenize(m.vocab, ctext, C.int32_t(len(text)),
			(*C.llama_token)(unsafe.Pointer(&out[0])), C.int32_t(len(out)),
			C.bool(addSpecial), C.bool(parseSpecial))
		if n >= 0 {
			return out[:n], nil
		}
		if n == math.MinInt32 {
			return nil, fmt.Errorf("tokenize: text of %d bytes is too long", len(text))
		}
		out = make([]lm.Token, -int(n))
	}
}

// TokenText is the text piece of one token, control tokens included.
func (m *Model) TokenText(t lm.Token) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil {
		return ""
	}
	buf := make([]byte, 64)
	for {
		n := C.llama_token_to_piece(m.vocab, C.llama_token(t), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, true)
		if n >= 0 {
			return string(buf[:n])
		}
		buf = make([]byte, -int(n))
	}
}

// Detokenize joins tokens into text, rendering control tokens as text.
func (m *Model) Detokenize(tokens []lm.Token) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil || len(tokens) == 0 {
		return ""
	}
	return m.detokenize(tokens)
}

func (m *Model) detokenize(tokens []lm.Token) string {
	buf := make([]byte, len(tokens)*8+16)
	for {
		n := C.llama_detokenize(m.vocab, (*C.llama_token)(unsafe.Pointer(&tokens[0])), C.int32_t(len(tokens)),
			(*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), false, true)
		if n >= 0 {
			return string(buf[:n])
		}
		buf = make([]byte, -int(n))
	}
}

// IsEndOfTurn reports whether t ends a generation: an end-of-generation
// token, or any other control token (see choose).
func (m *Model) IsEndOfTurn(t lm.Token) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.model != nil && m.endsReply(t)
}

// RenderChat formats messages with the GGUF's chat template through
// llama_chat_apply_template, or with PlainTemplate when there is none.
func (m *Model) RenderChat(msgs []transcript.Message, addGenerationPrompt bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil {
		return "", lm.ErrClosed
	}
	for i, msg := range msgs {
		switch msg.Role {
		case transcript.RoleSystem, transcript.RoleUser, transcript.RoleAssistant, transcript.RoleTool:
		default:
			return "", fmt.Errorf("render chat: message %d: role %q: expected system, user, assistant or tool", i, msg.Role)
		}
	}
	if m.tmpl == nil {
		return RenderPlain(msgs, addGenerationPrompt), nil
	}
	given := msgs
	msgs, err := m.fixes.messages(msgs)
	if err != nil {
		return "", err
	}
	n := len(msgs)
	roles := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	contents := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(roles)
	defer C.free(contents)
	rs := unsafe.Slice((**C.char)(roles), max(n, 1))
	cs := unsafe.Slice((**C.char)(contents), max(n, 1))
	total := 0
	for i, msg := range msgs {
		rs[i] = C.CString(msg.Role)
		cs[i] = C.CString(msg.Content)
		total += len(msg.Role) + len(msg.Content)
	}
	defer func() {
		for i := range msgs {
			C.free(unsafe.Pointer(rs[i]))
			C.free(unsafe.Pointer(cs[i]))
		}
	}()
	add := C.int(0)
	if addGenerationPrompt {
		add = 1
	}
	size := 2*total + 512
	for {
		buf := C.malloc(C.size_t(size))
		got := C.feedrun_chat(m.tmpl, (**C.char)(roles), (**C.char)(contents), C.int(n), add, (*C.char)(buf), C.int(size))
		if got < 0 {
			C.free(buf)
			// Never a silent fallback to another format: the study's
			// figures depend on the prompt being the model's own.
			return "", fmt.Errorf("render chat: model %q (%s): llama.cpp does not recognise its chat template (%.60q...), and feedrun renders chats only through llama.cpp's built-in formats", m.info.Name, m.path, C.GoString(m.tmpl))
		}
		if int(got) <= size {
			s := C.GoStringN((*C.char)(buf), got)
			C.free(buf)
			return m.fixes.finish(s, given, addGenerationPrompt), nil
		}
		C.free(buf)
		size = int(got) + 1
	}
}

// decode runs the batch, turning llama.cpp's status codes into errors.
func (m *Model) decode() error {
	rc := C.llama_decode(m.ctx, m.batch)
	switch {
	case rc == 0:
		return nil
	case rc == 1:
		return fmt.Errorf("decode: no room in the KV cache (%d tokens: %s); raise --context", m.opts.cells(), m.opts.layout())
	default:
		return fmt.Errorf("decode: llama_decode returned %d%s", int(rc), lastError())
	}
}

func (m *Model) mem() C.llama_memory_t { return C.llama_get_memory(m.ctx) }

func (m *Model) logprob(batchIndex int, token lm.Token) float64 {
	row := C.llama_get_logits_ith(m.ctx, C.int32_t(batchIndex))
	return float64(C.feedrun_logprob(row, C.int(m.nVocab), C.int(token)))
}

func (m *Model) logits(batchIndex int) []float32 {
	row := C.llama_get_logits_ith(m.ctx, C.int32_t(batchIndex))
	return unsafe.Slice((*float32)(unsafe.Pointer(row)), m.nVocab)
}

func (m *Model) checkTokens(what string, toks []lm.Token) error {
	for _, t := range toks {
		if t < 0 || int(t) >= m.nVocab {
			return fmt.Errorf("%s: token id %d outside the vocabulary (0..%d)", what, t, m.nVocab-1)
		}
	}
	return nil
}

// BeginUnit starts a unit of work (a probe item, an episode) whose results
// must not depend on what ran before it; see kvcache for what that takes.
func (m *Model) BeginUnit() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model != nil {
		m.cache.BeginUnit()
	}
}

// kvMemory is the context's KV cache as kvcache drives it: each method is
// one llama.cpp call, or a decode of one batch.
type kvMemory struct{ m *Model }

var _ kvcache.Memory = kvMemory{}

func (k kvMemory) Decode(seq, pos int, tokens []lm.Token, logits bool) error {
	m := k.m
	m.batch.n_tokens = 0
	for i, t := range tokens {
		m.batchAdd(t, pos+i, seq, logits && i == len(tokens)-1)
	}
	return m.decode()
}

func (k kvMemory) Remove(seq, from, to int) bool {
	return bool(C.llama_memory_seq_rm(k.m.mem(), C.llama_seq_id(seq), C.llama_pos(from), C.llama_pos(to)))
}

func (k kvMemory) Copy(src, dst, from, to int) {
	C.llama_memory_seq_cp(k.m.mem(), C.llama_seq_id(src), C.llama_seq_id(dst), C.llama_pos(from), C.llama_pos(to))
}

func (k kvMemory) Clear(data bool) { C.llama_memory_clear(k.m.mem(), C.bool(data)) }

func (k kvMemory) Save(seq int) ([]byte, bool) {
	return readState(int(C.llama_state_seq_get_size(k.m.ctx, C.llama_seq_id(seq))), func(buf []byte) int {
		return int(C.llama_state_seq_get_data(k.m.ctx, (*C.uint8_t)(&buf[0]), C.size_t(len(buf)), C.llama_seq_id(seq)))
	})
}

// readState copies out a sequence's state of size bytes with read, which
// fills buf and returns the bytes it wrote. llama.cpp sizes even an empty
// sequence's state (its header); a size of 0 is its failure, and there is
// no first byte to hand it, so that is a failed Save rather than a panic.
func readState(size int, read func(buf []byte) int) ([]byte, bool) {
	if size <= 0 {
		return nil, false
	}
	state := make([]byte, size)
	return state, read(state) == size
}

func (k kvMemory) Restore(seq int, state []byte) bool {
	if len(state) == 0 {
		return false // not a state Save returned
	}
	return C.llama_state_seq_set_data(k.m.ctx, (*C.uint8_t)(&state[0]), C.size_t(len(state)), C.llama_seq_id(seq)) != 0
}

// prefixLogprob reads the distribution a primed prefix left behind; it is
// only valid until the next decode.
func (m *Model) prefixLogprob(token lm.Token) float64 {
	return m.logprob(int(m.batch.n_tokens)-1, token)
}

// Score returns per-token log-probabilities of each continuation after the
// shared prefix.
func (m *Model) Score(prefix []lm.Token, conts []lm.Continuation) ([][]float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil {
		return nil, lm.ErrClosed
	}
	if len(prefix) == 0 {
		return nil, errors.New("score: empty prefix")
	}
	if err := m.checkTokens("score prefix", prefix); err != nil {
		return nil, err
	}
	for i, c := range conts {
		if c.ScoreFrom < 0 || c.ScoreFrom > len(c.Tokens) {
			return nil, fmt.Errorf("score: continuation %d: ScoreFrom %d outside 0..%d", i, c.ScoreFrom, len(c.Tokens))
		}
		if err := m.checkTokens(fmt.Sprintf("score continuation %d", i), c.Tokens); err != nil {
			return nil, err
		}
		if len(prefix)+len(c.Tokens) > m.opts.Context {
			return nil, fmt.Errorf("score: continuation %d: %d tokens with the prefix exceed the context of %d", i, len(prefix)+len(c.Tokens), m.opts.Context)
		}
	}
	out := make([][]float64, len(conts))
	if m.opts.NoPrefixReuse {
		// From scratch: one sequence, the whole text after its first token
		// evaluated in one stream, nothing kept from earlier calls.
		for i, c := range conts {
			m.cache.Forget()
			whole := lm.Continuation{
				Tokens:    append(append([]lm.Token{}, prefix[1:]...), c.Tokens...),
				ScoreFrom: len(prefix) - 1 + c.ScoreFrom,
			}
			if err := m.scoreRound(prefix[:1], []lm.Continuation{whole}, []int{i}, out); err != nil {
				return nil, err
			}
		}
		m.cache.Forget()
		return out, nil
	}
	// Rounds: as many continuations as there are free sequences and KV
	// cells beside the prefix.
	var idx []int
	cells := 0
	for i := range conts {
		n := len(conts[i].Tokens)
		if len(idx) == m.opts.Sequences-1 || (len(idx) > 0 && len(prefix)+cells+n > m.opts.Context) {
			if err := m.scoreRound(prefix, pick(conts, idx), idx, out); err != nil {
				return nil, err
			}
			idx, cells = nil, 0
		}
		idx = append(idx, i)
		cells += n
	}
	if len(idx) > 0 {
		if err := m.scoreRound(prefix, pick(conts, idx), idx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func pick(conts []lm.Continuation, idx []int) []lm.Continuation {
	out := make([]lm.Continuation, len(idx))
	for j, i := range idx {
		out[j] = conts[i]
	}
	return out
}

// scoreRound scores continuations that fit in the KV cache together, each
// in its own sequence forked from sequence 0; out[idx[j]] receives the
// log-probabilities of conts[j].
func (m *Model) scoreRound(prefix []lm.Token, conts []lm.Continuation, idx []int, out [][]float64) error {
	if err := m.cache.Prime(prefix); err != nil {
		return err
	}
	for j, c := range conts {
		res := make([]float64, 0, len(c.Tokens)-c.ScoreFrom)
		if c.ScoreFrom == 0 && len(c.Tokens) > 0 {
			res = append(res, m.prefixLogprob(c.Tokens[0]))
		}
		out[idx[j]] = res
	}
	defer func() {
		for j := range conts {
			m.cache.Release(j + 1)
		}
	}()
	for j := range conts {
		m.cache.ForkPrimed(j + 1)
	}
	// All continuation tokens go through in one stream cut at the batch
	// size. Token t carries logits when token t+1 is scored; the last token
	// predicts nothing and is not fed at all. scorer[b] names, for batch
	// entry b, the continuation whose next token it predicts (-1: none).
	type next struct{ cont, tok int }
	scorer := make([]next, 0, m.opts.Batch)
	flush := func() error {
		if len(scorer) == 0 {
			return nil
		}
		if err := m.decode(); err != nil {
			return err
		}
		for b, s := range scorer {
			if s.cont >= 0 {
				out[idx[s.cont]] = append(out[idx[s.cont]], m.logprob(b, conts[s.cont].Tokens[s.tok]))
			}
		}
		m.batch.n_tokens = 0
		scorer = scorer[:0]
		return nil
	}
	m.batch.n_tokens = 0
	for j, c := range conts {
		for t := 0; t+1 < len(c.Tokens); t++ {
			if len(scorer) == m.opts.Batch {
				if err := flush(); err != nil {
					return err
				}
			}
			want := t+1 >= c.ScoreFrom
			m.batchAdd(c.Tokens[t], len(prefix)+t, j+1, want)
			if want {
				scorer = append(scorer, next{j, t + 1})
			} else {
				scorer = append(scorer, next{-1, -1})
			}
		}
	}
	return flush()
}

// batchAdd appends one token of sequence seq at position pos to the
// batch, with logits when they are wanted.
func (m *Model) batchAdd(t lm.Token, pos, seq int, logits bool) {
	C.feedrun_batch_add(&m.batch, C.llama_token(t), C.llama_pos(pos), C.llama_seq_id(seq), boolInt(logits))
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func (m *Model) isEOG(t lm.Token) bool { return bool(C.llama_vocab_is_eog(m.vocab, C.llama_token(t))) }

func (m *Model) isControl(t lm.Token) bool {
	return bool(C.llama_vocab_is_control(m.vocab, C.llama_token(t)))
}

// endsReply: a free reply ends at an end-of-generation token and at any
// other control token, which no reply carries as text.
func (m *Model) endsReply(t lm.Token) bool { return m.isEOG(t) || m.isControl(t) }

// eot is the model's end-of-turn token (EOS when it has no EOT).
func (m *Model) eot() lm.Token {
	if t := C.llama_vocab_eot(m.vocab); t >= 0 {
		return lm.Token(t)
	}
	return lm.Token(C.llama_vocab_eos(m.vocab))
}

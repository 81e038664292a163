package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

// Token ids of the tiny model's vocabulary. Byte b is token id b, so a test
// can predict the tokenization of any valid UTF-8 text; the control tokens
// follow the 256 byte tokens.
const (
	TinyTokenEndOfText = 256 // <|endoftext|>: padding
	TinyTokenIMStart   = 257 // <|im_start|>: BOS
	TinyTokenIMEnd     = 258 // <|im_end|>: EOS and end of turn
	TinyVocabSize      = 259
)

// TinyChatTemplate is SmolLM2-Instruct's ChatML template; llama.cpp's
// llama_chat_apply_template recognises it as "chatml" by its <|im_start|>.
const TinyChatTemplate = "{% for message in messages %}" +
	"{% if loop.first and messages[0]['role'] != 'system' %}" +
	"{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}" +
	"{% endif %}" +
	"{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}" +
	"{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// Fixed hyperparameters of the tiny model.
const (
	tinyRMSEpsilon = 1e-5
	tinyRopeBase   = 10000
	// tinyOutputScale sets the output matrix's std to
	// tinyOutputScale/sqrt(n_embd), making logits about N(0, 4²): next-token
	// distributions are then peaked, not near uniform, so tests can tell
	// one prediction from another.
	tinyOutputScale = 4
	// tinyStream is the second PCG word; any constant works, it only has
	// to stay the same for the same seed to give the same file.
	tinyStream = 0x6665656472756e // "feedrun"
)

// TinyOptions configures TinyLlama. Zero fields take the defaults noted.
type TinyOptions struct {
	// Seed selects the random weights; the same options always give a
	// byte-identical file.
	Seed uint64
	// Name is general.name; default "feedrun-tiny-llama".
	Name string
	// EmbeddingLength is n_embd; default 64.
	EmbeddingLength int
	// FeedForwardLength is n_ff; default 128.
	FeedForwardLength int
	// BlockCount is n_layer; default 2.
	BlockCount int
	// HeadCount is n_head; default 4.
	HeadCount int
	// HeadCountKV is n_head_kv; default 2.
	HeadCountKV int
	// ContextLength is the training context length; default 512.
	ContextLength int
	// ChatTemplate is tokenizer.chat_template; default TinyChatTemplate.
	ChatTemplate string
	// Vocab replaces the control tokens after the 256 byte tokens, to give
	// the tiny model another family's special tokens; nil keeps
	// <|endoftext|>, <|im_start|> and <|im_end|> (the TinyToken ids).
	Vocab *TinyVocab
	// ZeroAttentionOutput sets every attn_output weight to exactly zero.
	// Attention then adds nothing to the residual stream, no position sees
	// another, and the next-token distribution depends only on the current
	// token: a known answer for tests. The other weights are unchanged.
	ZeroAttentionOutput bool
}

// TinyVocab is a model family's special tokens for the tiny model. Token
// i of Special gets id 256 + i. BOS, EOS and EOT name tokens of Special
// (BOS may be "" for a family without one); AddBOS says whether tokenizing
// with special tokens adds BOS, as the family's tokenizer does.
type TinyVocab struct {
	Special       []TinyToken
	BOS, EOS, EOT string
	Padding       string
	AddBOS        bool
}

// TinyToken is one special token. Control tokens are read from text only
// when special tokens are parsed; user-defined ones always (as llama.cpp
// treats, e.g., Qwen3's <think>, which its tokenizer does not mark special).
type TinyToken struct {
	Text        string
	UserDefined bool
}

// defaultTinyVocab is the vocabulary the TinyToken constants describe.
var defaultTinyVocab = TinyVocab{
	Special: []TinyToken{{Text: "<|endoftext|>"}, {Text: "<|im_start|>"}, {Text: "<|im_end|>"}},
	BOS:     "<|im_start|>", EOS: "<|im_end|>", EOT: "<|im_end|>", Padding: "<|endoftext|>",
}

// id is the token id of a special token's text, or −1.
func (v TinyVocab) id(text string) int {
	for i, t := range v.Special {
		if t.Text == text {
			return 256 + i
		}
	}
	return -1
}

func (o TinyOptions) vocab() TinyVocab {
	if o.Vocab != nil {
		return *o.Vocab
	}
	return defaultTinyVocab
}

func (o TinyOptions) withDefaults() TinyOptions {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Name == "" {
		o.Name = "feedrun-tiny-llama"
	}
	def(&o.EmbeddingLength, 64)
	def(&o.FeedForwardLength, 128)
	def(&o.BlockCount, 2)
	def(&o.HeadCount, 4)
	def(&o.HeadCountKV, 2)
	def(&o.ContextLength, 512)
	return o
}

// check rejects shapes llama.cpp cannot run.
func (o TinyOptions) check() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"EmbeddingLength", o.EmbeddingLength},
		{"FeedForwardLength", o.FeedForwardLength},
		{"BlockCount", o.BlockCount},
		{"HeadCount", o.HeadCount},
		{"HeadCountKV", o.HeadCountKV},
		{"ContextLength", o.ContextLength},
	} {
		if f.v <= 0 || f.v > math.MaxInt32 {
			return fmt.Errorf("tiny llama: %s = %d, want a positive size", f.name, f.v)
		}
	}
	if o.EmbeddingLength%o.HeadCount != 0 {
		return fmt.Errorf("tiny llama: EmbeddingLength %d is not a multiple of HeadCount %d", o.EmbeddingLength, o.HeadCount)
	}
	// RoPE rotates pairs of dimensions within each head.
	if (o.EmbeddingLength/o.HeadCount)%2 != 0 {
		return fmt.Errorf("tiny llama: head size %d is odd, RoPE needs it even", o.EmbeddingLength/o.HeadCount)
	}
	if o.HeadCount%o.HeadCountKV != 0 {
		return fmt.Errorf("tiny llama: HeadCount %d is not a multiple of HeadCountKV %d", o.HeadCount, o.HeadCountKV)
	}
	v := o.vocab()
	for _, name := range []string{v.EOS, v.EOT, v.Padding} {
		if v.id(name) < 0 {
			return fmt.Errorf("tiny llama: special token %q is not in the vocabulary", name)
		}
	}
	if v.BOS != "" && v.id(v.BOS) < 0 || v.AddBOS && v.BOS == "" {
		return fmt.Errorf("tiny llama: BOS %q is not in the vocabulary", v.BOS)
	}
	return nil
}

// TinyLlama returns a GGUF file holding a tiny llama-architecture model
// with random F32 weights and a byte-level vocabulary (see the TinyToken
// constants). llama.cpp loads it like a real model: it is meant for tests
// of the real loading, tokenizing and decoding path without a download.
func TinyLlama(opts TinyOptions) ([]byte, error) {
	opts = opts.withDefaults()
	if err := opts.check(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := Write(&buf, tinyKVs(opts), tinyTensors(opts)); err != nil {
		return nil, fmt.Errorf("tiny llama: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteTinyLlama writes TinyLlama(opts) to a new file in dir, named so that
// several models can share a directory (a test's t.TempDir, say), and
// returns its path.
func WriteTinyLlama(dir string, opts TinyOptions) (path string, err error) {
	data, err := TinyLlama(opts)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "tiny-llama-*.gguf")
	if err != nil {
		return "", fmt.Errorf("write tiny llama: %w", err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write tiny llama: %w", err)
	}
	return f.Name(), nil
}

func tinyKVs(o TinyOptions) []KV {
	v := o.vocab()
	tokens, types := tinyVocab(v)
	u32 := func(v int) uint32 { return uint32(v) }
	template := o.ChatTemplate
	if template == "" {
		template = TinyChatTemplate
	}
	kvs := []KV{
		{"general.architecture", "llama"},
		{"general.name", o.Name},
		{"general.file_type", uint32(0)}, // LLAMA_FTYPE_ALL_F32
		{"llama.context_length", u32(o.ContextLength)},
		{"llama.embedding_length", u32(o.EmbeddingLength)},
		{"llama.block_count", u32(o.BlockCount)},
		{"llama.feed_forward_length", u32(o.FeedForwardLength)},
		{"llama.attention.head_count", u32(o.HeadCount)},
		{"llama.attention.head_count_kv", u32(o.HeadCountKV)},
		// llama.cpp insists on full-head RoPE for this architecture.
		{"llama.rope.dimension_count", u32(o.EmbeddingLength / o.HeadCount)},
		{"llama.attention.layer_norm_rms_epsilon", float32(tinyRMSEpsilon)},
		{"llama.rope.freq_base", float32(tinyRopeBase)},
		{"llama.vocab_size", uint32(len(tokens))},
		{"tokenizer.ggml.model", "gpt2"},
		// "smollm" is SmolLM2's own pre-tokenizer. With no merges the
		// split does not change the tokens, but unlike "default" it turns
		// off clean_up_tokenization_spaces, so detokenizing gives back the
		// exact bytes.
		{"tokenizer.ggml.pre", "smollm"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		// llama.cpp refuses a gpt2 tokenizer without this key; leaving it
		// empty keeps every byte its own token.
		{"tokenizer.ggml.merges", []string{}},
	}
	if v.BOS != "" {
		kvs = append(kvs, KV{"tokenizer.ggml.bos_token_id", u32(v.id(v.BOS))})
	}
	return append(kvs,
		KV{"tokenizer.ggml.eos_token_id", u32(v.id(v.EOS))},
		KV{"tokenizer.ggml.eot_token_id", u32(v.id(v.EOT))},
		KV{"tokenizer.ggml.padding_token_id", u32(v.id(v.Padding))},
		KV{"tokenizer.ggml.add_bos_token", v.AddBOS},
		KV{"tokenizer.ggml.add_eos_token", false},
		KV{"tokenizer.chat_template", template},
	)
}

// Token types as llama.cpp numbers them (LLAMA_TOKEN_TYPE_*).
const (
	tokenTypeNormal      int32 = 1
	tokenTypeControl     int32 = 3
	tokenTypeUserDefined int32 = 4
)

// tinyVocab returns the token texts and types: the 256 bytes spelled as
// GPT-2's byte-level BPE spells them, then the control tokens.
func tinyVocab(v TinyVocab) ([]string, []int32) {
	n := 256 + len(v.Special)
	tokens := make([]string, 0, n)
	types := make([]int32, 0, n)
	for b := range 256 {
		tokens = append(tokens, string(byteToUnicode(byte(b))))
		types = append(types, tokenTypeNormal)
	}
	for _, t := range v.Special {
		tokens = append(tokens, t.Text)
		if t.UserDefined {
			types = append(types, tokenTypeUserDefined)
		} else {
			types = append(types, tokenTypeControl)
		}
	}
	return tokens, types
}

// byteToUnicode is GPT-2's bytes_to_unicode: printable Latin-1 bytes stand
// for themselves and the rest are moved, in order, to U+0100 onwards, so
// every byte has a visible, distinct character. llama.cpp maps text to
// these characters before looking tokens up.
func byteToUnicode(b byte) rune {
	printable := func(c byte) bool {
		return (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE
	}
	if printable(b) {
		return rune(b)
	}
	n := 0
	for c := range b {
		if !printable(byte(c)) {
			n++
		}
	}
	return rune(256 + n)
}

// tinyTensors draws the weights in a fixed order from one stream. The
// attention output is drawn even when it is then zeroed, so
// ZeroAttentionOutput leaves every other tensor as it was.
func tinyTensors(o TinyOptions) []Tensor {
	rng := &normalSource{pcg: rand.NewPCG(o.Seed, tinyStream)}
	nEmbd := uint64(o.EmbeddingLength)
	nEmbdKV := uint64(o.EmbeddingLength / o.HeadCount * o.HeadCountKV)
	nFF := uint64(o.FeedForwardLength)
	nVocab := uint64(256 + len(o.vocab().Special))

	// matrix draws a {in, out} matrix with std scale/sqrt(in), which
	// keeps each output about scale times the size of the inputs.
	matrix := func(name string, in, out uint64, scale float64) Tensor {
		return NewF32Tensor(name, []uint64{in, out}, rng.normals(in*out, scale/math.Sqrt(float64(in))))
	}
	ones := func(name string) Tensor {
		v := make([]float32, nEmbd)
		for i := range v {
			v[i] = 1
		}
		return NewF32Tensor(name, []uint64{nEmbd}, v)
	}

	tensors := []Tensor{
		NewF32Tensor("token_embd.weight", []uint64{nEmbd, nVocab}, rng.normals(nEmbd*nVocab, 1)),
	}
	for i := range o.BlockCount {
		blk := func(s string) string { return fmt.Sprintf("blk.%d.%s.weight", i, s) }
		attnOut := matrix(blk("attn_output"), nEmbd, nEmbd, 1)
		if o.ZeroAttentionOutput {
			clear(attnOut.Data)
		}
		tensors = append(tensors,
			ones(blk("attn_norm")),
			matrix(blk("attn_q"), nEmbd, nEmbd, 1),
			matrix(blk("attn_k"), nEmbd, nEmbdKV, 1),
			matrix(blk("attn_v"), nEmbd, nEmbdKV, 1),
			attnOut,
			ones(blk("ffn_norm")),
			matrix(blk("ffn_gate"), nEmbd, nFF, 1),
			matrix(blk("ffn_up"), nEmbd, nFF, 1),
			matrix(blk("ffn_down"), nFF, nEmbd, 1),
		)
	}
	return append(tensors,
		ones("output_norm.weight"),
		matrix("output.weight", nEmbd, nVocab, tinyOutputScale),
	)
}

// normalSource draws approximately normal values using only PCG output and
// float64 additions. Library normal generators and Box-Muller rely on
// algorithms or transcendental functions that may differ between Go
// releases or CPU architectures; this Irwin-Hall sum of twelve uniforms
// gives the same bits everywhere, which the same-seed-same-file promise
// needs. Its tails stop at ±6 std, which random weights do not miss.
type normalSource struct {
	pcg *rand.PCG
}

func (s *normalSource) normals(n uint64, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		sum := 0.0
		for range 12 {
			sum += float64(s.pcg.Uint64()>>11) / (1 << 53)
		}
		v[i] = float32((sum - 6) * std)
	}
	return v
}

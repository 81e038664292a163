// Package kvcache decides what llama.cpp's KV cache keeps and reuses
// between calls: which leading tokens of a prompt are taken from the
// cached prefix instead of being evaluated again, how the rest is cut into
// decode calls, what sequence 0 holds afterwards, and how the cache is
// laid out when a unit of work begins. It is plain Go; the binding
// (internal/llama) carries the decisions out through Memory, so the rules
// are tested here without a model.
//
// The cache is unified across sequences, or (Options.Streams, for batched
// episodes) has a stream of its own per sequence, between which llama.cpp
// copies only whole streams. Sequence 0 holds the cached prefix; every scored continuation, and every reply that keeps nothing,
// runs in a fork: a sequence of its own that starts with a copy of
// sequence 0's cells. An agent's episode keeps its transcript in a
// sequence of its own (Cache.Continue), so that several episodes can
// advance together in one Generate, each step evaluating only what it adds.
//
// Prefix reuse must not change any figure, or a resumed run would not
// reproduce an uninterrupted one: llama.cpp's numerics depend on how tokens
// are grouped into decode calls. So work is split into units (a probe item,
// an episode; see Cache.BeginUnit). The first prompt of a unit reuses only
// canonical cells: leading positions evaluated in blocks aligned to
// multiples of PrefixBlock (or of the batch size, if smaller), which come
// out bit for bit the same whichever call evaluated them; the rest is again
// evaluated in aligned blocks. Later prompts of the same unit reuse any
// common prefix, which is deterministic because the unit's own calls are.
// Flash attention, which the binding forces on, skips masked cells
// exactly, but it sums the unmasked ones in the order they sit in the
// cache; so every unit also starts from the same layout (Cache.BeginUnit,
// Cache.DropUnreused), and no kept transcript frees a cell before its unit
// ends, so that each one's cells lie in position order whichever others
// share the cache.
package kvcache

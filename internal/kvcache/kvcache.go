package kvcache

import (
	"slices"

	"github.com/feedrun/feedrun/internal/lm"
)

// PrefixBlock is the size of a canonical block, in tokens.
const PrefixBlock = 64

// Memory is the KV cache of one llama.cpp context as the binding exposes
// it: cells that belong to sequences at positions. A range [from, to) with
// -1 for either end runs to the start or the end of the sequence.
type Memory interface {
	// Decode evaluates tokens for seq at positions pos, pos+1, ... in one
	// decode call, with logits for the last token when logits is set.
	Decode(seq, pos int, tokens []lm.Token, logits bool) error
	// Remove frees seq's cells in [from, to); false when it cannot.
	Remove(seq, from, to int) bool
	// Copy makes src's cells in [from, to) belong to dst as well. In a
	// cache with one stream per sequence (Options.Streams) it copies src's
	// whole stream over dst's, and only whole: from and to are -1.
	Copy(src, dst, from, to int)
	// Clear empties the cache; data also zeroes the cells' contents, which
	// is needed only when cells may be read before they are written again.
	Clear(data bool)
	// Save copies seq's cells out; false when that fails. An empty
	// sequence has a state too (llama.cpp's header), which Restore takes.
	Save(seq int) ([]byte, bool)
	// Restore writes what Save returned back as seq; false when that fails.
	Restore(seq int, state []byte) bool
}

// Options say how the context was created.
type Options struct {
	Batch int // tokens per decode call; must be positive
	// NoPrefixReuse evaluates every prompt from scratch and keeps nothing
	// in sequence 0 between calls.
	NoPrefixReuse bool
	// Forks is how many sequences generate or score beside sequence 0 at
	// once: they are 1..Forks. Kept transcripts come after them (see
	// Continue): the context needs Forks+Kept+2 sequences.
	Forks int
	// Kept is how many transcripts a unit can keep, one per episode that
	// a Generate call advances.
	Kept int
	// Streams says the context gives every sequence a KV stream of its own
	// (llama.cpp's non-unified cache): attention then reads only the
	// cells of its own stream, and a sequence shares another's cells only
	// by a copy of the whole stream. Without it all sequences share one
	// stream, and one kept transcript's cells lie among the others'.
	Streams bool
}

// Sequences is how many sequences a context with these options needs:
// sequence 0, the forks and the kept transcripts, and in one shared
// stream also the grave (see drop), which streams of their own do not
// need.
func (o Options) Sequences() int {
	if o.Streams {
		return o.Forks + o.Kept + 1
	}
	return o.Forks + o.Kept + 2
}

// Cache is the bookkeeping of a context's KV cache. Like the context it is
// not safe for concurrent use.
type Cache struct {
	mem     Memory
	batch   int
	block   int // canonical block size
	noReuse bool
	streams bool // one KV stream per sequence (Options.Streams)

	// held are the tokens whose cells sequence 0 keeps, so that the system
	// prompt and each item's context are evaluated once; the first
	// canonical of them were evaluated in whole aligned blocks.
	held      []lm.Token
	canonical int
	inUnit    bool // a prompt of the current unit has been evaluated
	evaluated int  // prompt tokens evaluated so far (what reuse saves)

	forks int
	// kept[k-1] is the k-th kept transcript of the unit, nil until its
	// first reply.
	kept []*transcript
}

// transcript is what a kept transcript's own sequence holds: held are the
// tokens its cells hold, in position order, the first canonical of them
// evaluated in whole aligned blocks, and the first shared of them cells
// that sequence 0 holds too (see drop).
type transcript struct {
	held      []lm.Token
	canonical int
	shared    int
}

// New keeps the books for mem.
func New(mem Memory, opts Options) *Cache {
	return &Cache{mem: mem, batch: opts.Batch, block: min(PrefixBlock, opts.Batch), noReuse: opts.NoPrefixReuse,
		streams: opts.Streams, forks: opts.Forks, kept: make([]*transcript, opts.Kept)}
}

// MaxKept is how many transcripts a unit can keep.
func (c *Cache) MaxKept() int { return len(c.kept) }

// grave is the sequence that holds the cells kept transcripts drop during
// a unit in one shared stream (see drop); keptSeq is the k-th kept
// transcript's.
func (c *Cache) grave() int { return c.forks + 1 }
func (c *Cache) keptSeq(k int) int {
	if c.streams {
		return c.forks + k
	}
	return c.forks + 1 + k
}

// Len is how many tokens sequence 0 holds.
func (c *Cache) Len() int { return len(c.held) }

// Evaluated counts the prompt tokens evaluated so far, so that tests and
// benchmarks can see what reuse saved.
func (c *Cache) Evaluated() int { return c.evaluated }

// Forget takes sequence 0 to hold nothing, so that nothing is reused; its
// cells are removed when a prefix is primed next.
func (c *Cache) Forget() { c.held, c.canonical = c.held[:0], 0 }

func (c *Cache) alignDown(n int) int { return n / c.block * c.block }

// BeginUnit starts a unit of work whose results must not depend on what
// ran before it.
func (c *Cache) BeginUnit() {
	c.inUnit = false
	clear(c.kept)
	if c.streams {
		c.streamLayout()
		return
	}
	c.canonicalLayout()
}

// streamLayout is canonicalLayout for streams of their own. Every stream
// holds the cell of position p at index p (see share), so cutting sequence
// 0 back to its canonical blocks leaves it as a fresh context would have
// it, and the other streams are emptied: a kept transcript or a fork
// starts from a whole copy of sequence 0's stream, which replaces
// whatever its own held.
func (c *Cache) streamLayout() {
	if !c.mem.Remove(0, c.canonical, -1) {
		c.mem.Clear(true)
		c.held, c.canonical = c.held[:0], 0
	}
	c.held = c.held[:c.canonical]
	for seq := 1; seq < c.forks+len(c.kept)+1; seq++ {
		c.mem.Remove(seq, -1, -1)
	}
}

// Restart makes the k-th kept transcript start afresh within the unit: a
// new episode takes over the slot of one that ended, while the others
// play on. Only streams of their own allow that: in one shared stream the
// new episode's cells would land among the others' and after cells the
// unit freed, in an order that depends on who played before it, and
// flash attention sums in that order. It reports whether it could.
func (c *Cache) Restart(k int) bool {
	if c.kept[k-1] == nil {
		return true
	}
	if !c.streams {
		return false
	}
	c.kept[k-1] = nil
	c.mem.Remove(c.keptSeq(k), -1, -1)
	return true
}

// share makes seq hold sequence 0's first n cells and nothing else. In
// one shared stream the cells are shared. In streams of their own,
// llama.cpp copies only whole streams, so sequence 0's stream is copied
// over seq's and seq then gives up what lies from n on; since every
// stream holds the cell of position p at index p, what is left is the
// prefix in order and seq's next cell lands right after it, as in a fresh
// context.
func (c *Cache) share(seq, n int) {
	if !c.streams {
		if n > 0 {
			c.mem.Copy(0, seq, 0, n)
		}
		return
	}
	if n == 0 {
		c.mem.Remove(seq, -1, -1)
		return
	}
	c.mem.Copy(0, seq, -1, -1)
	c.mem.Remove(seq, n, -1)
}

// canonicalLayout leaves the KV cache as a fresh context would after
// evaluating the canonical prefix: those cells first and in order,
// nothing else, the search for free cells starting after them.
// Flash attention sums over the unmasked cells in the order they sit in
// the cache, and llama.cpp refills freed cells before its head; so without
// this an episode's later steps would come out a rounding error apart
// depending on which units ran before it. The prefix's KV is copied out
// and back, not recomputed, so its bits are unchanged.
func (c *Cache) canonicalLayout() {
	keep := c.canonical
	var state []byte
	if keep > 0 {
		c.mem.Remove(0, keep, -1)
		var ok bool
		if state, ok = c.mem.Save(0); !ok {
			keep = 0
		}
	}
	// Metadata only: cells that are not restored are never read.
	c.mem.Clear(false)
	if keep > 0 && !c.mem.Restore(0, state) {
		c.mem.Clear(false)
		keep = 0
	}
	c.held, c.canonical = c.held[:keep], keep
}

// reusable is how many leading tokens of prompt can be taken from
// sequence 0 without changing any result. The last token is always
// evaluated: its logits are what the caller reads.
func (c *Cache) reusable(prompt []lm.Token) int {
	if !c.inUnit {
		return c.reusableCanonical(prompt)
	}
	if c.noReuse {
		return 0
	}
	return min(commonPrefix(c.held, prompt), len(prompt)-1)
}

// chainFrom is what evaluating a prompt of n tokens from position from
// does to the canonical chain of a sequence whose first canonical tokens
// are canonical, decided from the cache as it stands before the
// evaluation: whether it continues the chain (and so goes in aligned
// blocks), and how many tokens are canonical once the sequence holds it.
func (c *Cache) chainFrom(canonical, from, n int) (continues bool, canonicalAfter int) {
	if from <= canonical && from == c.alignDown(from) {
		return true, c.alignDown(n)
	}
	return false, min(canonical, c.alignDown(from))
}

// evaluate evaluates prompt[from:] for seq, with logits for the last token
// only. Evaluation that continues the canonical chain (canonical, decided
// by the caller from the cache as it stood before the call) goes in aligned
// blocks; any other in batch-sized chunks from from.
func (c *Cache) evaluate(prompt []lm.Token, from, seq int, canonical bool) error {
	for start := from; start < len(prompt); {
		end := min(start+c.batch, len(prompt))
		if canonical {
			end = min(c.alignDown(start)+c.block, len(prompt))
		}
		if err := c.mem.Decode(seq, start, prompt[start:end], end == len(prompt)); err != nil {
			return err
		}
		c.evaluated += end - start
		start = end
	}
	return nil
}

// Prime makes sequence 0 hold prefix, for scoring continuations after it,
// and evaluates what it does not already hold; the last decode leaves the
// next-token distribution after prefix.
func (c *Cache) Prime(prefix []lm.Token) error {
	keep := c.trim(c.reusable(prefix))
	continues, canonical := c.chainFrom(c.canonical, keep, len(prefix))
	c.held, c.canonical, c.inUnit = c.held[:0], 0, true
	if err := c.evaluate(prefix, keep, 0, continues); err != nil {
		c.mem.Clear(true)
		return err
	}
	c.held, c.canonical = append(c.held, prefix...), canonical
	return nil
}

// ForkPrimed gives seq all of sequence 0's cells: a scored continuation
// goes on from the primed prefix.
func (c *Cache) ForkPrimed(seq int) { c.mem.Copy(0, seq, -1, -1) }

// Release frees the cells of a forked sequence.
func (c *Cache) Release(seq int) { c.mem.Remove(seq, -1, -1) }

// DropUnreused frees, before a unit's first generation, the cells of the
// canonical prefix that none of its prompts reuses; within a unit it does
// nothing. Left in sequence 0 they would be freed only when a reply is
// kept, and the next step's tokens would fill that hole before the cells
// after it: the cache order, in which flash attention sums, would then
// depend on the unit before. With them gone, llama.cpp's search for free
// cells starts at the first freed one and every unit lays out its cells
// as a fresh context would. (Prime trims sequence 0 the same way.)
func (c *Cache) DropUnreused(prompts [][]lm.Token) {
	if c.inUnit {
		return
	}
	keep := c.canonical
	for _, p := range prompts {
		keep = min(keep, c.reusable(p))
	}
	if keep < len(c.held) {
		keep = c.trim(keep)
		c.held, c.canonical = c.held[:keep], min(c.canonical, keep)
	}
}

// trim drops sequence 0's cells from position keep on, which moves
// llama.cpp's search for free cells back to the first freed one; when that
// fails it clears the cache. It returns how many held tokens are left.
func (c *Cache) trim(keep int) int {
	if !c.mem.Remove(0, keep, -1) {
		c.mem.Clear(true)
		c.canonical = 0
		return 0
	}
	return keep
}

// A Fork is a sequence that generates a reply to Prompt, started with a
// copy of the leading Reused tokens' cells of sequence 0.
type Fork struct {
	Seq    int
	Prompt []lm.Token
	Reused int
	// continues says the fork's evaluation continues the canonical chain;
	// canonical is how many tokens of sequence 0 are canonical if it
	// keeps this fork's reply (see chainFrom).
	continues bool
	canonical int
	keep      int // the kept transcript, 0 for none
	shared    int // a kept transcript's leading cells that sequence 0 holds too
}

// Fork starts seq for prompt from the part of sequence 0 it may reuse.
// Every sequence of a group that generates together is forked before any
// of them is evaluated: once a prompt of the unit is evaluated, Fork
// reuses any common prefix, not only canonical blocks.
func (c *Cache) Fork(seq int, prompt []lm.Token) Fork {
	f := Fork{Seq: seq, Prompt: prompt, Reused: c.reusable(prompt)}
	c.share(seq, f.Reused)
	f.continues, f.canonical = c.chainFrom(c.canonical, f.Reused, len(prompt))
	return f
}

// Continue starts the k-th kept transcript (1 <= k <= MaxKept) on prompt
// in the transcript's own sequence, which keeps its cells until the unit
// ends. Its first prompt of the unit reuses only the canonical blocks of
// sequence 0, as a first prompt must; a later one, everything the
// transcript held that the prompt starts with.
//
// Several transcripts advance together, and an episode's results must not
// depend on which others share its calls. Flash attention skips masked
// cells exactly but sums a sequence's own cells in the order they sit in
// the cache, and llama.cpp refills freed cells first. So during a unit no
// cell is freed: the cells a transcript gives up go to a sequence that
// nothing attends to (drop), every new cell lands after all the cells
// before it, and each transcript's cells lie in position order, alone or
// beside others.
func (c *Cache) Continue(k int, prompt []lm.Token) Fork {
	f := Fork{Seq: c.keptSeq(k), Prompt: prompt, keep: k}
	t := c.kept[k-1]
	if t == nil {
		f.Reused = c.reusableCanonical(prompt)
		c.share(f.Seq, f.Reused)
		f.shared = f.Reused
		f.continues, f.canonical = c.chainFrom(c.canonical, f.Reused, len(prompt))
		return f
	}
	if !c.noReuse {
		f.Reused = min(commonPrefix(t.held, prompt), len(prompt)-1)
	}
	f.shared = t.shared
	c.drop(&f, f.Reused)
	f.continues, f.canonical = c.chainFrom(t.canonical, f.Reused, len(prompt))
	return f
}

// reusableCanonical is how many leading tokens of a unit's first prompt
// may be taken from sequence 0: whole canonical blocks only.
func (c *Cache) reusableCanonical(prompt []lm.Token) int {
	if c.noReuse {
		return 0
	}
	return min(c.alignDown(min(commonPrefix(c.held, prompt), len(prompt)-1)), c.canonical)
}

// drop takes f's cells from position from on out of its kept transcript's
// sequence without freeing them (see Continue): they go to the grave,
// which nothing attends to, until the unit ends. The leading cells the
// transcript shares with sequence 0 (the canonical blocks it reused, or
// gave sequence 0) are not put there: sequence 0 keeps them until the unit
// ends anyway, and other transcripts hold them too, so two transcripts
// giving up one cell would put it in the grave twice, which llama.cpp
// refuses with an abort.
//
// In a stream of its own the cells are freed instead: nothing else lies
// in that stream, the freed cells are its last ones, and the next cells
// refill them in position order.
func (c *Cache) drop(f *Fork, from int) {
	if c.streams {
		c.mem.Remove(f.Seq, from, -1)
		return
	}
	c.mem.Copy(f.Seq, c.grave(), max(from, f.shared), -1)
	c.mem.Remove(f.Seq, from, -1)
	f.shared = min(f.shared, from)
}

// Truncate takes f's cells from position from on back, so that a reply
// can back out of its last tokens: a kept transcript's go to the grave, a
// fork's are freed.
func (c *Cache) Truncate(f *Fork, from int) {
	// Cells evaluated again one by one are no longer canonical.
	f.canonical = min(f.canonical, c.alignDown(from))
	if f.keep > 0 {
		c.drop(f, from)
		return
	}
	c.mem.Remove(f.Seq, from, -1)
}

// Kept records what f's kept transcript holds after its reply: the prompt
// and every reply token that was fed back, which is all of them after an
// end of turn and all but the last otherwise. When the prompt was the
// transcript's first and extends what sequence 0 holds, sequence 0 also
// takes the new canonical blocks (sharing the cells, copying nothing), so
// that the other episodes of the unit, and the first prompts of later
// units, reuse them rather than evaluate them again.
func (c *Cache) Kept(f Fork, reply []lm.Token, endedTurn bool) {
	fed := len(reply)
	if !endedTurn {
		fed = max(fed-1, 0)
	}
	first := c.kept[f.keep-1] == nil
	t := &transcript{held: append(slices.Clip(f.Prompt), reply[:fed]...), canonical: f.canonical, shared: f.shared}
	c.kept[f.keep-1] = t
	if !first || c.noReuse || !f.continues {
		return
	}
	if c.streams {
		c.adopt(f, t)
		return
	}
	h := len(c.held)
	if h == c.canonical && f.canonical > h && commonPrefix(c.held, f.Prompt) == h {
		c.mem.Copy(f.Seq, 0, h, f.canonical)
		c.held = append(c.held, f.Prompt[h:f.canonical]...)
		c.canonical = f.canonical
		t.shared = f.canonical
	}
}

// adopt is Kept's giving of canonical blocks to sequence 0 in streams of
// their own: when a first prompt's canonical blocks go beyond what
// sequence 0 shares with it, sequence 0 takes them instead of what it held
// (a copy of the transcript's whole stream, cut back to those blocks).
// With continuous batching the next episodes to start are mostly of the
// newest task, so sequence 0 follows it. Which blocks sequence 0 holds
// changes what later episodes evaluate, never what they read: a canonical
// block is the same bits whoever evaluated it.
func (c *Cache) adopt(f Fork, t *transcript) {
	shared := min(c.alignDown(commonPrefix(c.held, f.Prompt)), c.canonical)
	if f.canonical <= shared {
		return
	}
	c.mem.Copy(f.Seq, 0, -1, -1)
	c.mem.Remove(0, f.canonical, -1)
	c.held = append(c.held[:0], f.Prompt[:f.canonical]...)
	c.canonical = f.canonical
	t.shared = f.canonical
}

// Evaluate evaluates the part of f's prompt it did not reuse; the last
// decode leaves the distribution of the reply's first token.
func (c *Cache) Evaluate(f Fork) error {
	c.inUnit = true
	return c.evaluate(f.Prompt, f.Reused, f.Seq, f.continues)
}

func commonPrefix(a, b []lm.Token) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

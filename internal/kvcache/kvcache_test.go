package kvcache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/lm"
)

// toks is n distinct tokens, from id from on.
func toks(from, n int) []lm.Token {
	out := make([]lm.Token, n)
	for i := range out {
		out[i] = lm.Token(from + i)
	}
	return out
}

func cat(parts ...[]lm.Token) []lm.Token {
	var out []lm.Token
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// cacheHolding is a cache whose books say that sequence 0 holds tokens
// 0..199, the first canonical of them canonical; the fake memory holds
// nothing, which only the tests of layout look at.
func cacheHolding(f *fakeMemory, batch, canonical int, inUnit bool) *Cache {
	c := newKept(f, Options{Batch: batch})
	c.held, c.canonical, c.inUnit = toks(0, 200), canonical, inUnit
	return c
}

func sameOps(t *testing.T, f *fakeMemory, want ...string) {
	t.Helper()
	if !slices.Equal(f.ops, want) {
		t.Errorf("operations:\n  %s\nwant\n  %s", strings.Join(f.ops, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestReusedPrefix(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batch     int
		canonical int
		inUnit    bool
		noReuse   bool
		prompt    []lm.Token
		want      int
	}{
		{"across units: whole canonical blocks of the common prefix", 512, 192, false, false, cat(toks(0, 150), toks(1000, 50)), 128},
		{"across units: no further than the canonical part", 512, 64, false, false, cat(toks(0, 199), toks(1000, 50)), 64},
		{"across units: less than a block in common", 512, 192, false, false, cat(toks(0, 50), toks(1000, 50)), 0},
		{"across units: never the last token", 512, 192, false, false, toks(0, 128), 64},
		{"blocks are the batch when it is smaller", 16, 192, false, false, cat(toks(0, 40), toks(1000, 8)), 32},
		{"within a unit: any common prefix", 512, 64, true, false, cat(toks(0, 150), toks(1000, 50)), 150},
		{"within a unit: all of sequence 0 when the prompt extends it", 512, 64, true, false, cat(toks(0, 200), toks(1000, 50)), 200},
		{"within a unit: never the last token", 512, 64, true, false, toks(0, 100), 99},
		{"without prefix reuse: nothing", 512, 192, true, true, cat(toks(0, 200), toks(1000, 50)), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMemory(1024)
			c := cacheHolding(f, tc.batch, tc.canonical, tc.inUnit)
			c.noReuse = tc.noReuse
			fork := c.Fork(1, tc.prompt)
			if fork.Reused != tc.want {
				t.Fatalf("reused %d tokens, want %d", fork.Reused, tc.want)
			}
			if tc.want == 0 {
				sameOps(t, f)
			} else {
				sameOps(t, f, fmt.Sprintf("copy 0 1 0 %d", tc.want))
			}
		})
	}
}

// The decode calls that evaluate a prompt: aligned blocks while they go on
// with the canonical chain, whatever the batch size; batch-sized chunks
// from where reuse ended otherwise. Logits only at the prompt's end.
func TestPromptEvaluationChunks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batch     int
		canonical int
		inUnit    bool
		prompt    []lm.Token
		want      []string
	}{
		{"from scratch: aligned blocks", 512, 0, false, toks(5000, 150),
			[]string{"decode 1 0+64 logits=false", "decode 1 64+64 logits=false", "decode 1 128+22 logits=true"}},
		{"after reused canonical blocks: aligned blocks", 512, 128, false, cat(toks(0, 150), toks(1000, 150)),
			[]string{"copy 0 1 0 128", "decode 1 128+64 logits=false", "decode 1 192+64 logits=false", "decode 1 256+44 logits=true"}},
		{"after any common prefix: batch-sized chunks", 100, 64, true, cat(toks(0, 70), toks(1000, 230)),
			[]string{"copy 0 1 0 70", "decode 1 70+100 logits=false", "decode 1 170+100 logits=false", "decode 1 270+30 logits=true"}},
		{"aligned but past the canonical part: batch-sized chunks", 100, 64, true, cat(toks(0, 128), toks(1000, 172)),
			[]string{"copy 0 1 0 128", "decode 1 128+100 logits=false", "decode 1 228+72 logits=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMemory(1024)
			c := cacheHolding(f, tc.batch, tc.canonical, tc.inUnit)
			fork := c.Fork(1, tc.prompt)
			if err := c.Evaluate(fork); err != nil {
				t.Fatal(err)
			}
			sameOps(t, f, tc.want...)
			if got, want := c.Evaluated(), len(tc.prompt)-fork.Reused; got != want {
				t.Errorf("evaluated %d tokens, want %d", got, want)
			}
		})
	}
}

// Before a unit's first generation the canonical cells that no prompt of
// the group reuses are freed; within a unit nothing is.
func TestFirstGenerationOfAUnitDropsUnreusedCells(t *testing.T) {
	prompts := [][]lm.Token{cat(toks(0, 150), toks(1000, 10)), cat(toks(0, 70), toks(2000, 10))}
	t.Run("the least any prompt reuses is kept", func(t *testing.T) {
		f := newFakeMemory(1024)
		c := cacheHolding(f, 512, 192, false)
		c.DropUnreused(prompts)
		sameOps(t, f, "remove 0 64 -1")
		if c.Len() != 64 || c.canonical != 64 {
			t.Errorf("sequence 0 holds %d tokens, %d canonical; want 64, 64", c.Len(), c.canonical)
		}
	})
	t.Run("nothing is dropped when every held token is reused", func(t *testing.T) {
		f := newFakeMemory(1024)
		c := cacheHolding(f, 512, 192, false)
		c.held = c.held[:192]
		c.DropUnreused([][]lm.Token{cat(toks(0, 195), toks(1000, 10))})
		sameOps(t, f)
		if c.Len() != 192 {
			t.Errorf("sequence 0 holds %d tokens, want 192", c.Len())
		}
	})
	t.Run("within a unit nothing is dropped", func(t *testing.T) {
		f := newFakeMemory(1024)
		c := cacheHolding(f, 512, 192, true)
		c.DropUnreused(prompts)
		sameOps(t, f)
		if c.Len() != 200 {
			t.Errorf("sequence 0 holds %d tokens, want 200", c.Len())
		}
	})
	t.Run("a failed removal clears the cache", func(t *testing.T) {
		f := newFakeMemory(1024)
		f.removeFails = true
		c := cacheHolding(f, 512, 192, false)
		c.DropUnreused(prompts)
		sameOps(t, f, "remove 0 64 -1", "clear true")
		if c.Len() != 0 || c.canonical != 0 {
			t.Errorf("sequence 0 holds %d tokens, %d canonical; want none", c.Len(), c.canonical)
		}
		if fork := c.Fork(1, prompts[0]); fork.Reused != 0 {
			t.Errorf("reused %d tokens of a cleared cache", fork.Reused)
		}
	})
}

// newKept is a cache with room for kept transcripts, as the binding
// creates it.
func newKept(f *fakeMemory, opts Options) *Cache {
	opts.Forks, opts.Kept = 4, 4
	return New(f, opts)
}

// A kept transcript holds the prompt and the reply tokens that were fed
// back: all of them after an end of turn, all but the last otherwise. Its
// next prompt evaluates only what it adds; what it gave up goes to the
// grave, not back to the free cells.
func TestKeptReply(t *testing.T) {
	reply := toks(9000, 5)
	prompt := cat(toks(0, 150), toks(1000, 100))
	for _, tc := range []struct {
		name      string
		reply     []lm.Token
		endedTurn bool
		wantHeld  []lm.Token
	}{
		{"ended turn: every reply token", reply, true, cat(prompt, reply)},
		{"cut short: all but the last", reply, false, cat(prompt, reply[:4])},
		{"cut short before a token was fed", nil, false, prompt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMemory(1024)
			c := newKept(f, Options{Batch: 512})
			c.BeginUnit()
			fork := c.Continue(2, prompt)
			if fork.Seq != c.keptSeq(2) || fork.Reused != 0 {
				t.Fatalf("fork in sequence %d reusing %d, want %d reusing 0", fork.Seq, fork.Reused, c.keptSeq(2))
			}
			c.Kept(fork, tc.reply, tc.endedTurn)
			if got := c.kept[1].held; !slices.Equal(got, tc.wantHeld) {
				t.Errorf("the transcript holds %v\nwant %v", got, tc.wantHeld)
			}
			next := cat(tc.wantHeld, toks(8000, 20))
			f.ops = nil
			again := c.Continue(2, next)
			if again.Reused != len(tc.wantHeld) {
				t.Errorf("the next prompt reused %d tokens, want %d", again.Reused, len(tc.wantHeld))
			}
			g := fmt.Sprint(c.grave())
			s := fmt.Sprint(again.Seq)
			sameOps(t, f, "copy "+s+" "+g+" "+fmt.Sprint(again.Reused)+" -1", "remove "+s+" "+fmt.Sprint(again.Reused)+" -1")
		})
	}
	t.Run("a first prompt gives sequence 0 its new canonical blocks", func(t *testing.T) {
		f := newFakeMemory(1024)
		c := newKept(f, Options{Batch: 512})
		c.BeginUnit()
		a := c.Continue(1, prompt)
		if err := c.Evaluate(a); err != nil {
			t.Fatal(err)
		}
		c.Kept(a, reply, true)
		if c.Len() != 192 || c.canonical != 192 {
			t.Fatalf("sequence 0 holds %d tokens, %d canonical; want the prompt's 192 in whole blocks", c.Len(), c.canonical)
		}
		before := c.Evaluated()
		b := c.Continue(2, prompt)
		if b.Reused != 192 {
			t.Errorf("the second transcript reused %d tokens, want 192", b.Reused)
		}
		if err := c.Evaluate(b); err != nil {
			t.Fatal(err)
		}
		if got := c.Evaluated() - before; got != len(prompt)-192 {
			t.Errorf("the second transcript evaluated %d tokens, want %d", got, len(prompt)-192)
		}
	})
}

// stepReq is one kept transcript's step: its prompt and the reply the
// model gives.
type stepReq struct {
	keep          int
	prompt, reply []lm.Token
	endedTurn     bool
}

// playTogether is one step of several kept transcripts as the binding
// generates it: each prompt evaluated in its transcript's sequence in
// turn, then the replies' tokens fed back one per transcript per decode,
// then the replies kept. It returns the figures each transcript read.
func playTogether(t *testing.T, c *Cache, f *fakeMemory, reqs []stepReq) [][]uint64 {
	t.Helper()
	figures := make([][]uint64, len(reqs))
	forks := make([]Fork, len(reqs))
	for i, r := range reqs {
		forks[i] = c.Continue(r.keep, r.prompt)
		from := len(f.figures)
		if err := c.Evaluate(forks[i]); err != nil {
			t.Fatal(err)
		}
		figures[i] = append(figures[i], f.figures[from:]...)
	}
	for k := 0; ; k++ {
		fed := false
		for i, r := range reqs {
			n := len(r.reply)
			if !r.endedTurn {
				n--
			}
			if k >= n {
				continue
			}
			fed = true
			from := len(f.figures)
			if err := f.Decode(forks[i].Seq, len(r.prompt)+k, r.reply[k:k+1], true); err != nil {
				t.Fatal(err)
			}
			figures[i] = append(figures[i], f.figures[from:]...)
		}
		if !fed {
			break
		}
	}
	for i, r := range reqs {
		c.Kept(forks[i], r.reply, r.endedTurn)
	}
	return figures
}

// play is one agent step of a transcript alone.
func play(t *testing.T, c *Cache, f *fakeMemory, prompt, reply []lm.Token, endedTurn bool) {
	t.Helper()
	playTogether(t, c, f, []stepReq{{1, prompt, reply, endedTurn}})
}

// episode plays a three-step episode whose prompts start with system and
// task, each step re-sending the transcript so far, and returns the
// figures it read.
func episode(t *testing.T, c *Cache, f *fakeMemory, system, task []lm.Token) []uint64 {
	t.Helper()
	c.BeginUnit()
	from := len(f.figures)
	prompt := cat(system, task)
	held := 0
	for step := range 3 {
		before := c.Evaluated()
		reply := toks(7000+100*step, 6)
		play(t, c, f, prompt, reply, step != 1)
		// Later steps evaluate only what they add to the kept reply.
		if got := c.Evaluated() - before; step > 0 && got != len(prompt)-held {
			t.Errorf("step %d evaluated %d of %d prompt tokens, want %d", step, got, len(prompt), len(prompt)-held)
		}
		held = len(c.kept[0].held)
		prompt = cat(prompt, reply, toks(8000+100*step, 30))
	}
	return slices.Clone(f.figures[from:])
}

// A scripted episode for TestEpisodesTogetherReadWhatTheyReadAlone: its
// task, its replies, and whether each step re-sends the transcript so far
// (verbatim) or rewrites it from the task on (as drop and abstract do), so
// that the transcript gives up cells.
type scripted struct {
	task    []lm.Token
	rewrite bool
	steps   int
}

func (e scripted) reply(step int) []lm.Token { return toks(7000+1000*int(e.task[0])+50*step, 4+step%3) }

// playEpisodes plays episodes together in one unit, in lockstep, each step
// of all of them in one round, and returns the figures each read.
func playEpisodes(t *testing.T, c *Cache, f *fakeMemory, system []lm.Token, eps []scripted) [][]uint64 {
	t.Helper()
	c.BeginUnit()
	figures := make([][]uint64, len(eps))
	prompts := make([][]lm.Token, len(eps))
	for i, e := range eps {
		prompts[i] = cat(system, e.task)
	}
	for step := 0; ; step++ {
		var reqs []stepReq
		var who []int
		for i, e := range eps {
			if step < e.steps {
				reqs = append(reqs, stepReq{i + 1, prompts[i], e.reply(step), step%2 == 0})
				who = append(who, i)
			}
		}
		if len(reqs) == 0 {
			return figures
		}
		got := playTogether(t, c, f, reqs)
		for j, i := range who {
			figures[i] = append(figures[i], got[j]...)
			obs := toks(8000+100*step+10*int(eps[i].task[0]), 20)
			if eps[i].rewrite {
				prompts[i] = cat(system, eps[i].task, obs)
			} else {
				prompts[i] = cat(prompts[i], reqs[j].reply, obs)
			}
		}
	}
}

// The batched rollout's guarantee: an episode reads the same figures
// whether it runs alone on a fresh cache or beside others that share its
// system prompt, end earlier or later, and give up cells as they go.
func TestEpisodesTogetherReadWhatTheyReadAlone(t *testing.T) {
	system := toks(0, 150)
	eps := []scripted{
		{toks(1, 100), false, 4},
		{toks(2, 30), true, 5},
		{toks(3, 210), false, 2},
		{toks(4, 70), true, 3},
	}
	f := newFakeMemory(8192)
	c := newKept(f, Options{Batch: 512})
	playEpisodes(t, c, f, system, []scripted{{toks(5, 300), true, 2}}) // a unit before
	together := playEpisodes(t, c, f, system, eps)
	for i, e := range eps {
		af := newFakeMemory(8192)
		alone := playEpisodes(t, newKept(af, Options{Batch: 512}), af, system, []scripted{e})
		if !slices.Equal(together[i], alone[0]) {
			t.Errorf("episode %d: together\n  %x\nalone\n  %x", i, together[i], alone[0])
		}
	}
}

// BeginUnit keeps the canonical part of sequence 0 and nothing else, put
// back where a fresh cache would have it: in the first cells, in order.
func TestBeginUnitRestoresOnlyTheCanonicalPart(t *testing.T) {
	system, task := toks(0, 150), toks(1000, 100)
	// prepared is a cache after one episode, its log emptied.
	prepared := func(t *testing.T) (*Cache, *fakeMemory) {
		f := newFakeMemory(1024)
		c := newKept(f, Options{Batch: 512})
		episode(t, c, f, system, task)
		f.ops = nil
		return c, f
	}
	t.Run("the canonical part, in the first cells", func(t *testing.T) {
		c, f := prepared(t)
		before, err := f.held(0)
		if err != nil {
			t.Fatal(err)
		}
		c.BeginUnit()
		sameOps(t, f, "remove 0 192 -1", "save 0", "clear false", "restore 0")
		after, err := f.held(0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(after, before[:192]) || !slices.Equal(c.held, cat(system, task)[:192]) || c.canonical != 192 {
			t.Errorf("sequence 0 holds %d cells (%d in the books, %d canonical), want the first 192 as they were", len(after), c.Len(), c.canonical)
		}
		for at, cell := range f.cells {
			if want := at < 192; (len(cell.seqs) > 0) != want || want && cell.pos != at {
				t.Fatalf("cell %d holds position %d of %v, want the canonical prefix in cells 0..191 only", at, cell.pos, cell.seqs)
			}
		}
		if f.head != 192 {
			t.Errorf("the search for free cells starts at %d, want 192", f.head)
		}
		if fork := c.Fork(1, cat(toks(0, 180), toks(2000, 10))); fork.Reused != 128 {
			t.Errorf("the next unit's first prompt reused %d tokens, want 128 (whole blocks)", fork.Reused)
		}
	})
	t.Run("nothing canonical: a cleared cache", func(t *testing.T) {
		f := newFakeMemory(1024)
		c := newKept(f, Options{Batch: 512})
		play(t, c, f, toks(0, 50), toks(7000, 3), true)
		f.ops = nil
		c.BeginUnit()
		sameOps(t, f, "clear false")
		if c.Len() != 0 || f.used() != 0 {
			t.Errorf("%d tokens held, %d cells used after BeginUnit, want none", c.Len(), f.used())
		}
	})
	t.Run("a failed save clears the cache", func(t *testing.T) {
		c, f := prepared(t)
		f.saveFails = true
		c.BeginUnit()
		sameOps(t, f, "remove 0 192 -1", "save 0", "clear false")
		if c.Len() != 0 || c.canonical != 0 || f.used() != 0 {
			t.Errorf("%d tokens held (%d canonical), %d cells used, want none", c.Len(), c.canonical, f.used())
		}
	})
	t.Run("a failed restore clears the cache", func(t *testing.T) {
		c, f := prepared(t)
		f.restoreFails = true
		c.BeginUnit()
		sameOps(t, f, "remove 0 192 -1", "save 0", "clear false", "restore 0", "clear false")
		if c.Len() != 0 || c.canonical != 0 || f.used() != 0 {
			t.Errorf("%d tokens held (%d canonical), %d cells used, want none", c.Len(), c.canonical, f.used())
		}
	})
}

func TestPrime(t *testing.T) {
	t.Run("a failed removal clears the cache and evaluates the prefix anew", func(t *testing.T) {
		f := newFakeMemory(1024)
		f.removeFails = true
		c := cacheHolding(f, 512, 192, false)
		if err := c.Prime(cat(toks(0, 150), toks(1000, 10))); err != nil {
			t.Fatal(err)
		}
		sameOps(t, f, "remove 0 128 -1", "clear true",
			"decode 0 0+64 logits=false", "decode 0 64+64 logits=false", "decode 0 128+32 logits=true")
		if c.Len() != 160 || c.canonical != 128 {
			t.Errorf("sequence 0 holds %d tokens, %d canonical; want 160, 128", c.Len(), c.canonical)
		}
	})
	t.Run("a failed decode clears the cache and forgets it", func(t *testing.T) {
		f := newFakeMemory(1024)
		boom := errors.New("no room")
		f.decodeErr = boom
		c := cacheHolding(f, 512, 192, false)
		if err := c.Prime(cat(toks(0, 150), toks(1000, 10))); !errors.Is(err, boom) {
			t.Fatalf("error %v, want %v", err, boom)
		}
		sameOps(t, f, "remove 0 128 -1", "decode 0 128+32 logits=true", "clear true")
		if c.Len() != 0 || c.canonical != 0 {
			t.Errorf("sequence 0 holds %d tokens, %d canonical; want none", c.Len(), c.canonical)
		}
	})
	t.Run("without prefix reuse every prefix is evaluated whole", func(t *testing.T) {
		f := newFakeMemory(1024)
		c := newKept(f, Options{Batch: 512, NoPrefixReuse: true})
		for range 2 {
			if err := c.Prime(toks(0, 100)); err != nil {
				t.Fatal(err)
			}
		}
		if c.Evaluated() != 200 {
			t.Errorf("evaluated %d tokens for the same prefix twice, want 200", c.Evaluated())
		}
	})
}

// The study's guarantee, on a cache laid out as llama.cpp lays it out: an
// episode reads the same figures whether it runs on a fresh cache or after
// a longer one that left blocks it does not share behind, while the shared
// system prompt is still reused.
func TestEpisodeDoesNotDependOnTheEpisodeBefore(t *testing.T) {
	system := toks(0, 150)
	warmMem, coldMem := newFakeMemory(2048), newFakeMemory(2048)
	warm, cold := newKept(warmMem, Options{Batch: 512}), newKept(coldMem, Options{Batch: 512})
	episode(t, warm, warmMem, system, toks(1000, 300))
	before := warm.Evaluated()
	w := episode(t, warm, warmMem, system, toks(2000, 100))
	c := episode(t, cold, coldMem, system, toks(2000, 100))
	if !slices.Equal(w, c) {
		t.Errorf("figures after another episode:\n  %x\nfrom a fresh cache:\n  %x", w, c)
	}
	if saved := cold.Evaluated() - (warm.Evaluated() - before); saved != 128 {
		t.Errorf("the episode evaluated %d fewer tokens after another, want 128 (the system prompt's whole blocks)", saved)
	}
}

// The same for scoring: an item sharing the system prompt with the one
// before reads the figures it reads on a fresh cache, whether its task ends
// inside the block after the reused ones or runs over several: what follows
// the reused blocks must be evaluated in the aligned blocks a fresh cache
// uses, not in batch-sized chunks.
func TestItemScoresDoNotDependOnTheItemBefore(t *testing.T) {
	system := toks(0, 150)
	conts := [][]lm.Token{toks(9000, 8), toks(9100, 3)}
	item := func(c *Cache, f *fakeMemory, task []lm.Token) []uint64 {
		t.Helper()
		c.BeginUnit()
		from := len(f.figures)
		prefix := cat(system, task)
		if err := c.Prime(prefix); err != nil {
			t.Fatal(err)
		}
		for j := range conts {
			c.ForkPrimed(j + 1)
		}
		for j, cont := range conts {
			if err := f.Decode(j+1, len(prefix), cont, true); err != nil {
				t.Fatal(err)
			}
			c.Release(j + 1)
		}
		return slices.Clone(f.figures[from:])
	}
	for _, n := range []int{40, 45, 200} { // ends at 190, crosses 192, crosses three blocks
		warmMem, coldMem := newFakeMemory(2048), newFakeMemory(2048)
		warm, cold := newKept(warmMem, Options{Batch: 512}), newKept(coldMem, Options{Batch: 512})
		item(warm, warmMem, toks(1000, 300))
		w := item(warm, warmMem, toks(2000, n))
		c := item(cold, coldMem, toks(2000, n))
		if !slices.Equal(w, c) {
			t.Errorf("task of %d tokens: figures after another item:\n  %x\nfrom a fresh cache:\n  %x", n, w, c)
		}
	}
}

// Two episodes of a task share the canonical blocks of their first prompt
// that an earlier unit gave sequence 0. When both
// rewrite their transcript from inside those blocks, each gives up cells
// the other holds too; a cell must not be put in the grave twice, which
// llama.cpp refuses with an abort (seq_add: the cell already belongs to
// the sequence). The episodes still read what each reads alone.
func TestEpisodesGiveUpSharedCells(t *testing.T) {
	system, task := toks(0, 150), toks(1000, 100) // a first prompt of 250: canonical up to 192
	first := cat(system, task)
	// The next prompt keeps the first 190 tokens and rewrites the rest, as
	// a harness that rewrites the last user message does.
	next := func(i int) []lm.Token { return cat(first[:190], toks(5000+100*i, 40)) }
	reply := func(i, step int) []lm.Token { return toks(7000+100*i+10*step, 5) }
	playBoth := func(c *Cache, f *fakeMemory, eps []int) [][]uint64 {
		c.BeginUnit()
		figures := make([][]uint64, len(eps))
		for step := range 3 {
			var reqs []stepReq
			for j, i := range eps {
				prompt := first
				if step > 0 {
					prompt = cat(next(i), toks(6000+step, step))
				}
				reqs = append(reqs, stepReq{j + 1, prompt, reply(i, step), true})
			}
			for j, got := range playTogether(t, c, f, reqs) {
				figures[j] = append(figures[j], got...)
			}
		}
		return figures
	}
	f := newFakeMemory(4096)
	c := newKept(f, Options{Batch: 512})
	playBoth(c, f, []int{3}) // a unit before, of the same task
	together := playBoth(c, f, []int{1, 2})
	for j, i := range []int{1, 2} {
		af := newFakeMemory(4096)
		alone := playBoth(newKept(af, Options{Batch: 512}), af, []int{i})
		if !slices.Equal(together[j], alone[0]) {
			t.Errorf("episode %d: together\n  %x\nalone\n  %x", i, together[j], alone[0])
		}
	}
}

// playSlots plays episodes in slots kept transcripts, in lockstep: when
// an episode ends, the next one waiting takes its slot (Restart) while
// the others play on, as a continuously batched rollout does. It returns
// the figures each episode read.
func playSlots(t *testing.T, c *Cache, f *fakeMemory, system []lm.Token, slots int, eps []scripted) [][]uint64 {
	t.Helper()
	c.BeginUnit()
	figures := make([][]uint64, len(eps))
	type playing struct{ ep, step int }
	in := make([]*playing, slots)
	next := 0
	prompts := make([][]lm.Token, len(eps))
	for {
		for k := range in {
			if in[k] == nil && next < len(eps) {
				if !c.Restart(k + 1) {
					t.Fatalf("slot %d cannot start afresh", k+1)
				}
				in[k] = &playing{ep: next}
				prompts[next] = cat(system, eps[next].task)
				next++
			}
		}
		var reqs []stepReq
		var who []int
		for k, p := range in {
			if p != nil {
				reqs = append(reqs, stepReq{k + 1, prompts[p.ep], eps[p.ep].reply(p.step), p.step%2 == 0})
				who = append(who, k)
			}
		}
		if len(reqs) == 0 {
			return figures
		}
		got := playTogether(t, c, f, reqs)
		for j, k := range who {
			p := in[k]
			e := eps[p.ep]
			figures[p.ep] = append(figures[p.ep], got[j]...)
			obs := toks(8000+100*p.step+10*int(e.task[0]), 20)
			if e.rewrite {
				prompts[p.ep] = cat(system, e.task, obs)
			} else {
				prompts[p.ep] = cat(prompts[p.ep], reqs[j].reply, obs)
			}
			if p.step++; p.step == e.steps {
				in[k] = nil
			}
		}
	}
}

// newStreams is a cache with a stream per sequence, as the binding
// creates it for batched rollouts.
func newStreams(f *fakeMemory, opts Options) *Cache {
	opts.Forks, opts.Kept, opts.Streams = 1, 3, true
	return New(f, opts)
}

// Continuous batching in streams of their own: episodes of several tasks
// take over the slots of those that ended, mid-unit, and each reads what
// it reads alone in one shared stream (a rollout's --batch 1).
func TestEpisodesInSlotsReadWhatTheyReadAlone(t *testing.T) {
	system := toks(0, 150)
	eps := []scripted{
		{toks(1, 100), false, 4},
		{toks(1, 100), true, 2},
		{toks(2, 30), true, 5},
		{toks(3, 210), false, 2},
		{toks(3, 210), true, 3},
		{toks(4, 70), true, 3},
		{toks(5, 300), false, 1},
	}
	alone := make([][]uint64, len(eps))
	for i, e := range eps {
		af := newFakeMemory(8192)
		alone[i] = playEpisodes(t, newKept(af, Options{Batch: 512}), af, system, []scripted{e})[0]
	}
	f := newFakeStreams(2048)
	c := newStreams(f, Options{Batch: 512})
	playSlots(t, c, f, system, 3, []scripted{{toks(6, 300), true, 2}}) // a unit before
	together := playSlots(t, c, f, system, 3, eps)
	for i := range eps {
		if !slices.Equal(together[i], alone[i]) {
			t.Errorf("episode %d: in a slot\n  %x\nalone\n  %x", i, together[i], alone[i])
		}
	}
}

// A first prompt gives sequence 0 its canonical blocks in streams of their
// own too, by a whole copy: the next episode of the task reuses them, and
// an episode of a new task replaces them with its own.
func TestStreamsGiveSequence0TheNewestCanonicalBlocks(t *testing.T) {
	f := newFakeStreams(2048)
	c := newStreams(f, Options{Batch: 512})
	c.BeginUnit()
	system := toks(0, 150)
	first := func(k int, task []lm.Token) Fork {
		t.Helper()
		if !c.Restart(k) {
			t.Fatalf("slot %d cannot start afresh", k)
		}
		fk := c.Continue(k, cat(system, task))
		if err := c.Evaluate(fk); err != nil {
			t.Fatal(err)
		}
		c.Kept(fk, toks(9000, 3), true)
		return fk
	}
	first(1, toks(1000, 100)) // 250 tokens: 192 canonical
	if c.Len() != 192 || c.canonical != 192 {
		t.Fatalf("sequence 0 holds %d tokens, %d canonical; want the prompt's 192", c.Len(), c.canonical)
	}
	if b := first(2, toks(1000, 100)); b.Reused != 192 {
		t.Errorf("the task's next episode reused %d tokens, want 192", b.Reused)
	}
	if b := first(3, toks(2000, 200)); b.Reused != 128 {
		t.Errorf("a new task's first episode reused %d tokens, want the system prompt's 128", b.Reused)
	}
	if c.Len() != 320 || !slices.Equal(c.held, cat(system, toks(2000, 200))[:320]) {
		t.Errorf("sequence 0 holds %d tokens, want the new task's 320", c.Len())
	}
	got, err := f.held(0)
	if err != nil || len(got) != 320 {
		t.Errorf("sequence 0's stream holds %d cells (%v), want 320", len(got), err)
	}
	// Every copy between streams was of whole streams (the fake panics
	// otherwise, as llama.cpp aborts).
}

// In one shared stream a kept transcript cannot start afresh mid-unit:
// the new episode's cells would land where the unit before left holes.
func TestRestartNeedsStreams(t *testing.T) {
	f := newFakeMemory(1024)
	c := newKept(f, Options{Batch: 512})
	c.BeginUnit()
	if !c.Restart(1) {
		t.Fatal("a transcript that holds nothing yet cannot start afresh")
	}
	play(t, c, f, toks(0, 100), toks(9000, 3), true)
	if c.Restart(1) {
		t.Error("a transcript in one shared stream started afresh mid-unit")
	}
}

package kvcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/feedrun/feedrun/internal/lm"
)

// fakeMemory stands in for llama.cpp's unified KV cache. It lays out cells
// as llama.cpp does (a decode fills free cells from the search head on,
// removing cells moves the head back to the first one freed, a cleared
// cache starts again at cell 0), and it gives each cell a value that
// stands for its KV: a hash of what llama.cpp's numerics depend on, the
// tokens and positions decoded together and the cells attended to in the
// order they sit in the cache. Two runs that read equal figures would
// then read equal bits from llama.cpp; it also logs every operation.
type fakeMemory struct {
	cells []fakeCell
	head  int
	ops   []string
	// figures are the values of the logits each decode asked for, in
	// order: what a caller would read.
	figures []uint64
	// Failures to inject.
	removeFails, saveFails, restoreFails bool
	decodeErr                            error
	// streams, when not nil, make this a non-unified cache: each sequence
	// has a stream of its own, of size cells, which attention alone reads
	// (see newFakeStreams).
	streams map[int]*fakeMemory
	size    int
}

type fakeCell struct {
	pos  int
	seqs map[int]bool // empty: a free cell
	val  uint64
}

func newFakeMemory(size int) *fakeMemory {
	return &fakeMemory{cells: make([]fakeCell, size)}
}

// newFakeStreams stands in for llama.cpp's non-unified KV cache: one
// stream of size cells per sequence, each laid out as a fakeMemory, and
// copies between sequences only of whole streams (llama.cpp asserts that
// and aborts otherwise), which replace what the destination held.
func newFakeStreams(size int) *fakeMemory {
	return &fakeMemory{streams: map[int]*fakeMemory{}, size: size}
}

// stream is seq's stream.
func (f *fakeMemory) stream(seq int) *fakeMemory {
	s, ok := f.streams[seq]
	if !ok {
		s = newFakeMemory(f.size)
		f.streams[seq] = s
	}
	return s
}

var _ Memory = (*fakeMemory)(nil)

func (f *fakeMemory) log(format string, args ...any) {
	f.ops = append(f.ops, fmt.Sprintf(format, args...))
}

func (f *fakeMemory) used() int {
	n := 0
	for _, c := range f.cells {
		if len(c.seqs) > 0 {
			n++
		}
	}
	return n
}

// slots finds n free cells as llama.cpp's find_slot does for a batch: from
// the head on (or from cell 0 when enough cells before the head are free),
// wrapping around, not necessarily contiguous.
func (f *fakeMemory) slots(n int) ([]int, error) {
	at := f.head
	if at > f.used()+2*n {
		at = 0
	}
	var idx []int
	for tested := 0; len(idx) < n; tested++ {
		if tested >= len(f.cells) {
			return nil, errors.New("no room in the KV cache")
		}
		if at == len(f.cells) {
			at = 0
		}
		if len(f.cells[at].seqs) == 0 {
			idx = append(idx, at)
		}
		at++
	}
	return idx, nil
}

func hash(parts ...any) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, parts...)
	return h.Sum64()
}

func (f *fakeMemory) Decode(seq, pos int, tokens []lm.Token, logits bool) error {
	f.log("decode %d %d+%d logits=%v", seq, pos, len(tokens), logits)
	if f.decodeErr != nil {
		return f.decodeErr
	}
	if f.streams != nil {
		s := f.stream(seq)
		from := len(s.figures)
		err := s.Decode(seq, pos, tokens, logits)
		f.figures = append(f.figures, s.figures[from:]...)
		return err
	}
	idx, err := f.slots(len(tokens))
	if err != nil {
		return err
	}
	// The batch as the matrix products see it: which tokens at which
	// positions go through together.
	batch := hash(pos, tokens)
	for i, at := range idx {
		f.cells[at] = fakeCell{pos: pos + i, seqs: map[int]bool{seq: true}}
	}
	vals := make([]uint64, len(tokens))
	for i := range tokens {
		// Attention reads seq's cells up to the token's position, summed
		// in cache order; a cell of this batch is known by its place in it.
		var seen []string
		for at, c := range f.cells {
			if !c.seqs[seq] || c.pos > pos+i {
				continue
			}
			if j := slices.Index(idx, at); j >= 0 {
				seen = append(seen, fmt.Sprint("batch ", j))
			} else {
				seen = append(seen, fmt.Sprint(c.val))
			}
		}
		vals[i] = hash(batch, i, seen)
	}
	for i, at := range idx {
		f.cells[at].val = vals[i]
	}
	f.head = idx[len(idx)-1] + 1
	if logits {
		f.figures = append(f.figures, hash("logits", vals[len(vals)-1]))
	}
	return nil
}

func span(from, to int) (int, int) {
	if from < 0 {
		from = 0
	}
	if to < 0 {
		to = int(^uint(0) >> 1)
	}
	return from, to
}

func (f *fakeMemory) Remove(seq, from, to int) bool {
	f.log("remove %d %d %d", seq, from, to)
	if f.removeFails {
		return false
	}
	if f.streams != nil {
		f.stream(seq).remove(seq, from, to)
		return true
	}
	f.remove(seq, from, to)
	return true
}

func (f *fakeMemory) remove(seq, from, to int) {
	lo, hi := span(from, to)
	freed := -1
	for at := range f.cells {
		c := &f.cells[at]
		if c.seqs[seq] && c.pos >= lo && c.pos < hi {
			delete(c.seqs, seq)
			if len(c.seqs) == 0 && freed < 0 {
				freed = at
			}
		}
	}
	if freed >= 0 && freed < f.head {
		f.head = freed
	}
}

func (f *fakeMemory) Copy(src, dst, from, to int) {
	f.log("copy %d %d %d %d", src, dst, from, to)
	if f.streams != nil {
		if from > 0 || to > 0 {
			panic(fmt.Sprintf("copy %d %d %d %d: seq_cp() is only supported for full KV buffers", src, dst, from, to))
		}
		s, d := f.stream(src), f.stream(dst)
		d.head = s.head
		for at, c := range s.cells {
			d.cells[at] = fakeCell{pos: c.pos, val: c.val}
			if c.seqs[src] {
				d.cells[at].seqs = map[int]bool{dst: true}
			}
		}
		return
	}
	lo, hi := span(from, to)
	for at := range f.cells {
		c := &f.cells[at]
		if c.seqs[src] && c.pos >= lo && c.pos < hi {
			// llama.cpp asserts this (llama-kv-cells.h, seq_add) and
			// aborts the process.
			if c.seqs[dst] {
				panic(fmt.Sprintf("copy %d %d %d %d: cell %d (position %d) already belongs to sequence %d", src, dst, from, to, at, c.pos, dst))
			}
			c.seqs[dst] = true
		}
	}
}

func (f *fakeMemory) Clear(data bool) {
	f.log("clear %v", data)
	clear(f.cells)
	clear(f.streams)
	f.head = 0
}

type savedCell struct{ Pos, Val uint64 }

func (f *fakeMemory) Save(seq int) ([]byte, bool) {
	f.log("save %d", seq)
	if f.saveFails {
		return nil, false
	}
	if f.streams != nil {
		return f.stream(seq).Save(seq)
	}
	var saved []savedCell
	for _, c := range f.cells {
		if c.seqs[seq] {
			saved = append(saved, savedCell{uint64(c.pos), c.val})
		}
	}
	state, err := json.Marshal(saved)
	return state, err == nil
}

func (f *fakeMemory) Restore(seq int, state []byte) bool {
	f.log("restore %d", seq)
	var saved []savedCell
	if f.restoreFails || json.Unmarshal(state, &saved) != nil {
		return false
	}
	if f.streams != nil {
		return f.stream(seq).Restore(seq, state)
	}
	f.remove(seq, -1, -1)
	idx, err := f.slots(len(saved))
	if err != nil || len(idx) == 0 {
		return false
	}
	for i, at := range idx {
		f.cells[at] = fakeCell{pos: int(saved[i].Pos), seqs: map[int]bool{seq: true}, val: saved[i].Val}
	}
	f.head = idx[len(idx)-1] + 1
	return true
}

// held is what seq holds, position by position, with the values of its
// cells; a missing or repeated position is an error.
func (f *fakeMemory) held(seq int) ([]uint64, error) {
	if f.streams != nil {
		return f.stream(seq).held(seq)
	}
	byPos := map[int]uint64{}
	for _, c := range f.cells {
		if c.seqs[seq] {
			if _, ok := byPos[c.pos]; ok {
				return nil, fmt.Errorf("sequence %d holds position %d twice", seq, c.pos)
			}
			byPos[c.pos] = c.val
		}
	}
	out := make([]uint64, len(byPos))
	for p, v := range byPos {
		if p >= len(out) {
			return nil, fmt.Errorf("sequence %d holds position %d but only %d cells", seq, p, len(out))
		}
		out[p] = v
	}
	return out, nil
}

package models

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
)

// CheckGGUF checks that path looks like a complete GGUF file: the magic, a
// version llama.cpp reads (2 or 3), a header and tensor table that fit in the
// file, and enough bytes after them for the tensor data they declare. It
// reads the header only (a few megabytes at most, for the tokenizer), never
// the weights.
func CheckGGUF(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("model file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("model file %s: %w", path, err)
	}
	r := &headerReader{r: bufio.NewReaderSize(f, 1<<20), size: st.Size()}
	if err := r.check(); err != nil {
		return fmt.Errorf("model file %s: %w", path, err)
	}
	return nil
}

var (
	errBadMagic  = errors.New("not a GGUF file (bad magic)")
	errTruncated = errors.New("truncated (the header runs past the end of the file)")
)

// ggmlTypeSizes gives, for each ggml tensor type a GGUF file may use, the
// number of elements per block and the bytes per block, as ggml's
// type_traits table has them.
var ggmlTypeSizes = map[uint32][2]uint64{
	0: {1, 4}, 1: {1, 2}, 2: {32, 18}, 3: {32, 20}, 6: {32, 22}, 7: {32, 24},
	8: {32, 34}, 9: {32, 40}, 10: {256, 84}, 11: {256, 110}, 12: {256, 144},
	13: {256, 176}, 14: {256, 210}, 15: {256, 292}, 16: {256, 66}, 17: {256, 74},
	18: {256, 98}, 19: {256, 50}, 20: {32, 18}, 21: {256, 110}, 22: {256, 82},
	23: {256, 136}, 24: {1, 1}, 25: {1, 2}, 26: {1, 4}, 27: {1, 8}, 28: {1, 8},
	29: {256, 56}, 30: {1, 2}, 34: {256, 54}, 35: {256, 66}, 39: {32, 17},
}

// GGUF metadata value types.
const (
	ggufString = 8
	ggufArray  = 9
	ggufUint32 = 4
)

// ggufScalarSizes are the byte sizes of the fixed-size metadata types.
var ggufScalarSizes = map[uint32]uint64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

// headerReader reads the header of a file of known size. Every length it
// reads is checked against the bytes left in the file first, so a corrupt
// count cannot make it allocate or skip absurd amounts.
type headerReader struct {
	r    *bufio.Reader
	size int64
	pos  uint64
}

func (h *headerReader) check() error {
	var magic [4]byte
	if _, err := io.ReadFull(h.r, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return errBadMagic
	}
	h.pos = 4
	version, err := h.u32()
	if err != nil {
		return err
	}
	if version != 2 && version != 3 {
		return fmt.Errorf("unsupported GGUF version %d (llama.cpp reads 2 and 3)", version)
	}
	tensors, err := h.u64()
	if err != nil {
		return err
	}
	kvs, err := h.u64()
	if err != nil {
		return err
	}
	alignment := uint64(32)
	for i := uint64(0); i < kvs; i++ {
		key, err := h.str()
		if err != nil {
			return err
		}
		typ, err := h.u32()
		if err != nil {
			return err
		}
		if key == "general.alignment" && typ == ggufUint32 {
			v, err := h.u32()
			if err != nil {
				return err
			}
			if v == 0 || v&(v-1) != 0 {
				return fmt.Errorf("general.alignment is %d, not a power of two", v)
			}
			alignment = uint64(v)
			continue
		}
		if err := h.skipValue(typ); err != nil {
			return err
		}
	}
	var dataEnd uint64
	for i := uint64(0); i < tensors; i++ {
		name, err := h.str()
		if err != nil {
			return err
		}
		dims, err := h.u32()
		if err != nil {
			return err
		}
		if dims > 4 {
			return fmt.Errorf("tensor %q has %d dimensions, ggml allows at most 4", name, dims)
		}
		elems := uint64(1)
		for d := uint32(0); d < dims; d++ {
			n, err := h.u64()
			if err != nil {
				return err
			}
			hi, lo := bits.Mul64(elems, n)
			if hi != 0 {
				return fmt.Errorf("tensor %q: element count overflows", name)
			}
			elems = lo
		}
		typ, err := h.u32()
		if err != nil {
			return err
		}
		offset, err := h.u64()
		if err != nil {
			return err
		}
		end := offset
		// An unknown type (newer than this table) only bounds the check
		// from below by its offset.
		if sz, ok := ggmlTypeSizes[typ]; ok {
			end += (elems + sz[0] - 1) / sz[0] * sz[1]
		}
		if end < offset || end > uint64(h.size) {
			return fmt.Errorf("truncated: tensor %q ends past the end of the file (%d bytes)", name, h.size)
		}
		dataEnd = max(dataEnd, end)
	}
	start := (h.pos + alignment - 1) / alignment * alignment
	if tensors > 0 && start+dataEnd > uint64(h.size) {
		return fmt.Errorf("truncated: tensor data needs %d bytes, the file has %d", start+dataEnd, h.size)
	}
	return nil
}

func (h *headerReader) need(n uint64) error {
	if n > uint64(h.size)-h.pos {
		return errTruncated
	}
	return nil
}

func (h *headerReader) read(n int) ([]byte, error) {
	if err := h.need(uint64(n)); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(h.r, b); err != nil {
		return nil, errTruncated
	}
	h.pos += uint64(n)
	return b, nil
}

func (h *headerReader) skip(n uint64) error {
	if err := h.need(n); err != nil {
		return err
	}
	if _, err := h.r.Discard(int(n)); err != nil {
		return errTruncated
	}
	h.pos += n
	return nil
}

func (h *headerReader) u32() (uint32, error) {
	b, err := h.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (h *headerReader) u64() (uint64, error) {
	b, err := h.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (h *headerReader) str() (string, error) {
	n, err := h.u64()
	if err != nil {
		return "", err
	}
	if err := h.need(n); err != nil {
		return "", err
	}
	b, err := h.read(int(n))
	return string(b), err
}

func (h *headerReader) skipValue(typ uint32) error {
	if sz, ok := ggufScalarSizes[typ]; ok {
		return h.skip(sz)
	}
	switch typ {
	case ggufString:
		n, err := h.u64()
		if err != nil {
			return err
		}
		return h.skip(n)
	case ggufArray:
		elem, err := h.u32()
		if err != nil {
			return err
		}
		count, err := h.u64()
		if err != nil {
			return err
		}
		if sz, ok := ggufScalarSizes[elem]; ok {
			if count > uint64(h.size) {
				return errTruncated
			}
			return h.skip(count * sz)
		}
		// Strings and nested arrays are variable-sized; each element takes
		// at least 8 bytes, which bounds a corrupt count.
		if err := h.need(count); err != nil {
			return err
		}
		for i := uint64(0); i < count; i++ {
			if err := h.skipValue(elem); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("corrupt header (unknown metadata value type %d)", typ)
}

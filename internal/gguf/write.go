package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Write encodes a GGUF file with the given metadata and tensors, in the
// order given. Tensor data is aligned to the general.alignment value in kvs
// (which must then be a uint32 power of two) or to DefaultAlignment. It
// checks what llama.cpp would reject (duplicate keys or tensor names, long
// names, more than four dimensions, data of the wrong size) before writing
// anything, so a bad call never leaves half a file behind in w.
func Write(w io.Writer, kvs []KV, tensors []Tensor) error {
	align, err := checkKVs(kvs)
	if err != nil {
		return err
	}
	if err := checkTensors(tensors); err != nil {
		return err
	}

	e := &encoder{w: bufio.NewWriter(w)}
	e.write([]byte(magic))
	e.u32(Version)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.value(kv.Value)
	}
	// llama.cpp requires each tensor to start where the previous one's
	// padded data ends, so offsets follow from the sizes alone.
	var offset uint64
	for _, t := range tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(offset)
		offset += alignUp(uint64(len(t.Data)), align)
	}
	e.pad(align)
	for _, t := range tensors {
		e.write(t.Data)
		// Padding after the last tensor too keeps the data section the
		// size llama.cpp computes from the offsets.
		e.pad(align)
	}
	if e.err != nil {
		return fmt.Errorf("write gguf: %w", e.err)
	}
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("write gguf: %w", err)
	}
	return nil
}

// checkKVs validates the metadata and returns the tensor data alignment.
func checkKVs(kvs []KV) (uint64, error) {
	align := uint64(DefaultAlignment)
	seen := make(map[string]bool, len(kvs))
	for _, kv := range kvs {
		if kv.Key == "" {
			return 0, errors.New("gguf metadata: empty key")
		}
		if seen[kv.Key] {
			return 0, fmt.Errorf("gguf metadata: duplicate key %q", kv.Key)
		}
		seen[kv.Key] = true
		if _, _, ok := valueType(kv.Value); !ok {
			return 0, fmt.Errorf("gguf metadata %q: unsupported value type %T", kv.Key, kv.Value)
		}
		if kv.Key == AlignmentKey {
			a, ok := kv.Value.(uint32)
			if !ok || a == 0 || bits.OnesCount32(a) != 1 {
				return 0, fmt.Errorf("gguf metadata %q: want a uint32 power of two, got %T %v", kv.Key, kv.Value, kv.Value)
			}
			align = uint64(a)
		}
	}
	return align, nil
}

func checkTensors(tensors []Tensor) error {
	seen := make(map[string]bool, len(tensors))
	for _, t := range tensors {
		if t.Name == "" || len(t.Name) >= maxTensorName {
			return fmt.Errorf("gguf tensor %q: name must be 1 to %d bytes", t.Name, maxTensorName-1)
		}
		if seen[t.Name] {
			return fmt.Errorf("gguf tensor %q: duplicate name", t.Name)
		}
		seen[t.Name] = true
		if len(t.Shape) == 0 || len(t.Shape) > maxDims {
			return fmt.Errorf("gguf tensor %q: %d dimensions, want 1 to %d", t.Name, len(t.Shape), maxDims)
		}
		for _, d := range t.Shape {
			if d == 0 {
				return fmt.Errorf("gguf tensor %q: shape %v has an empty dimension", t.Name, t.Shape)
			}
		}
		size, err := tensorBytes(t.Type, t.Shape)
		if err != nil {
			return fmt.Errorf("gguf tensor %q: %w", t.Name, err)
		}
		if uint64(len(t.Data)) != size {
			return fmt.Errorf("gguf tensor %q: %d bytes of data, want %d for %s %v", t.Name, len(t.Data), size, t.Type, t.Shape)
		}
	}
	return nil
}

// encoder writes little-endian GGUF primitives, remembering the first error
// and the byte count (for alignment padding).
type encoder struct {
	w   *bufio.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) write(p []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(p)
	e.n += uint64(n)
	e.err = err
}

func (e *encoder) u8(v uint8) { e.write([]byte{v}) }

func (e *encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], v)
	e.write(e.buf[:2])
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], v)
	e.write(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.write(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.write([]byte(s))
}

func (e *encoder) pad(align uint64) {
	e.write(make([]byte, alignUp(e.n, align)-e.n))
}

// value writes a metadata value's type code and payload; checkKVs has
// already rejected unsupported types.
func (e *encoder) value(v any) {
	typ, elem, _ := valueType(v)
	e.u32(uint32(typ))
	if typ != TypeArray {
		e.scalar(v)
		return
	}
	e.u32(uint32(elem))
	switch a := v.(type) {
	case []uint8:
		writeArray(e, a)
	case []int8:
		writeArray(e, a)
	case []uint16:
		writeArray(e, a)
	case []int16:
		writeArray(e, a)
	case []uint32:
		writeArray(e, a)
	case []int32:
		writeArray(e, a)
	case []float32:
		writeArray(e, a)
	case []bool:
		writeArray(e, a)
	case []string:
		writeArray(e, a)
	case []uint64:
		writeArray(e, a)
	case []int64:
		writeArray(e, a)
	case []float64:
		writeArray(e, a)
	}
}

func writeArray[T any](e *encoder, a []T) {
	e.u64(uint64(len(a)))
	for _, v := range a {
		e.scalar(v)
	}
}

func (e *encoder) scalar(v any) {
	switch x := v.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	}
}

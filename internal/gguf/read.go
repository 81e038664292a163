package gguf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
)

// File is the parsed head of a GGUF file: everything before the tensor
// data.
type File struct {
	Version uint32
	KVs     []KV
	Tensors []TensorInfo
	// Alignment is the tensor data alignment in effect.
	Alignment uint64
	// DataOffset is where the tensor data section starts in the file;
	// TensorInfo offsets are relative to it.
	DataOffset uint64
}

// TensorInfo describes one tensor as listed in a GGUF file.
type TensorInfo struct {
	Name string
	// Shape is ggml's ne, Shape[0] being the innermost dimension.
	Shape  []uint64
	Type   TensorType
	Offset uint64
}

// Value returns the value of a metadata key.
func (f *File) Value(key string) (any, bool) {
	for _, kv := range f.KVs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Tensor returns the tensor with the given name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// TensorData reads the raw data of a named tensor of a known type from r,
// the same file f was read from.
func (f *File) TensorData(r io.ReaderAt, name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf tensor %q: not found", name)
	}
	size, err := tensorBytes(t.Type, t.Shape)
	if err != nil {
		return nil, fmt.Errorf("gguf tensor %q: %w", name, err)
	}
	data := make([]byte, size)
	if _, err := r.ReadAt(data, int64(f.DataOffset+t.Offset)); err != nil {
		return nil, fmt.Errorf("gguf tensor %q: read data: %w", name, err)
	}
	return data, nil
}

// ReadFile parses the head of the GGUF file at path.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Read(bufio.NewReader(fh))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Read parses a GGUF file's header, metadata and tensor table from r and
// stops at the start of the tensor data, so it is cheap even for a large
// model. Tensor types it cannot decode are still listed.
func Read(r io.Reader) (*File, error) {
	return read(r, -1)
}

// read is Read for an input of known size (-1: unknown). With the size
// known, a string or array longer than what is left fails at once instead
// of being read to the end of a multi-gigabyte model.
func read(r io.Reader, size int64) (*File, error) {
	d := &decoder{r: r, size: size}
	var m [4]byte
	d.read(m[:])
	if d.err == nil && string(m[:]) != magic {
		return nil, fmt.Errorf("read gguf: not a GGUF file (bad magic %q)", m[:])
	}
	f := &File{Version: d.u32()}
	// Version 1 used 32-bit counts; 2 and 3 share this layout.
	if d.err == nil && f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("read gguf: unsupported version %d, want 2 or 3", f.Version)
	}
	nTensors := d.u64()
	nKVs := d.u64()
	for i := uint64(0); i < nKVs && d.err == nil; i++ {
		key := d.str()
		v, err := d.value(key)
		if err != nil {
			return nil, err
		}
		f.KVs = append(f.KVs, KV{Key: key, Value: v})
	}
	f.Alignment = DefaultAlignment
	if v, ok := f.Value(AlignmentKey); ok {
		a, ok := v.(uint32)
		if !ok || a == 0 || bits.OnesCount32(a) != 1 {
			return nil, fmt.Errorf("read gguf: %s = %T %v, want a uint32 power of two", AlignmentKey, v, v)
		}
		f.Alignment = uint64(a)
	}
	for i := uint64(0); i < nTensors && d.err == nil; i++ {
		t := TensorInfo{Name: d.str()}
		nDims := d.u32()
		if nDims > maxDims {
			return nil, fmt.Errorf("read gguf: tensor %q has %d dimensions, at most %d allowed", t.Name, nDims, maxDims)
		}
		t.Shape = make([]uint64, nDims)
		for j := range t.Shape {
			t.Shape[j] = d.u64()
		}
		t.Type = TensorType(d.u32())
		t.Offset = d.u64()
		f.Tensors = append(f.Tensors, t)
	}
	if d.err != nil {
		return nil, fmt.Errorf("read gguf: %w", d.err)
	}
	f.DataOffset = alignUp(d.n, f.Alignment)
	return f, nil
}

// decoder reads little-endian GGUF primitives, remembering the first error
// and the byte count (to locate the aligned data section).
type decoder struct {
	r    io.Reader
	size int64 // bytes in the input; -1 when unknown
	n    uint64
	err  error
	buf  [8]byte
}

// fits reports whether n more bytes can be in the input, and otherwise
// records the input as cut short, as reading them would.
func (d *decoder) fits(n uint64) bool {
	if d.size >= 0 && n > uint64(d.size)-min(d.n, uint64(d.size)) {
		d.err = io.ErrUnexpectedEOF
		return false
	}
	return true
}

func (d *decoder) read(p []byte) {
	if d.err != nil {
		return
	}
	n, err := io.ReadFull(d.r, p)
	d.n += uint64(n)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	d.err = err
}

func (d *decoder) u8() uint8 {
	d.read(d.buf[:1])
	return d.buf[0]
}

func (d *decoder) u16() uint16 {
	d.read(d.buf[:2])
	return binary.LittleEndian.Uint16(d.buf[:])
}

func (d *decoder) u32() uint32 {
	d.read(d.buf[:4])
	return binary.LittleEndian.Uint32(d.buf[:])
}

func (d *decoder) u64() uint64 {
	d.read(d.buf[:8])
	return binary.LittleEndian.Uint64(d.buf[:])
}

// str reads a length-prefixed string. It copies through a growing buffer
// rather than allocating the declared length up front, so a corrupt length
// ends in an error at end of input instead of a huge allocation.
func (d *decoder) str() string {
	n := d.u64()
	if d.err != nil || !d.fits(n) {
		return ""
	}
	var b bytes.Buffer
	m, err := io.CopyN(&b, d.r, int64(min(n, math.MaxInt64)))
	d.n += uint64(m)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	d.err = err
	return b.String()
}

// value reads a metadata value's type code and payload into the Go type
// documented on KV.
func (d *decoder) value(key string) (any, error) {
	typ := ValueType(d.u32())
	if d.err != nil {
		return nil, fmt.Errorf("read gguf metadata %q: %w", key, d.err)
	}
	if typ != TypeArray {
		v, ok := d.scalar(typ)
		if !ok {
			return nil, fmt.Errorf("read gguf metadata %q: unknown value type %d", key, typ)
		}
		return v, d.wrap(key)
	}
	elem := ValueType(d.u32())
	n := d.u64()
	// Every element takes at least one byte.
	if d.err != nil || !d.fits(n) {
		return nil, d.wrap(key)
	}
	var v any
	switch elem {
	case TypeUint8:
		v = readArray[uint8](d, elem, n)
	case TypeInt8:
		v = readArray[int8](d, elem, n)
	case TypeUint16:
		v = readArray[uint16](d, elem, n)
	case TypeInt16:
		v = readArray[int16](d, elem, n)
	case TypeUint32:
		v = readArray[uint32](d, elem, n)
	case TypeInt32:
		v = readArray[int32](d, elem, n)
	case TypeFloat32:
		v = readArray[float32](d, elem, n)
	case TypeBool:
		v = readArray[bool](d, elem, n)
	case TypeString:
		v = readArray[string](d, elem, n)
	case TypeUint64:
		v = readArray[uint64](d, elem, n)
	case TypeInt64:
		v = readArray[int64](d, elem, n)
	case TypeFloat64:
		v = readArray[float64](d, elem, n)
	default:
		// Nested arrays are allowed by the specification but not by
		// llama.cpp, and no model the project uses has them.
		return nil, fmt.Errorf("read gguf metadata %q: unsupported array element type %d", key, elem)
	}
	return v, d.wrap(key)
}

func (d *decoder) wrap(key string) error {
	if d.err != nil {
		return fmt.Errorf("read gguf metadata %q: %w", key, d.err)
	}
	return nil
}

// readArray reads n elements of type elem. Capacity grows with what is
// actually read, for the same reason as in str.
func readArray[T any](d *decoder, elem ValueType, n uint64) []T {
	a := make([]T, 0, min(n, 1024))
	for i := uint64(0); i < n && d.err == nil; i++ {
		v, _ := d.scalar(elem)
		a = append(a, v.(T))
	}
	return a
}

// scalar reads one value of a non-array type; false for an unknown type.
func (d *decoder) scalar(typ ValueType) (any, bool) {
	switch typ {
	case TypeUint8:
		return d.u8(), true
	case TypeInt8:
		return int8(d.u8()), true
	case TypeUint16:
		return d.u16(), true
	case TypeInt16:
		return int16(d.u16()), true
	case TypeUint32:
		return d.u32(), true
	case TypeInt32:
		return int32(d.u32()), true
	case TypeFloat32:
		return math.Float32frombits(d.u32()), true
	case TypeBool:
		return d.u8() != 0, true
	case TypeString:
		return d.str(), true
	case TypeUint64:
		return d.u64(), true
	case TypeInt64:
		return int64(d.u64()), true
	case TypeFloat64:
		return math.Float64frombits(d.u64()), true
	}
	return nil, false
}

// WeightBytesPerToken is how many bytes of weights generating one token
// reads: every tensor's data once, except the token embedding when the
// file has a separate output matrix, since then only the token's own row
// of the embedding is read. (Where the output reuses the embedding, as in
// SmolLM2's and Gemma's files, the whole embedding is read for the
// logits.) Decoding one sequence is bound by memory bandwidth divided by
// this figure.
func (f *File) WeightBytesPerToken() (uint64, error) {
	_, separateOutput := f.Tensor("output.weight")
	var total uint64
	for _, t := range f.Tensors {
		n, err := tensorBytes(t.Type, t.Shape)
		if err != nil {
			return 0, fmt.Errorf("tensor %s: %w", t.Name, err)
		}
		if t.Name == "token_embd.weight" && separateOutput {
			if len(t.Shape) != 2 || t.Shape[1] == 0 {
				return 0, fmt.Errorf("tensor %s: shape %v, want rows of a vocabulary", t.Name, t.Shape)
			}
			n /= t.Shape[1]
		}
		total += n
	}
	return total, nil
}

package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

func TestMetadataRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		value any
		typ   ValueType
	}{
		{"uint8", uint8(200), TypeUint8},
		{"int8", int8(-100), TypeInt8},
		{"uint16", uint16(60000), TypeUint16},
		{"int16", int16(-30000), TypeInt16},
		{"uint32", uint32(4000000000), TypeUint32},
		{"int32", int32(-2000000000), TypeInt32},
		{"uint64", uint64(1) << 60, TypeUint64},
		{"int64", int64(-1) << 60, TypeInt64},
		{"float32", float32(1e-5), TypeFloat32},
		{"float64", math.Pi, TypeFloat64},
		{"bool true", true, TypeBool},
		{"bool false", false, TypeBool},
		{"string", "héllo\nwörld", TypeString},
		{"empty string", "", TypeString},
		{"uint8 array", []uint8{0, 1, 255}, TypeArray},
		{"int8 array", []int8{-128, 127}, TypeArray},
		{"uint16 array", []uint16{1, 65535}, TypeArray},
		{"int16 array", []int16{-1, 1}, TypeArray},
		{"uint32 array", []uint32{7, 8}, TypeArray},
		{"int32 array", []int32{1, 3, -5}, TypeArray},
		{"uint64 array", []uint64{math.MaxUint64}, TypeArray},
		{"int64 array", []int64{math.MinInt64}, TypeArray},
		{"float32 array", []float32{0.5, -2}, TypeArray},
		{"float64 array", []float64{1e300}, TypeArray},
		{"bool array", []bool{true, false, true}, TypeArray},
		{"string array", []string{"a", "", "Ġ"}, TypeArray},
		{"empty string array", []string{}, TypeArray},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, _, known := valueType(tt.value)
			equals(t, "type", typ, tt.typ)
			equals(t, "known", known, true)

			kvs := []KV{{Key: "test.key", Value: tt.value}, {Key: "test.after", Value: "sentinel"}}
			_, f := encode(t, kvs, nil)
			equals(t, "metadata", f.KVs, kvs)
		})
	}
}

func TestTensorRoundTrip(t *testing.T) {
	f32 := NewF32Tensor("a.weight", []uint64{3, 2}, []float32{1, -2, 3.5, 0, 1e-20, -1e20})
	f16 := NewF16Tensor("b.weight", []uint64{5}, []float32{1, -2, 0.5, 65504, -0.25})
	scalar := NewF32Tensor("c", []uint64{1}, []float32{42})
	tests := []struct {
		name      string
		kvs       []KV
		alignment uint64
	}{
		{"default alignment", nil, DefaultAlignment},
		{"alignment 64", []KV{{Key: AlignmentKey, Value: uint32(64)}}, 64},
		{"alignment 1", []KV{{Key: AlignmentKey, Value: uint32(1)}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tensors := []Tensor{f32, f16, scalar}
			data, f := encode(t, tt.kvs, tensors)
			equals(t, "version", f.Version, uint32(Version))
			equals(t, "alignment", f.Alignment, tt.alignment)
			if f.DataOffset%tt.alignment != 0 {
				t.Errorf("data offset %d is not aligned to %d", f.DataOffset, tt.alignment)
			}
			// llama.cpp wants each tensor right after the previous one's
			// padded data, and the file to hold all of the padded data.
			var next uint64
			for i, want := range tensors {
				got := f.Tensors[i]
				equals(t, "name", got.Name, want.Name)
				equals(t, "shape", got.Shape, want.Shape)
				equals(t, "type", got.Type, want.Type)
				equals(t, want.Name+" offset", got.Offset, next)
				next += alignUp(uint64(len(want.Data)), tt.alignment)

				raw, err := f.TensorData(bytes.NewReader(data), want.Name)
				ok(t, err)
				equals(t, want.Name+" data", raw, want.Data)
			}
			equals(t, "file size", uint64(len(data)), f.DataOffset+next)
		})
	}
}

func TestDecodeFloat32s(t *testing.T) {
	values := []float32{1, -2, 0.5, 65504, -0.25, 0}
	tests := []struct {
		name   string
		tensor Tensor
	}{
		{"F32", NewF32Tensor("x", []uint64{6}, values)},
		{"F16", NewF16Tensor("x", []uint64{6}, values)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeFloat32s(tt.tensor.Type, tt.tensor.Data)
			ok(t, err)
			equals(t, "values", got, values)
		})
	}
	if _, err := DecodeFloat32s(TensorType(12), make([]byte, 8)); err == nil {
		t.Error("decoding an unsupported type succeeded")
	}
	if _, err := DecodeFloat32s(TensorF32, make([]byte, 6)); err == nil {
		t.Error("decoding a partial F32 element succeeded")
	}
}

func TestWriteRejects(t *testing.T) {
	good := NewF32Tensor("t", []uint64{2}, []float32{1, 2})
	tests := []struct {
		name    string
		kvs     []KV
		tensors []Tensor
		want    string
	}{
		{"empty key", []KV{{Key: "", Value: uint8(1)}}, nil, "empty key"},
		{"duplicate key", []KV{{Key: "k", Value: uint8(1)}, {Key: "k", Value: uint8(2)}}, nil, "duplicate key"},
		{"int value", []KV{{Key: "k", Value: 1}}, nil, "unsupported value type int"},
		{"nested array", []KV{{Key: "k", Value: [][]string{{"a"}}}}, nil, "unsupported value type"},
		{"alignment not uint32", []KV{{Key: AlignmentKey, Value: uint64(32)}}, nil, "power of two"},
		{"alignment not power of two", []KV{{Key: AlignmentKey, Value: uint32(48)}}, nil, "power of two"},
		{"alignment zero", []KV{{Key: AlignmentKey, Value: uint32(0)}}, nil, "power of two"},
		{"empty name", nil, []Tensor{{Shape: []uint64{1}, Data: make([]byte, 4)}}, "name must be"},
		{"long name", nil, []Tensor{{Name: strings.Repeat("n", 64), Shape: []uint64{1}, Data: make([]byte, 4)}}, "name must be"},
		{"duplicate name", nil, []Tensor{good, good}, "duplicate name"},
		{"no dimensions", nil, []Tensor{{Name: "t"}}, "0 dimensions"},
		{"five dimensions", nil, []Tensor{{Name: "t", Shape: []uint64{1, 1, 1, 1, 1}, Data: make([]byte, 4)}}, "5 dimensions"},
		{"empty dimension", nil, []Tensor{{Name: "t", Shape: []uint64{2, 0}}}, "empty dimension"},
		{"unknown type", nil, []Tensor{{Name: "t", Shape: []uint64{32}, Type: TensorType(31), Data: make([]byte, 18)}}, "unsupported type ggml type 31"},
		{"short data", nil, []Tensor{{Name: "t", Shape: []uint64{3}, Type: TensorF32, Data: make([]byte, 8)}}, "8 bytes of data, want 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tt.kvs, tt.tensors)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write error = %v, want one containing %q", err, tt.want)
			}
			equals(t, "bytes written", buf.Len(), 0)
		})
	}
}

// failingWriter accepts limit bytes and then fails.
type failingWriter struct{ limit int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, errDiskFull
	}
	w.limit -= len(p)
	return len(p), nil
}

func TestWriteReportsWriterError(t *testing.T) {
	tensor := NewF32Tensor("t", []uint64{4096}, make([]float32, 4096))
	err := Write(&failingWriter{limit: 100}, []KV{{Key: "k", Value: "v"}}, []Tensor{tensor})
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("Write error = %v, want %v", err, errDiskFull)
	}
}

func TestReadRejects(t *testing.T) {
	valid, _ := encode(t, []KV{{Key: "k", Value: []string{"a", "b"}}}, []Tensor{NewF32Tensor("t", []uint64{2}, []float32{1, 2})})
	header := func(version uint32, nTensors, nKVs uint64) []byte {
		b := []byte(magic)
		b = binary.LittleEndian.AppendUint32(b, version)
		b = binary.LittleEndian.AppendUint64(b, nTensors)
		return binary.LittleEndian.AppendUint64(b, nKVs)
	}
	withKV := func(key string, typ ValueType, payload ...byte) []byte {
		b := header(3, 0, 1)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(key)))
		b = append(b, key...)
		b = binary.LittleEndian.AppendUint32(b, uint32(typ))
		return append(b, payload...)
	}
	hugeString := withKV("k", TypeString, binary.LittleEndian.AppendUint64(nil, math.MaxUint64)...)
	hugeArray := withKV("k", TypeArray, append(binary.LittleEndian.AppendUint32(nil, uint32(TypeUint64)), binary.LittleEndian.AppendUint64(nil, math.MaxUint64)...)...)
	tensorDims := binary.LittleEndian.AppendUint64(header(3, 1, 0), 1)
	tensorDims = append(tensorDims, 't')
	tensorDims = binary.LittleEndian.AppendUint32(tensorDims, 5)

	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, io.ErrUnexpectedEOF.Error()},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), "bad magic"},
		{"version 1", header(1, 0, 0), "unsupported version 1"},
		{"version 4", header(4, 0, 0), "unsupported version 4"},
		{"unknown value type", withKV("k", ValueType(13)), "unknown value type 13"},
		{"nested array", withKV("k", TypeArray, append(binary.LittleEndian.AppendUint32(nil, uint32(TypeArray)), make([]byte, 8)...)...), "unsupported array element type"},
		{"huge string length", hugeString, io.ErrUnexpectedEOF.Error()},
		{"huge array length", hugeArray, io.ErrUnexpectedEOF.Error()},
		{"bad alignment", withKV(AlignmentKey, TypeUint32, 48, 0, 0, 0), "power of two"},
		{"alignment not uint32", withKV(AlignmentKey, TypeUint64, 32, 0, 0, 0, 0, 0, 0, 0), "power of two"},
		{"five dimensions", tensorDims, "5 dimensions"},
	}
	// Every truncation of the head (everything before the padding) must
	// fail rather than return a partial file. The head of valid is: magic,
	// version and counts (24 bytes); key "k", array type, element type,
	// length, "a" and "b" (43); tensor name "t", dimension count, one
	// dimension, type and offset (33).
	const headLen = 24 + 43 + 33
	for n := range headLen {
		tests = append(tests, struct {
			name string
			data []byte
			want string
		}{fmt.Sprintf("truncated to %d bytes", n), valid[:n], "unexpected EOF"})
	}
	t.Run("head alone", func(t *testing.T) {
		f, err := Read(bytes.NewReader(valid[:headLen]))
		ok(t, err)
		equals(t, "data offset", f.DataOffset, alignUp(headLen, DefaultAlignment))
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read(bytes.NewReader(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Read error = %v (file %+v), want one containing %q", err, f, tt.want)
			}
		})
	}
}

func TestF16Conversion(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"max", 65504, 0x7bff},
		{"overflow", 65520, 0x7c00},
		{"just below overflow rounds down", 65519, 0x7bff},
		{"infinity", float32(math.Inf(1)), 0x7c00},
		{"minus infinity", float32(math.Inf(-1)), 0xfc00},
		{"NaN", float32(math.NaN()), 0x7e00},
		{"smallest normal", 1.0 / (1 << 14), 0x0400},
		{"smallest subnormal", 1.0 / (1 << 24), 0x0001},
		{"half the smallest subnormal ties to zero", 1.0 / (1 << 25), 0x0000},
		{"above half the smallest subnormal", 1.0/(1<<25) + 1.0/(1<<35), 0x0001},
		{"subnormal rounds up to normal", 1.0/(1<<14) - 1.0/(1<<26), 0x0400},
		{"float32 subnormal", math.SmallestNonzeroFloat32, 0x0000},
		{"tie rounds to even (down)", 1 + 1.0/(1<<11), 0x3c00},
		{"tie rounds to even (up)", 1 + 3.0/(1<<11), 0x3c02},
		{"above tie rounds up", 1 + 1.0/(1<<11) + 1.0/(1<<20), 0x3c01},
		{"third", 1.0 / 3, 0x3555},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := float32ToF16(tt.in)
			if got != tt.want {
				t.Errorf("float32ToF16(%g) = %#04x, want %#04x", tt.in, got, tt.want)
			}
		})
	}
}

// Every half-precision value converts to float32 and back unchanged, which
// checks both directions against each other across the whole range.
func TestF16RoundTripAllValues(t *testing.T) {
	for h := range 1 << 16 {
		f := f16ToFloat32(uint16(h))
		if f != f {
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("f16ToFloat32(%#04x) = NaN, but it is not a NaN", h)
			}
			continue
		}
		if back := float32ToF16(f); back != uint16(h) {
			t.Fatalf("f16 %#04x -> %g -> %#04x", h, f, back)
		}
	}
	equals(t, "1.0", f16ToFloat32(0x3c00), float32(1))
	equals(t, "smallest subnormal", f16ToFloat32(0x0001), float32(1.0/(1<<24)))
	equals(t, "-max", f16ToFloat32(0xfbff), float32(-65504))
}

func TestWeightBytesPerToken(t *testing.T) {
	embd := NewF32Tensor("token_embd.weight", []uint64{4, 3}, make([]float32, 12)) // 3 rows of 16 bytes
	norm := NewF16Tensor("output_norm.weight", []uint64{4}, make([]float32, 4))    // 8 bytes
	out := NewF32Tensor("output.weight", []uint64{4, 3}, make([]float32, 12))      // 48 bytes
	for _, tt := range []struct {
		name    string
		tensors []Tensor
		want    uint64
	}{
		// The output reuses the embedding: all of it is read.
		{"tied", []Tensor{embd, norm}, 48 + 8},
		// A separate output: one row of the embedding, all of the output.
		{"separate output", []Tensor{embd, norm, out}, 16 + 8 + 48},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, f := encode(t, nil, tt.tensors)
			got, err := f.WeightBytesPerToken()
			ok(t, err)
			equals(t, "bytes", got, tt.want)
		})
	}
}

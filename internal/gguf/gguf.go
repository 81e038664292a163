package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// magic opens every GGUF file.
const magic = "GGUF"

// Version is the GGUF version the writer produces.
const Version = 3

// DefaultAlignment is the tensor data alignment used when the metadata has
// no general.alignment key; llama.cpp assumes the same value.
const DefaultAlignment = 32

// AlignmentKey names the metadata key that overrides DefaultAlignment.
const AlignmentKey = "general.alignment"

// maxDims is ggml's GGML_MAX_DIMS; llama.cpp rejects tensors with more.
const maxDims = 4

// maxTensorName is ggml's GGML_MAX_NAME: names must be strictly shorter
// because ggml stores them NUL-terminated in a fixed buffer.
const maxTensorName = 64

// ValueType is the type code of a metadata value in a GGUF file.
type ValueType uint32

// The metadata value types of the GGUF specification.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

// KV is one metadata entry. Value holds one of the Go types that map to a
// GGUF type: uint8, int8, uint16, int16, uint32, int32, uint64, int64,
// float32, float64, bool, string, or a slice of one of them for an array.
// The Go type decides the GGUF type, and llama.cpp checks types strictly
// (a count read as uint32 must be stored as uint32), so pick it on purpose.
// The reader returns values with the same Go types.
type KV struct {
	Key   string
	Value any
}

// valueType reports the GGUF type of v, and for arrays the element type.
func valueType(v any) (typ, elem ValueType, ok bool) {
	switch v.(type) {
	case uint8:
		return TypeUint8, 0, true
	case int8:
		return TypeInt8, 0, true
	case uint16:
		return TypeUint16, 0, true
	case int16:
		return TypeInt16, 0, true
	case uint32:
		return TypeUint32, 0, true
	case int32:
		return TypeInt32, 0, true
	case float32:
		return TypeFloat32, 0, true
	case bool:
		return TypeBool, 0, true
	case string:
		return TypeString, 0, true
	case uint64:
		return TypeUint64, 0, true
	case int64:
		return TypeInt64, 0, true
	case float64:
		return TypeFloat64, 0, true
	case []uint8:
		return TypeArray, TypeUint8, true
	case []int8:
		return TypeArray, TypeInt8, true
	case []uint16:
		return TypeArray, TypeUint16, true
	case []int16:
		return TypeArray, TypeInt16, true
	case []uint32:
		return TypeArray, TypeUint32, true
	case []int32:
		return TypeArray, TypeInt32, true
	case []float32:
		return TypeArray, TypeFloat32, true
	case []bool:
		return TypeArray, TypeBool, true
	case []string:
		return TypeArray, TypeString, true
	case []uint64:
		return TypeArray, TypeUint64, true
	case []int64:
		return TypeArray, TypeInt64, true
	case []float64:
		return TypeArray, TypeFloat64, true
	}
	return 0, 0, false
}

// TensorType is a ggml tensor type code.
type TensorType uint32

// The tensor types whose data this package can encode and decode as
// numbers. Data of the other types in typeTraits is written and read as raw
// bytes.
const (
	TensorF32 TensorType = 0
	TensorF16 TensorType = 1
)

// typeTrait is ggml's type_traits entry for one tensor type: its name, the
// elements per block and the bytes per block. A row must hold a whole
// number of blocks.
type typeTrait struct {
	name       string
	blockElems uint64
	blockBytes uint64
}

// typeTraits lists the types a GGUF file may hold, as ggml's type_traits
// table has them. It lets the writer check the size of quantised data and
// the header check bound each tensor's extent; a type newer than this table
// is still listed by the reader.
var typeTraits = map[TensorType]typeTrait{
	0: {"F32", 1, 4}, 1: {"F16", 1, 2}, 2: {"Q4_0", 32, 18}, 3: {"Q4_1", 32, 20},
	6: {"Q5_0", 32, 22}, 7: {"Q5_1", 32, 24}, 8: {"Q8_0", 32, 34}, 9: {"Q8_1", 32, 40},
	10: {"Q2_K", 256, 84}, 11: {"Q3_K", 256, 110}, 12: {"Q4_K", 256, 144},
	13: {"Q5_K", 256, 176}, 14: {"Q6_K", 256, 210}, 15: {"Q8_K", 256, 292},
	16: {"IQ2_XXS", 256, 66}, 17: {"IQ2_XS", 256, 74}, 18: {"IQ3_XXS", 256, 98},
	19: {"IQ1_S", 256, 50}, 20: {"IQ4_NL", 32, 18}, 21: {"IQ3_S", 256, 110},
	22: {"IQ2_S", 256, 82}, 23: {"IQ4_XS", 256, 136}, 24: {"I8", 1, 1},
	25: {"I16", 1, 2}, 26: {"I32", 1, 4}, 27: {"I64", 1, 8}, 28: {"F64", 1, 8},
	29: {"IQ1_M", 256, 56}, 30: {"BF16", 1, 2}, 34: {"TQ1_0", 256, 54},
	35: {"TQ2_0", 256, 66}, 39: {"MXFP4", 32, 17},
}

func (t TensorType) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("ggml type %d", uint32(t))
}

// elementSize is the bytes per element of the types DecodeFloat32s
// decodes; both have a block size of one, so any row length is valid.
func (t TensorType) elementSize() (uint64, bool) {
	switch t {
	case TensorF32:
		return 4, true
	case TensorF16:
		return 2, true
	}
	return 0, false
}

// Tensor is a tensor to write. Shape lists ggml's ne: Shape[0] is the
// innermost dimension (the length of a row), so a matrix that maps n_in
// inputs to n_out outputs has Shape {n_in, n_out} and its Data holds n_out
// rows of n_in values. Data is the raw little-endian encoding of Type.
type Tensor struct {
	Name  string
	Shape []uint64
	Type  TensorType
	Data  []byte
}

// NewF32Tensor encodes values as an F32 tensor.
func NewF32Tensor(name string, shape []uint64, values []float32) Tensor {
	data := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return Tensor{Name: name, Shape: shape, Type: TensorF32, Data: data}
}

// NewF16Tensor encodes values as an F16 tensor, rounding each to the nearest
// half-precision value (ties to even), as ggml does.
func NewF16Tensor(name string, shape []uint64, values []float32) Tensor {
	data := make([]byte, 2*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint16(data[2*i:], float32ToF16(v))
	}
	return Tensor{Name: name, Shape: shape, Type: TensorF16, Data: data}
}

// DecodeFloat32s decodes F32 or F16 tensor data into float32 values.
func DecodeFloat32s(typ TensorType, data []byte) ([]float32, error) {
	size, ok := typ.elementSize()
	if !ok {
		return nil, fmt.Errorf("decode tensor data: unsupported type %s", typ)
	}
	if uint64(len(data))%size != 0 {
		return nil, fmt.Errorf("decode %s tensor data: %d bytes is not a whole number of elements", typ, len(data))
	}
	values := make([]float32, uint64(len(data))/size)
	for i := range values {
		switch typ {
		case TensorF32:
			values[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		case TensorF16:
			values[i] = f16ToFloat32(binary.LittleEndian.Uint16(data[2*i:]))
		}
	}
	return values, nil
}

// tensorBytes is the size of a tensor's data, or an error for a type this
// package does not know, a row that is not a whole number of blocks, or a
// size that overflows.
func tensorBytes(typ TensorType, shape []uint64) (uint64, error) {
	tr, ok := typeTraits[typ]
	if !ok {
		return 0, fmt.Errorf("unsupported type %s", typ)
	}
	if len(shape) > 0 && shape[0]%tr.blockElems != 0 {
		return 0, fmt.Errorf("rows of %d elements are not whole %s blocks of %d", shape[0], typ, tr.blockElems)
	}
	elems := uint64(1)
	for _, d := range shape {
		hi, lo := bits.Mul64(elems, d)
		if hi != 0 {
			return 0, fmt.Errorf("shape %v overflows", shape)
		}
		elems = lo
	}
	hi, n := bits.Mul64(elems/tr.blockElems, tr.blockBytes)
	if hi != 0 {
		return 0, fmt.Errorf("shape %v overflows", shape)
	}
	return n, nil
}

// alignUp rounds n up to a multiple of align, which is a power of two.
func alignUp(n, align uint64) uint64 {
	return (n + align - 1) &^ (align - 1)
}

// float32ToF16 converts f to IEEE half precision, rounding to nearest even.
func float32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 // a quiet NaN
		}
		return sign | 0x7c00
	}
	halfExp := exp - 127 + 15
	if halfExp >= 0x1f {
		return sign | 0x7c00 // too large: infinity
	}
	if halfExp <= 0 {
		// Subnormal in half precision: count units of 2^-24. Values below
		// half a unit (including float32 subnormals) round to zero.
		shift := uint32(126 - exp)
		if shift > 24 {
			return sign
		}
		m := mant | 0x800000
		return sign | roundShift(m, shift)
	}
	// A carry out of the mantissa correctly bumps the exponent, up to
	// infinity.
	return sign | (uint16(halfExp)<<10 + roundShift(mant, 13))
}

// roundShift returns m >> shift rounded to nearest, ties to even.
func roundShift(m, shift uint32) uint16 {
	q := m >> shift
	rem := m & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return uint16(q)
}

// f16ToFloat32 converts IEEE half precision to float32, which is exact.
func f16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		f := float32(mant) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

package fuzzrt

// The argument types a fuzz function may take (testing's supportedTypes):
// []byte, string, bool, and the predeclared integer and float types, byte and
// rune being uint8 and int32. They are defined once, here, as Kinds with their
// properties; the encodings, the mutator, the comparison feedback and the
// engine's minimizer and layouts ask the table instead of listing the types.
// Only Bits and FromBits convert between a value and its kind's bits, so a
// type switch over the Go types is written in Bits alone.

import (
	"fmt"
	"math"
	"math/bits"
	"reflect"
)

// Kind is the type of a fuzz argument. The zero Kind (NoKind) is none of them.
// A Kind's number is its tag in the binary encoding of values.go, so the order
// of the constants is part of that encoding.
type Kind uint8

const (
	NoKind Kind = iota
	KindBytes
	KindString
	KindBool
	KindUint8 // byte
	KindInt32 // rune
	KindInt
	KindInt8
	KindInt16
	KindInt64
	KindUint
	KindUint16
	KindUint32
	KindUint64
	KindFloat32
	KindFloat64
	numKinds
)

type kindClass uint8

const (
	classBytes kindClass = 1 + iota // []byte
	classString
	classBool
	classInt // signed or unsigned integer
	classFloat
)

// kinds is the table. For a number or a bool, its bits (Bits) are a uint64:
// 0 or 1 for a bool, an integer's two's complement sign-extended, a float's
// IEEE 754 bits.
var kinds = [numKinds]struct {
	name   string // as reflect (and TypeName, and the coordinator) spells it
	size   uint8  // bytes of the value in fixed-size encodings (int and uint: 8 on every platform); 0 for []byte, string
	bits   uint8  // bits of the value in this process (int and uint: the platform's)
	class  kindClass
	signed bool
	typ    reflect.Type
	zero   any
}{
	KindBytes:   {"[]uint8", 0, 0, classBytes, false, reflect.TypeFor[[]byte](), []byte{}},
	KindString:  {"string", 0, 0, classString, false, reflect.TypeFor[string](), ""},
	KindBool:    {"bool", 1, 1, classBool, false, reflect.TypeFor[bool](), false},
	KindUint8:   {"uint8", 1, 8, classInt, false, reflect.TypeFor[uint8](), uint8(0)},
	KindInt32:   {"int32", 4, 32, classInt, true, reflect.TypeFor[int32](), int32(0)},
	KindInt:     {"int", 8, bits.UintSize, classInt, true, reflect.TypeFor[int](), int(0)},
	KindInt8:    {"int8", 1, 8, classInt, true, reflect.TypeFor[int8](), int8(0)},
	KindInt16:   {"int16", 2, 16, classInt, true, reflect.TypeFor[int16](), int16(0)},
	KindInt64:   {"int64", 8, 64, classInt, true, reflect.TypeFor[int64](), int64(0)},
	KindUint:    {"uint", 8, bits.UintSize, classInt, false, reflect.TypeFor[uint](), uint(0)},
	KindUint16:  {"uint16", 2, 16, classInt, false, reflect.TypeFor[uint16](), uint16(0)},
	KindUint32:  {"uint32", 4, 32, classInt, false, reflect.TypeFor[uint32](), uint32(0)},
	KindUint64:  {"uint64", 8, 64, classInt, false, reflect.TypeFor[uint64](), uint64(0)},
	KindFloat32: {"float32", 4, 32, classFloat, false, reflect.TypeFor[float32](), float32(0)},
	KindFloat64: {"float64", 8, 64, classFloat, false, reflect.TypeFor[float64](), float64(0)},
}

// Bits returns v's kind and, for a number or a bool, its bits. A value of any
// other type (a named type such as `type MyInt int` too) is NoKind.
func Bits(v any) (Kind, uint64) {
	switch x := v.(type) {
	case []byte:
		return KindBytes, 0
	case string:
		return KindString, 0
	case bool:
		if x {
			return KindBool, 1
		}
		return KindBool, 0
	case uint8:
		return KindUint8, uint64(x)
	case int32:
		return KindInt32, uint64(x)
	case int:
		return KindInt, uint64(x)
	case int8:
		return KindInt8, uint64(x)
	case int16:
		return KindInt16, uint64(x)
	case int64:
		return KindInt64, uint64(x)
	case uint:
		return KindUint, uint64(x)
	case uint16:
		return KindUint16, uint64(x)
	case uint32:
		return KindUint32, uint64(x)
	case uint64:
		return KindUint64, x
	case float32:
		return KindFloat32, uint64(math.Float32bits(x))
	case float64:
		return KindFloat64, math.Float64bits(x)
	}
	return NoKind, 0
}

// FromBits returns the value of kind k whose bits are u, truncated to k's width
// (an int on a 32-bit platform keeps the low 32 bits, as the toolchain's own
// decoding does). It panics for []byte, string and NoKind.
func (k Kind) FromBits(u uint64) any {
	switch k {
	case KindBool:
		return u != 0
	case KindUint8:
		return uint8(u)
	case KindInt32:
		return int32(u)
	case KindInt:
		return int(u)
	case KindInt8:
		return int8(u)
	case KindInt16:
		return int16(u)
	case KindInt64:
		return int64(u)
	case KindUint:
		return uint(u)
	case KindUint16:
		return uint16(u)
	case KindUint32:
		return uint32(u)
	case KindUint64:
		return u
	case KindFloat32:
		return math.Float32frombits(uint32(u))
	case KindFloat64:
		return math.Float64frombits(u)
	}
	panic(fmt.Sprintf("fuzzrt: a %v has no bits", k))
}

// KindOf is v's kind (NoKind for an unsupported type).
func KindOf(v any) Kind {
	k, _ := Bits(v)
	return k
}

// kindsByName maps reflect's spellings and go's aliases ([]byte, byte, rune) to
// kinds.
var kindsByName = func() map[string]Kind {
	m := map[string]Kind{"[]byte": KindBytes, "byte": KindUint8, "rune": KindInt32}
	for _, k := range Kinds() {
		m[kinds[k].name] = k
	}
	return m
}()

// KindNamed is the kind of the type named name as TypeName spells it, or by
// its aliases []byte, byte and rune; NoKind for any other name.
func KindNamed(name string) Kind { return kindsByName[name] }

// KindFor is the kind of type t: NoKind for a type go test cannot fuzz (only the
// predeclared types qualify, not types defined from them).
func KindFor(t reflect.Type) Kind {
	for _, k := range Kinds() {
		if kinds[k].typ == t {
			return k
		}
	}
	return NoKind
}

// Kinds lists every kind, in the order of their tags.
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := NoKind + 1; k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

func (k Kind) valid() bool { return k > NoKind && k < numKinds }

// String spells k as TypeName does ("[]uint8", "int32").
func (k Kind) String() string {
	if !k.valid() {
		return fmt.Sprintf("Kind(%d)", uint8(k))
	}
	return kinds[k].name
}

// Type is k's reflect type (nil for NoKind).
func (k Kind) Type() reflect.Type {
	if !k.valid() {
		return nil
	}
	return kinds[k].typ
}

// Zero is k's zero value (an empty, non-nil []byte for KindBytes; nil for NoKind).
func (k Kind) Zero() any {
	if !k.valid() {
		return nil
	}
	return kinds[k].zero
}

// Size is the bytes of a value of kind k in fixed-size encodings: 1, 2, 4 or 8
// (int and uint count 8 on every platform, so encodings do not depend on it); 0
// for []byte and string, which are a length and the bytes.
func (k Kind) Size() int { return int(kinds[k&kindMask].size) }

// Width is the bits of a value of kind k in this process: int and uint have the
// platform's, a bool 1.
func (k Kind) Width() uint { return uint(kinds[k&kindMask].bits) }

// IsInt reports whether k is an integer kind, signed or not.
func (k Kind) IsInt() bool { return kinds[k&kindMask].class == classInt }

// Signed reports whether k is a signed integer kind.
func (k Kind) Signed() bool { return kinds[k&kindMask].signed }

// IsFloat reports whether k is float32 or float64.
func (k Kind) IsFloat() bool { return kinds[k&kindMask].class == classFloat }

// kindMask keeps table lookups in bounds without a check; the array lengths
// below fail to compile unless numKinds is kindMask+1.
const kindMask = 15

var (
	_ [kindMask + 1 - numKinds]struct{}
	_ [numKinds - kindMask - 1]struct{}
)

// Float is the value of float kind k whose bits are u, as a float64.
func (k Kind) Float(u uint64) float64 {
	if k == KindFloat32 {
		return float64(math.Float32frombits(uint32(u)))
	}
	return math.Float64frombits(u)
}

// FromFloat returns f as a value of float kind k (rounded for float32).
func (k Kind) FromFloat(f float64) any {
	if k == KindFloat32 {
		return float32(f)
	}
	return f
}

// TypeName spells a fuzz argument type as it appears in corpus files: "[]byte",
// "string", "int64"… (byte and rune are spelled uint8 and int32, as reflect does).
func TypeName(t reflect.Type) string { return t.String() }

// ZeroValue returns the zero value of the argument type named name (as
// KindNamed takes it), or nil if the type is not supported.
func ZeroValue(name string) any { return KindNamed(name).Zero() }

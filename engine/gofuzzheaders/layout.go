// Package gofuzzheaders is the byte layout in which go-118-fuzz-build's harness (OSS-Fuzz's and
// ClusterFuzzLite's compile_native_go_fuzzer_v2) turns a libFuzzer input into the
// arguments of a Go fuzz function: go-fuzz-headers' consumer, taking one argument
// after the other from the front of the input.
//
//	[]byte                  4-byte big-endian length n, then the bytes. n is taken
//	                        modulo the bytes left after the length field unless it
//	                        equals them; 0 stands for 30; none left is an error
//	string                  4-byte big-endian length n, then n bytes; at least one
//	                        byte must follow the length field, and n must fit
//	int, int64, uint, uint64  8 bytes, then one byte: even = little-endian
//	int16, uint16           2 bytes, then the endianness byte
//	float32, float64        4 or 8 bytes, then the endianness byte
//	int32 (rune), uint32    4 bytes big-endian
//	int8, uint8 (byte)      1 byte
//	bool                    1 byte: even = true
//
// Signed values are the unsigned ones converted. An input too short for the
// arguments never reaches the fuzz function (the harness returns). Bytes left
// over are ignored. Another layout (the toolchain's proposed libFuzzer mode) gets
// a file of its own. engine/libfuzzer (export, import) and the engine's
// libFuzzer runner both speak it through this package.
package gofuzzheaders

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// File is the harness's input for a `go test fuzz v1` input, and its name as
// libFuzzer names a corpus file: the SHA-1 of its bytes.
func File(input string) (name string, data []byte, err error) {
	vals, err := fuzzrt.Unmarshal([]byte(input))
	if err != nil {
		return "", nil, err
	}
	data = Encode(vals)
	sum := sha1.Sum(data)
	return hex.EncodeToString(sum[:]), data, nil
}

// Input is the `go test fuzz v1` input of the arguments of types that the
// harness decodes from data.
func Input(data []byte, types []string) (string, error) {
	vals, err := Decode(data, types)
	if err != nil {
		return "", err
	}
	return string(fuzzrt.Marshal(vals)), nil
}

// Big-endian, and the byte that says so (odd: not little-endian).
const gfhBigEndian = 1

// Encode lays out vals so that the harness decodes exactly them.
// The arguments are laid out from the last: a []byte's length depends on how
// many bytes follow it.
func Encode(vals []any) []byte {
	var out []byte // the encoding of vals[i+1:]
	for i := len(vals) - 1; i >= 0; i-- {
		var b []byte
		switch k, u := fuzzrt.Bits(vals[i]); k {
		case fuzzrt.KindBytes:
			v := vals[i].([]byte)
			b = gfhBytes(v, out)
			if len(v) == 0 && len(out) == 0 {
				out = []byte{0} // something must be left after the length
			}
		case fuzzrt.KindString:
			v := vals[i].(string)
			b = binary.BigEndian.AppendUint32(nil, uint32(len(v)))
			b = append(b, v...)
			if len(v) == 0 && len(out) == 0 {
				out = []byte{0} // at least one byte must follow the length field
			}
		case fuzzrt.KindBool:
			b = []byte{byte(1 - u)} // even is true
		case fuzzrt.NoKind:
			panic(fmt.Sprintf("go-fuzz-headers layout: unsupported type %T", vals[i]))
		default:
			// The low Size bytes of the bits, big-endian, then the byte that
			// says so where the consumer reads one.
			var be [8]byte
			binary.BigEndian.PutUint64(be[:], u)
			b = append(b, be[8-k.Size():]...)
			if gfhOrdered(k) {
				b = append(b, gfhBigEndian)
			}
		}
		out = append(b, out...)
	}
	return out
}

// gfhBytes is a []byte's length field and bytes, given what follows them.
func gfhBytes(v, rest []byte) []byte {
	n := uint32(len(v))
	if n == 0 {
		// A length that is a multiple of the bytes left, and not equal to
		// them, leaves none taken (Encode sees that one is left).
		n = 2 * uint32(max(len(rest), 1))
	}
	return append(binary.BigEndian.AppendUint32(nil, n), v...)
}

var errGFHShort = errors.New("the input is too short for the arguments: the harness does not call the fuzz function")

// Decode reads the arguments of types (as fuzzrt.TypeName spells
// them) from data as the harness does.
func Decode(data []byte, types []string) ([]any, error) {
	d := gfhReader{data: data}
	vals := make([]any, len(types))
	for i, t := range types {
		var v any
		switch k := fuzzrt.KindNamed(t); k {
		case fuzzrt.KindBytes:
			v = d.bytes()
		case fuzzrt.KindString:
			v = d.string()
		case fuzzrt.KindBool:
			v = d.byte()%2 == 0
		case fuzzrt.NoKind:
			return nil, fmt.Errorf("go-fuzz-headers layout: unsupported type %s", t)
		default:
			v = k.FromBits(d.number(k.Size(), gfhOrdered(k)))
		}
		if d.short {
			return nil, errGFHShort
		}
		vals[i] = v
	}
	return vals, nil
}

// gfhReader consumes data from the front; short is set once a read fails.
type gfhReader struct {
	data  []byte
	pos   int
	short bool
}

func (d *gfhReader) take(n int) []byte {
	if d.short || d.pos >= len(d.data) || len(d.data)-d.pos < n {
		d.short = true
		return make([]byte, n)
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b
}

func (d *gfhReader) byte() byte { return d.take(1)[0] }

func (d *gfhReader) uint32() uint32 { return uint32(d.number(4, false)) }

// gfhOrdered reports whether the consumer reads a byte order after a number of
// kind k: after every number but those of one byte and the 4-byte integers.
func gfhOrdered(k fuzzrt.Kind) bool {
	return k.Size() != 1 && !(k.Size() == 4 && k.IsInt())
}

// number reads n bytes, big-endian, or, when ordered, in the order the byte
// after them says (even: little-endian).
func (d *gfhReader) number(n int, ordered bool) uint64 {
	b := d.take(n)
	little := ordered && d.byte()%2 == 0
	var v uint64
	for i := range n {
		if little {
			v |= uint64(b[i]) << (8 * i)
		} else {
			v = v<<8 | uint64(b[i])
		}
	}
	return v
}

func (d *gfhReader) bytes() []byte {
	n := d.uint32()
	if d.short {
		return nil
	}
	if n == 0 {
		n = 30
	}
	left := uint32(len(d.data) - d.pos)
	if left == 0 {
		d.short = true
		return nil
	}
	if n != left {
		n %= left
	}
	return append([]byte{}, d.take(int(n))...)
}

// gfhMaxStringAt: a string whose bytes start past this offset is refused.
const gfhMaxStringAt = 2000000

func (d *gfhReader) string() string {
	n := d.uint32()
	if d.short || d.pos >= len(d.data) || d.pos > gfhMaxStringAt || uint64(d.pos)+uint64(n) > uint64(len(d.data)) {
		d.short = true
		return ""
	}
	return string(d.take(int(n)))
}

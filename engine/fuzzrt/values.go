package fuzzrt

// This file holds the binary encoding used to pass inputs between the
// engine and the test binary through shared memory on every execution, so
// it favors speed over readability: a uvarint value count, then per value a
// one-byte type tag and its payload. Fixed-size numbers are little-endian
// (int and uint always as 64 bits, so the encoding does not depend on the
// platform); strings and []byte are a uvarint length and the bytes.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A value's type tag is its Kind (types.go); zero, NoKind, is left unused so
// that zeroed memory never decodes. A number or bool's payload is the low
// Kind.Size bytes of its bits.

var le = binary.LittleEndian

// AppendValues appends the binary encoding of vals to dst. It does not
// allocate when dst has enough spare capacity. It panics on an unsupported
// type, as Marshal does.
func AppendValues(dst []byte, vals []any) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	for _, v := range vals {
		// []byte and string, the common arguments, are asserted first; the
		// numbers and bools go through the table.
		switch x := v.(type) {
		case []byte:
			dst = append(dst, byte(KindBytes))
			dst = binary.AppendUvarint(dst, uint64(len(x)))
			dst = append(dst, x...)
		case string:
			dst = append(dst, byte(KindString))
			dst = binary.AppendUvarint(dst, uint64(len(x)))
			dst = append(dst, x...)
		default:
			k, u := Bits(v)
			if k == NoKind {
				panic(fmt.Sprintf("fuzzrt: unsupported value type %T", v))
			}
			// The low Size bytes of u: all 8 written, the rest cut off.
			n := len(dst) + 1 + k.Size()
			dst = le.AppendUint64(append(dst, byte(k)), u)[:n]
		}
	}
	return dst
}

// readLE reads size bytes, little-endian, as AppendValues writes a number.
func readLE(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(le.Uint16(b))
	case 4:
		return uint64(le.Uint32(b))
	}
	return le.Uint64(b)
}

var errTruncated = errors.New("fuzzrt: truncated or malformed value encoding")

// DecodeValues decodes what AppendValues produced. Decoded []byte and
// strings never alias b, so b may be reused afterwards. An empty []byte
// decodes as non-nil. Anything AppendValues cannot have produced
// (truncation, an unknown tag, a bool other than 0 or 1, a non-minimal
// varint, trailing bytes) is an error.
func DecodeValues(b []byte) ([]any, error) {
	n, k := uvarint(b)
	if k <= 0 {
		return nil, errTruncated
	}
	b = b[k:]
	// Every value takes at least two bytes; checking first keeps a garbage
	// count from causing a huge allocation.
	if n > uint64(len(b))/2 {
		return nil, fmt.Errorf("fuzzrt: value count %d exceeds the %d bytes that follow", n, len(b))
	}
	vals := make([]any, n)
	for i := range vals {
		if len(b) == 0 {
			return nil, errTruncated
		}
		k := Kind(b[0])
		b = b[1:]
		if !k.valid() {
			return nil, fmt.Errorf("fuzzrt: value %d has unknown type tag %d", i, uint8(k))
		}
		size := k.Size()
		if size == 0 { // length-prefixed
			l, m := uvarint(b)
			if m <= 0 || l > uint64(len(b)-m) {
				return nil, errTruncated
			}
			p := b[m : m+int(l)]
			b = b[m+int(l):]
			if k == KindString {
				vals[i] = string(p)
			} else {
				vals[i] = append([]byte{}, p...)
			}
			continue
		}
		if len(b) < size {
			return nil, errTruncated
		}
		u := readLE(b, size)
		b = b[size:]
		if k == KindBool && u > 1 {
			return nil, fmt.Errorf("fuzzrt: value %d: bad bool byte %d", i, u)
		}
		vals[i] = k.FromBits(u)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("fuzzrt: %d trailing bytes after values", len(b))
	}
	return vals, nil
}

// uvarint is binary.Uvarint restricted to minimal encodings, so that every
// list of values has exactly one encoding and equal inputs hash equal.
func uvarint(b []byte) (uint64, int) {
	v, k := binary.Uvarint(b)
	if k > 1 && b[k-1] == 0 {
		return 0, 0
	}
	return v, k
}

// ValuesSize is the payload size of vals, for input size limits: the
// length of each string and []byte plus the size of each number (int and
// uint count as 8 bytes everywhere, as encoded). It panics on an
// unsupported type.
func ValuesSize(vals []any) int {
	n := 0
	for _, v := range vals {
		switch x := v.(type) {
		case []byte:
			n += len(x)
		case string:
			n += len(x)
		default:
			k := KindOf(v)
			if k == NoKind {
				panic(fmt.Sprintf("fuzzrt: unsupported value type %T", v))
			}
			n += k.Size()
		}
	}
	return n
}

// CloneValues returns a copy of vals that shares no memory with it, so a
// mutator may change the copy's []byte values in place. Strings and
// numbers are immutable and are copied as is; a nil []byte stays nil.
func CloneValues(vals []any) []any {
	if vals == nil {
		return nil
	}
	out := make([]any, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok && b != nil {
			v = append(make([]byte, 0, len(b)), b...)
		}
		out[i] = v
	}
	return out
}

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
	"math"
)

// Type tags. Zero is left unused so that zeroed memory never decodes.
const (
	tagBytes byte = 1 + iota
	tagString
	tagBool
	tagByte
	tagRune
	tagInt
	tagInt8
	tagInt16
	tagInt64
	tagUint
	tagUint16
	tagUint32
	tagUint64
	tagFloat32
	tagFloat64
)

var le = binary.LittleEndian

// AppendValues appends the binary encoding of vals to dst. It does not
// allocate when dst has enough spare capacity. It panics on an unsupported
// type, as Marshal does.
func AppendValues(dst []byte, vals []any) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	for _, v := range vals {
		switch v := v.(type) {
		case []byte:
			dst = append(dst, tagBytes)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		case string:
			dst = append(dst, tagString)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		case bool:
			b := byte(0)
			if v {
				b = 1
			}
			dst = append(dst, tagBool, b)
		case byte:
			dst = append(dst, tagByte, v)
		case int8:
			dst = append(dst, tagInt8, byte(v))
		case rune:
			dst = le.AppendUint32(append(dst, tagRune), uint32(v))
		case int16:
			dst = le.AppendUint16(append(dst, tagInt16), uint16(v))
		case uint16:
			dst = le.AppendUint16(append(dst, tagUint16), v)
		case uint32:
			dst = le.AppendUint32(append(dst, tagUint32), v)
		case float32:
			dst = le.AppendUint32(append(dst, tagFloat32), math.Float32bits(v))
		case int:
			dst = le.AppendUint64(append(dst, tagInt), uint64(v))
		case int64:
			dst = le.AppendUint64(append(dst, tagInt64), uint64(v))
		case uint:
			dst = le.AppendUint64(append(dst, tagUint), uint64(v))
		case uint64:
			dst = le.AppendUint64(append(dst, tagUint64), v)
		case float64:
			dst = le.AppendUint64(append(dst, tagFloat64), math.Float64bits(v))
		default:
			panic(fmt.Sprintf("fuzzrt: unsupported value type %T", v))
		}
	}
	return dst
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
		tag := b[0]
		b = b[1:]
		size := fixedSize(tag)
		if size < 0 {
			return nil, fmt.Errorf("fuzzrt: value %d has unknown type tag %d", i, tag)
		}
		if size == 0 { // length-prefixed
			l, k := uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return nil, errTruncated
			}
			p := b[k : k+int(l)]
			b = b[k+int(l):]
			if tag == tagString {
				vals[i] = string(p)
			} else {
				vals[i] = append([]byte{}, p...)
			}
			continue
		}
		if len(b) < size {
			return nil, errTruncated
		}
		p := b[:size]
		b = b[size:]
		switch tag {
		case tagBool:
			if p[0] > 1 {
				return nil, fmt.Errorf("fuzzrt: value %d: bad bool byte %d", i, p[0])
			}
			vals[i] = p[0] == 1
		case tagByte:
			vals[i] = p[0]
		case tagInt8:
			vals[i] = int8(p[0])
		case tagInt16:
			vals[i] = int16(le.Uint16(p))
		case tagUint16:
			vals[i] = le.Uint16(p)
		case tagRune:
			vals[i] = int32(le.Uint32(p))
		case tagUint32:
			vals[i] = le.Uint32(p)
		case tagFloat32:
			vals[i] = math.Float32frombits(le.Uint32(p))
		case tagInt:
			vals[i] = int(int64(le.Uint64(p))) // truncates on 32-bit, like Unmarshal
		case tagInt64:
			vals[i] = int64(le.Uint64(p))
		case tagUint:
			vals[i] = uint(le.Uint64(p))
		case tagUint64:
			vals[i] = le.Uint64(p)
		case tagFloat64:
			vals[i] = math.Float64frombits(le.Uint64(p))
		}
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

// fixedSize is the payload size for tag: 0 for length-prefixed types, -1
// for an unknown tag.
func fixedSize(tag byte) int {
	switch tag {
	case tagBytes, tagString:
		return 0
	case tagBool, tagByte, tagInt8:
		return 1
	case tagInt16, tagUint16:
		return 2
	case tagRune, tagUint32, tagFloat32:
		return 4
	case tagInt, tagInt64, tagUint, tagUint64, tagFloat64:
		return 8
	}
	return -1
}

// ValuesSize is the payload size of vals, for input size limits: the
// length of each string and []byte plus the size of each number (int and
// uint count as 8 bytes everywhere, as encoded). It panics on an
// unsupported type.
func ValuesSize(vals []any) int {
	n := 0
	for _, v := range vals {
		switch v := v.(type) {
		case []byte:
			n += len(v)
		case string:
			n += len(v)
		case bool, byte, int8:
			n++
		case int16, uint16:
			n += 2
		case rune, uint32, float32:
			n += 4
		case int, int64, uint, uint64, float64:
			n += 8
		default:
			panic(fmt.Sprintf("fuzzrt: unsupported value type %T", v))
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

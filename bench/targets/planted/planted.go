// Package planted holds code with planted bugs of graded difficulty, one per fuzz
// target in planted_test.go. Each bug panics with a message starting "planted:",
// except where the kind of failure is the point (an index out of range in the TLV
// parser, a t.Fatalf in the round trip, a hang, an out-of-memory).
//
// The comments say what a fuzzer needs in order to get there.
package planted

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
)

// Prefix: four nested one-byte comparisons. Block coverage alone guides a fuzzer
// there, one byte at a time (easy for both engines).
func Prefix(b []byte) {
	if len(b) >= 4 {
		if b[0] == 'F' {
			if b[1] == 'U' {
				if b[2] == 'Z' {
					if b[3] == 'Z' {
						panic("planted: prefix FUZZ")
					}
				}
			}
		}
	}
}

// Magic32: one 32-bit comparison, no intermediate coverage (needs comparison
// feedback or a dictionary).
func Magic32(b []byte) {
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0x5A17C0DE {
		panic("planted: magic32")
	}
}

// Magic64: one 64-bit comparison.
func Magic64(b []byte) {
	if len(b) >= 8 && binary.LittleEndian.Uint64(b) == 0xC0FFEE15DEADBEEF {
		panic("planted: magic64")
	}
}

// Literal: a long string prefix (18 bytes).
func Literal(s string) {
	if strings.HasPrefix(s, "Content-Type: fuzz") {
		panic("planted: literal prefix")
	}
}

// Equal: string equality with a 16-byte literal.
func Equal(s string) {
	if s == "open sesame 2026" {
		panic("planted: equal")
	}
}

// MultiArg: a condition over two arguments at once.
func MultiArg(a int, s string) {
	if a == 0x1337 && s == "key" {
		panic("planted: multiarg")
	}
}

// Packet is a 4-byte little-endian CRC-32 (IEEE) of the payload, then the payload
// (at least 4 bytes). A packet whose checksum does not match is dropped; the bug
// is behind it: a payload starting "BUG". A fuzzer has to change the payload and
// repair the checksum in the same input.
func Packet(b []byte) {
	if len(b) < 8 {
		return
	}
	sum := binary.LittleEndian.Uint32(b)
	payload := b[4:]
	if crc32.ChecksumIEEE(payload) != sum {
		return
	}
	if payload[0] == 'B' {
		if payload[1] == 'U' {
			if payload[2] == 'G' {
				panic("planted: checksum-guarded payload")
			}
		}
	}
}

var (
	errShort = errors.New("tlv: truncated record")
	errDeep  = errors.New("tlv: nested too deep")
	errType  = errors.New("tlv: unknown type")
)

// ParseTLV parses records of type (1 byte), length (1 byte), value:
// type 1 a byte, type 2 a string, type 3 a nested list of records, type 4 an
// array of big-endian uint16 prefixed by its count. The bug: the count of an
// array is checked against the record's length only in the two outer levels
// ("inner records were validated already"), so an array nested in two lists with
// a count larger than its data reads past its value: a slice bounds panic.
func ParseTLV(b []byte) ([]any, error) {
	return parseTLV(b, 0)
}

func parseTLV(b []byte, depth int) ([]any, error) {
	var out []any
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, errShort
		}
		typ, n := b[0], int(b[1])
		b = b[2:]
		if n > len(b) {
			return nil, errShort
		}
		v := b[:n]
		b = b[n:]
		switch typ {
		case 1:
			if n != 1 {
				return nil, errShort
			}
			out = append(out, v[0])
		case 2:
			out = append(out, string(v))
		case 3:
			if depth >= 4 {
				return nil, errDeep
			}
			inner, err := parseTLV(v, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, inner)
		case 4:
			if n < 1 {
				return nil, errShort
			}
			count := int(v[0])
			if depth >= 2 {
				// trusted: validated by the caller (it is not)
			} else if 1+2*count > n {
				return nil, errShort
			}
			arr := make([]uint16, count)
			for i := range arr {
				arr[i] = binary.BigEndian.Uint16(v[1+2*i:])
			}
			out = append(out, arr)
		default:
			return nil, errType
		}
	}
	return out, nil
}

const esc = 0xFE

// Encode is a run-length codec: a run of 4 to 255 equal bytes becomes esc, n, c;
// a lone esc byte becomes esc, 0; other bytes are copied.
func Encode(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		c := b[i]
		j := i
		for j < len(b) && b[j] == c && j-i < 255 {
			j++
		}
		switch n := j - i; {
		case n >= 4:
			out = append(out, esc, byte(n), c)
		case c == esc:
			out = append(out, esc, 0)
			j = i + 1
		default:
			out = append(out, c)
			j = i + 1
		}
		i = j
	}
	return out
}

// Decode inverts Encode, except for the planted asymmetry: a run of esc bytes is
// decoded one byte short (the decoder counts the escape itself). Only inputs
// with four or more 0xFE bytes in a row show it.
func Decode(b []byte) ([]byte, error) {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != esc {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			return nil, errShort
		}
		n := int(b[i+1])
		if n == 0 {
			out = append(out, esc)
			i++
			continue
		}
		if i+2 >= len(b) {
			return nil, errShort
		}
		c := b[i+2]
		if c == esc {
			n--
		}
		out = append(out, bytes.Repeat([]byte{c}, n)...)
		i += 2
	}
	return out, nil
}

// Ring sums a ring buffer: after the header "RG", b[2] is a stride, and the walk
// over b[3:] goes from index 0 by that stride until it reaches a zero byte. When no
// zero byte is on the walk's cycle, it never ends: a hang, for most inputs that
// start with "RG".
func Ring(b []byte) int {
	if len(b) < 4 {
		return 0
	}
	if b[0] != 'R' {
		return 0
	}
	if b[1] != 'G' {
		return 0
	}
	stride, ring := int(b[2]), b[3:]
	sum := 0
	for i := 0; ring[i] != 0; i = (i + stride) % len(ring) {
		sum += int(ring[i])
	}
	return sum
}

// Frame is magic 0xA110CA7E (little-endian), a 32-bit length, then data. The
// buffer is allocated from the length before the length is checked against the
// data: with the magic, an input allocates (and touches) up to gigabytes.
//
// The length is capped at 3 GiB, above fuzzls's default worker memory limit
// (2 GiB), only so that the benchmark cannot take the machine down: go test -fuzz
// has no memory limit.
func Frame(b []byte) int {
	if len(b) < 8 || binary.LittleEndian.Uint32(b) != 0xA110CA7E {
		return 0
	}
	n := min(binary.LittleEndian.Uint32(b[4:]), 3<<30)
	buf := make([]byte, n)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	copy(buf, b[8:])
	return len(buf)
}

// Histogram counts samples in ten buckets over [0, 1].
type Histogram struct {
	Buckets [10]int
}

// Add clamps x to [0, 1] and counts it. NaN is neither below 0 nor above 1: it
// passes the clamp (the bug when x != x).
func (h *Histogram) Add(x float64) {
	switch {
	case x < 0:
		x = 0
	case x > 1:
		x = 1
	}
	if x != x {
		panic("planted: NaN got past the clamp")
	}
	h.Buckets[int(x*9.999)]++
}

// Query lexes s into words and runs a three-state parser: the bug is a query
// with the keywords "select", "from" and "where" in this order.
func Query(s string) {
	state := 0
	for _, tok := range lex(s) {
		switch tok {
		case "select":
			if state == 0 {
				state = 1
			}
		case "from":
			if state == 1 {
				state = 2
			}
		case "where":
			if state == 2 {
				panic("planted: select from where")
			}
		}
	}
}

// lex splits s into words of ASCII letters, digits and underscores; every other
// byte separates words.
func lex(s string) []string {
	var toks []string
	start := -1
	for i := 0; i <= len(s); i++ {
		word := i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9' || s[i] == '_')
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			toks = append(toks, s[start:i])
			start = -1
		}
	}
	return toks
}

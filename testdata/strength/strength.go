// Package strength hides bugs behind the comparisons that comparison feedback
// solves and blind mutation does not: magic numbers, long literals, prefixes,
// switch cases, checksums. Each bug panics at a line marked "MARK:<target>".
package strength

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"strings"
)

const wantVarint = 300000

func Magic32(b []byte) {
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0x5A17C0DE {
		panic("magic32") // MARK:FuzzMagic32
	}
}

func Magic64(b []byte) {
	if len(b) >= 8 && binary.BigEndian.Uint64(b) == 0x0123456789ABCDEF {
		panic("magic64") // MARK:FuzzMagic64
	}
}

func BytesPrefix(b []byte) {
	if bytes.HasPrefix(b, []byte("FUZZ")) {
		panic("prefix") // MARK:FuzzBytesPrefix
	}
}

func Suffix(s string) {
	if strings.HasSuffix(s, ".fuzzls") {
		panic("suffix") // MARK:FuzzSuffix
	}
}

func StringPrefix(s string) {
	if strings.HasPrefix(s, "fuzzls:v1:") {
		panic("prefix") // MARK:FuzzStringPrefix
	}
}

func Contains(s string) {
	if strings.Contains(s, "needle-in-a-haystack") {
		panic("contains") // MARK:FuzzContains
	}
}

func EqualFold(s string) {
	if strings.EqualFold(s, "MixedCaseKeyword") {
		panic("equalfold") // MARK:FuzzEqualFold
	}
}

func Index(s string) {
	if strings.Index(s, "@@") == 3 {
		panic("index") // MARK:FuzzIndex
	}
}

func BytesEqual(b []byte) {
	if bytes.Equal(b, []byte("exactly-this-input")) {
		panic("equal") // MARK:FuzzBytesEqual
	}
}

func Compare(s string) {
	if strings.Compare(s, "key=value;") == 0 {
		panic("compare") // MARK:FuzzCompare
	}
}

func Ints(n int, x int64, u uint32) {
	if n == 31337 {
		if x < -1000000 {
			if u >= 0xFFFF0000 {
				panic("ints") // MARK:FuzzInts
			}
		}
	}
}

func Switch(s string) int {
	switch s {
	case "alpha":
		return 1
	case "omega-point":
		panic("switch") // MARK:FuzzSwitch
	}
	return 0
}

// SwitchTag switches on an expression, not a variable: the format's tag is
// read by a call, as in most binary formats, after an init statement.
func SwitchTag(b []byte) int {
	switch n := len(b); order(b, n) {
	case 0x4949:
		return 1
	case 0x4d4d:
		switch string(b[2:8]) {
		case "FUZZLS":
			panic("switch tag") // MARK:FuzzSwitchTag
		}
	}
	return 0
}

// order reads a file's byte-order mark, the first two bytes of at least eight.
func order(b []byte, n int) uint16 {
	if n < 8 {
		return 0
	}
	return uint16(b[0])<<8 | uint16(b[1])
}

func StringEq(s string) {
	if s == "supercalifragilistic" {
		panic("streq") // MARK:FuzzStringEq
	}
}

func Decimal(s string) {
	if n, err := strconv.Atoi(s); err == nil && n == 987654 {
		panic("decimal") // MARK:FuzzDecimal
	}
}

func Varint(b []byte) {
	if v, n := binary.Uvarint(b); n > 0 && v == wantVarint {
		panic("varint") // MARK:FuzzVarint
	}
}

func Checksum(b []byte) {
	if len(b) > 8 && b[4] == '!' && binary.BigEndian.Uint32(b[:4]) == crc32.ChecksumIEEE(b[4:]) {
		panic("checksum") // MARK:FuzzChecksum
	}
}

// header is a frame's header as a decoder keeps it: fields read by hand.
type header struct {
	length uint16
	sum    uint32
}

// FieldChecksum compares a checksum stored in the input with one computed
// over it: two variables, neither a literal nor a known call, as in LZ4's
// frame descriptor (`fd.Checksum != c`).
func FieldChecksum(b []byte) {
	if len(b) < 8 {
		return
	}
	h := header{length: uint16(b[0]) | uint16(b[1])<<8}
	h.sum = uint32(b[2]) | uint32(b[3])<<8 | uint32(b[4])<<16 | uint32(b[5])<<24
	if int(h.length) > len(b)-6 {
		return
	}
	if sum := fnv32(b[6 : 6+h.length]); h.sum == sum && h.length >= 2 {
		panic("field checksum") // MARK:FuzzFieldChecksum
	}
}

// fnv32 is FNV-1a: a hash the instrumentation does not know.
func fnv32(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// sameValue compares an interface with a concrete value: legal Go that a hook
// of two operands cannot type without type information (the build retries
// without it on this line, keeping the package's other hooks).
func sameValue(v any, n int) bool { return v == n }

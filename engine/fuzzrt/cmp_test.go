package fuzzrt

import (
	"bytes"
	"encoding/binary"
	"testing"
)

type kind uint16

// TestCmpCandidates: recorded comparisons become inputs with the other operand
// where one appears in the input, in the encodings parsers use.
func TestCmpCandidates(t *testing.T) {
	le := func(u uint32) []byte { return binary.LittleEndian.AppendUint32(nil, u) }
	tests := []struct {
		desc string
		vals []any
		a, b any
		want any // a value some candidate must have as its first argument
	}{
		{"little-endian uint32 in bytes", []any{append(le(0x01020304), 'x')}, uint32(0x01020304), uint32(0x5A17C0DE), append(le(0x5A17C0DE), 'x')},
		{"big-endian uint16 in bytes", []any{[]byte{0xAB, 0xCD, 9}}, uint16(0xABCD), uint16(0x1234), []byte{0x12, 0x34, 9}},
		{"decimal text", []any{"n=123;"}, 123, 987654, "n=987654;"},
		{"varint", []any{binary.AppendUvarint(nil, 5)}, uint64(5), uint64(300000), binary.AppendUvarint(nil, 300000)},
		{"string operand replaced", []any{"GET /x"}, "GET", "PUT", "PUT /x"},
		{"prefix of a longer input overwritten", []any{"hello world"}, "hello world", "FUZZ", "FUZZo world"},
		{"integer argument", []any{int64(7)}, int64(7), int64(-1000001), int64(-1000001)},
		{"named type by its kind", []any{uint16(3)}, kind(3), kind(77), uint16(77)},
		{"float argument", []any{1.5}, 1.5, 2.25, 2.25},
	}
	for _, tc := range tests {
		var c cmpState
		c.on = true
		c.hook(0)(0, tc.a, tc.b)
		var got []any
		var toks [][]byte
		c.candidates(tc.vals, func(b []byte) { toks = append(toks, b) }, func(v []any) bool {
			got = append(got, v[0])
			return true
		})
		found := false
		for _, g := range got {
			switch w := tc.want.(type) {
			case []byte:
				gb, ok := g.([]byte)
				found = found || ok && bytes.Equal(gb, w)
			default:
				found = found || g == tc.want
			}
		}
		if !found {
			t.Errorf("%s: no candidate %v among %v", tc.desc, tc.want, got)
		}
		// The same comparison again costs nothing.
		c.on = true
		c.hook(0)(0, tc.a, tc.b)
		n := 0
		c.candidates(tc.vals, func([]byte) {}, func([]any) bool { n++; return true })
		if n != 0 {
			t.Errorf("%s: %d candidates for a comparison already tried", tc.desc, n)
		}
	}
}

// TestCmpHookOff: with recording off the hook records nothing.
func TestCmpHookOff(t *testing.T) {
	var c cmpState
	c.hook(0)(1, 2, 3)
	if len(c.recs) != 0 {
		t.Errorf("recorded with recording off")
	}
}

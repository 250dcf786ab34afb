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
		{"int compared, a uint16 in the input", []any{[]byte{0xFF, 0x03, 0x02, 0xFF}}, int(0x0203), int(0x1234), []byte{0xFF, 0x34, 0x12, 0xFF}},
		{"negative int32 compared, an int16 in the input", []any{[]byte{0xFF, 0xFE, 0xFF}}, int32(-2), int32(300), []byte{0xFF, 0x2C, 0x01}},
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

// TestCmpCandidatesPerEntry: at one site (a switch over the tags of a
// directory's entries, as TIFF's IFD), the wanted tag is tried in place of each
// entry's tag, not only the first entry's: each value found is its own place.
func TestCmpCandidatesPerEntry(t *testing.T) {
	// Three entries: tag, value (little-endian uint16s); the first must stay.
	input := []byte{0x01, 0x00, 0xAA, 0xAA, 0x02, 0x00, 0xBB, 0xBB, 0x03, 0x00, 0xCC, 0xCC}
	want := []byte{0x01, 0x00, 0xAA, 0xAA, 0x3C, 0x7A, 0xBB, 0xBB, 0x03, 0x00, 0xCC, 0xCC}
	var c cmpState
	found := func() bool {
		ok := false
		c.candidates([]any{input}, func([]byte) {}, func(v []any) bool {
			ok = ok || bytes.Equal(v[0].([]byte), want)
			return true
		})
		return ok
	}
	c.on = true
	c.hook(0)(0, uint16(1), uint16(0x7A3C)) // the first entry, one execution
	if found() {
		t.Fatal("the first entry's comparison put the tag in the second entry")
	}
	c.hook(0)(0, uint16(2), uint16(0x7A3C)) // the second entry, a later execution
	if !found() {
		t.Errorf("no candidate with the second entry's tag replaced: the site counted as tried after the first entry")
	}
	// Strings are keyed by the operand put in only.
	c.hook(0)(1, "alpha", "key")
	c.candidates([]any{[]byte("alpha")}, func([]byte) {}, func([]any) bool { return true })
	c.hook(0)(1, "beta", "key")
	c.candidates([]any{[]byte("beta")}, func([]byte) {}, func(v []any) bool {
		if bytes.Contains(v[0].([]byte), []byte("key")) {
			t.Errorf("candidate %q: \"key\" tried again at a string comparison's site because the input differed", v[0])
		}
		return true
	})
}

// TestCmpCandidatesManyPlaces: a small integer shows up in every entry of a
// directory (each TIFF entry counts 1); the one whose value a comparison wants
// changed is the last. More places than one round tries are sampled, and the
// pair is tried again in later rounds, so the last entry's value is reached.
func TestCmpCandidatesManyPlaces(t *testing.T) {
	var input []byte
	for tag := uint16(256); tag < 276; tag++ {
		input = binary.LittleEndian.AppendUint16(input, tag)
		input = binary.LittleEndian.AppendUint16(input, 3)  // SHORT
		input = binary.LittleEndian.AppendUint32(input, 1)  // one value
		input = binary.LittleEndian.AppendUint32(input, 40) // the value
	}
	last := len(input) - 4
	binary.LittleEndian.PutUint32(input[last:], 1) // the tile width, too small
	rng := NewRand(7)
	c := cmpState{intn: rng.Intn}
	reached, rounds := false, 0
	for ; rounds < maxCmpRounds+1 && !reached; rounds++ {
		c.on = true
		c.hook(0)(0, int(1), int(8)) // blockWidth < 8, blockWidth an int
		c.candidates([]any{input}, func([]byte) {}, func(v []any) bool {
			b := v[0].([]byte)
			reached = reached || len(b) == len(input) && binary.LittleEndian.Uint32(b[last:]) >= 7
			return true
		})
	}
	if !reached {
		t.Fatalf("after %d rounds no candidate changed the last entry's value", rounds)
	}
	// The pair is done with after maxCmpRounds rounds.
	for range maxCmpRounds {
		c.hook(0)(0, int(1), int(8))
		c.candidates([]any{input}, func([]byte) {}, func([]any) bool { return true })
	}
	c.hook(0)(0, int(1), int(8))
	n := 0
	c.candidates([]any{input}, func([]byte) {}, func([]any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d candidates after %d rounds of the same pair", n, maxCmpRounds)
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

// TestCmpFocus: the comparisons of the focus's sites are recorded past the bound
// the others fill, their candidates come first, and a pair tried at such a site is
// tried again when the operand found is another (a string that varies as the
// corpus grows toward the comparison).
func TestCmpFocus(t *testing.T) {
	var c cmpState
	c.setFocus([]uint32{7})
	hook := c.hook(5) // the file's sites start at 5: its site 2 is site 7
	run := func(title string) (first []any) {
		c.on = true
		for i := range maxCmpRecords + 100 {
			hook(0, "k"+string(rune('a'+i%26)), "key")
		}
		hook(2, title, "forbidden")
		c.on = false
		c.candidates([]any{"key: x\ntitle: " + title}, func([]byte) {}, func(v []any) bool {
			first = v
			return false
		})
		return first
	}
	if got := run("a"); len(got) != 1 || got[0] != "key: x\ntitle: forbidden" {
		t.Errorf("first candidate %q, want the focused site's", got)
	}
	if got := run("b"); len(got) != 1 || got[0] != "key: x\ntitle: forbidden" {
		t.Errorf("with another operand found, first candidate %q, want the focused site's again", got)
	}
	c.setFocus(nil)
	c.on = true
	for range maxCmpRecords + 1 {
		hook(2, "a", "forbidden")
	}
	if len(c.recs) != maxCmpRecords || len(c.frecs) != 0 {
		t.Errorf("without a focus: %d records, %d focused; want %d, 0", len(c.recs), len(c.frecs), maxCmpRecords)
	}
}

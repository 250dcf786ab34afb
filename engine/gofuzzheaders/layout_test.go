package gofuzzheaders

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// TestGoFuzzHeadersRoundTrip: what Encode lays out decodes to the
// same values, for every argument type, empty and long []byte and string in
// every position, and random mixes.
func TestGoFuzzHeadersRoundTrip(t *testing.T) {
	cases := [][]any{
		{[]byte{}},
		{""},
		{[]byte("abc")},
		{"hello", []byte{}},
		{[]byte{}, "x"},
		{[]byte{}, []byte{}, ""},
		{true, false, int8(-3), uint8(250), int16(-300), uint16(65000), int32(-70000), uint32(4000000000)},
		{int(-1), int64(math.MinInt64), uint(math.MaxUint64), uint64(7), float32(-1.5), float64(math.Inf(1))},
		{[]byte("0123456789012345678901234567890123456789"), "", int(5)},
	}
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"[]byte", "string", "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int", "int64", "uint", "uint64", "float32", "float64"}
	for range 2000 {
		n := 1 + r.IntN(5)
		vals := make([]any, n)
		for i := range vals {
			vals[i] = randomValue(r, kinds[r.IntN(len(kinds))])
		}
		cases = append(cases, vals)
	}
	for _, vals := range cases {
		types := make([]string, len(vals))
		for i, v := range vals {
			types[i] = fuzzrt.TypeName(reflect.TypeOf(v))
		}
		enc := Encode(vals)
		got, err := Decode(enc, types)
		if err != nil {
			t.Fatalf("%#v: %v (encoded %x)", vals, err, enc)
		}
		if string(fuzzrt.Marshal(got)) != string(fuzzrt.Marshal(vals)) {
			t.Fatalf("%#v decoded as %#v (encoded %x)", vals, got, enc)
		}
	}
}

// TestGoFuzzHeadersDecode: inputs as libFuzzer makes them, read as the harness
// reads them: a length past the end wraps, 0 is 30, little-endian when the
// order byte is even, too short is refused.
func TestGoFuzzHeadersDecode(t *testing.T) {
	for _, c := range []struct {
		desc  string
		in    []byte
		types []string
		want  []any
	}{
		{"length modulo the bytes left", []byte{0, 0, 0, 7, 'a', 'b', 'c'}, []string{"[]byte"}, []any{[]byte("a")}},
		{"length equal to the bytes left", []byte{0, 0, 0, 3, 'a', 'b', 'c'}, []string{"[]byte"}, []any{[]byte("abc")}},
		{"length 0 is 30", []byte{0, 0, 0, 0, 'a', 'b', 'c', 'd'}, []string{"[]byte"}, []any{[]byte("ab")}},
		{"little-endian uint16", []byte{1, 2, 0}, []string{"uint16"}, []any{uint16(0x0201)}},
		{"big-endian int64", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 1}, []string{"int64"}, []any{int64(-2)}},
		{"rune is 4 bytes big-endian", []byte{0, 0, 0, 'A'}, []string{"int32"}, []any{int32('A')}},
		{"bool: even is true", []byte{2, 3}, []string{"bool", "bool"}, []any{true, false}},
		{"string then rest", []byte{0, 0, 0, 2, 'h', 'i', 9}, []string{"string", "uint8"}, []any{"hi", uint8(9)}},
	} {
		got, err := Decode(c.in, c.types)
		if err != nil || string(fuzzrt.Marshal(got)) != string(fuzzrt.Marshal(c.want)) {
			t.Errorf("%s: got %#v, %v; want %#v", c.desc, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in    []byte
		types []string
	}{
		{nil, []string{"bool"}},
		{[]byte{0, 0, 0, 0}, []string{"string"}}, // nothing after the length
		{[]byte{0, 0, 0, 5, 'a'}, []string{"string"}},
		{[]byte{0, 0, 0, 1}, []string{"[]byte"}},
		{[]byte{1, 2}, []string{"uint16"}}, // no order byte
	} {
		if got, err := Decode(c.in, c.types); err == nil {
			t.Errorf("%x as %v: got %#v, want an error", c.in, c.types, got)
		}
	}
}

func randomValue(r *rand.Rand, kind string) any {
	u := r.Uint64()
	switch kind {
	case "[]byte", "string":
		b := make([]byte, r.IntN(3)*r.IntN(40))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if kind == "string" {
			return string(b)
		}
		return b
	case "bool":
		return u%2 == 0
	case "int8":
		return int8(u)
	case "uint8":
		return uint8(u)
	case "int16":
		return int16(u)
	case "uint16":
		return uint16(u)
	case "int32":
		return int32(u)
	case "uint32":
		return uint32(u)
	case "int":
		return int(u)
	case "int64":
		return int64(u)
	case "uint":
		return uint(u)
	case "uint64":
		return u
	case "float32":
		return math.Float32frombits(uint32(u))
	}
	return math.Float64frombits(u)
}

// TestEveryKind walks fuzzrt's table of argument kinds (checked against the
// toolchain's own list by fuzzrt's TestKindTable) through the go-fuzz-headers
// layout: a value of each kind and its zero value come back as they went.
func TestEveryKind(t *testing.T) {
	for _, k := range fuzzrt.Kinds() {
		var sample any
		switch k {
		case fuzzrt.KindBytes:
			sample = []byte("seed\xff")
		case fuzzrt.KindString:
			sample = "seed☃"
		default:
			sample = k.FromBits(0xfedcba9876543210)
		}
		same := func(a, b any) bool { return string(fuzzrt.Marshal([]any{a})) == string(fuzzrt.Marshal([]any{b})) }
		vals := []any{sample, k.Zero()}
		types := []string{k.String(), k.String()}
		dec, err := Decode(Encode(vals), types)
		if err != nil || !same(dec[0], vals[0]) || !same(dec[1], vals[1]) {
			t.Errorf("%s: go-fuzz-headers round trip of %#v: %#v, %v", k, vals, dec, err)
		}
	}
}

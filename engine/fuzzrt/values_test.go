package fuzzrt

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

var valuesTests = []struct {
	desc string
	vals []any
}{
	{desc: "no values", vals: []any{}},
	{desc: "bytes", vals: []any{[]byte{}, []byte("a\x00\xff"), bytes.Repeat([]byte{0xab}, 300)}},
	{desc: "strings", vals: []any{"", "☃", "bad \xff\xfe utf8", strings.Repeat("x", 200)}},
	{desc: "bools", vals: []any{true, false}},
	{desc: "bytes and uint8", vals: []any{byte(0), byte(0x7f), byte(0x80), uint8(0xff)}},
	{desc: "runes, invalid ones too", vals: []any{'x', rune(-1), rune(0xd800), rune(0x110000), rune(math.MinInt32), rune(math.MaxInt32)}},
	{desc: "int", vals: []any{0, -1, math.MaxInt64, math.MinInt64}},
	{desc: "int8", vals: []any{int8(-128), int8(127), int8(-1)}},
	{desc: "int16", vals: []any{int16(math.MinInt16), int16(math.MaxInt16)}},
	{desc: "int32", vals: []any{int32(math.MinInt32), int32(math.MaxInt32)}},
	{desc: "int64", vals: []any{int64(math.MinInt64), int64(math.MaxInt64)}},
	{desc: "uint", vals: []any{uint(0), uint(math.MaxUint64)}},
	{desc: "uint16", vals: []any{uint16(0), uint16(math.MaxUint16)}},
	{desc: "uint32", vals: []any{uint32(0), uint32(math.MaxUint32)}},
	{desc: "uint64", vals: []any{uint64(0), uint64(math.MaxUint64)}},
	{desc: "float64 specials", vals: []any{math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000000), math.SmallestNonzeroFloat64}},
	{desc: "float32 specials", vals: []any{float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00001), float32(math.SmallestNonzeroFloat32)}},
	{desc: "mixed", vals: []any{[]byte("b"), "s", true, byte(1), rune(2), 3, int8(4), int16(5), int64(6),
		uint(7), uint16(8), uint32(9), uint64(10), float32(1.5), 2.5}},
}

func TestValuesRoundTrip(t *testing.T) {
	for _, tt := range valuesTests {
		t.Run(tt.desc, func(t *testing.T) {
			enc := AppendValues(nil, tt.vals)
			got, err := DecodeValues(enc)
			if err != nil {
				t.Fatalf("DecodeValues(%x): %v", enc, err)
			}
			if !sameValues(got, tt.vals) {
				t.Fatalf("round trip of %s gave %s", describe(tt.vals), describe(got))
			}
			for i, v := range got {
				if b, ok := v.([]byte); ok && b == nil {
					t.Errorf("value %d decoded as a nil []byte", i)
				}
			}
			// Appending keeps what dst already holds.
			pre := []byte("prefix")
			if enc2 := AppendValues(pre, tt.vals); !bytes.Equal(enc2[len(pre):], enc) || string(enc2[:len(pre)]) != "prefix" {
				t.Errorf("AppendValues with a prefix = %x, want prefix then %x", enc2, enc)
			}
		})
	}
}

func TestDecodeValuesDoesNotAlias(t *testing.T) {
	enc := AppendValues(nil, []any{[]byte("abc"), "def"})
	vals, err := DecodeValues(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range enc {
		enc[i] = 0
	}
	if got := string(vals[0].([]byte)); got != "abc" {
		t.Errorf("[]byte changed to %q after the buffer was cleared", got)
	}
	if got := vals[1].(string); got != "def" {
		t.Errorf("string changed to %q after the buffer was cleared", got)
	}
}

func TestDecodeValuesErrors(t *testing.T) {
	tests := []struct {
		desc    string
		in      []byte
		wantErr string
	}{
		{desc: "empty", in: nil, wantErr: "truncated"},
		{desc: "overlong count varint", in: bytes.Repeat([]byte{0xff}, 11), wantErr: "truncated"},
		{desc: "count beyond the data", in: []byte{3, byte(KindBool), 1}, wantErr: "value count 3"},
		{desc: "huge count", in: []byte{0xff, 0xff, 0xff, 0xff, 0x0f, byte(KindBool), 1}, wantErr: "value count"},
		{desc: "zero tag", in: []byte{1, 0, 0}, wantErr: "unknown type tag 0"},
		{desc: "unknown tag", in: []byte{1, 200, 0}, wantErr: "unknown type tag 200"},
		{desc: "bool not 0 or 1", in: []byte{1, byte(KindBool), 2}, wantErr: "bad bool"},
		{desc: "short fixed payload", in: []byte{1, byte(KindUint64), 1, 2, 3}, wantErr: "truncated"},
		{desc: "zero tag for second value", in: []byte{2, byte(KindBool), 1, 0, 0}, wantErr: "unknown type tag 0"},
		{desc: "second value missing", in: []byte{2, byte(KindBytes), 2, 'a', 'b'}, wantErr: "truncated"},
		{desc: "non-minimal count", in: []byte{0x81, 0x00, byte(KindBool), 1}, wantErr: "truncated"},
		{desc: "non-minimal length", in: []byte{1, byte(KindString), 0x80, 0x00}, wantErr: "truncated"},
		{desc: "length beyond the data", in: []byte{1, byte(KindString), 5, 'a', 'b'}, wantErr: "truncated"},
		{desc: "huge length", in: []byte{1, byte(KindBytes), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, wantErr: "truncated"},
		{desc: "bad length varint", in: []byte{1, byte(KindBytes), 0x80}, wantErr: "truncated"},
		{desc: "trailing bytes", in: []byte{1, byte(KindBool), 1, 0}, wantErr: "trailing"},
		{desc: "trailing bytes after none", in: []byte{0, 0}, wantErr: "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			vals, err := DecodeValues(tt.in)
			if err == nil {
				t.Fatalf("DecodeValues(%x) = %s, want error", tt.in, describe(vals))
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("DecodeValues(%x) error %q, want it to contain %q", tt.in, err, tt.wantErr)
			}
		})
	}
}

// TestDecodeValuesTruncated cuts a valid encoding at every point: each
// prefix must be rejected, never decoded as something shorter.
func TestDecodeValuesTruncated(t *testing.T) {
	var all []any
	for _, tt := range valuesTests {
		all = append(all, tt.vals...)
	}
	enc := AppendValues(nil, all)
	for n := range len(enc) {
		if vals, err := DecodeValues(enc[:n]); err == nil {
			t.Fatalf("DecodeValues of the first %d of %d bytes = %s, want error", n, len(enc), describe(vals))
		}
	}
}

func TestAppendValuesAllocs(t *testing.T) {
	vals := valuesTests[len(valuesTests)-1].vals
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = AppendValues(buf[:0], vals) }); n != 0 {
		t.Errorf("AppendValues allocated %v times with a large enough buffer", n)
	}
}

func TestAppendValuesUnsupported(t *testing.T) {
	type myInt int
	for _, v := range []any{myInt(1), complex(1, 2), nil, []int{1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AppendValues(%T) did not panic", v)
				}
			}()
			AppendValues(nil, []any{v})
		}()
	}
}

func TestValuesSize(t *testing.T) {
	tests := []struct {
		desc string
		vals []any
		want int
	}{
		{desc: "none", vals: nil, want: 0},
		{desc: "bytes and string count their length", vals: []any{[]byte("abc"), "de", []byte(nil), ""}, want: 5},
		{desc: "one-byte types", vals: []any{true, byte(1), int8(1)}, want: 3},
		{desc: "two-byte types", vals: []any{int16(1), uint16(1)}, want: 4},
		{desc: "four-byte types", vals: []any{rune(1), uint32(1), float32(1)}, want: 12},
		{desc: "eight-byte types, int and uint included", vals: []any{1, int64(1), uint(1), uint64(1), 1.0}, want: 40},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := ValuesSize(tt.vals); got != tt.want {
				t.Errorf("ValuesSize(%s) = %d, want %d", describe(tt.vals), got, tt.want)
			}
		})
	}
}

func TestCloneValues(t *testing.T) {
	orig := []any{[]byte("abc"), "s", 1, math.Float32frombits(0x7f800001), []byte(nil), []byte{}}
	clone := CloneValues(orig)
	if !sameValues(clone, orig) {
		t.Fatalf("CloneValues(%s) = %s", describe(orig), describe(clone))
	}
	clone[0].([]byte)[0] = 'X'
	clone[1] = "changed"
	if string(orig[0].([]byte)) != "abc" || orig[1] != "s" {
		t.Errorf("changing the clone changed the original: %s", describe(orig))
	}
	if clone[4].([]byte) != nil {
		t.Error("nil []byte cloned as non-nil")
	}
	if clone[5].([]byte) == nil {
		t.Error("empty []byte cloned as nil")
	}
	if CloneValues(nil) != nil {
		t.Error("CloneValues(nil) != nil")
	}
}

// FuzzRoundTrip checks both encodings on values of every type. Floats are
// fuzzed as bits so that every NaN payload is reachable.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("a\xff"), "b\x80", true, byte(0x80), rune(-1), 1, int8(-1), int16(2), int64(3),
		uint(4), uint16(5), uint32(6), uint64(7), uint32(0x7f800001), uint64(0x7ff0000000000001))
	f.Add([]byte{}, "", false, byte(0), rune(0xd800), math.MinInt64, int8(math.MinInt8), int16(math.MinInt16),
		int64(math.MaxInt64), uint(math.MaxUint64), uint16(0), uint32(0), uint64(0),
		math.Float32bits(float32(math.NaN())), math.Float64bits(math.NaN()))
	f.Fuzz(func(t *testing.T, b []byte, s string, bo bool, by byte, r rune, i int, i8 int8, i16 int16,
		i64 int64, u uint, u16 uint16, u32 uint32, u64 uint64, f32 uint32, f64 uint64) {
		vals := []any{b, s, bo, by, r, i, i8, i16, i64, u, u16, u32, u64,
			math.Float32frombits(f32), math.Float64frombits(f64)}

		enc := AppendValues(nil, vals)
		got, err := DecodeValues(enc)
		if err != nil {
			t.Fatalf("DecodeValues(AppendValues(%s)): %v", describe(vals), err)
		}
		if !sameValues(got, vals) {
			t.Fatalf("AppendValues/DecodeValues of %s gave %s", describe(vals), describe(got))
		}

		data := Marshal(vals)
		got, err = Unmarshal(data)
		if err != nil {
			t.Fatalf("Unmarshal(%q): %v", data, err)
		}
		if !sameValues(got, vals) {
			t.Fatalf("Marshal/Unmarshal of %s via %q gave %s", describe(vals), data, describe(got))
		}

		if !sameValues(CloneValues(vals), vals) {
			t.Fatalf("CloneValues changed %s", describe(vals))
		}
	})
}

// FuzzDecodeValues feeds arbitrary bytes to DecodeValues: it must return
// an error or values that encode back to exactly the same bytes.
func FuzzDecodeValues(f *testing.F) {
	for _, tt := range valuesTests {
		f.Add(AppendValues(nil, tt.vals))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		vals, err := DecodeValues(in)
		if err != nil {
			return
		}
		if enc := AppendValues(nil, vals); !bytes.Equal(enc, in) {
			t.Fatalf("DecodeValues(%x) = %s, which encodes as %x", in, describe(vals), enc)
		}
	})
}

func BenchmarkAppendValues(b *testing.B) {
	vals := []any{bytes.Repeat([]byte("x"), 64), "hello", 42, 1.5, true}
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = AppendValues(buf[:0], vals)
	}
}

func BenchmarkDecodeValues(b *testing.B) {
	enc := AppendValues(nil, []any{bytes.Repeat([]byte("x"), 64), "hello", 42, 1.5, true})
	for b.Loop() {
		if _, err := DecodeValues(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValuesEveryKind is the per-execution encoding (the worker writes every input
// to shared memory) and the decoding of a reported input, over every kind.
func BenchmarkValuesEveryKind(b *testing.B) {
	vals := valuesTests[len(valuesTests)-1].vals // mixed
	b.Run("append", func(b *testing.B) {
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		for b.Loop() {
			buf = AppendValues(buf[:0], vals)
		}
	})
	b.Run("decode", func(b *testing.B) {
		enc := AppendValues(nil, vals)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeValues(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("size", func(b *testing.B) {
		for b.Loop() {
			if ValuesSize(vals) == 0 {
				b.Fatal("no size")
			}
		}
	})
}

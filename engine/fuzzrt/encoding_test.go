package fuzzrt

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sameValue compares corpus values exactly: floats by bit pattern (so NaN
// payloads and -0 count), []byte by content (nil equals empty, since the
// file format cannot tell them apart).
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case float32:
		b, ok := b.(float32)
		return ok && math.Float32bits(a) == math.Float32bits(b)
	case float64:
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	case []byte:
		b, ok := b.([]byte)
		return ok && bytes.Equal(a, b)
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b) && a == b
}

func sameValues(a, b []any) bool {
	return slices.EqualFunc(a, b, sameValue)
}

// describe prints values with their types and float bits, for failures.
func describe(vals []any) string {
	var s []string
	for _, v := range vals {
		switch v := v.(type) {
		case float32:
			s = append(s, fmt.Sprintf("float32(%v bits %#x)", v, math.Float32bits(v)))
		case float64:
			s = append(s, fmt.Sprintf("float64(%v bits %#x)", v, math.Float64bits(v)))
		default:
			s = append(s, fmt.Sprintf("%T(%#v)", v, v))
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// The wants below were produced by the toolchain's own marshalCorpusFile
// ($GOROOT/src/internal/fuzz/encoding.go, Go 1.26) run on the same values.
var marshalTests = []struct {
	desc string
	vals []any
	want string
}{
	{desc: "bytes printable", vals: []any{[]byte("hello, world")}, want: "[]byte(\"hello, world\")\n"},
	{desc: "bytes empty", vals: []any{[]byte{}}, want: "[]byte(\"\")\n"},
	{desc: "bytes nil", vals: []any{[]byte(nil)}, want: "[]byte(\"\")\n"},
	{
		desc: "bytes non-printable and invalid UTF-8",
		vals: []any{[]byte("\x00\x01\a\b\f\n\r\t\v\x7f\x80\xfe\xff\"\\'`")},
		want: `[]byte("\x00\x01\a\b\f\n\r\t\v\x7f\x80\xfe\xff\"\\'` + "`" + `")` + "\n",
	},
	{
		desc: "bytes valid multibyte, non-printable runes escaped",
		vals: []any{[]byte("héllo ☃ \U0001F600 \u00a0 \u200b \ufeff")},
		want: `[]byte("héllo ☃ 😀 \u00a0 \u200b \ufeff")` + "\n",
	},
	{desc: "string printable", vals: []any{"hello"}, want: "string(\"hello\")\n"},
	{desc: "string empty", vals: []any{""}, want: "string(\"\")\n"},
	{
		desc: "string invalid UTF-8",
		vals: []any{"a\xffb\xc0\xafc\xed\xa0\x80"},
		want: `string("a\xffb\xc0\xafc\xed\xa0\x80")` + "\n",
	},
	{
		desc: "string control and quotes",
		vals: []any{"\x00\t\n\"\\'`\u2028\U0010ffff"},
		want: `string("\x00\t\n\"\\'` + "`" + `\u2028\U0010ffff")` + "\n",
	},
	{desc: "bool", vals: []any{true, false}, want: "bool(true)\nbool(false)\n"},
	{
		desc: "byte printable",
		vals: []any{byte('a'), byte(' '), byte('~')},
		want: "byte('a')\nbyte(' ')\nbyte('~')\n",
	},
	{
		desc: "byte quotes",
		vals: []any{byte('\''), byte('"'), byte('\\')},
		want: `byte('\'')` + "\n" + `byte('"')` + "\n" + `byte('\\')` + "\n",
	},
	{
		desc: "byte control",
		vals: []any{byte(0), byte('\a'), byte('\n'), byte(0x1f), byte(0x7f)},
		want: `byte('\x00')
byte('\a')
byte('\n')
byte('\x1f')
byte('\x7f')
`,
	},
	{
		desc: "byte above 0x7f quoted as the rune of that value",
		vals: []any{byte(0x80), byte(0x9f), byte(0xa0), byte(0xad), byte(0xe9), byte(0xff)},
		want: `byte('\u0080')
byte('\u009f')
byte('\u00a0')
byte('\u00ad')
byte('é')
byte('ÿ')
`,
	},
	{
		desc: "rune valid",
		vals: []any{'x', '☃', rune(0x1F600), rune(0), rune(0xfffd), rune(0x10ffff), rune(0xe000)},
		want: `rune('x')
rune('☃')
rune('😀')
rune('\x00')
rune('�')
rune('\U0010ffff')
rune('\ue000')
`,
	},
	{
		desc: "rune invalid written as int32",
		vals: []any{rune(-1), rune(0xd800), rune(0xdfff), rune(0x110000), rune(math.MinInt32), rune(math.MaxInt32)},
		want: `int32(-1)
int32(55296)
int32(57343)
int32(1114112)
int32(-2147483648)
int32(2147483647)
`,
	},
	{
		desc: "int",
		vals: []any{0, -5, math.MaxInt64, math.MinInt64},
		want: "int(0)\nint(-5)\nint(9223372036854775807)\nint(-9223372036854775808)\n",
	},
	{desc: "int8", vals: []any{int8(0), int8(-128), int8(127)}, want: "int8(0)\nint8(-128)\nint8(127)\n"},
	{desc: "int16", vals: []any{int16(-32768), int16(32767)}, want: "int16(-32768)\nint16(32767)\n"},
	{
		desc: "int64",
		vals: []any{int64(math.MinInt64), int64(math.MaxInt64)},
		want: "int64(-9223372036854775808)\nint64(9223372036854775807)\n",
	},
	{desc: "uint", vals: []any{uint(0), uint(math.MaxUint64)}, want: "uint(0)\nuint(18446744073709551615)\n"},
	{desc: "uint8 is written as byte", vals: []any{uint8(65)}, want: "byte('A')\n"},
	{desc: "uint16", vals: []any{uint16(65535)}, want: "uint16(65535)\n"},
	{desc: "uint32", vals: []any{uint32(math.MaxUint32)}, want: "uint32(4294967295)\n"},
	{desc: "uint64", vals: []any{uint64(math.MaxUint64)}, want: "uint64(18446744073709551615)\n"},
	{
		desc: "float64 ordinary, shortest %g",
		vals: []any{1.5, -0.1, 1e21, 1e20, 123456789.0, 1e-5, 0.0001, math.MaxFloat64, math.SmallestNonzeroFloat64, 100000.0, 1e6},
		want: `float64(1.5)
float64(-0.1)
float64(1e+21)
float64(1e+20)
float64(1.23456789e+08)
float64(1e-05)
float64(0.0001)
float64(1.7976931348623157e+308)
float64(5e-324)
float64(100000)
float64(1e+06)
`,
	},
	{desc: "float64 zeros", vals: []any{0.0, math.Copysign(0, -1)}, want: "float64(0)\nfloat64(-0)\n"},
	{desc: "float64 infinities", vals: []any{math.Inf(1), math.Inf(-1)}, want: "float64(+Inf)\nfloat64(-Inf)\n"},
	{desc: "float64 math.NaN()", vals: []any{math.NaN()}, want: "float64(NaN)\n"},
	{
		desc: "float64 other NaNs keep their bits",
		vals: []any{
			math.Float64frombits(0x7ff8000000000000), // the usual quiet NaN, but not math.NaN()
			math.Float64frombits(0x7ff0000000000001), // signaling
			math.Float64frombits(0xfff8000000000001), // negative
			math.Float64frombits(0x7fffffffffffffff),
			math.Float64frombits(0xfff0000000000001),
		},
		want: `math.Float64frombits(0x7ff8000000000000)
math.Float64frombits(0x7ff0000000000001)
math.Float64frombits(0xfff8000000000001)
math.Float64frombits(0x7fffffffffffffff)
math.Float64frombits(0xfff0000000000001)
`,
	},
	{
		desc: "float32 ordinary, shortest %g at 32 bits",
		vals: []any{float32(1.5), float32(0.1), float32(math.MaxFloat32), float32(math.SmallestNonzeroFloat32), float32(16777216), float32(1e7)},
		want: `float32(1.5)
float32(0.1)
float32(3.4028235e+38)
float32(1e-45)
float32(1.6777216e+07)
float32(1e+07)
`,
	},
	{desc: "float32 zeros", vals: []any{float32(0), float32(math.Copysign(0, -1))}, want: "float32(0)\nfloat32(-0)\n"},
	{
		desc: "float32 infinities",
		vals: []any{float32(math.Inf(1)), float32(math.Inf(-1))},
		want: "float32(+Inf)\nfloat32(-Inf)\n",
	},
	{desc: "float32 of math.NaN()", vals: []any{float32(math.NaN())}, want: "float32(NaN)\n"},
	{
		desc: "float32 other NaNs keep their bits",
		vals: []any{
			math.Float32frombits(0x7fc00001),
			math.Float32frombits(0x7f800001), // signaling
			math.Float32frombits(0xffc00000), // negative
			math.Float32frombits(0x7fffffff),
			math.Float32frombits(0xff800001),
		},
		want: `math.Float32frombits(0x7fc00001)
math.Float32frombits(0x7f800001)
math.Float32frombits(0xffc00000)
math.Float32frombits(0x7fffffff)
math.Float32frombits(0xff800001)
`,
	},
}

func TestMarshal(t *testing.T) {
	for _, tt := range marshalTests {
		t.Run(tt.desc, func(t *testing.T) {
			got := string(Marshal(tt.vals))
			if want := Header + "\n" + tt.want; got != want {
				t.Errorf("Marshal(%s) =\n%s\nwant\n%s", describe(tt.vals), got, want)
			}
		})
	}
}

func TestMarshalUnmarshalRoundTrip(t *testing.T) {
	check := func(t *testing.T, vals []any) {
		t.Helper()
		data := Marshal(vals)
		got, err := Unmarshal(data)
		if err != nil {
			t.Fatalf("Unmarshal(%q): %v", data, err)
		}
		if !sameValues(got, vals) {
			t.Fatalf("round trip of %s via %q gave %s", describe(vals), data, describe(got))
		}
		if again := Marshal(got); !bytes.Equal(again, data) {
			t.Fatalf("re-Marshal changed %q to %q", data, again)
		}
	}
	for _, tt := range marshalTests {
		t.Run(tt.desc, func(t *testing.T) { check(t, tt.vals) })
	}
	t.Run("every byte", func(t *testing.T) {
		var vals []any
		for i := range 256 {
			vals = append(vals, byte(i), []byte{byte(i)}, string([]byte{byte(i)}))
		}
		check(t, vals)
	})
	t.Run("every int8", func(t *testing.T) {
		var vals []any
		for i := math.MinInt8; i <= math.MaxInt8; i++ {
			vals = append(vals, int8(i))
		}
		check(t, vals)
	})
	t.Run("runes around the edges of validity", func(t *testing.T) {
		var vals []any
		for _, base := range []rune{0, 0x7f, 0xff, 0xd800, 0xdfff, 0xfffd, 0x10ffff, math.MaxInt32, math.MinInt32} {
			for d := rune(-2); d <= 2; d++ {
				vals = append(vals, base+d)
			}
		}
		check(t, vals)
	})
	t.Run("float bit patterns", func(t *testing.T) {
		var vals []any
		for _, b := range []uint64{0, 1, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
			0x7ff0000000000001, 0x7ff8000000000000, 0x7ff8000000000001, 0xfff8000000000001,
			0x7fffffffffffffff, 0xffffffffffffffff, 0x000fffffffffffff, 0x3fb999999999999a} {
			vals = append(vals, math.Float64frombits(b))
		}
		for _, b := range []uint32{0, 1, 0x80000000, 0x7f800000, 0xff800000, 0x7f800001,
			0x7fc00000, 0x7fc00001, 0xffc00000, 0x7fffffff, 0xffffffff, 0x007fffff, 0x3dcccccd} {
			vals = append(vals, math.Float32frombits(b))
		}
		check(t, vals)
	})
}

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		desc string
		in   string
		want []any
	}{
		{
			desc: "every type as Marshal writes it",
			in: `go test fuzz v1
[]byte("a\x00\xff")
string("☃\xfe")
bool(true)
bool(false)
byte('\u0080')
rune('x')
int32(-1)
int(-9223372036854775808)
int8(-128)
int16(7)
int64(9223372036854775807)
uint(18446744073709551615)
uint16(65535)
uint32(4294967295)
uint64(18446744073709551615)
float32(-0)
float64(+Inf)
float64(-Inf)
float64(NaN)
math.Float32frombits(0x7f800001)
math.Float64frombits(0x7ff0000000000001)
`,
			want: []any{[]byte("a\x00\xff"), "☃\xfe", true, false, byte(0x80), 'x', int32(-1),
				math.MinInt64, int8(-128), int16(7), int64(math.MaxInt64), uint(math.MaxUint64),
				uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64),
				float32(math.Copysign(0, -1)), math.Inf(1), math.Inf(-1), math.NaN(),
				math.Float32frombits(0x7f800001), math.Float64frombits(0x7ff0000000000001)},
		},
		{
			desc: "CRLF line endings",
			in:   "go test fuzz v1\r\nint(1)\r\nstring(\"x\")\r\n",
			want: []any{1, "x"},
		},
		{
			desc: "blank lines, surrounding space and no final newline",
			in:   "go test fuzz v1\n\n  int(1)  \n\t\n\tbool(false)",
			want: []any{1, false},
		},
		{
			desc: "comments",
			in:   "go test fuzz v1\nint(1) // one\nint(/* two */ 2)\n",
			want: []any{1, 2},
		},
		{
			desc: "integers in other bases and with underscores",
			in: `go test fuzz v1
int(0x10)
int(-0x10)
int8(0b101)
int16(0o17)
int32(017)
int64(1_000_000)
uint(0XFF)
uint16(0B1)
uint32(0xcafef00d)
uint64(0xffff_ffff_ffff_ffff)
`,
			want: []any{16, -16, int8(5), int16(15), int32(15), int64(1000000), uint(255),
				uint16(1), uint32(0xcafef00d), uint64(math.MaxUint64)},
		},
		{
			desc: "uint8 spelling and integer literals for byte and rune",
			in:   "go test fuzz v1\nuint8(200)\nbyte(0x41)\nrune(-5)\nrune(0x110000)\n",
			want: []any{byte(200), byte('A'), rune(-5), rune(0x110000)},
		},
		{
			desc: "escapes in byte and rune literals",
			in:   "go test fuzz v1\nbyte('\\x80')\nbyte('\\377')\nbyte('ÿ')\nrune('\\xff')\nrune('\\U0001F600')\nbyte('\\'')\n",
			want: []any{byte(0x80), byte(0xff), byte(0xff), rune(0xff), rune(0x1F600), byte('\'')},
		},
		{
			desc: "raw string literals",
			in:   "go test fuzz v1\nstring(`a\\b`)\n[]byte(`\"q\"`)\n",
			want: []any{`a\b`, []byte(`"q"`)},
		},
		{
			desc: "float spellings",
			in: `go test fuzz v1
float64(1)
float64(-2)
float64(1e3)
float64(.5)
float64(0x1p-2)
float64(1_0.5)
float32(3)
float32(-Inf)
float32(NaN)
float64(-0.0)
`,
			want: []any{1.0, -2.0, 1000.0, 0.5, 0.25, 10.5, float32(3), float32(math.Inf(-1)),
				float32(math.NaN()), math.Copysign(0, -1)},
		},
		{
			desc: "float bits in decimal",
			in:   "go test fuzz v1\nmath.Float64frombits(9221120237041090562)\nmath.Float32frombits(2143289345)\n",
			want: []any{math.Float64frombits(0x7ff8000000000002), math.Float32frombits(0x7fc00001)},
		},
		{
			desc: "header only gives no values",
			in:   "go test fuzz v1\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := Unmarshal([]byte(tt.in))
			if err != nil {
				t.Fatalf("Unmarshal(%q): %v", tt.in, err)
			}
			if !sameValues(got, tt.want) {
				t.Errorf("Unmarshal(%q) =\n%s\nwant\n%s", tt.in, describe(got), describe(tt.want))
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	tests := []struct {
		desc    string
		in      string
		wantErr string // substring of the error
	}{
		{desc: "empty", in: "", wantErr: "cannot unmarshal empty string"},
		{desc: "no newline after header", in: "go test fuzz v1", wantErr: "must include version and at least one value"},
		{desc: "missing header", in: "int(1)\n", wantErr: "unknown encoding version: int(1)"},
		{desc: "wrong version", in: "go test fuzz v2\nint(1)\n", wantErr: "unknown encoding version: go test fuzz v2"},
		{desc: "header with trailing space", in: "go test fuzz v1 \nint(1)\n", wantErr: "unknown encoding version"},
		{desc: "the malformed line is quoted", in: "go test fuzz v1\nint(1)\n\nint(x)\n", wantErr: `malformed line "int(x)"`},
		{desc: "unterminated string", in: "go test fuzz v1\nstring(\"a)\n", wantErr: "malformed line"},
		{desc: "bad escape", in: "go test fuzz v1\nstring(\"\\q\")\n", wantErr: "malformed line"},
		{desc: "not a call", in: "go test fuzz v1\n5\n", wantErr: "call"},
		{desc: "no argument", in: "go test fuzz v1\nint()\n", wantErr: "1 argument"},
		{desc: "two arguments", in: "go test fuzz v1\nint(1, 2)\n", wantErr: "1 argument"},
		{desc: "two expressions on a line", in: "go test fuzz v1\nint(1); int(2)\n", wantErr: "malformed line"},
		{desc: "unknown type", in: "go test fuzz v1\ncomplex128(1)\n", wantErr: "unsupported type"},
		{desc: "defined type", in: "go test fuzz v1\nMyInt(1)\n", wantErr: "unsupported type"},
		{desc: "parenthesized type", in: "go test fuzz v1\n(int)(1)\n", wantErr: "expected []byte"},
		{desc: "array type", in: "go test fuzz v1\n[4]byte(\"abcd\")\n", wantErr: "expected []byte"},
		{desc: "[]uint8 spelling", in: "go test fuzz v1\n[]uint8(\"a\")\n", wantErr: "expected []byte"},
		{desc: "[]byte of non-string", in: "go test fuzz v1\n[]byte(1)\n", wantErr: "string literal"},
		{desc: "other math function", in: "go test fuzz v1\nmath.Inf(1)\n", wantErr: "Float32frombits"},
		{desc: "other package", in: "go test fuzz v1\nfoo.Float64frombits(1)\n", wantErr: "Float32frombits"},
		{desc: "string of int", in: "go test fuzz v1\nstring(65)\n", wantErr: "string literal"},
		{desc: "int of string", in: "go test fuzz v1\nint(\"1\")\n", wantErr: "integer literal"},
		{desc: "int of float", in: "go test fuzz v1\nint(1.0)\n", wantErr: "integer literal"},
		{desc: "int32 of char", in: "go test fuzz v1\nint32('a')\n", wantErr: "integer literal"},
		{desc: "arithmetic", in: "go test fuzz v1\nint(20*5)\n", wantErr: "literal value"},
		{desc: "decrement token", in: "go test fuzz v1\nint(--5)\n", wantErr: "malformed line"},
		{desc: "double negation", in: "go test fuzz v1\nint(- -5)\n", wantErr: "signed number"},
		{desc: "unary plus on a number", in: "go test fuzz v1\nint(+5)\n", wantErr: "unsupported operator"},
		{desc: "parenthesized literal", in: "go test fuzz v1\nint((5))\n", wantErr: "literal value"},
		{desc: "identifier", in: "go test fuzz v1\nint(x)\n", wantErr: "literal value"},
		{desc: "Inf without sign", in: "go test fuzz v1\nfloat64(Inf)\n", wantErr: "literal value"},
		{desc: "negative NaN", in: "go test fuzz v1\nfloat64(-NaN)\n", wantErr: "signed number"},
		{desc: "int8 overflow", in: "go test fuzz v1\nint8(128)\n", wantErr: "out of range"},
		{desc: "int64 overflow", in: "go test fuzz v1\nint64(9223372036854775808)\n", wantErr: "out of range"},
		{desc: "negative uint", in: "go test fuzz v1\nuint(-1)\n", wantErr: "invalid syntax"},
		{desc: "negative byte", in: "go test fuzz v1\nbyte(-1)\n", wantErr: "invalid syntax"},
		{desc: "byte overflow", in: "go test fuzz v1\nbyte(256)\n", wantErr: "out of range"},
		{desc: "byte of wide char", in: "go test fuzz v1\nbyte('☃')\n", wantErr: "does not fit"},
		{desc: "byte of string", in: "go test fuzz v1\nbyte(\"a\")\n", wantErr: "character"},
		{desc: "multi-char literal", in: "go test fuzz v1\nbyte('aa')\n", wantErr: "malformed line"},
		{desc: "bool of int", in: "go test fuzz v1\nbool(0)\n", wantErr: "true or false"},
		{desc: "bool of other ident", in: "go test fuzz v1\nbool(yes)\n", wantErr: "true or false"},
		{desc: "float32 overflow", in: "go test fuzz v1\nfloat32(1e39)\n", wantErr: "out of range"},
		{desc: "float of string", in: "go test fuzz v1\nfloat64(\"1\")\n", wantErr: "float or integer"},
		{desc: "Float32frombits of float", in: "go test fuzz v1\nmath.Float32frombits(1.5)\n", wantErr: "integer literal"},
		{desc: "Float32frombits overflow", in: "go test fuzz v1\nmath.Float32frombits(0x100000000)\n", wantErr: "out of range"},
		{desc: "Float64frombits of float", in: "go test fuzz v1\nmath.Float64frombits(1.5)\n", wantErr: "invalid syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			vals, err := Unmarshal([]byte(tt.in))
			if err == nil {
				t.Fatalf("Unmarshal(%q) = %s, want error", tt.in, describe(vals))
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Unmarshal(%q) error %q, want it to contain %q", tt.in, err, tt.wantErr)
			}
		})
	}
}

// Files written by `go test -fuzz` (Go 1.26, linux/amd64, fuzzing a target
// with one parameter of each supported type), named as it named them.
var toolchainFiles = []struct {
	desc string
	name string
	data string
}{
	{
		desc: "mutated bytes, int16 and a byte",
		name: "ea1e4bd6ab767184",
		data: `go test fuzz v1
[]byte("s\x00")
string("s\x80☃")
bool(true)
byte('}')
int32(55296)
int(-1)
int8(-128)
int16(71)
int32(-4)
int64(5)
uint(6)
uint16(7)
uint32(8)
uint64(9)
math.Float32frombits(0x7f800001)
math.Float64frombits(0xfff0000000000001)
`,
	},
	{
		desc: "quieted NaNs and non-printable rune",
		name: "c30d52d171b4a4ba",
		data: `go test fuzz v1
[]byte("s\x80\x10\x98\x83\x10")
string("s\x80\x10\x98\x83")
bool(true)
byte('\u0080')
rune('\ud7a6')
int(-1)
int8(-128)
int16(3)
int32(-4)
int64(5)
uint(6)
uint16(7)
uint32(8)
uint64(9)
math.Float32frombits(0x7fc00001)
math.Float64frombits(0xfff8000000000001)
`,
	},
	{
		desc: "printable rune and negative ints",
		name: "8f82e219886a5492",
		data: `go test fuzz v1
[]byte("reed\xff\x00")
string("s\x80☃")
bool(true)
byte('\u0080')
rune('ퟋ')
int(-32)
int8(-95)
int16(3)
int32(-4)
int64(5)
uint(3)
uint16(7)
uint32(8)
uint64(9)
math.Float32frombits(0x7f800001)
math.Float64frombits(0xfff0000000000001)
`,
	},
	{
		desc: "minimized",
		name: "70f5eaebb82eac68",
		data: `go test fuzz v1
[]byte("0")
string("0")
bool(true)
byte('a')
rune('b')
int(1)
int8(2)
int16(40)
rune('\x04')
int64(5)
uint(6)
uint16(7)
uint32(8)
uint64(9)
float32(1.5)
float64(2.5)
`,
	},
}

var allTypes = []reflect.Type{
	reflect.TypeFor[[]byte](), reflect.TypeFor[string](), reflect.TypeFor[bool](),
	reflect.TypeFor[byte](), reflect.TypeFor[rune](), reflect.TypeFor[int](),
	reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](),
	reflect.TypeFor[int64](), reflect.TypeFor[uint](), reflect.TypeFor[uint16](),
	reflect.TypeFor[uint32](), reflect.TypeFor[uint64](), reflect.TypeFor[float32](),
	reflect.TypeFor[float64](),
}

func TestToolchainFiles(t *testing.T) {
	for _, tt := range toolchainFiles {
		t.Run(tt.desc, func(t *testing.T) {
			data := []byte(tt.data)
			if got := FileName(data); got != tt.name {
				t.Errorf("FileName = %s, want %s", got, tt.name)
			}
			vals, err := Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckTypes(vals, allTypes); err != nil {
				t.Error(err)
			}
			if got := Marshal(vals); !bytes.Equal(got, data) {
				t.Errorf("Marshal(Unmarshal(file)) =\n%s\nwant\n%s", got, data)
			}
		})
	}
}

func TestCheckTypes(t *testing.T) {
	type myInt int
	tests := []struct {
		desc    string
		vals    []any
		types   []reflect.Type
		wantErr string // "" for success
	}{
		{desc: "all types", vals: []any{[]byte{}, "", false, byte(0), rune(0), 0, int8(0), int16(0),
			int32(0), int64(0), uint(0), uint16(0), uint32(0), uint64(0), float32(0), 0.0}, types: allTypes},
		{desc: "none", vals: nil, types: nil},
		{desc: "byte is uint8, rune is int32", vals: []any{uint8(1), int32(2)},
			types: []reflect.Type{reflect.TypeFor[byte](), reflect.TypeFor[rune]()}},
		{desc: "too few values", vals: []any{1}, types: allTypes[:2], wantErr: "wrong number of values in corpus entry: 1, want 2"},
		{desc: "too many values", vals: []any{1, 2}, types: allTypes[5:6], wantErr: "corpus entry: 2, want 1"},
		{desc: "int for int64", vals: []any{"", 1}, types: []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int64]()},
			wantErr: "mismatched types in corpus entry: [string int], want [string int64]"},
		{desc: "string for []byte", vals: []any{"x"}, types: []reflect.Type{reflect.TypeFor[[]byte]()},
			wantErr: "mismatched types in corpus entry: [string], want [[]uint8]"},
		{desc: "defined type", vals: []any{1}, types: []reflect.Type{reflect.TypeFor[myInt]()},
			wantErr: "want [fuzzrt.myInt]"},
		{desc: "nil value", vals: []any{nil}, types: []reflect.Type{reflect.TypeFor[int]()},
			wantErr: "[<nil>]"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := CheckTypes(tt.vals, tt.types)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("no error, want one containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestFileName(t *testing.T) {
	// sha256("") = e3b0c44298fc1c149afbf4c8996fb924...
	if got := FileName(nil); got != "e3b0c44298fc1c14" {
		t.Errorf("FileName(nil) = %s", got)
	}
}

func TestSupportedType(t *testing.T) {
	type myString string
	for _, typ := range allTypes {
		if !SupportedType(typ) {
			t.Errorf("SupportedType(%v) = false", typ)
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[uintptr](), reflect.TypeFor[complex128](), reflect.TypeFor[[]int](),
		reflect.TypeFor[[]rune](), reflect.TypeFor[[4]byte](), reflect.TypeFor[*int](),
		reflect.TypeFor[any](), reflect.TypeFor[myString](), reflect.TypeFor[struct{}](), nil,
	} {
		if SupportedType(typ) {
			t.Errorf("SupportedType(%v) = true", typ)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, tt := range marshalTests {
		f.Add(Header + "\n" + tt.want)
	}
	for _, tt := range toolchainFiles {
		f.Add(tt.data)
	}
	f.Add("go test fuzz v1\r\nint(0x10)\r\nrune(-1)\nbyte('\\377')\n")
	f.Fuzz(func(t *testing.T, in string) {
		vals, err := Unmarshal([]byte(in))
		if err != nil {
			return
		}
		// Whatever is accepted must survive a Marshal round trip unchanged.
		data := Marshal(vals)
		again, err := Unmarshal(data)
		if err != nil {
			t.Fatalf("Unmarshal(Marshal(%s)) = %v (file %q)", describe(vals), err, data)
		}
		if !sameValues(again, vals) {
			t.Fatalf("round trip of %s gave %s", describe(vals), describe(again))
		}
	})
}

// goTool returns the go command, skipping the test if there is none.
func goTool(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	return gobin
}

// runGo runs the go command in dir in a hermetic-enough environment: no
// workspace, no network, no toolchain switching, no inherited flags.
func runGo(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOWORK=off", "GOTOOLCHAIN=local",
		"GO111MODULE=on", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The child fuzz target reports the values it receives in this form, which
// the test computes independently for the expected values.
const reportFunc = `
func report(vals ...any) {
	for i, v := range vals {
		switch x := v.(type) {
		case float32:
			vals[i] = fmt.Sprintf("f32:%#x", math.Float32bits(x))
		case float64:
			vals[i] = fmt.Sprintf("f64:%#x", math.Float64bits(x))
		}
	}
	f, err := os.OpenFile(os.Getenv("FUZZRT_REPORT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(f, "%#v\n", vals)
	f.Close()
}
`

func reportLine(vals []any) string {
	vals = slices.Clone(vals)
	for i, v := range vals {
		switch x := v.(type) {
		case float32:
			vals[i] = fmt.Sprintf("f32:%#x", math.Float32bits(x))
		case float64:
			vals[i] = fmt.Sprintf("f64:%#x", math.Float64bits(x))
		}
	}
	return fmt.Sprintf("%#v", vals)
}

const childTest = `package child

import (
	"fmt"
	"math"
	"os"
	"testing"
)

func FuzzAll(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, s string, bo bool, by byte, r rune, i int, i8 int8,
		i16 int16, i32 int32, i64 int64, u uint, u16 uint16, u32 uint32, u64 uint64,
		f32 float32, f64 float64) {
		report(b, s, bo, by, r, i, i8, i16, i32, i64, u, u16, u32, u64, f32, f64)
	})
}

func FuzzBad(f *testing.F) {
	f.Fuzz(func(t *testing.T, i int) {})
}
` + reportFunc

// TestToolchainReadsMarshal checks that `go test` accepts files written by
// Marshal (and alternative spellings Unmarshal accepts) and passes the fuzz
// target exactly the values we encoded, NaN payloads included.
func TestToolchainReadsMarshal(t *testing.T) {
	goTool(t)
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module child\n\ngo 1.22\n")
	write("child_test.go", childTest)

	entries := [][]any{
		{[]byte("\x00\xff\x80 \"\\"), "a\xffb\xed\xa0\x80☃", true, byte(0), rune(-1), math.MinInt64, int8(-128),
			int16(math.MinInt16), int32(math.MaxInt32), int64(math.MinInt64), uint(math.MaxUint64), uint16(0),
			uint32(math.MaxUint32), uint64(math.MaxUint64), math.Float32frombits(0x7f800001),
			math.Float64frombits(0x7ff0000000000001)},
		{[]byte{}, "", false, byte(0x80), rune(0xd800), 0, int8(127), int16(1), int32(-7), int64(1),
			uint(1), uint16(65535), uint32(1), uint64(1), float32(math.Copysign(0, -1)), math.Copysign(0, -1)},
		{[]byte("\u00a0\u200b"), "\x7f\t\n", true, byte(0xff), rune(0x10ffff), 42, int8(0), int16(0),
			rune(0x110000), int64(0), uint(0), uint16(0), uint32(0), uint64(0), float32(math.Inf(-1)),
			math.Inf(1)},
		{[]byte("x"), "y", false, byte('\''), rune('\''), -1, int8(-1), int16(-1), int32(math.MinInt32),
			int64(-1), uint(7), uint16(7), uint32(7), uint64(7), float32(math.NaN()), math.NaN()},
		{[]byte("z"), "w", true, byte('\\'), rune(0xfffd), 3, int8(3), int16(3), int32(3), int64(3), uint(3),
			uint16(3), uint32(3), uint64(3), math.Float32frombits(0xffc00000),
			math.Float64frombits(0x7ff8000000000000)},
		{[]byte("q"), "\U0001F600", false, byte(0x7f), rune(0xdfff), 5, int8(5), int16(5), int32(5), int64(5),
			uint(5), uint16(5), uint32(5), uint64(5), float32(0.1), 0.1},
	}
	var want []string
	for _, vals := range entries {
		data := Marshal(vals)
		write("testdata/fuzz/FuzzAll/"+FileName(data), string(data))
		want = append(want, reportLine(vals))
	}
	// Forms that Marshal never writes but that both parsers accept.
	alt := strings.Join([]string{
		"go test fuzz v1",
		"[]byte(`raw`)",
		`string("\u263a")`,
		"  bool(false) // comment",
		"",
		"uint8(0x41)",
		"rune(0x263a)",
		"int(-0x10)",
		"int8(0b11)",
		"int16(0o17)",
		"int32(-0x7fffffff)",
		"int64(1_000)",
		"uint(0XFF)",
		"uint16(017)",
		"uint32(4)",
		"uint64(5)",
		"math.Float32frombits(2143289345)",
		"float64(0x1p-2)",
	}, "\r\n") + "\r\n"
	altVals, err := Unmarshal([]byte(alt))
	if err != nil {
		t.Fatalf("Unmarshal(alt): %v", err)
	}
	write("testdata/fuzz/FuzzAll/alternative-forms", alt)
	want = append(want, reportLine(altVals))

	report := filepath.Join(dir, "report.txt")
	t.Setenv("FUZZRT_REPORT", report)
	if out, err := runGo(t, dir, "test", "-count=1", "-run=^FuzzAll$", "."); err != nil {
		t.Fatalf("go test failed: %v\n%s", err, out)
	}
	gotData, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(gotData), "\n"), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("fuzz target received\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A file Unmarshal rejects must make go test fail too.
	bad := "go test fuzz v1\nint(--1)\n"
	if _, err := Unmarshal([]byte(bad)); err == nil {
		t.Fatal("Unmarshal accepted the bad file")
	}
	write("testdata/fuzz/FuzzBad/bad", bad)
	out, err := runGo(t, dir, "test", "-count=1", "-run=^FuzzBad$", ".")
	if err == nil || !strings.Contains(out, "malformed") {
		t.Errorf("go test accepted a malformed file (err %v):\n%s", err, out)
	}
}

// TestToolchainWritesMarshal lets `go test -fuzz` write failing inputs and
// checks that Marshal reproduces each byte for byte, under the same name.
func TestToolchainWritesMarshal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a coverage-instrumented test binary")
	}
	goTool(t)
	dir := t.TempDir()
	src := `package child

import (
	"math"
	"testing"
)

var execs int

func FuzzAll(f *testing.F) {
	f.Add([]byte("seed\xff\x00"), "s\x80☃", true, byte(0x80), rune(0xd800), int(-1), int8(-128),
		int16(3), int32(-4), int64(5), uint(6), uint16(7), uint32(8), uint64(9),
		math.Float32frombits(0x7f800001), math.Float64frombits(0xfff0000000000001))
	f.Fuzz(func(t *testing.T, b []byte, s string, bo bool, by byte, r rune, i int, i8 int8,
		i16 int16, i32 int32, i64 int64, u uint, u16 uint16, u32 uint32, u64 uint64,
		f32 float32, f64 float64) {
		// Fail after some mutation so the values are not all the seed's.
		if execs++; execs > 200 {
			t.Fatal("boom")
		}
	})
}
`
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module child\n\ngo 1.22\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "child_test.go"), []byte(src), 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := runGo(t, dir, "test", "-run=^$", "-fuzz=^FuzzAll$", "-fuzzminimizetime=0",
		"-fuzztime=60s", "-parallel=1", ".")
	if err == nil {
		t.Fatalf("go test -fuzz found no failure:\n%s", out)
	}
	corpus := filepath.Join(dir, "testdata", "fuzz", "FuzzAll")
	files, err := os.ReadDir(corpus)
	if err != nil || len(files) == 0 {
		t.Fatalf("go test -fuzz wrote no corpus file (%v):\n%s", err, out)
	}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(corpus, file.Name()))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", file.Name(), data)
		if got := FileName(data); got != file.Name() {
			t.Errorf("FileName = %s, go test named it %s", got, file.Name())
		}
		vals, err := Unmarshal(data)
		if err != nil {
			t.Fatalf("Unmarshal: %v", err)
		}
		if err := CheckTypes(vals, allTypes); err != nil {
			t.Error(err)
		}
		if got := Marshal(vals); !bytes.Equal(got, data) {
			t.Errorf("Marshal(Unmarshal(file)) =\n%s\nwant\n%s", got, data)
		}
	}
}

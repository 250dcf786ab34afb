package fuzzrt

// This file reads and writes the "go test fuzz v1" corpus file format that
// `go test` uses for testdata/fuzz/FuzzXxx/* and its cache. Output must be
// byte-for-byte what the toolchain writes (so file names, which hash the
// content, agree), and input must be accepted exactly when the toolchain
// accepts it. See $GOROOT/src/internal/fuzz/encoding.go for the reference.

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Header is the first line of every corpus file (without its newline).
const Header = "go test fuzz v1"

// Marshal encodes vals as a corpus file, exactly as `go test` writes it:
// the header line followed by one Go conversion expression per value, each
// terminated by "\n". It panics on a value whose type is not supported,
// since callers are expected to have checked types already.
func Marshal(vals []any) []byte {
	b := make([]byte, 0, len(Header)+1+16*len(vals))
	b = append(b, Header...)
	b = append(b, '\n')
	for _, v := range vals {
		b = appendCorpusValue(b, v)
		b = append(b, '\n')
	}
	return b
}

// MarshalLayout is Marshal with, when layout is not empty, the line that
// names the fields of a target fuzzed field by field after the header.
func MarshalLayout(vals []any, layout string) []byte {
	b := Marshal(vals)
	if layout == "" {
		return b
	}
	return WithLayout(b, layout)
}

// LayoutOf is the layout in a corpus file's layout line, "" if it has none.
func LayoutOf(data []byte) string {
	_, rest, _ := strings.Cut(string(data), "\n")
	line, _, _ := strings.Cut(rest, "\n")
	if layout, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), LayoutPrefix); ok {
		return layout
	}
	return ""
}

// WithLayout puts the layout line into a corpus file that has none.
func WithLayout(data []byte, layout string) []byte {
	header, rest, ok := strings.Cut(string(data), "\n")
	if layout == "" || !ok || strings.HasPrefix(rest, LayoutPrefix) {
		return data
	}
	return []byte(header + "\n" + LayoutPrefix + strings.ReplaceAll(layout, "\n", " ") + "\n" + rest)
}

// canonicalNaN32 is what the toolchain treats as "the" float32 NaN; it is
// computed, not hard-coded, because the conversion is platform-dependent
// and the toolchain computes it the same way.
var canonicalNaN32 = math.Float32bits(float32(math.NaN()))

func appendCorpusValue(b []byte, v any) []byte {
	// The toolchain formats these with fmt's %T(%v) (or %q); the strconv
	// calls below produce identical text without fmt's reflection.
	k, u := Bits(v)
	switch {
	case k == KindBytes:
		// fmt's %q on a []byte is strconv.Quote of its bytes: invalid UTF-8
		// becomes \x escapes, non-printable runes \u escapes.
		b = append(b, "[]byte("...)
		b = strconv.AppendQuote(b, string(v.([]byte)))
	case k == KindString:
		b = append(b, "string("...)
		b = strconv.AppendQuote(b, v.(string))
	case k == KindBool:
		b = append(b, "bool("...)
		b = strconv.AppendBool(b, u != 0)
	case k == KindUint8:
		// Every byte is quoted as the rune of the same value, so 0x80..0xff
		// come out as '\u0080' or 'ÿ', never '\x80'.
		b = append(b, "byte("...)
		b = strconv.AppendQuoteRune(b, rune(u))
	case k == KindInt32 && utf8.ValidRune(rune(u)):
		// Negative values, surrogates and values above utf8.MaxRune have no
		// faithful rune literal (QuoteRune would print U+FFFD), so the
		// toolchain writes them as int32, as the other integers below.
		b = append(b, "rune("...)
		b = strconv.AppendQuoteRune(b, rune(u))
	case k.IsInt():
		b = append(append(b, k.String()...), '(')
		if k.Signed() {
			b = strconv.AppendInt(b, int64(u), 10)
		} else {
			b = strconv.AppendUint(b, u, 10)
		}
	case k.IsFloat():
		// NaNs other than the canonical one keep their exact bits, since a
		// failure may depend on the payload.
		if f := k.Float(u); f != f && u != canonicalNaN(k) {
			if k == KindFloat32 {
				b = append(b, "math.Float32frombits(0x"...)
			} else {
				b = append(b, "math.Float64frombits(0x"...)
			}
			b = strconv.AppendUint(b, u, 16)
		} else {
			b = append(append(b, k.String()...), '(')
			b = appendFloat(b, f, int(k.Width()))
		}
	default:
		panic(fmt.Sprintf("fuzzrt: unsupported corpus value type %T", v))
	}
	return append(b, ')')
}

// canonicalNaN is the bits of what the toolchain treats as "the" NaN of float
// kind k.
func canonicalNaN(k Kind) uint64 {
	if k == KindFloat32 {
		return uint64(canonicalNaN32)
	}
	return math.Float64bits(math.NaN())
}

// appendFloat matches fmt's %v for floats: shortest 'g' formatting, which
// already yields "+Inf", "-Inf", "NaN" and "-0".
func appendFloat(b []byte, f float64, bitSize int) []byte {
	return strconv.AppendFloat(b, f, 'g', -1, bitSize)
}

// Unmarshal decodes a corpus file. Like the toolchain it accepts "\r\n"
// line endings, blank lines, surrounding spaces, comments, integer literals
// in any base, rune or integer literals for byte and rune, and uint8/int32
// spellings. A file with a header and no values yields no values and no
// error; CheckTypes rejects it against any fuzz target. The messages of a
// malformed file are the toolchain's (internal/fuzz.unmarshalCorpusFile).
func Unmarshal(data []byte) ([]any, error) {
	if len(data) == 0 {
		return nil, errors.New("cannot unmarshal empty string")
	}
	text := string(data)
	header, rest, ok := strings.Cut(text, "\n")
	if !ok {
		return nil, errors.New("must include version and at least one value")
	}
	if h := strings.TrimSuffix(header, "\r"); h != Header {
		return nil, fmt.Errorf("unknown encoding version: %s", h)
	}
	var vals []any
	if line, next, ok := strings.Cut(rest, "\n"); ok && strings.HasPrefix(line, LayoutPrefix) {
		rest = next // the layout of a target fuzzed field by field (structs.go)
	}
	for {
		line, next, more := strings.Cut(rest, "\n")
		if line = strings.TrimSpace(line); line != "" {
			v, err := parseCorpusValue(line)
			if err != nil {
				return nil, fmt.Errorf("malformed line %q: %v", line, err)
			}
			vals = append(vals, v)
		}
		if !more {
			return vals, nil
		}
		rest = next
	}
}

// parseCorpusValue parses one line, which must be a conversion of a single
// literal to a supported type, or math.Float{32,64}frombits(integer). It reads
// the line as go/parser does (parseLine, corpusline.go) and checks it as the
// toolchain checks go/parser's tree.
func parseCorpusValue(line string) (any, error) {
	call, err := parseLine(line)
	if err != nil {
		return nil, err
	}
	return corpusValue(call)
}

// corpusValue is the value of a line's expression, as the toolchain makes it.
func corpusValue(call *node) (any, error) {
	if call.kind != nCall {
		return nil, errors.New("expected a call expression")
	}
	if len(call.args) != 1 {
		return nil, fmt.Errorf("expected a call with 1 argument, got %d", len(call.args))
	}
	arg := call.args[0]

	var typ string
	switch fun := call.x; fun.kind {
	case nArray:
		if fun.hasLen || fun.x.kind != nIdent || fun.x.text != "byte" {
			return nil, errors.New("expected []byte")
		}
		if arg.kind != nLit || arg.tok != tString {
			return nil, errors.New("[]byte requires a string literal")
		}
		s, err := strconv.Unquote(arg.text)
		if err != nil {
			return nil, err
		}
		return []byte(s), nil
	case nSelector:
		if fun.x.kind != nIdent || fun.x.text != "math" ||
			(fun.text != "Float32frombits" && fun.text != "Float64frombits") {
			return nil, errors.New("only math.Float32frombits and math.Float64frombits are allowed")
		}
		typ = "math." + fun.text
	case nIdent:
		typ = fun.text
	default:
		return nil, errors.New("expected []byte or a basic type")
	}

	if typ == "bool" {
		if arg.kind != nIdent || (arg.text != "true" && arg.text != "false") {
			return nil, errors.New("bool requires true or false")
		}
		return arg.text == "true", nil
	}

	val, kind, err := literalText(arg)
	if err != nil {
		return nil, err
	}
	k := KindNamed(typ)
	switch {
	case k == KindString:
		if kind != tString {
			return nil, errors.New("string requires a string literal")
		}
		return strconv.Unquote(val)
	case typ == "byte" || typ == "rune":
		if kind == tInt {
			return parseInt(val, k)
		}
		if kind != tChar {
			return nil, errors.New(typ + " requires a character or integer literal")
		}
		// The parser has already checked that this is one quoted character.
		c, _, _, err := strconv.UnquoteChar(val[1:len(val)-1], '\'')
		if err != nil {
			return nil, err
		}
		if k == KindUint8 && c > math.MaxUint8 {
			return nil, fmt.Errorf("character %q does not fit in a byte", c)
		}
		return k.FromBits(uint64(c)), nil
	case k.IsInt():
		if kind != tInt {
			return nil, errors.New(typ + " requires an integer literal")
		}
		return parseInt(val, k)
	case k.IsFloat():
		if kind != tFloat && kind != tInt {
			return nil, errors.New(typ + " requires a float or integer literal")
		}
		f, err := strconv.ParseFloat(val, int(k.Width()))
		return k.FromFloat(f), err
	case typ == "math.Float32frombits":
		if kind != tInt {
			return nil, errors.New(typ + " requires an integer literal")
		}
		u, err := strconv.ParseUint(val, 0, 32)
		return KindFloat32.FromBits(u), err
	case typ == "math.Float64frombits":
		// The toolchain lets a float literal through here; ParseUint then
		// rejects it, so accepting only INT would change just the message.
		if kind != tInt && kind != tFloat {
			return nil, errors.New(typ + " requires an integer literal")
		}
		u, err := strconv.ParseUint(val, 0, 64)
		return KindFloat64.FromBits(u), err
	}
	return nil, fmt.Errorf("unsupported type %q", typ)
}

// literalText returns the source text and kind of a literal argument,
// folding a leading minus into it and mapping the identifiers Inf and NaN
// (as in "+Inf", "-Inf", "NaN") to float text ParseFloat understands.
func literalText(arg *node) (string, lineTok, error) {
	switch arg.kind {
	case nLit:
		return arg.text, arg.tok, nil
	case nIdent:
		if arg.text == "NaN" {
			return "NaN", tFloat, nil
		}
	case nUnary:
		switch y := arg.x; y.kind {
		case nLit:
			if arg.text != "-" {
				return "", 0, fmt.Errorf("unsupported operator %v on a literal", arg.text)
			}
			return "-" + y.text, y.tok, nil
		case nIdent:
			// Any unary operator is accepted on Inf, and all but - mean +,
			// as in the toolchain.
			if y.text == "Inf" {
				if arg.text == "-" {
					return "-Inf", tFloat, nil
				}
				return "+Inf", tFloat, nil
			}
		}
		return "", 0, errors.New("expected a signed number, +Inf or -Inf")
	}
	return "", 0, errors.New("a literal value is required")
}

// parseInt parses an integer literal (any base, underscores allowed) into a
// value of integer kind k. For int and uint it parses 64 bits and truncates,
// as the toolchain does, so 64-bit corpora still load on 32-bit platforms.
func parseInt(val string, k Kind) (any, error) {
	if k.Signed() {
		i, err := strconv.ParseInt(val, 0, 8*k.Size())
		return k.FromBits(uint64(i)), err
	}
	u, err := strconv.ParseUint(val, 0, 8*k.Size())
	return k.FromBits(u), err
}

// CheckTypes reports whether vals fit a fuzz target whose fuzzed parameters
// have the given types: same count, and each dynamic type identical to its
// parameter's (a named type such as `type MyInt int` never matches). Its
// messages are internal/fuzz.CheckCorpus's.
func CheckTypes(vals []any, types []reflect.Type) error {
	if len(vals) != len(types) {
		return fmt.Errorf("wrong number of values in corpus entry: %d, want %d", len(vals), len(types))
	}
	for i, v := range vals {
		if reflect.TypeOf(v) != types[i] {
			got := make([]reflect.Type, len(vals))
			for j, v := range vals {
				got[j] = reflect.TypeOf(v)
			}
			return fmt.Errorf("mismatched types in corpus entry: %v, want %v", got, types)
		}
	}
	return nil
}

// SupportedType reports whether the toolchain can fuzz a parameter of type
// t. Only the predeclared types qualify, not types defined from them.
func SupportedType(t reflect.Type) bool { return KindFor(t) != NoKind }

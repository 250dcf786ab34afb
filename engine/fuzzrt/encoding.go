package fuzzrt

// This file reads and writes the "go test fuzz v1" corpus file format that
// `go test` uses for testdata/fuzz/FuzzXxx/* and its cache. Output must be
// byte-for-byte what the toolchain writes (so file names, which hash the
// content, agree), and input must be accepted exactly when the toolchain
// accepts it. See $GOROOT/src/internal/fuzz/encoding.go for the reference.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
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

// canonicalNaN32 is what the toolchain treats as "the" float32 NaN; it is
// computed, not hard-coded, because the conversion is platform-dependent
// and the toolchain computes it the same way.
var canonicalNaN32 = math.Float32bits(float32(math.NaN()))

func appendCorpusValue(b []byte, v any) []byte {
	// The toolchain formats these with fmt's %T(%v) (or %q); the strconv
	// calls below produce identical text without fmt's reflection.
	switch v := v.(type) {
	case []byte:
		// fmt's %q on a []byte is strconv.Quote of its bytes: invalid UTF-8
		// becomes \x escapes, non-printable runes \u escapes.
		b = append(b, "[]byte("...)
		b = strconv.AppendQuote(b, string(v))
	case string:
		b = append(b, "string("...)
		b = strconv.AppendQuote(b, v)
	case bool:
		b = append(b, "bool("...)
		b = strconv.AppendBool(b, v)
	case byte:
		// Every byte is quoted as the rune of the same value, so 0x80..0xff
		// come out as '\u0080' or 'ÿ', never '\x80'.
		b = append(b, "byte("...)
		b = strconv.AppendQuoteRune(b, rune(v))
	case rune:
		// Negative values, surrogates and values above utf8.MaxRune have no
		// faithful rune literal (QuoteRune would print U+FFFD), so the
		// toolchain writes them as int32.
		if utf8.ValidRune(v) {
			b = append(b, "rune("...)
			b = strconv.AppendQuoteRune(b, v)
		} else {
			b = append(b, "int32("...)
			b = strconv.AppendInt(b, int64(v), 10)
		}
	case int:
		b = append(b, "int("...)
		b = strconv.AppendInt(b, int64(v), 10)
	case int8:
		b = append(b, "int8("...)
		b = strconv.AppendInt(b, int64(v), 10)
	case int16:
		b = append(b, "int16("...)
		b = strconv.AppendInt(b, int64(v), 10)
	case int64:
		b = append(b, "int64("...)
		b = strconv.AppendInt(b, v, 10)
	case uint:
		b = append(b, "uint("...)
		b = strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		b = append(b, "uint16("...)
		b = strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		b = append(b, "uint32("...)
		b = strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		b = append(b, "uint64("...)
		b = strconv.AppendUint(b, v, 10)
	case float32:
		// NaNs other than the canonical one keep their exact bits, since a
		// failure may depend on the payload.
		if bits := math.Float32bits(v); v != v && bits != canonicalNaN32 {
			b = append(b, "math.Float32frombits(0x"...)
			b = strconv.AppendUint(b, uint64(bits), 16)
		} else {
			b = append(b, "float32("...)
			b = appendFloat(b, float64(v), 32)
		}
	case float64:
		if bits := math.Float64bits(v); v != v && bits != math.Float64bits(math.NaN()) {
			b = append(b, "math.Float64frombits(0x"...)
			b = strconv.AppendUint(b, bits, 16)
		} else {
			b = append(b, "float64("...)
			b = appendFloat(b, v, 64)
		}
	default:
		panic(fmt.Sprintf("fuzzrt: unsupported corpus value type %T", v))
	}
	return append(b, ')')
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
// literal to a supported type, or math.Float{32,64}frombits(integer).
func parseCorpusValue(line string) (any, error) {
	expr, err := parser.ParseExprFrom(token.NewFileSet(), "(test)", line, 0)
	if err != nil {
		return nil, err
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok {
		return nil, errors.New("expected a call expression")
	}
	if len(call.Args) != 1 {
		return nil, fmt.Errorf("expected a call with 1 argument, got %d", len(call.Args))
	}
	arg := call.Args[0]

	var typ string
	switch fun := call.Fun.(type) {
	case *ast.ArrayType:
		if elt, ok := fun.Elt.(*ast.Ident); fun.Len != nil || !ok || elt.Name != "byte" {
			return nil, errors.New("expected []byte")
		}
		lit, ok := arg.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return nil, errors.New("[]byte requires a string literal")
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return nil, err
		}
		return []byte(s), nil
	case *ast.SelectorExpr:
		if x, ok := fun.X.(*ast.Ident); !ok || x.Name != "math" ||
			(fun.Sel.Name != "Float32frombits" && fun.Sel.Name != "Float64frombits") {
			return nil, errors.New("only math.Float32frombits and math.Float64frombits are allowed")
		}
		typ = "math." + fun.Sel.Name
	case *ast.Ident:
		typ = fun.Name
	default:
		return nil, errors.New("expected []byte or a basic type")
	}

	if typ == "bool" {
		id, ok := arg.(*ast.Ident)
		if !ok || (id.Name != "true" && id.Name != "false") {
			return nil, errors.New("bool requires true or false")
		}
		return id.Name == "true", nil
	}

	val, kind, err := literalText(arg)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "string":
		if kind != token.STRING {
			return nil, errors.New("string requires a string literal")
		}
		return strconv.Unquote(val)
	case "byte", "rune":
		if kind == token.INT {
			if typ == "byte" {
				return parseUnsigned(val, "uint8")
			}
			return parseSigned(val, "int32")
		}
		if kind != token.CHAR {
			return nil, errors.New(typ + " requires a character or integer literal")
		}
		// The parser has already checked that this is one quoted character.
		c, _, _, err := strconv.UnquoteChar(val[1:len(val)-1], '\'')
		if err != nil {
			return nil, err
		}
		if typ == "rune" {
			return c, nil
		}
		if c > math.MaxUint8 {
			return nil, fmt.Errorf("character %q does not fit in a byte", c)
		}
		return byte(c), nil
	case "int", "int8", "int16", "int32", "int64":
		if kind != token.INT {
			return nil, errors.New(typ + " requires an integer literal")
		}
		return parseSigned(val, typ)
	case "uint", "uint8", "uint16", "uint32", "uint64":
		if kind != token.INT {
			return nil, errors.New(typ + " requires an integer literal")
		}
		return parseUnsigned(val, typ)
	case "float32", "float64":
		if kind != token.FLOAT && kind != token.INT {
			return nil, errors.New(typ + " requires a float or integer literal")
		}
		if typ == "float32" {
			f, err := strconv.ParseFloat(val, 32)
			return float32(f), err
		}
		return strconv.ParseFloat(val, 64)
	case "math.Float32frombits":
		if kind != token.INT {
			return nil, errors.New(typ + " requires an integer literal")
		}
		u, err := strconv.ParseUint(val, 0, 32)
		return math.Float32frombits(uint32(u)), err
	case "math.Float64frombits":
		// The toolchain lets a float literal through here; ParseUint then
		// rejects it, so accepting only INT would change just the message.
		if kind != token.INT && kind != token.FLOAT {
			return nil, errors.New(typ + " requires an integer literal")
		}
		u, err := strconv.ParseUint(val, 0, 64)
		return math.Float64frombits(u), err
	}
	return nil, fmt.Errorf("unsupported type %q", typ)
}

// literalText returns the source text and kind of a literal argument,
// folding a leading minus into it and mapping the identifiers Inf and NaN
// (as in "+Inf", "-Inf", "NaN") to float text ParseFloat understands.
func literalText(arg ast.Expr) (string, token.Token, error) {
	switch x := arg.(type) {
	case *ast.BasicLit:
		return x.Value, x.Kind, nil
	case *ast.Ident:
		if x.Name == "NaN" {
			return "NaN", token.FLOAT, nil
		}
	case *ast.UnaryExpr:
		switch y := x.X.(type) {
		case *ast.BasicLit:
			if x.Op != token.SUB {
				return "", 0, fmt.Errorf("unsupported operator %v on a literal", x.Op)
			}
			return "-" + y.Value, y.Kind, nil
		case *ast.Ident:
			// Any unary operator is accepted on Inf, and all but - mean +,
			// as in the toolchain.
			if y.Name == "Inf" {
				if x.Op == token.SUB {
					return "-Inf", token.FLOAT, nil
				}
				return "+Inf", token.FLOAT, nil
			}
		}
		return "", 0, errors.New("expected a signed number, +Inf or -Inf")
	}
	return "", 0, errors.New("a literal value is required")
}

// parseSigned parses an integer literal (any base, underscores allowed)
// into a value of the named signed type. For int it parses 64 bits and
// truncates, as the toolchain does, so 64-bit corpora still load on 32-bit
// platforms.
func parseSigned(val, typ string) (any, error) {
	switch typ {
	case "int":
		i, err := strconv.ParseInt(val, 0, 64)
		return int(i), err
	case "int8":
		i, err := strconv.ParseInt(val, 0, 8)
		return int8(i), err
	case "int16":
		i, err := strconv.ParseInt(val, 0, 16)
		return int16(i), err
	case "int32":
		i, err := strconv.ParseInt(val, 0, 32)
		return int32(i), err
	default: // int64
		return strconv.ParseInt(val, 0, 64)
	}
}

// parseUnsigned is parseSigned for the unsigned types.
func parseUnsigned(val, typ string) (any, error) {
	switch typ {
	case "uint":
		u, err := strconv.ParseUint(val, 0, 64)
		return uint(u), err
	case "uint8":
		u, err := strconv.ParseUint(val, 0, 8)
		return uint8(u), err
	case "uint16":
		u, err := strconv.ParseUint(val, 0, 16)
		return uint16(u), err
	case "uint32":
		u, err := strconv.ParseUint(val, 0, 32)
		return uint32(u), err
	default: // uint64
		return strconv.ParseUint(val, 0, 64)
	}
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

// FileName is the name `go test` gives a corpus file with this content in
// testdata/fuzz/FuzzXxx/: the first 16 hex digits of its SHA-256.
func FileName(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// SupportedType reports whether the toolchain can fuzz a parameter of type
// t. Only the predeclared types qualify, not types defined from them.
func SupportedType(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[[]byte](), reflect.TypeFor[string](), reflect.TypeFor[bool](),
		reflect.TypeFor[byte](), reflect.TypeFor[rune](),
		reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](),
		reflect.TypeFor[int32](), reflect.TypeFor[int64](),
		reflect.TypeFor[uint](), reflect.TypeFor[uint16](),
		reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
		reflect.TypeFor[float32](), reflect.TypeFor[float64]():
		return true
	}
	return false
}

package fuzzrt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// goParserNode is go/parser's reading of a corpus line, the toolchain's
// (internal/fuzz.parseCorpusValue), as the nodes parseLine makes, for holding
// parseLine to it.
func goParserNode(line string) (*node, error) {
	expr, err := parser.ParseExprFrom(token.NewFileSet(), "(test)", line, 0)
	if err != nil {
		return nil, err
	}
	return fromAST(expr), nil
}

func fromAST(e ast.Expr) *node {
	switch x := e.(type) {
	case *ast.BasicLit:
		return &node{kind: nLit, tok: map[token.Token]lineTok{token.INT: tInt, token.FLOAT: tFloat, token.IMAG: tImag, token.CHAR: tChar, token.STRING: tString}[x.Kind], text: x.Value}
	case *ast.Ident:
		return &node{kind: nIdent, text: x.Name}
	case *ast.UnaryExpr:
		return &node{kind: nUnary, text: x.Op.String(), x: fromAST(x.X)}
	case *ast.StarExpr:
		return &node{kind: nStar, x: fromAST(x.X)}
	case *ast.ParenExpr:
		return &node{kind: nParen, x: fromAST(x.X)}
	case *ast.SelectorExpr:
		return &node{kind: nSelector, text: x.Sel.Name, x: fromAST(x.X)}
	case *ast.CallExpr:
		c := &node{kind: nCall, x: fromAST(x.Fun)}
		for _, a := range x.Args {
			c.args = append(c.args, fromAST(a))
		}
		return c
	case *ast.ArrayType:
		return &node{kind: nArray, hasLen: x.Len != nil, x: fromAST(x.Elt)}
	}
	return &node{kind: nOther}
}

// lineCases are lines at the edges of what go/parser accepts.
var lineCases = []string{
	"int(1)", "int(-1)", "int( - 1 )", "int(1,)", "int(1...)", "int(1...,)", "int(1,...)", "int(,)", "int()", "int(1)(2)",
	"\ufeffint(1)", "int(1)\ufeff", "int(\ufeff1)", "int(1) // c", "int(1) /* c */", "int(/**/1/**/)", "int(1) /* c", "/* c */ int(1)",
	"int(1);", "int(1) ;", "int(1)\r", "int\r(1)", "int(1)\x00", "int(1)\v", "int(1)\f",
	"[]byte(\"a\")", "[ ]byte(\"a\")", "[/**/]byte(\"a\")", "[]/**/byte(`a`)", "[...]byte(\"a\")", "[]byte.x(\"a\")", "[][]byte(\"a\")", "[](byte)(\"a\")", "[]pkg.byte(\"a\")", "[]*byte(\"a\")",
	"math.Float64frombits(1)", "math . Float64frombits ( 1 )", "(math).Float64frombits(1)", "math.Float64frombits(1.5)", "math.Float32frombits(-1)",
	"float64(+Inf)", "float64(-Inf)", "float64(!Inf)", "float64(^Inf)", "float64(&Inf)", "float64(~Inf)", "float64(<-Inf)", "float64(*Inf)", "float64(- Inf)", "float64(--Inf)", "float64(-(Inf))",
	"float64(Inf)", "float64(NaN)", "float64(-NaN)", "float32(0x10)", "float64(0x1p4)", "float64(0x.p1)", "float64(0x1.8p1)", "float64(1e)", "float64(1_e5)", "float64(1e_5)", "float64(._5)", "float64(.5)", "float64(5.)", "float64(1i)", "float64(01.5)", "float64(09.5)", "float64(09)",
	"int(0_1)", "int(08)", "int(0b102)", "int(0o8)", "int(0x)", "int(0x_1)", "int(1__0)", "int(1_)", "int(0b1.0)", "int(0o1e3)", "int(1e3)", "int(5x)", "int(٣)", "int(x٣)",
	"string(\"\\xff\")", "string(\"\xff\")", "string(`a\rb`)", "string(`\xff`)", "string(\"a\" \"b\")", "string(\"a\"+\"b\")", "string('a')", "string(\"\\400\")", "string(\"\\uD800\")", "string(\"\\q\")", "string(\"a)",
	"rune('\\'')", "rune('')", "rune('ab')", "byte('\\400')", "byte('\\377')", "rune('\\U00110000')", "rune('\xff')", "rune(-'a')",
	"bool(true)", "bool(false)", "bool(-true)", "bool(True)", "bool((true))", "bool(true...)",
	"ınt(1)", "func(1)", "map[int]int(1)", "int[T](1)", "int{1}", "int.(x)(1)", "x.(int)(1)", "int(a[1])", "int(a[1:2])", "int(1)?", "int(1) @", "“int(1)”", "int(1)$", "int(1)#",
	"int(1 2)", "int(1 +)", "int(1 + 2)", "int(1 &^ 2)", "int(1 &^= 2)", "int(1 := 2)", "int(-=1)", "int(+=1)", "int(++1)", "int(!=1)", "int(1..)", "int(..1)", "int(~=1)",
}

// TestParseLineAsGoParser: a corpus line is a value exactly when go/parser's
// reading of it makes one (the toolchain's), and the same value. (The checks
// of a line's expression are the toolchain's, held to it by TestUnmarshal,
// TestUnmarshalErrors and TestToolchainReadsMarshal.)
func TestParseLineAsGoParser(t *testing.T) {
	for _, line := range lineCases {
		checkLine(t, line)
	}
	for _, tt := range marshalTests {
		for line := range strings.SplitSeq(tt.want, "\n") {
			checkLine(t, line)
		}
	}
}

func checkLine(t *testing.T, line string) {
	t.Helper()
	got, err := parseCorpusValue(line)
	var want any
	n, werr := goParserNode(line)
	if werr == nil {
		want, werr = corpusValue(n)
	}
	switch {
	case (err == nil) != (werr == nil):
		t.Errorf("line %q: value %v, error %v; go/parser's reading: value %v, error %v", line, got, err, want, werr)
	case err == nil && !sameValue(got, want):
		t.Errorf("line %q: value %#v, go/parser's reading %#v", line, got, want)
	}
}

// FuzzParseLineAsGoParser holds parseLine to go/parser.
func FuzzParseLineAsGoParser(f *testing.F) {
	for _, line := range lineCases {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			return // a corpus line has none
		}
		checkLine(t, line)
	})
}

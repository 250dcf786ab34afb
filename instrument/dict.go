package instrument

import (
	"encoding/binary"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// Literals extracts dictionary tokens from a Go source file: string literals (2 to
// 64 bytes), and integer literals of 16 bits or more, as decimal text and as little- and
// big-endian bytes of the smallest width that holds them. Parsers compare their
// input against exactly such constants.
func Literals(filename string, src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok {
			return true
		}
		switch lit.Kind {
		case token.STRING:
			if s, err := strconv.Unquote(lit.Value); err == nil && len(s) >= 2 && len(s) <= 64 {
				add(s)
			}
		case token.INT:
			u, err := strconv.ParseUint(lit.Value, 0, 64)
			if err != nil || u < 256 {
				return true
			}
			add(strconv.FormatUint(u, 10))
			var le, be [8]byte
			binary.LittleEndian.PutUint64(le[:], u)
			binary.BigEndian.PutUint64(be[:], u)
			n := 8
			switch {
			case u <= 0xffff:
				n = 2
			case u <= 0xffffffff:
				n = 4
			}
			add(string(le[:n]))
			add(string(be[8-n:]))
		}
		return true
	})
	return out
}

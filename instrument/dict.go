package instrument

import (
	"encoding/binary"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// literals extracts dictionary tokens from a Go source file: string literals (2 to
// 64 bytes), and integer literals of 16 bits or more, as decimal text and as little- and
// big-endian bytes of the smallest width that holds them. Parsers compare their
// input against exactly such constants.
//
// It also takes the keys a decoder looks for in a document: the names in struct
// tags (`json:"name"`, `toml:"name,omitempty"`) and the field names themselves, as
// written and in lower case (the defaults of encoding/json, yaml and toml). A
// decoder matches them through a map lookup or reflection, which no comparison
// hook sees.
func literals(filename string, src []byte) []string {
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
		if st, ok := n.(*ast.StructType); ok {
			for _, k := range fieldKeys(st) {
				add(k)
			}
			return true
		}
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

// fieldKeys returns the document keys a struct's fields decode from: each tag
// value's name part, and each exported field's name as written and lower-cased.
func fieldKeys(st *ast.StructType) []string {
	var keys []string
	add := func(k string) {
		if len(k) >= 2 && len(k) <= 64 {
			keys = append(keys, k)
		}
	}
	for _, fld := range st.Fields.List {
		for _, name := range fld.Names {
			if name.IsExported() {
				add(name.Name)
				add(strings.ToLower(name.Name))
			}
		}
		if fld.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(fld.Tag.Value)
		if err != nil {
			continue
		}
		for _, v := range tagValues(tag) {
			if name, _, _ := strings.Cut(v, ","); name != "-" {
				add(name)
			}
		}
	}
	return keys
}

// tagValues returns the values of a struct tag in the conventional
// `key:"value" key2:"value2"` form, stopping at the first malformed pair.
func tagValues(tag string) []string {
	var vals []string
	for tag != "" {
		tag = strings.TrimLeft(tag, " ")
		colon := strings.Index(tag, `:"`)
		if colon <= 0 || strings.ContainsAny(tag[:colon], " \"\t") {
			break
		}
		rest := tag[colon+1:]
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			break
		}
		v, err := strconv.Unquote(rest[:end+1])
		if err != nil {
			break
		}
		vals = append(vals, v)
		tag = rest[end+1:]
	}
	return vals
}

// maxDict bounds the literals collected for the dictionary.
const maxDict = 4096

// shareDict merges the packages' literals, without duplicates, taking one from
// each package in turn until max: a dependency with a table of thousands of
// strings (HTML's entity names) must not crowd out the literals of the others, as
// taking them in order until max did.
func shareDict(perPkg [][]string, max int) []string {
	var out []string
	seen := map[string]bool{}
	next := make([]int, len(perPkg))
	for more := true; more && len(out) < max; {
		more = false
		for p, lits := range perPkg {
			for next[p] < len(lits) && len(out) < max {
				s := lits[next[p]]
				next[p]++
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
					more = true
					break
				}
			}
		}
	}
	return out
}

package instrument

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"go/ast"
	gobuild "go/build"
	"go/parser"
	"go/token"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// cmpCase is one package to instrument with comparison hooks: x.go (index
// 0) and the other files (indices 1, 2, ... in name order). It must compile
// and, unless unreachable is set (the original has dead code), be vet-clean.
type cmpCase struct {
	desc        string
	src         string            // x.go
	others      map[string]string // other files of the package
	sites       int               // expected sites in x.go; -1 to skip the check
	want        []string          // in x.go's output
	not         []string          // not in x.go's output
	unreachable bool
	vars        bool // CmpOptions.Vars
}

var cmpCases = []cmpCase{
	{
		desc: "divisors (Vars)",
		vars: true,
		src: `package p

type dur int64

type pair struct{ lo, hi uint32 }

const half = 2

var global = 3

func f(a, b uint32, d dur, x float64, n int, p pair, s []int) uint32 {
	q := a / b
	r := a % (b + 1)
	_ = d / d
	_ = x / x
	_ = a / p.hi
	_ = n / s[0]
	_ = n / b2(n)
	_ = n / global
	_ = a / 2
	_ = n / half
	_ = n / (half + 1)
	_ = n / other
	const local = 4
	_ = n / local
	for i := 0; i < n/b2(n); i++ {
	}
	return q + r + 7/3
}

func b2(n int) int { return n }
`,
		others: map[string]string{"y.go": "package p\n\nconst other = 5\n"},
		sites:  8,
		want:   []string{"q := a / FuzzlsDiv_", ", b)", ", (b + 1))", ", d)", ", x)", ", p.hi)", ", s[0])", ", b2(n))", ", global)"},
		not:    []string{", 2)", ", half)", ", (half + 1))", ", other)", ", local)", ", 3)"},
	},
	{
		desc: "two typed operands (Vars)",
		vars: true,
		src: `package p

type hdr struct{ sum uint32 }

func f(h hdr, b []byte, n int, s, t string) bool {
	c := uint32(n)
	for i := 0; i < n; i++ {
	}
	if len(b) > n || n <= cap(b) {
		return false
	}
	if h.sum != c {
		return false
	}
	return s < t
}
`,
		sites: 2,
		want:  []string{"h.sum, c) == true", "s, t) == true"},
		not:   []string{"i, n)", "len(b), n)", "n, cap(b))"},
	},
	{
		desc: "interface operands",
		src: `package p

func f(v any, e error) bool {
	var w interface{} = 3
	return v == 5 || v != "x" || 7 == w || e == nil || v == nil
}
`,
		sites: 3,
		want:  []string{`FuzzlsEq_0(0, v, 5) == true`, `FuzzlsNe_0(1, v, "x") == true`, `FuzzlsEq_0(2, 7, w) == true`, `e == nil`, `v == nil`},
	},
	{
		desc: "named types, named booleans",
		src: `package p

import "time"

type Kind uint8

type Flag bool

type Config struct {
	Verbose Flag
	Kind    Kind
}

func f(k Kind, c *Config, d time.Duration) Flag {
	var on Flag = k == 3
	on = on && k != 4 || c.Verbose && c.Kind > 7
	c.Verbose = d >= 2*time.Second || d < 0
	if k <= 1 == bool(on) {
		return !on
	}
	return on || k == 'x'
}
`,
		sites: 6,
		want:  []string{`var on Flag = FuzzlsEq_0(0, k, 3) == true`, `FuzzlsGt_0(2, c.Kind, 7) == true`, `d >= 2*time.Second || FuzzlsLt_0(3, d, 0) == true`, `FuzzlsLe_0(4, k, 1) == true == bool(on)`},
		not:   []string{`2*time.Second) == true`},
	},
	{
		desc: "untyped constants of other files",
		src: `package p

func f(x uint32, y uint16, s string, fl float64) bool {
	return x == Magic || s != Name || x > Shifted || fl < Ratio || y == Typed || y == Second || x == Local ||
		Magic == Shifted || x == Magic+1 || -Magic < int64(x)
}

var _ = [Shifted]int{}
`,
		others: map[string]string{"consts.go": `package p

const (
	Magic   = 0x5A17
	Name    = "fuzz"
	Shifted = Magic << 2
	Ratio   = 1.5
)

const Typed uint16 = 7

const (
	First = iota + 1
	Second
)

var Local uint32 = 3
`},
		sites: 7,
		want: []string{`FuzzlsEq_0(0, x, Magic) == true`, `FuzzlsNe_0(1, s, Name) == true`, `FuzzlsGt_0(2, x, Shifted) == true`,
			`FuzzlsLt_0(3, fl, Ratio) == true`, `y == Typed`, `FuzzlsEq_0(4, y, Second) == true`, `x == Local`,
			`Magic == Shifted`, `FuzzlsEq_0(5, x, Magic+1) == true`, `FuzzlsLt_0(6, -Magic, int64(x)) == true`},
	},
	{
		desc: "shadowed constant names",
		src: `package p

const Max = 10

func f(Max int) bool { return Max == 5 }

func g(x int) bool {
	if x > 0 {
		Max := 3
		x += Max
	}
	return x == Max
}

func h(x int) bool {
	return func() bool { return x == Max }()
}

func k(x int) bool {
	return func(Max int) bool { return x == Max }(x)
}
`,
		sites: 3,
		want: []string{`FuzzlsEq_0(0, Max, 5) == true`, `FuzzlsGt_0(1, x, 0) == true`, `return x == Max` + "\n}",
			`FuzzlsEq_0(2, x, Max) == true }()`, `return x == Max }(x)`},
	},
	{
		desc: "nil, true, false and constant operands left alone",
		src: `package p

func f(p *int, b bool, err error, m map[string]int) bool {
	const k = 5
	return p == nil || nil != p || b == true || false != b || err != nil || m == nil || 1 == 2 || "a" < "b" || k == 5
}
`,
		sites: 1,
		want:  []string{`p == nil || nil != p || b == true || false != b || err != nil || m == nil || 1 == 2 || "a" < "b" || FuzzlsEq_0(0, k, 5) == true`},
	},
	{
		desc: "constant contexts",
		src: `package p

const big = 10 > 5

const (
	a = 1 << iota
	b
	c = a == 1
)

func f(x int, flag bool) [2 << 1]bool {
	const local = big == true && 3 < 4
	var arr [len("abc") + 1]byte
	_ = arr
	switch flag {
	case x == 5:
		return [4]bool{}
	case x > 10, local:
	}
	return [2 << 1]bool{x == 3}
}
`,
		sites: 1,
		want:  []string{`const big = 10 > 5`, `c = a == 1`, `const local = big == true && 3 < 4`, `case x == 5:`, `case x > 10, local:`, `[2 << 1]bool{FuzzlsEq_0(0, x, 3) == true}`},
	},
	{
		desc: "character ranges, floats, strings",
		src: `package p

type Method string

func f(c byte, r rune, fl float64, f32 float32, s string, m Method) int {
	n := 0
	if 'a' <= c && c <= 'z' || '0' <= r && r <= '9' {
		n++
	}
	if fl < 0.5 || fl >= -1e3 || f32 > +2.25 || fl == (1.0) {
		n++
	}
	if s == "GET" || s < "m" || m == "POST" || s[0] == '/' || s != ` + "`raw`" + ` {
		n++
	}
	return n
}
`,
		sites: 13,
		want: []string{`FuzzlsLe_0(0, 'a', c) == true && FuzzlsLe_0(1, c, 'z') == true`, `FuzzlsGe_0(5, fl, -1e3) == true`, `FuzzlsGt_0(6, f32, +2.25) == true`,
			`FuzzlsEq_0(7, fl, (1.0)) == true`, `FuzzlsEq_0(10, m, "POST") == true`, `FuzzlsEq_0(11, s[0], '/') == true`, "FuzzlsNe_0(12, s, `raw`) == true"},
	},
	{
		desc: "tagless switch, switch tags, type switches",
		src: `package p

func f(c byte, v any, s []byte) int {
	switch {
	case c == '"':
		return 1
	case '0' <= c && c <= '9', c == 'x':
		return 2
	}
	switch c == 'y' {
	case true:
		return 3
	}
	switch x := v.(type) {
	case int:
		if x == 4 {
			return 4
		}
	case [2]int:
	}
	switch s[0] {
	case 5:
	}
	switch n := len(s); n {
	case 6:
	}
	switch f2(s) {
	case 7:
	}
	return 0
}

func f2(s []byte) int { return len(s) }
`,
		sites: 9,
		want: []string{`case FuzzlsEq_0(0, c, '"') == true:`, `case FuzzlsLe_0(1, '0', c) == true && FuzzlsLe_0(2, c, '9') == true, FuzzlsEq_0(3, c, 'x') == true:`,
			`switch FuzzlsEq_0(4, c, 'y') == true {`, `FuzzlsEq_0(5, x, 4) == true`,
			`switch FuzzlsSwitch_0(6, s[0], 5) {`, `switch n := len(s); FuzzlsSwitch_0(7, n, 6) {`, `switch FuzzlsSwitch_0(8, f2(s), 7) {`},
	},
	{
		desc: "switch on a selector with mixed cases",
		src: `package p

type Kind int

const K Kind = 9

type hdr struct{ in struct{ kind Kind } }

func f(h *hdr, other Kind) int {
	switch h.in.kind {
	case 1, other, Magic:
		return 1
	case 2 + 1, K:
		return 2
	case 'z':
	default:
	}
	return 0
}
`,
		others: map[string]string{"c.go": "package p\n\nconst Magic = 0x40\n"},
		sites:  4,
		want:   []string{"{FuzzlsCounters_0[0]++;\n\tswitch FuzzlsSwitch_0(0, h.in.kind, 1, Magic, 2 + 1, 'z') {"},
	},
	{
		desc: "labeled switches",
		src: `package p

func f(k int, xs []int) int {
	n := 0
outer:
	for _, x := range xs {
	sw:
		switch x {
		case 1:
			break sw
		case 2:
			continue outer
		case 3:
			break outer
		}
		n++
	}
L1:
L2:
	switch k {
	case 4:
		k++
		goto L1
	case 5:
		break L2
	}
	return n
}

func g(k int) int {
	if k > 0 {
		goto L
	}
	k++
	goto L
L:
	switch k {
	case 1:
		return 1
	}
	return 0
}
`,
		sites: 6,
		want: []string{"sw:\n\t\tswitch FuzzlsSwitch_0(0, x, 1, 2, 3) {", "FuzzlsCounters_0[1]++;L1:\nL2:\n\tswitch FuzzlsSwitch_0(3, k, 4, 5) {",
			"FuzzlsGt_0(5, k, 0) == true", "goto L\nL:\n\tswitch k {"},
	},
	{
		desc: "switch in dead code",
		src: `package p

func f(k int) int {
	return 0
	switch k {
	case 1:
	}
	return 1
}
`,
		sites:       0,
		not:         []string{"FuzzlsSwitch_0("},
		unreachable: true,
	},
	{
		desc: "encoding/binary and hash/crc32 results against variables",
		src: `package p

import (
	bin "encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"hash/crc64"
)

type summer struct{}

func (summer) ChecksumIEEE(b []byte) uint32 { return 0 }

func f(b []byte, want uint32, n16 uint16, n64 uint64, tab *crc32.Table, tab64 *crc64.Table) bool {
	sum := crc32.ChecksumIEEE(b[4:])
	return bin.LittleEndian.Uint32(b) == want || sum != crc32.ChecksumIEEE(b) ||
		crc32.Checksum(b, tab) == bin.BigEndian.Uint32(b[4:]) || bin.BigEndian.Uint16(b) < n16 ||
		n64 == bin.LittleEndian.Uint64(b) || adler32.Checksum(b) == want || crc64.Checksum(b, tab64) != n64 ||
		bin.NativeEndian.Uint32(b) == 0x0D0A1A0A || crc32.Update(want, tab, b) == sum
}

func g(crc32 summer, b []byte, x uint32) bool { return crc32.ChecksumIEEE(b) == x }
`,
		sites: 9,
		want: []string{`FuzzlsEq_0(0, bin.LittleEndian.Uint32(b), uint32(want)) == true`, `FuzzlsNe_0(1, uint32(sum), crc32.ChecksumIEEE(b)) == true`,
			`FuzzlsEq_0(2, crc32.Checksum(b, tab), bin.BigEndian.Uint32(b[4:])) == true`, `FuzzlsLt_0(3, bin.BigEndian.Uint16(b), uint16(n16)) == true`,
			`FuzzlsEq_0(4, uint64(n64), bin.LittleEndian.Uint64(b)) == true`, `FuzzlsNe_0(6, crc64.Checksum(b, tab64), uint64(n64)) == true`,
			`FuzzlsEq_0(7, bin.NativeEndian.Uint32(b), 0x0D0A1A0A) == true`, `return crc32.ChecksumIEEE(b) == x }`},
	},
	{
		desc: "bytes and strings functions",
		src: `package p

import (
	"bytes"
	str "strings"
)

func pair() ([]byte, []byte) { return nil, nil }

type Name string

func f(b []byte, s string, n Name) int {
	eq := bytes.Equal
	n0 := 0
	if bytes.Equal(b, []byte("x")) || bytes.HasPrefix(b, nil) || bytes.HasSuffix(b, b[1:]) || bytes.Contains(b, []byte{1}) ||
		bytes.EqualFold(b, []byte("A")) || eq(b, b) || bytes.Equal(pair()) || bytes.Index(b, []byte("\r\n")) >= 0 {
		n0++
	}
	if bytes.Compare(b, []byte("m")) < 0 || str.Compare(s, "m") == 0 || str.HasPrefix(s, "GET ") || str.HasSuffix(s, string(n)) ||
		str.Contains(s, "\n") || str.Index(s, ":") > 2 || str.EqualFold(s, "Host") || str.HasPrefix(string(n), "x") {
		n0++
	}
	defer str.Contains(s, "d")
	go bytes.Equal(b, b)
	return n0 + bytes.
		Index(b, b)
}
`,
		sites: 20,
		want: []string{`eq := bytes.Equal`, `FuzzlsBytesEqual_0(0, b, []byte("x"))`, `eq(b, b)`, `bytes.Equal(pair())`,
			`FuzzlsGe_0(5, FuzzlsBytesIndex_0(6, b, []byte("\r\n")), 0) == true`, `FuzzlsLt_0(7, FuzzlsBytesCompare_0(8, b, []byte("m")), 0) == true`,
			`FuzzlsStringsHasPrefix_0(11, s, "GET ")`, `defer FuzzlsStringsContains_0(18, s, "d")`, `go FuzzlsBytesEqual_0(19, b, b)`,
			"return n0 + bytes.\n\t\tIndex(b, b)", "return str.HasPrefix(fuzzlsA, fuzzlsB)"},
	},
	{
		desc: "dot imports and local names like packages",
		src: `package p

import (
	. "bytes"
	"strings"
)

type finder struct{}

func (finder) HasPrefix(a, b string) bool { return false }

func f(b []byte, s string) bool {
	if strings := (finder{}); strings.HasPrefix(s, "x") {
		return true
	}
	return HasPrefix(b, []byte("y")) || strings.HasSuffix(s, "z")
}
`,
		sites: 1,
		want:  []string{`strings.HasPrefix(s, "x")`, `HasPrefix(b, []byte("y"))`, `FuzzlsStringsHasSuffix_0(0, s, "z")`},
	},
	{
		desc: "operands with side effects, nesting, layout",
		src: `package p

var calls int

func next() int { calls++; return calls }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func f(m map[string]int, x, y int) bool {
	return next() == 1 && m["k"] == 5 || b2i(x == 1) == 2 || (x == 1) == (y == 2) ||
		x /* c */ == 5 || x==6 || y !=
		7 || x == // c
		8
}
`,
		sites: 10,
		want: []string{`FuzzlsEq_0(0, next(), 1) == true && FuzzlsEq_0(1, m["k"], 5) == true`, `FuzzlsEq_0(2, b2i(FuzzlsEq_0(3, x, 1) == true), 2) == true`,
			`(FuzzlsEq_0(4, x, 1) == true) == (FuzzlsEq_0(5, y, 2) == true)`, `FuzzlsEq_0(6, x /* c */ , 5) == true`, `FuzzlsEq_0(7, x, 6) == true`,
			"FuzzlsNe_0(8, y,\n\t\t7) == true", "FuzzlsEq_0(9, x, // c\n\t\t8) == true"},
	},
	{
		desc: "generic code",
		src: `package p

type Number interface{ ~int | ~int64 | ~float64 }

func Abs[T Number](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

func Count[T ~string | ~[]byte](xs []T) (n int) {
	for _, x := range xs {
		if len(x) == 0 {
			n++
		}
	}
	return
}

type Set[K comparable] map[K]bool

func (s Set[K]) Has(k K) bool { return s[k] == true }

func IsZero[T interface{ ~int | ~uint8 }](x T) bool { return x == 0 }
`,
		sites: 3,
		want:  []string{`FuzzlsLt_0(0, x, 0) == true`, `FuzzlsEq_0(1, len(x), 0) == true`, `s[k] == true`, `FuzzlsEq_0(2, x, 0) == true`},
	},
	{
		desc: "package-level initializers and function literals",
		src: `package p

import "os"

var big = len(os.Args) > 3

var arr = [...]int{1, 2}

var two = len(arr) == 2

var check = func(x int) bool { return x == Magic }

var table = map[bool]string{len(os.Args) == 1: "one"}

const Magic = 7

func init() {
	if !big && two == check(Magic) {
		println(table[len(os.Args) == 1])
	}
}
`,
		sites: 5,
		want: []string{`var big = FuzzlsGt_0(0, len(os.Args), 3) == true`, `var two = FuzzlsEq_0(1, len(arr), 2) == true`, `return FuzzlsEq_0(2, x, Magic) == true }`,
			`FuzzlsEq_0(3, len(os.Args), 1) == true: "one"`},
	},
	{
		desc: "redeclared true and uint32",
		src: `package p

import "hash/crc32"

func f(x int) bool {
	true := x > 1
	return true || x == 2
}

func g(b []byte, x uint32) bool {
	type uint32 = int
	return crc32.ChecksumIEEE(b) == x
}

func h(x int) bool { return x == 3 }
`,
		sites: 1,
		want:  []string{`true := x > 1`, `x == 2`, `crc32.ChecksumIEEE(b) == x`, `FuzzlsEq_0(0, x, 3) == true`},
	},
	{
		desc: "exit hooks, counters and comparisons together",
		src: `package p

import (
	"log"
	"os"
	"strings"
)

func f(code int, s string, ch chan int) {
	if code == 1 {
		os.Exit(code)
	}
	if strings.HasPrefix(s, "fatal") {
		log.Fatal(s == "fatal")
	}
	switch code {
	case 2:
		os.Exit(2)
	}
	if code == 3 {
		println(3)
	} else if s != "x" {
		println(4)
	}
	select {
	case v := <-ch:
		switch s {
		case "a":
		}
		if v := v + 1; v == 4 {
			println(v)
		}
	default:
	}
}
`,
		sites: 8,
		want: []string{`if FuzzlsEq_0(0, code, 1) == true {FuzzlsCounters_0[5]++;`, `FuzzlsExitHook_0();log.Fatal(FuzzlsEq_0(2, s, "fatal") == true)`,
			"FuzzlsCounters_0[2]++;switch FuzzlsSwitch_0(3, code, 2) {", `; if FuzzlsNe_0(5, s, "x") == true {`,
			`switch FuzzlsSwitch_0(6, s, "a") {`, `if v := v + 1; FuzzlsEq_0(7, v, 4) == true {`},
	},
}

// cmpRewritePkg instruments the files of a case. It returns the outputs and
// site counts by file name.
func cmpRewritePkg(t *testing.T, desc string, files map[string]string, vars bool) (map[string][]byte, map[string]int) {
	t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	sort.SliceStable(names, func(i, j int) bool { return names[i] == "x.go" }) // x.go gets index 0
	var parsed []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(token.NewFileSet(), name, files[name], parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %s: %v", desc, name, err)
		}
		parsed = append(parsed, f)
	}
	opts := cmpOptions{UntypedConsts: packageUntypedConsts(parsed), Vars: vars}
	outs, sites := map[string][]byte{}, map[string]int{}
	for i, name := range names {
		outs[name], sites[name] = cmpRewriteOK(t, desc+": "+name, files[name], i, opts)
	}
	return outs, sites
}

// cmpRewriteOK rewrites src with comparison hooks and checks the invariants
// that hold for any input.
func cmpRewriteOK(t *testing.T, desc, src string, idx int, opts cmpOptions) ([]byte, int) {
	t.Helper()
	out, blocks, sites, err := rewriteFileCmp("x.go", []byte(src), tid(idx), opts)
	if err != nil {
		t.Fatalf("%s: rewriteFileCmp: %v", desc, err)
	}
	out2, blocks2, sites2, err := rewriteFileCmp("x.go", []byte(src), tid(idx), opts)
	if err != nil || !bytes.Equal(out, out2) || !reflect.DeepEqual(blocks, blocks2) || sites != sites2 {
		t.Errorf("%s: not deterministic", desc)
	}
	_, coverBlocks, err := RewriteFile("x.go", []byte(src), tid(idx))
	if err != nil || !reflect.DeepEqual(blocks, coverBlocks) {
		t.Errorf("%s: blocks differ from RewriteFile's", desc)
	}

	fset := token.NewFileSet()
	origFile, err := parser.ParseFile(fset, "orig.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	outFile, err := parser.ParseFile(fset, "x.go", out, parser.ParseComments)
	if err != nil {
		t.Fatalf("%s: output does not parse: %v\n%s", desc, err, out)
	}

	// Nothing but declarations after the original text, which keeps its
	// number of lines; they start with a //line directive so that no stack
	// points into them as if they were the user's file.
	declStart := bytes.LastIndex(out, []byte("\n//line zz_fuzzls_instrumentation.go:1\nvar "+counterVar(tid(idx))+" ["))
	if declStart < 0 {
		t.Fatalf("%s: no //line directive and counter declaration:\n%s", desc, out)
	}
	if got, want := bytes.Count(out[:declStart], []byte("\n")), strings.Count(src, "\n"); got != want {
		t.Errorf("%s: %d lines before the declarations, want %d", desc, got, want)
	}
	for _, d := range outFile.Decls[len(origFile.Decls):] {
		var name string
		switch d := d.(type) {
		case *ast.FuncDecl:
			name = d.Name.Name
		case *ast.GenDecl:
			switch s := d.Specs[0].(type) {
			case *ast.ValueSpec:
				name = s.Names[0].Name
			case *ast.TypeSpec:
				name = s.Name.Name
			}
		}
		if !strings.HasPrefix(name, "Fuzzls") || !strings.HasSuffix(name, "_"+strconv.Itoa(idx)) {
			t.Errorf("%s: unexpected declaration %s", desc, name)
		}
	}
	for _, name := range []string{cmpOnVar(tid(idx)), cmpHookVar(tid(idx))} {
		if outFile.Scope.Lookup(name) == nil {
			t.Errorf("%s: %s not declared", desc, name)
		}
	}

	checkCmpItems(t, desc, fset, origFile, outFile)
	if a, b := cmpStmtLines(fset, origFile, len(origFile.Decls)), cmpStmtLines(fset, outFile, len(origFile.Decls)); !reflect.DeepEqual(a, b) {
		t.Errorf("%s: statement lines differ:\noriginal:  %v\nrewritten: %v", desc, a, b)
	}
	checkCmpSites(t, desc, fset, outFile, len(origFile.Decls), sites)
	return out, sites
}

var (
	cmpHelperRE  = regexp.MustCompile(`^Fuzzls(Eq|Ne|Lt|Le|Gt|Ge)_\d+$`)
	cmpWrapperRE = regexp.MustCompile(`^Fuzzls(Bytes|Strings)(\w+)_\d+$`)
	cmpSwitchRE  = regexp.MustCompile(`^FuzzlsSwitch_\d+$`)
	cmpDivRE     = regexp.MustCompile(`^FuzzlsDiv_\d+$`)
)

func cmpCallName(e ast.Expr, re *regexp.Regexp) (*ast.CallExpr, []string) {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return nil, nil
	}
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return nil, nil
	}
	m := re.FindStringSubmatch(id.Name)
	if m == nil {
		return nil, nil
	}
	return call, m
}

// isInserted reports whether s is a counter or exit hook statement.
func isInserted(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.IncDecStmt:
		if ix, ok := s.X.(*ast.IndexExpr); ok {
			if id, ok := ix.X.(*ast.Ident); ok && strings.HasPrefix(id.Name, "FuzzlsCounters_") {
				return true
			}
		}
	case *ast.ExprStmt:
		if c, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && strings.HasPrefix(id.Name, "FuzzlsExitHook_") {
				return true
			}
		}
	}
	return false
}

type cmpItem struct {
	text string
	line int
}

// cmpItems lists the identifiers and literals of the first n declarations
// of f with their physical lines. In rewritten code, the inserted statements,
// helper names, site numbers and "== true" are left out (and a switch
// helper's copy of the literal cases), a wrapper call's callee is
// "WRAP:<function>" and an inserted conversion may be "CONV:<type>".
func cmpItems(fset *token.FileSet, f *ast.File, n int) []cmpItem {
	var items []cmpItem
	add := func(text string, p token.Pos) {
		items = append(items, cmpItem{text, fset.PositionFor(p, false).Line})
	}
	var visit func(ast.Node)
	visit = func(root ast.Node) {
		ast.Inspect(root, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				add(n.Name, n.Pos())
			case *ast.BasicLit:
				add(n.Value, n.Pos())
			case ast.Stmt:
				return !isInserted(n)
			case *ast.BinaryExpr:
				call, _ := cmpCallName(n.X, cmpHelperRE)
				if id, ok := n.Y.(*ast.Ident); !ok || call == nil || n.Op != token.EQL || id.Name != "true" || len(call.Args) != 3 {
					break
				}
				for _, a := range call.Args[1:] {
					if conv, ok := a.(*ast.CallExpr); ok && len(conv.Args) == 1 {
						if id, ok := conv.Fun.(*ast.Ident); ok && (id.Name == "uint16" || id.Name == "uint32" || id.Name == "uint64") {
							add("CONV:"+id.Name, id.Pos())
							visit(conv.Args[0])
							continue
						}
					}
					visit(a)
				}
				return false
			case *ast.CallExpr:
				if call, m := cmpCallName(n, cmpSwitchRE); m != nil && len(call.Args) >= 3 {
					visit(call.Args[1])
					return false
				}
				if call, m := cmpCallName(n, cmpDivRE); m != nil && len(call.Args) == 2 {
					visit(call.Args[1])
					return false
				}
				if _, m := cmpCallName(n, cmpWrapperRE); m != nil {
					add("WRAP:"+m[2], n.Fun.Pos())
					for _, a := range n.Args[1:] {
						visit(a)
					}
					return false
				}
			}
			return true
		})
	}
	visit(f.Name)
	for _, d := range f.Decls[:n] {
		visit(d)
	}
	return items
}

// checkCmpItems checks that every identifier and literal of the original
// is in the output, in order, on its original line.
func checkCmpItems(t *testing.T, desc string, fset *token.FileSet, orig, out *ast.File) {
	t.Helper()
	a, b := cmpItems(fset, orig, len(orig.Decls)), cmpItems(fset, out, len(orig.Decls))
	i := 0
	for j := 0; j < len(b); j++ {
		switch {
		case strings.HasPrefix(b[j].text, "WRAP:"):
			if i+1 >= len(a) || a[i+1].text != b[j].text[len("WRAP:"):] || a[i].line != b[j].line || a[i+1].line != b[j].line {
				t.Fatalf("%s: wrapper %v does not match %v", desc, b[j], a[i:min(i+2, len(a))])
			}
			i += 2
		case strings.HasPrefix(b[j].text, "CONV:"):
			if i < len(a) && a[i].text == b[j].text[len("CONV:"):] && a[i].line == b[j].line {
				i++ // the original's own conversion
			}
		case i < len(a) && a[i] == b[j]:
			i++
		default:
			t.Fatalf("%s: item %d: rewritten %v, original %v", desc, j, b[j], a[i:min(i+1, len(a))])
		}
	}
	if i != len(a) {
		t.Fatalf("%s: original items from %v missing in the output", desc, a[i])
	}
}

// cmpStmtLines lists the statements (but blocks and inserted ones) of the
// first n declarations of f with their lines.
func cmpStmtLines(fset *token.FileSet, f *ast.File, n int) []coverStmtLine {
	var list []coverStmtLine
	for _, d := range f.Decls[:n] {
		ast.Inspect(d, func(n ast.Node) bool {
			s, ok := n.(ast.Stmt)
			if !ok {
				return true
			}
			if _, ok := s.(*ast.BlockStmt); ok {
				return true
			}
			if isInserted(s) {
				return false
			}
			list = append(list, coverStmtLine{fmt.Sprintf("%T", s), fset.PositionFor(s.Pos(), false).Line})
			return true
		})
	}
	return list
}

// checkCmpSites checks that the site ids are 0, 1, ... in source order, and
// that every switch helper call is the tag of a switch statement.
func checkCmpSites(t *testing.T, desc string, fset *token.FileSet, f *ast.File, n, sites int) {
	t.Helper()
	next := 0
	site := func(call *ast.CallExpr, count int) {
		lit, ok := call.Args[0].(*ast.BasicLit)
		if k, err := strconv.Atoi(lit.Value); !ok || err != nil || k != next {
			t.Errorf("%s: site %s, want %d", desc, lit.Value, next)
		}
		next += count
	}
	tags := map[ast.Expr]bool{}
	for _, d := range f.Decls[:n] {
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SwitchStmt:
				tags[n.Tag] = true
			case *ast.CallExpr:
				if call, m := cmpCallName(n, cmpHelperRE); m != nil {
					site(call, 1)
				} else if call, m := cmpCallName(n, cmpWrapperRE); m != nil {
					site(call, 1)
				} else if call, m := cmpCallName(n, cmpDivRE); m != nil {
					site(call, 1)
				} else if call, m := cmpCallName(n, cmpSwitchRE); m != nil {
					site(call, len(call.Args)-2)
					if !tags[n] {
						t.Errorf("%s: switch helper at %v is not a switch tag", desc, fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	}
	if next != sites {
		t.Errorf("%s: %d sites used, %d reported", desc, next, sites)
	}
}

func (c cmpCase) files() map[string]string {
	files := map[string]string{"x.go": c.src}
	for name, src := range c.others {
		files[name] = src
	}
	return files
}

func TestCmpRewriteCases(t *testing.T) {
	for _, c := range cmpCases {
		outs, sites := cmpRewritePkg(t, c.desc, c.files(), c.vars)
		out := string(outs["x.go"])
		show := out
		if i := strings.Index(out, "\nvar FuzzlsCounters_"); i >= 0 {
			show = out[:i] // the original part
		}
		if c.sites >= 0 && sites["x.go"] != c.sites {
			t.Errorf("%s: %d sites, want %d\n%s", c.desc, sites["x.go"], c.sites, show)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q\n%s", c.desc, w, show)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: output has %q\n%s", c.desc, w, show)
			}
		}
	}
}

// TestCmpCompiles builds and vets every case, one package each.
func TestCmpCompiles(t *testing.T) {
	goTool := coverGoTool(t)
	dir := t.TempDir()
	coverWriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.26\n")
	var vet []string
	for i, c := range cmpCases {
		outs, _ := cmpRewritePkg(t, c.desc, c.files(), c.vars)
		pkg := fmt.Sprintf("p%d", i)
		for name, out := range outs {
			coverWriteFile(t, filepath.Join(dir, pkg, name), string(out))
		}
		if !c.unreachable {
			vet = append(vet, "./"+pkg)
		}
	}
	coverRun(t, dir, goTool, "build", "./...")
	coverRun(t, dir, goTool, append([]string{"vet"}, vet...)...)
}

// TestCmpStdPackages instruments copies of standard library packages (those
// without internal imports) and builds and vets them.
func TestCmpStdPackages(t *testing.T) {
	goTool := coverGoTool(t)
	pkgs := []string{
		"bufio", "compress/bzip2", "compress/flate", "compress/gzip", "compress/lzw", "encoding/base32",
		"encoding/csv", "encoding/hex", "encoding/pem", "encoding/xml", "go/ast", "go/build/constraint",
		"go/constant", "go/doc/comment", "go/printer", "go/token", "html", "image/png", "mime",
		"net/mail", "regexp", "regexp/syntax", "text/scanner", "text/tabwriter", "text/template/parse",
	}
	dir := t.TempDir()
	coverWriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/std\n\ngo 1.26\n")
	var list []string
	total := 0
	for _, p := range pkgs {
		bp, err := gobuild.Default.Import(p, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, name := range bp.GoFiles {
			src, err := readFileString(filepath.Join(bp.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = src
		}
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		var parsed []*ast.File
		for _, name := range names {
			f, err := parser.ParseFile(token.NewFileSet(), name, files[name], parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
		}
		opts := cmpOptions{UntypedConsts: packageUntypedConsts(parsed)}
		for i, name := range names {
			out, sites := cmpRewriteOK(t, p+"/"+name, files[name], i, opts)
			total += sites
			coverWriteFile(t, filepath.Join(dir, filepath.FromSlash(p), name), string(out))
		}
		list = append(list, "./"+p)
	}
	t.Logf("%d comparison sites in %d packages", total, len(pkgs))
	if total < 1000 {
		t.Errorf("only %d sites", total)
	}
	coverRun(t, dir, goTool, append([]string{"vet"}, list...)...) // vet builds them too
}

func readFileString(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}

func TestPackageUntypedConsts(t *testing.T) {
	srcs := []string{`package p

const (
	A = 1
	B = A << 3
	C int = 2
	D = C + 1
	E, F = "e", 2.5
	G = iota
	H
	I = len("x")
	J = 1i
	K = -(A + Z) ^ 1
	L = A == 1
	_ = 5
)

const Dup = 1

var V = 1

func f() {
	const Local = 1
}
`, `package p

const Z = 0x10

const Dup int = 2

const Y = V
`}
	var files []*ast.File
	for i, s := range srcs {
		f, err := parser.ParseFile(token.NewFileSet(), fmt.Sprintf("f%d.go", i), s, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	got := packageUntypedConsts(files)
	want := map[string]bool{"A": true, "B": true, "E": true, "F": true, "G": true, "H": true, "K": true, "Z": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// cmpProg is instrumented by TestCmpRun; cmpMain (not instrumented) drives it.
const cmpProg = `package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
)

type Kind uint8

const Magic = 0x5A17C0DE

type header struct{ kind Kind }

var calls int

func next() int { calls++; return calls }

func check(b []byte, s string, v any, f float64) (res []string) {
	if binary.LittleEndian.Uint32(b) == Magic {
		res = append(res, "magic")
	}
	sum := binary.BigEndian.Uint32(b[4:8])
	if crc32.ChecksumIEEE(b[:4]) != sum {
		res = append(res, "badsum")
	}
	if strings.HasPrefix(s, "FUZZ") {
		res = append(res, "prefix")
	}
	if bytes.Equal(b[8:10], []byte("AB")) {
		res = append(res, "AB")
	}
	h := header{kind: Kind(b[10])}
	switch h.kind {
	case 1, 2:
		res = append(res, "k12")
	case 3:
		res = append(res, "k3")
	}
	if v == 5 {
		res = append(res, "v5")
	}
	if f < 2.5 {
		res = append(res, "small")
	}
	if c := s[0]; 'a' <= c && c <= 'z' {
		res = append(res, "lower")
	}
	if next() == 1 && next() == 2 {
		res = append(res, "next")
	}
	return res
}
`

const cmpMain = `package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
)

func main() {
	if os.Args[1] == "on" {
		*FuzzlsCmpOn_0 = true
		FuzzlsCmpHook_0 = func(site int, a, b any) {
			fmt.Printf("CMP %d %T %#v %T %#v\n", site, a, a, b, b)
		}
	} else {
		FuzzlsCmpHook_0 = func(site int, a, b any) { panic("hook called") }
	}
	b := binary.LittleEndian.AppendUint32(nil, 0x5A17C0DE)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(b, "AB"...)
	b = append(b, 2)
	fmt.Println("RES", check(b, "FUZZme", 5, 1), calls)
	fmt.Println("RES", check([]byte("ABCDEFGHxy\x09"), "abc", "str", 3), calls)
}
`

func TestCmpRun(t *testing.T) {
	goTool := coverGoTool(t)
	out, sites := cmpRewriteOK(t, "program", cmpProg, 0, cmpOptions{UntypedConsts: map[string]bool{"Magic": true}})
	if sites != 13 {
		t.Errorf("%d sites, want 13\n%s", sites, out)
	}
	dir := t.TempDir()
	coverWriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/prog\n\ngo 1.26\n")
	coverWriteFile(t, filepath.Join(dir, "prog.go"), string(out))
	coverWriteFile(t, filepath.Join(dir, "main.go"), cmpMain)
	bin := filepath.Join(dir, "prog")
	coverRun(t, dir, goTool, "build", "-o", bin, ".")
	coverRun(t, dir, goTool, "vet", ".")

	crc1 := crc32.ChecksumIEEE(binary.LittleEndian.AppendUint32(nil, 0x5A17C0DE))
	crc2 := crc32.ChecksumIEEE([]byte("ABCD"))
	results := "RES [magic prefix AB k12 v5 small next] 2\n" +
		"RES [badsum lower] 3\n"
	wantOn := fmt.Sprintf(`CMP 0 uint32 0x5a17c0de uint32 0x5a17c0de
CMP 1 uint32 %#x uint32 %#x
CMP 2 string "FUZZme" string "FUZZ"
CMP 3 []uint8 []byte{0x41, 0x42} []uint8 []byte{0x41, 0x42}
CMP 4 main.Kind 0x2 main.Kind 0x1
CMP 5 main.Kind 0x2 main.Kind 0x2
CMP 6 main.Kind 0x2 main.Kind 0x3
CMP 7 int 5 int 5
CMP 8 float64 1 float64 2.5
CMP 9 uint8 0x61 uint8 0x46
CMP 11 int 1 int 1
CMP 12 int 2 int 2
RES [magic prefix AB k12 v5 small next] 2
CMP 0 uint32 0x44434241 uint32 0x5a17c0de
CMP 1 uint32 %#x uint32 0x45464748
CMP 2 string "abc" string "FUZZ"
CMP 3 []uint8 []byte{0x78, 0x79} []uint8 []byte{0x41, 0x42}
CMP 4 main.Kind 0x9 main.Kind 0x1
CMP 5 main.Kind 0x9 main.Kind 0x2
CMP 6 main.Kind 0x9 main.Kind 0x3
CMP 7 string "str" int 5
CMP 8 float64 3 float64 2.5
CMP 9 uint8 0x61 uint8 0x61
CMP 10 uint8 0x61 uint8 0x7a
CMP 11 int 3 int 1
RES [badsum lower] 3
`, crc1, crc1, crc2)
	if got := string(coverRun(t, dir, bin, "on")); got != wantOn {
		t.Errorf("flag on:\n%s\nwant:\n%s", got, wantOn)
	}
	// Off: the hook (which panics) is never called, the results are the same.
	if got := string(coverRun(t, dir, bin, "off")); got != results {
		t.Errorf("flag off:\n%s\nwant:\n%s", got, results)
	}
}

func TestCmpCgoUnchanged(t *testing.T) {
	src := []byte("package p\n\n// #include <stdio.h>\nimport \"C\"\n\nfunc f(x int) bool { return x == 1 }\n")
	out, blocks, sites, err := rewriteFileCmp("c.go", src, tid(0), cmpOptions{})
	if err != nil || !bytes.Equal(out, src) || len(blocks) != 0 || sites != 0 {
		t.Errorf("cgo file: err=%v blocks=%v sites=%d out=\n%s", err, blocks, sites, out)
	}
}

// TestCmpSameAsCover: without comparisons, rewriteFileCmp is RewriteFile
// plus the declarations.
func TestCmpSameAsCover(t *testing.T) {
	checked := 0
	for i, c := range coverCases {
		cov, _, err := RewriteFile("x.go", []byte(c.src), tid(i))
		if err != nil {
			t.Fatal(err)
		}
		out, _, sites, err := rewriteFileCmp("x.go", []byte(c.src), tid(i), cmpOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sites == 0 {
			checked++
			if !bytes.HasPrefix(out, cov) {
				t.Errorf("%s: output differs from RewriteFile's:\n%s", c.desc, out)
			}
		}
	}
	if checked == 0 {
		t.Error("no case without comparison sites")
	}
	if _, _, _, err := rewriteFileCmp("x.go", []byte("package p\n"), "", cmpOptions{}); err == nil {
		t.Error("no error for a missing ID")
	}
	if _, _, _, err := rewriteFileCmp("bad.go", []byte("package p\n\nfunc {\n"), tid(0), cmpOptions{}); err == nil {
		t.Error("no error for a file that does not parse")
	}
}

func TestCmpVarNames(t *testing.T) {
	if id := tid(3); cmpOnVar(id) != "FuzzlsCmpOn_"+string(id) || cmpHookVar(id) != "FuzzlsCmpHook_"+string(id) {
		t.Error(cmpOnVar(id), cmpHookVar(id))
	}
}

// TestCmpSites: each site's position is its operator's (a call's parenthesis, a
// switch case's value), and a switch's cases are counted by its first site's counter.
func TestCmpSites(t *testing.T) {
	src := `package x

import "strings"

func f(s string, n int) int {
	if n > 3 {
		return 1
	}
	switch s {
	case "a":
		return 2
	case "b", "c":
		return 3
	}
	if strings.HasPrefix(s, "x") {
		return 4
	}
	return 0
}
`
	var sites []CmpSite
	_, _, n, err := rewriteFileCmp("x.go", []byte(src), "0", cmpOptions{Sites: &sites})
	if err != nil {
		t.Fatal(err)
	}
	want := []CmpSite{{Line: 6, Col: 7, Counter: 0}, {Line: 10, Col: 7, Counter: 1}, {Line: 12, Col: 7, Counter: 1}, {Line: 12, Col: 12, Counter: 1}, {Line: 15, Col: 22, Counter: 4}}
	if n != len(want) || fmt.Sprint(sites) != fmt.Sprint(want) {
		t.Errorf("%d sites %v, want %v", n, sites, want)
	}
}

package instrument

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// coverCase is one construct to instrument. Every case must compile; unless
// unreachable is set (vet flags the original too) it must also be vet-clean.
type coverCase struct {
	desc        string
	src         string
	hooks       int  // expected exit hook calls
	blocks      int  // expected number of blocks, -1 to skip the check
	asm         bool // the package needs an (empty) assembly file for bodyless funcs
	unreachable bool // the original has unreachable code
}

var coverCases = []coverCase{
	{
		desc: "empty and single-line functions",
		src: `package p

func empty() {}

func one() int { return 1 }

func two(x int) int { x++; return x }

func _() { println("never") }
`,
		blocks: 3,
	},
	{
		desc: "empty blocks",
		src: `package p

func f(x bool) int {
	if x {
	} else {
	}
	{
	}
	for range 3 {
	}
	for {
	}
}
`,
		blocks: 8,
	},
	{
		desc: "if with init, else if, else if with init and comments",
		src: `package p

import "strconv"

func f(s string) int {
	if n, err := strconv.Atoi(s); err != nil {
		return -1
	} else if n > 10 {
		return 10
	} else /* c */ if m := n * 2; m > 4 { // trailing
		return m
	} else
	// between
	if n == 1 {
		return 1
	} else {
		return n
	}
}

func g(x int) (r int) {
	if x > 0 { r = 1 } else if x < 0 { r = -1 }; return
}
`,
		blocks: -1,
	},
	{
		desc: "labels on loops, switch, select; break and continue",
		src: `package p

func f(xs [][]int, ch chan int) int {
	n := 0
outer:
	for _, row := range xs {
	inner:
		for i := 0; i < len(row); i++ {
			switch {
			case row[i] < 0:
				continue outer
			case row[i] == 0:
				break inner
			}
			n += row[i]
		}
	}
sw:
	switch n {
	case 1:
		break sw
	}
sel:
	select {
	case v := <-ch:
		if v > 0 {
			break sel
		}
	default:
	}
	return n
}
`,
		blocks: -1,
	},
	{
		desc: "labels as goto targets, nested labels, goto forward",
		src: `package p

func f(x int) int {
	if x > 5 {
		goto done
	}
	x++
again:
	x *= 2
	if x < 100 {
		goto again
	}
	goto done
done:
	return x
}

func g(x int) int {
	if x > 0 {
		goto L1
	}
L1:
L2:
	for {
		x--
		if x < 0 {
			break L2
		}
	}
	return x
}

func h(x int) int {
	if x == 0 {
		goto loop
	}
	if x < 0 {
		return -1
	} else {
		return 1
	}
loop:
	for x < 10 {
		x++
	}
	return x
}

func k(x int) {
	if x > 0 {
		goto end
	}
	x = 1
	println(x)
end:
}
`,
		blocks: -1,
	},
	{
		desc: "label at end of block and labeled block",
		src: `package p

func f(x int) {
	if x > 0 {
		goto end
	}
	println(x)
end:
}

func g(x int) {
	if x > 0 {
		goto blk
	}
	println(x)
blk:
	{
		println("in")
	}
	if x > 3 {
		goto ifl
	}
ifl:
	if x > 1 {
		println("big")
	}
}
`,
		blocks: -1,
	},
	{
		desc: "switch with init, fallthrough, empty switch, func literal in case",
		src: `package p

func f(x int) (r int) {
	switch y := x * 2; y {
	case 0:
		r = 1
		fallthrough
	case 2, 4:
		r++
	case 6:
	default:
		r = -1
	}
	switch x {
	}
	switch {
	case func() bool { return x > 3 }():
		return 7
	}
	switch g := func() int { return x }; g() {
	case 1:
	}
	return r
}
`,
		blocks: -1,
	},
	{
		desc: "type switch with and without binding, empty type switch",
		src: `package p

func f(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case string:
		return len(x)
	case nil:
	default:
		_ = x
	}
	switch v.(type) {
	}
	switch y := v.(type) {
	case error:
		println(y.Error())
	}
	return 0
}
`,
		blocks: -1,
	},
	{
		desc: "select with receive assignment, send, default; empty select",
		src: `package p

func f(ch chan int, out chan<- int) int {
	select {
	case v := <-ch:
		return v
	case v, ok := <-ch:
		if !ok {
			return -1
		}
		return v
	case out <- 1:
	case <-ch:
		return 2
	default:
	}
	return 0
}

func block() int {
	select {}
}
`,
		blocks: -1,
	},
	{
		desc: "generic functions and methods",
		src: `package p

type Number interface{ ~int | ~float64 }

func Map[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

type Stack[T any] struct{ items []T }

func (s *Stack[T]) Pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	x := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return x, true
}

func Sum[N Number](xs ...N) (s N) {
	for _, x := range xs {
		s += x
	}
	return
}
`,
		blocks: -1,
	},
	{
		desc: "function literals: composite literals, defer recover, go, package level",
		src: `package p

import "sync"

var table = map[string]func(int) int{
	"inc": func(x int) int { return x + 1 },
	"dbl": func(x int) int {
		return x * 2
	},
}

var once = func() int { return 1 }()

func f() (err error) {
	defer func() { recover() }()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		println("go")
	}()
	wg.Wait()
	fs := []func() func() int{func() func() int { return func() int { return 3 } }}
	x := fs[0]()()
	if fn := func() bool { return x > 2 }; fn() {
		x++
	}
	for i := func() int { return 0 }(); i < x; i++ {
	}
	println(x)
	return nil
}
`,
		blocks: -1,
	},
	{
		desc: "exit sites: os, log, renamed imports, loggers, labels",
		src: `package p

import (
	"fmt"
	stdlog "log"
	myos "os"
	"strings"
)

type srv struct{ log *stdlog.Logger }

func f(s *srv, code int) {
	lg := stdlog.New(myos.Stderr, "", 0)
	if code == 1 {
		myos.Exit(1)
	}
	if code == 2 {
		stdlog.Fatal("x")
	}
	if code == 3 {
		stdlog.Fatalf("%d", code)
	}
	if code == 4 {
		lg.Fatalln("y")
	}
	if code == 5 {
		s.log.Fatal("z")
	}
	if code == 6 {
		goto exit
	}
	fmt.Println(strings.ToUpper("not an exit"))
	stdlog.Print("not an exit")
	defer myos.Exit(7)
	return
exit:
	myos.Exit(6)
}
`,
		hooks:  6,
		blocks: -1,
	},
	{
		desc: "exit sites: plain names, dot import ignored",
		src: `package p

import (
	"log"
	. "os"
)

func f(code int) {
	switch code {
	case 0:
		log.Fatal("a")
	case 1:Exit(1)
	default:
		log.Fatalln("b")
	}
}
`,
		hooks:  2,
		blocks: 4,
	},
	{
		desc: "build constraint and line directives",
		src: `//go:build linux || !linux

package p

//line other.go:100
func f(x int) int {
	if x > 0 {
		return x
	}
/*line yet.go:7:3*/	return -x
}
`,
		blocks: -1,
	},
	{
		desc: "bodyless function",
		src: `package p

func asm(x int) int

func caller() int { return asm(1) }
`,
		asm:    true,
		blocks: 1,
	},
	{
		desc: "range over int and over func",
		src: `package p

func seq(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

func f() (s int) {
	for x := range seq(5) {
		if x == 3 {
			break
		}
		s += x
	}
	return
}
`,
		blocks: -1,
	},
	{
		desc: "statements separated by semicolons on one line",
		src: `package p

func f(x int) int { if x > 0 { x-- }; x++; for x < 3 { x++ }; return x }
`,
		blocks: 5,
	},
	{
		desc: "dead code after terminating statements",
		src: `package p

func f(x int) int {
	if x > 0 {
		return 1
		println("dead")
	}
	for {
		break
		println("dead")
	}
	if x < 0 {
		panic("neg")
		println("dead")
	}
	goto L
	println("dead")
L:
	println("alive")
	return 0
}

func g() {
	return
	println("dead")
}
`,
		unreachable: true,
		blocks:      9,
	},
}

// rewriteOK rewrites src and checks the invariants that hold for any input.
func coverRewriteOK(t *testing.T, desc, src string, idx int) ([]byte, []CoverBlock) {
	t.Helper()
	out, blocks, err := RewriteFile("x.go", []byte(src), tid(idx))
	if err != nil {
		t.Fatalf("%s: RewriteFile: %v", desc, err)
	}
	out2, blocks2, err := RewriteFile("x.go", []byte(src), tid(idx))
	if err != nil || !bytes.Equal(out, out2) || !reflect.DeepEqual(blocks, blocks2) {
		t.Errorf("%s: not deterministic", desc)
	}
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "x.go", out, parser.ParseComments); err != nil {
		t.Fatalf("%s: output does not parse: %v\n%s", desc, err, out)
	}
	// The original lines, then the //line directive and two declarations.
	if got, want := bytes.Count(out, []byte("\n")), strings.Count(src, "\n")+4; got != want {
		t.Errorf("%s: output has %d newlines, want %d", desc, got, want)
	}
	checkCoverTokenLines(t, desc, []byte(src), out, idx)
	checkCoverStmtLines(t, desc, []byte(src), out)

	// Each counter index appears exactly once, in order of appearance
	// not required, and matches the blocks.
	re := regexp.MustCompile(regexp.QuoteMeta(counterVar(tid(idx))) + `\[(\d+)\]\+\+;`)
	seen := map[int]bool{}
	for _, m := range re.FindAllSubmatch(out, -1) {
		k, _ := strconv.Atoi(string(m[1]))
		if seen[k] || k >= len(blocks) {
			t.Errorf("%s: counter %d duplicated or out of range", desc, k)
		}
		seen[k] = true
	}
	if len(seen) != len(blocks) {
		t.Errorf("%s: %d counters for %d blocks", desc, len(seen), len(blocks))
	}
	decl := fmt.Sprintf("\nvar %s [%d]uint8\nvar %s = func() {}\n", counterVar(tid(idx)), len(blocks), exitHookVar(tid(idx)))
	if !bytes.HasSuffix(out, []byte(decl)) {
		t.Errorf("%s: output does not end with the declarations %q", desc, decl)
	}
	for i, b := range blocks {
		if b.StartLine <= 0 || b.StartCol <= 0 || b.EndLine < b.StartLine ||
			b.EndLine == b.StartLine && b.EndCol <= b.StartCol {
			t.Errorf("%s: block %d has bad range %+v", desc, i, b)
		}
	}
	return out, blocks
}

type coverTok struct {
	tok  token.Token
	lit  string
	line int
}

// scanLines scans src into tokens with their physical lines, leaving out
// braces and semicolons (the rewriter may add braces around an else-if and
// automatic semicolons move with them) and, if idx >= 0, the inserted
// counter and hook statements.
func coverScanLines(src []byte, idx int) []coverTok {
	fset := token.NewFileSet()
	f := fset.AddFile("x.go", -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, scanner.ScanComments)
	var toks []coverTok
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		toks = append(toks, coverTok{tok, lit, fset.PositionFor(pos, false).Line})
	}
	match := func(i int, pat ...any) bool {
		for k, p := range pat {
			if i+k >= len(toks) {
				return false
			}
			switch p := p.(type) {
			case token.Token:
				if toks[i+k].tok != p {
					return false
				}
			case string:
				if toks[i+k].tok != token.IDENT || toks[i+k].lit != p {
					return false
				}
			}
		}
		return true
	}
	var out []coverTok
	for i := 0; i < len(toks); i++ {
		if idx >= 0 {
			if match(i, counterVar(tid(idx)), token.LBRACK, token.INT, token.RBRACK, token.INC) {
				i += 4
				continue
			}
			if match(i, exitHookVar(tid(idx)), token.LPAREN, token.RPAREN) {
				i += 2
				continue
			}
		}
		switch toks[i].tok {
		case token.LBRACE, token.RBRACE, token.SEMICOLON:
			continue
		}
		out = append(out, toks[i])
	}
	return out
}

// checkTokenLines checks that every original token is still there, in
// order, on its original line, and that nothing but instrumentation was
// added before the trailing declarations.
func checkCoverTokenLines(t *testing.T, desc string, orig, out []byte, idx int) {
	t.Helper()
	a := coverScanLines(orig, -1)
	b := coverScanLines(out, idx)
	if len(b) < len(a) {
		t.Fatalf("%s: %d tokens in output, %d in input", desc, len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s: token %d: original %v %q line %d, rewritten %v %q line %d",
				desc, i, a[i].tok, a[i].lit, a[i].line, b[i].tok, b[i].lit, b[i].line)
		}
	}
	if rest := b[len(a):]; len(rest) < 2 || rest[0].tok != token.COMMENT || rest[0].lit != "//line zz_fuzzls_instrumentation.go:1" || rest[1].tok != token.VAR {
		t.Errorf("%s: unexpected tokens after the original ones: %v", desc, rest)
	}
}

type coverStmtLine struct {
	kind string
	line int
}

// stmtLines lists the statements of a file with their physical lines,
// leaving out blocks and the inserted statements.
func coverStmtLines(t *testing.T, src []byte) []coverStmtLine {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var list []coverStmtLine
	ast.Inspect(f, func(n ast.Node) bool {
		s, ok := n.(ast.Stmt)
		if !ok {
			return true
		}
		switch s := s.(type) {
		case *ast.BlockStmt:
			return true
		case *ast.IncDecStmt:
			if ix, ok := s.X.(*ast.IndexExpr); ok {
				if id, ok := ix.X.(*ast.Ident); ok && strings.HasPrefix(id.Name, "FuzzlsCounters_") {
					return false
				}
			}
		case *ast.ExprStmt:
			if c, ok := s.X.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && strings.HasPrefix(id.Name, "FuzzlsExitHook_") {
					return false
				}
			}
		}
		list = append(list, coverStmtLine{fmt.Sprintf("%T", s), fset.PositionFor(s.Pos(), false).Line})
		return true
	})
	return list
}

func checkCoverStmtLines(t *testing.T, desc string, orig, out []byte) {
	t.Helper()
	a, b := coverStmtLines(t, orig), coverStmtLines(t, out)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: statement lines differ:\noriginal:  %v\nrewritten: %v", desc, a, b)
	}
}

func TestRewriteCases(t *testing.T) {
	for i, c := range coverCases {
		out, blocks := coverRewriteOK(t, c.desc, c.src, i)
		if c.blocks >= 0 && len(blocks) != c.blocks {
			t.Errorf("%s: %d blocks, want %d\n%s", c.desc, len(blocks), c.blocks, out)
		}
		if n := bytes.Count(out, []byte(exitHookVar(tid(i))+"();")); n != c.hooks {
			t.Errorf("%s: %d exit hooks, want %d\n%s", c.desc, n, c.hooks, out)
		}
	}
}

// TestRewriteCompiles builds every rewritten case with the Go toolchain, and
// vets those whose original is vet-clean.
func TestRewriteCompiles(t *testing.T) {
	goTool := coverGoTool(t)
	dir := t.TempDir()
	coverWriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.26\n")
	var vet []string
	for i, c := range coverCases {
		out, _, err := RewriteFile("x.go", []byte(c.src), tid(i))
		if err != nil {
			t.Fatalf("%s: %v", c.desc, err)
		}
		pkg := fmt.Sprintf("p%d", i)
		coverWriteFile(t, filepath.Join(dir, pkg, "x.go"), string(out))
		// A second instrumented file in the same package must not clash.
		second := fmt.Sprintf("package %s\n\nfunc second%d() {}\n", "p", i)
		out2, _, err := RewriteFile("y.go", []byte(second), tid(i+1000))
		if err != nil {
			t.Fatal(err)
		}
		coverWriteFile(t, filepath.Join(dir, pkg, "y.go"), string(out2))
		if c.asm {
			coverWriteFile(t, filepath.Join(dir, pkg, "stub.s"), "")
		}
		if !c.unreachable {
			vet = append(vet, "./"+pkg)
		}
	}
	coverRun(t, dir, goTool, "build", "./...")
	coverRun(t, dir, goTool, append([]string{"vet"}, vet...)...)
}

func coverGoTool(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	return goTool
}

func coverWriteFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func coverGoEnv(dir string) []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GO111MODULE=on", "GOTOOLCHAIN=local", "GOPROXY=off", "CGO_ENABLED=0")
}

func coverRun(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = coverGoEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// progSrc is instrumented and run by TestRunInstrumented. A line ending in
// "//hit" or "//miss" has its first statement in a block that must or must
// not run for classify(4), sum(3 numbers) and twice(...); every block holds
// such a line.
const progSrc = `package main

import (
	"fmt"
	"os"
)

func classify(n int) string {
	if n < 0 { //hit
		return "neg" //miss
	}
	switch { //hit
	case n == 0:
		return "zero" //miss
	case n%2 == 0:
		return "even" //hit
	case n > 100:
		fallthrough //miss
	default: //miss
	}
	for i := 0; i < n; i++ { //miss
		if i == 100 { //miss
			break //miss
		}
	}
	return "odd" //miss
}

func sum(xs []int) (s int) {
	for _, x := range xs { //hit
		if x < 0 { //hit
			continue //hit
		}
		s += x //hit
	}
	apply := func(f func(int) int) int { //hit
		return f(s) //hit
	}
	return apply(func(v int) int { //hit
		return v * 2 //hit
	})
}

func twice(m map[string]int) int {
	var total int //hit
	select {
	case <-make(chan int):
		total = -1 //miss
	default:
		total = m["a"] * 2 //hit
	}
	if total > 10 { //hit
		total = 10 //miss
	} else if total > 5 { //hit
		total = 5 //hit
	} else {
		total = 0 //miss
	}
	return total //hit
}

func doPanic(n int) int {
	var m map[int]int //miss
	if n > 0 {
		n++ //miss
	}
	m[n] = 1 // PANIC //miss
	return n
}

func doExit() {
	fmt.Println("bye") //miss
	os.Exit(3)         // EXIT
}
`

const progMain = `package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	switch os.Args[1] {
	case "run":
		fmt.Println(classify(4), sum([]int{1, -2, 3}), twice(map[string]int{"a": 3}))
		for i, c := range FuzzlsCounters_0 {
			fmt.Println(i, c)
		}
	case "panic":
		doPanic(1)
	case "exit":
		FuzzlsExitHook_0 = func() {
			_, file, line, _ := runtime.Caller(1)
			fmt.Printf("HOOK %s:%d\n", filepath.Base(file), line)
		}
		doExit()
	}
}
`

func coverMarkerLine(t *testing.T, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no line with %q", marker)
	return 0
}

func TestRunInstrumented(t *testing.T) {
	goTool := coverGoTool(t)
	out, blocks := coverRewriteOK(t, "program", progSrc, 0)
	dir := t.TempDir()
	coverWriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/prog\n\ngo 1.26\n")
	coverWriteFile(t, filepath.Join(dir, "prog.go"), string(out))
	coverWriteFile(t, filepath.Join(dir, "main.go"), progMain)
	bin := filepath.Join(dir, "prog")
	coverRun(t, dir, goTool, "build", "-o", bin, ".")

	// Counters.
	res := coverRun(t, dir, bin, "run")
	lines := strings.Split(strings.TrimSpace(string(res)), "\n")
	if lines[0] != "even 8 5" {
		t.Fatalf("program printed %q", lines[0])
	}
	counts := map[int]int{}
	for _, l := range lines[1:] {
		var k, c int
		if _, err := fmt.Sscan(l, &k, &c); err != nil {
			t.Fatalf("bad line %q", l)
		}
		counts[k] = c
	}
	if len(counts) != len(blocks) {
		t.Fatalf("%d counters printed, %d blocks", len(counts), len(blocks))
	}
	want := map[int]bool{} // block -> hit
	for i, l := range strings.Split(progSrc, "\n") {
		hit := strings.HasSuffix(l, "//hit")
		if !hit && !strings.HasSuffix(l, "//miss") {
			continue
		}
		// The first statement of the line; for "} else if", the "if".
		text := strings.TrimLeft(l, "\t }")
		text = strings.TrimPrefix(text, "else ")
		line, col := i+1, len(l)-len(text)+1
		found := -1
		for k, b := range blocks {
			if coverBefore(b.StartLine, b.StartCol, line, col) && coverBefore(line, col, b.EndLine, b.EndCol) && (line != b.EndLine || col != b.EndCol) {
				if found >= 0 {
					t.Errorf("line %d is in blocks %d and %d", line, found, k)
				}
				found = k
			}
		}
		if found < 0 {
			t.Errorf("line %d (%s) is in no block", line, strings.TrimSpace(l))
			continue
		}
		if h, ok := want[found]; ok && h != hit {
			t.Errorf("block %d marked both hit and miss (line %d)", found, line)
		}
		want[found] = hit
	}
	for k, b := range blocks {
		hit, ok := want[k]
		if !ok {
			t.Errorf("block %d %+v has no marker", k, b)
			continue
		}
		if got := counts[k] > 0; got != hit {
			t.Errorf("block %d %+v: hit=%v (count %d), want %v", k, b, got, counts[k], hit)
		}
	}
	if counts[1] == 0 {
		t.Errorf("no count for the loop")
	}

	// A panic reports the original line.
	cmd := exec.Command(bin, "panic")
	res, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("panic run succeeded:\n%s", res)
	}
	panicLine := coverMarkerLine(t, progSrc, "// PANIC")
	m := regexp.MustCompile(`main\.doPanic\([^\n]*\n\s*(\S+):(\d+)`).FindSubmatch(res)
	if m == nil || filepath.Base(string(m[1])) != "prog.go" || string(m[2]) != strconv.Itoa(panicLine) {
		t.Errorf("panic not reported at prog.go:%d:\n%s", panicLine, res)
	}

	// The exit hook runs right before os.Exit, on its line.
	cmd = exec.Command(bin, "exit")
	res, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("exit run: %v\n%s", err, res)
	}
	if want := fmt.Sprintf("bye\nHOOK prog.go:%d\n", coverMarkerLine(t, progSrc, "// EXIT")); string(res) != want {
		t.Errorf("exit run printed %q, want %q", res, want)
	}
}

func coverBefore(l1, c1, l2, c2 int) bool { return l1 < l2 || l1 == l2 && c1 <= c2 }

func TestBlockRanges(t *testing.T) {
	src := `package p

func f(x int) int {
	x++
	if x > 0 {
		x--
	}
	switch x {
	case 1:
	default:
		return 2
	}
	return x
}

func g() {}

func h(x int) {
	if x > 0 {
	} else if x < 0 {
	}
}
`
	out, blocks := coverRewriteOK(t, "ranges", src, 3)
	want := []CoverBlock{
		{3, 20, 5, 11},   // f: entry to "if x > 0 "
		{8, 2, 8, 11},    // "switch x "
		{13, 2, 13, 10},  // "return x"
		{5, 12, 7, 3},    // if body
		{9, 2, 9, 9},     // empty "case 1:"
		{10, 10, 11, 11}, // default
		{16, 11, 16, 12}, // g's empty body, up to its closing brace
		{18, 16, 19, 11}, // h: entry to "if x > 0 "
		{19, 12, 20, 3},  // if body
		{20, 8, 20, 18},  // else if condition
		{20, 19, 21, 3},  // else if body
	}
	if !reflect.DeepEqual(blocks, want) {
		t.Errorf("blocks:\n got %v\nwant %v\n%s", blocks, want, out)
	}
	wantOut := `package p

func f(x int) int {FuzzlsCounters_3[0]++;
	x++
	if x > 0 {FuzzlsCounters_3[3]++;
		x--
	}
	FuzzlsCounters_3[1]++;switch x {
	case 1:FuzzlsCounters_3[4]++;
	default:FuzzlsCounters_3[5]++;
		return 2
	}
	FuzzlsCounters_3[2]++;return x
}

func g() {FuzzlsCounters_3[6]++;}

func h(x int) {FuzzlsCounters_3[7]++;
	if x > 0 {FuzzlsCounters_3[8]++;
	} else{FuzzlsCounters_3[9]++; if x < 0 {FuzzlsCounters_3[10]++;
	}}
}

//line zz_fuzzls_instrumentation.go:1
var FuzzlsCounters_3 [11]uint8
var FuzzlsExitHook_3 = func() {}
`
	if string(out) != wantOut {
		t.Errorf("output:\n%s\nwant:\n%s", out, wantOut)
	}
}

func TestExitHookDetection(t *testing.T) {
	tests := []struct {
		desc    string
		imports string
		decls   string
		stmt    string
		hook    bool
	}{
		{"os.Exit", `"os"`, "", "os.Exit(1)", true},
		{"renamed os", `o "os"`, "", "o.Exit(1)", true},
		{"log.Fatal", `"log"`, "", `log.Fatal("x")`, true},
		{"log.Fatalf", `"log"`, "", `log.Fatalf("x")`, true},
		{"log.Fatalln", `"log"`, "", `log.Fatalln("x")`, true},
		{"renamed log", `lg "log"`, "", `lg.Fatalln("x")`, true},
		{"log.Print", `"log"`, "", `log.Print("x")`, false},
		{"logger method", `"log"`, "var l = log.Default()", `l.Fatal("x")`, true},
		{"method on expression", `"log"`, "", `log.Default().Fatalf("x")`, true},
		{"local variable named like a package", `"log"`, "", `fmt := log.Default(); fmt.Fatal("x")`, true},
		{"other package Fatal", `"example.com/logging"`, "", `logging.Fatal("x")`, false},
		{"versioned package Fatal", `"k8s.io/klog/v2"`, "", `klog.Fatal("x")`, false},
		{"os.Exit without os import", `"log"`, "", `os.Exit(1)`, false},
		{"dot import", `. "os"`, "", `Exit(1)`, false},
		{"blank import", `_ "os"`, "", `os.Exit(1)`, false},
		{"x.Exit method", `"os"`, "var p *os.Process", `p.Exit(1)`, false},
		{"parenthesized", `"os"`, "", `(os.Exit)(1)`, true},
		{"defer os.Exit", `"os"`, "", `defer os.Exit(1)`, false},
		{"go os.Exit", `"os"`, "", `go os.Exit(1)`, false},
		{"labeled", `"os"`, "", "goto L\nL:\n\tos.Exit(1)", true},
	}
	for _, tc := range tests {
		src := fmt.Sprintf("package p\n\nimport %s\n\n%s\n\nfunc f() {\n\t%s\n}\n", tc.imports, tc.decls, tc.stmt)
		out, _ := coverRewriteOK(t, tc.desc, src, 0)
		if got := bytes.Contains(out, []byte(exitHookVar(tid(0))+"();")); got != tc.hook {
			t.Errorf("%s: hook=%v, want %v\n%s", tc.desc, got, tc.hook, out)
		}
	}
	// The hook goes after a label (where a goto lands) and after the counter.
	src := "package p\n\nimport \"os\"\n\nfunc f() {\n\tgoto L\nL:\n\tos.Exit(1)\n}\n"
	out, _, _ := RewriteFile("x.go", []byte(src), tid(0))
	if !bytes.Contains(out, []byte("L:\n\tFuzzlsCounters_0[1]++;FuzzlsExitHook_0();os.Exit(1)")) {
		t.Errorf("labeled exit:\n%s", out)
	}
}

func TestNoCountersAfterTerminating(t *testing.T) {
	src := `package p

func f(x int) int {
	switch x {
	case 1:
		return 1
		x++
	case 2:
		break
		x++
	case 3:
		goto L
		x++
	}
	for {
		continue
		x++
	}
L:
	x--
	panic(x)
	x++
}
`
	out, _ := coverRewriteOK(t, "dead", src, 0)
	for i, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) != "x++" && strings.HasSuffix(l, "x++") {
			t.Errorf("line %d: counter in dead code: %q", i+1, l)
		}
	}
	if !strings.Contains(string(out), "L:\n\tFuzzlsCounters_0[2]++;x--") {
		t.Errorf("no counter after the goto target:\n%s", out)
	}
}

func TestCgoUnchanged(t *testing.T) {
	src := []byte("package p\n\n// #include <stdio.h>\nimport \"C\"\n\nfunc f() { C.puts(nil) }\n")
	out, blocks, err := RewriteFile("c.go", src, tid(0))
	if err != nil || !bytes.Equal(out, src) || len(blocks) != 0 {
		t.Errorf("cgo file: err=%v blocks=%v out=\n%s", err, blocks, out)
	}
}

func TestParseError(t *testing.T) {
	if _, _, err := RewriteFile("bad.go", []byte("package p\n\nfunc {\n"), tid(0)); err == nil {
		t.Error("no error for a file that does not parse")
	}
}

func TestNoTrailingNewline(t *testing.T) {
	src := "package p\n\nfunc f() {}\n// last comment, no newline"
	out, _ := coverRewriteOK(t, "no trailing newline", src, 2)
	if !bytes.Contains(out, []byte("no newline\n//line zz_fuzzls_instrumentation.go:1\nvar "+counterVar(tid(2))+" [1]uint8\n")) {
		t.Errorf("output:\n%s", out)
	}
}

// tid is a test file's ID, the file's index alone, which keeps the expected
// outputs readable (FuzzlsEq_0); builds use newFileID.
func tid(i int) fileID { return fileID(strconv.Itoa(i)) }

// TestVarNames: the names differ between files and between packages (one package
// may dot-import another), and stay the same from build to build.
func TestVarNames(t *testing.T) {
	a, b := newFileID("example.com/a", 0), newFileID("example.com/b", 0)
	if a == b || a == newFileID("example.com/a", 1) || a != newFileID("example.com/a", 0) {
		t.Errorf("IDs %q %q", a, b)
	}
	if !strings.HasPrefix(counterVar(a), "FuzzlsCounters_") || !strings.HasPrefix(exitHookVar(a), "FuzzlsExitHook_") {
		t.Error(counterVar(a), exitHookVar(a))
	}
}

package instrument

// The coverage source rewriter. Block splitting follows the logic of
// $GOROOT/src/cmd/cover/cover.go (go tool cover), reimplemented here with a
// few changes:
//
//   - the inserted text never contains a newline, so every original token
//     stays on its original line;
//   - no counter is added in code that follows a terminating statement
//     (return, goto, break, continue, fallthrough, panic(...)) of the same
//     statement list, nor anywhere go vet's "unreachable code" analysis would
//     consider the insertion point unreachable (so vet stays clean);
//   - calls that end the process (os.Exit, log.Fatal*, x.Fatal*) are preceded
//     by a call of the file's exit hook.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
)

// CoverBlock is one counter's source range in the ORIGINAL file: 1-based
// lines, 1-based byte columns, End exclusive. Positions are physical
// positions in the file; //line directives are not applied.
type CoverBlock struct{ StartLine, StartCol, EndLine, EndCol int }

// fileID tells apart the names instrumentation declares in one file. The names
// are exported (the harness, in another package, reads them), so they must differ
// between packages as well as between a package's files: a package that
// dot-imports another sees the other's names beside its own.
type fileID string

// newFileID is the ID of the file of index index within package importPath.
func newFileID(importPath string, index int) fileID {
	sum := sha256.Sum256([]byte(importPath))
	return fileID(hex.EncodeToString(sum[:6]) + "_" + strconv.Itoa(index))
}

// counterVar is the name of the counter array that RewriteFile declares in
// the file id.
func counterVar(id fileID) string { return "FuzzlsCounters_" + string(id) }

// exitHookVar is the name of the func() variable that instrumented code calls
// right before a call that ends the process (os.Exit, log.Fatal...).
func exitHookVar(id fileID) string { return "FuzzlsExitHook_" + string(id) }

// RewriteFile instruments one Go source file, whose declarations id names. It
// returns the instrumented source and the blocks, in counter order: counter k of
// counterVar(id) counts the executions of blocks[k].
//
// Every basic block gets a statement counterVar(id)[k]++ at its start;
// counterVar(id) is declared at the end of the file as a [N]uint8
// (wrapping) and exitHookVar(id) as a func() that does nothing. No
// newline is added or removed before those declarations, no import is added.
//
// A file that imports "C" is returned unchanged, with no blocks (and no
// declarations). A file that does not parse yields the parser's error.
func RewriteFile(filename string, src []byte, id fileID) (out []byte, blocks []CoverBlock, err error) {
	out, blocks, _, err = rewrite(filename, src, id, nil)
	return out, blocks, err
}

// rewrite implements RewriteFile and, with cmp set, rewriteFileCmp.
func rewrite(filename string, src []byte, id fileID, cmp *cmpOptions) (out []byte, blocks []CoverBlock, sites int, err error) {
	if id == "" {
		return nil, nil, 0, fmt.Errorf("instrument: %s: no file ID", filename)
	}
	fset := token.NewFileSet()
	// Object resolution is kept (no SkipObjectResolution): it tells local
	// variables from package names, and go vet's reachability check uses it.
	file, err := parser.ParseFile(fset, filename, src, parser.ParseComments)
	if err != nil {
		return nil, nil, 0, err
	}
	r := &rewriter{
		fset:       fset,
		tf:         fset.File(file.Pos()),
		src:        src,
		counterVar: counterVar(id),
		hookVar:    exitHookVar(id),
		dead:       map[ast.Stmt]bool{},
		osNames:    map[string]bool{},
		logNames:   map[string]bool{},
		pkgNames:   map[string]bool{},
		imports:    map[string]string{},
	}
	for _, spec := range file.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		if p == "C" {
			return bytes.Clone(src), nil, 0, nil
		}
		name := importName(p)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name == "_" || name == "." {
			continue
		}
		r.pkgNames[name] = true
		if _, ok := r.imports[name]; !ok {
			r.imports[name] = p
		}
		switch p {
		case "os":
			r.osNames[name] = true
		case "log":
			r.logNames[name] = true
		}
	}

	// Reachability, as go vet sees it, of every function body.
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				r.analyzeReachability(n.Body)
			}
		case *ast.FuncLit:
			r.analyzeReachability(n.Body)
		}
		return true
	})

	ast.Walk(r, file)
	var c *cmpState
	if cmp != nil && r.err == nil {
		c = newCmpState(r, file, id, *cmp)
		c.instrument(file)
	}
	if r.err != nil {
		return nil, nil, 0, r.err
	}

	var buf bytes.Buffer
	buf.Grow(len(src) + len(r.inserts)*24 + 128)
	sort.SliceStable(r.inserts, func(i, j int) bool {
		a, b := r.inserts[i], r.inserts[j]
		if a.off != b.off {
			return a.off < b.off
		}
		if a.prio != b.prio {
			return a.prio < b.prio
		}
		return a.order < b.order
	})
	last := 0
	for _, ins := range r.inserts {
		if ins.off < last {
			return nil, nil, 0, fmt.Errorf("instrument: %s: overlapping edits at offset %d", filename, ins.off)
		}
		buf.Write(src[last:ins.off])
		buf.WriteString(ins.text)
		last = ins.off + ins.del
	}
	buf.Write(src[last:])
	// The declarations below are not the user's code: a stack that runs through a
	// comparison helper (a hang in a loop condition, say) must not point past the
	// end of the user's file. Files named zz_fuzzls_* are never user frames.
	fmt.Fprintf(&buf, "\n//line zz_fuzzls_instrumentation.go:1\n")
	fmt.Fprintf(&buf, "var %s [%d]uint8\n", r.counterVar, len(r.blocks))
	fmt.Fprintf(&buf, "var %s = func() {}\n", r.hookVar)
	if c != nil {
		c.decls(&buf)
		sites = c.sites
	}
	return buf.Bytes(), r.blocks, sites, nil
}

// importName guesses the package name of an import path without a name: the
// last path element, skipping a major-version element and common "go-"
// decorations. It only serves to tell package-qualified calls from method
// calls; a wrong guess at worst adds a harmless exit-hook call.
func importName(p string) string {
	elems := strings.Split(p, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && isMajorVersion(name) {
		name = elems[len(elems)-2]
	}
	name = strings.TrimPrefix(name, "go-")
	name = strings.TrimSuffix(name, "-go")
	name = strings.TrimSuffix(name, ".go")
	if i := strings.Index(name, ".v"); i > 0 && isMajorVersion(name[i+1:]) {
		name = name[:i]
	}
	return strings.Map(func(c rune) rune {
		if c == '-' || c == '.' {
			return '_'
		}
		return c
	}, path.Base(name))
}

func isMajorVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Insertion priorities at one offset: an opening brace of a hidden block
// comes before the counter that starts it, which comes before an exit hook.
// The comparison instrumentation (cmp.go) comes after them: the end of a
// rewritten expression, the start of a rewritten expression, and last a
// replacement of original text.
const (
	prioBrace = iota
	prioCounter
	prioHook
	prioCmpClose
	prioCmpOpen
	prioCmpReplace
)

// insertion is an edit of the original source: text goes at byte offset off,
// replacing the del bytes there. At one offset, edits are applied by prio,
// then by order.
type insertion struct {
	off   int
	prio  int
	order int
	del   int
	text  string
}

type rewriter struct {
	fset       *token.FileSet
	tf         *token.File
	src        []byte
	counterVar string
	hookVar    string
	inserts    []insertion
	blocks     []CoverBlock
	err        error

	// dead holds the statements whose start go vet would consider
	// unreachable (before any label of theirs is taken into account).
	dead map[ast.Stmt]bool

	osNames  map[string]bool   // names of the file's imports of "os"
	logNames map[string]bool   // names of the file's imports of "log"
	pkgNames map[string]bool   // names of all the file's (non-dot, non-blank) imports
	imports  map[string]string // import path of each of those names (the first one)
}

func (r *rewriter) offset(p token.Pos) int { return r.tf.Offset(p) }

func (r *rewriter) position(p token.Pos) (line, col int) {
	pos := r.tf.PositionFor(p, false)
	return pos.Line, pos.Column
}

func (r *rewriter) insert(p token.Pos, prio int, text string) {
	r.inserts = append(r.inserts, insertion{off: r.offset(p), prio: prio, text: text})
}

// counter adds a counter statement at insertPos for the block [start, end).
func (r *rewriter) counter(insertPos, start, end token.Pos) {
	k := len(r.blocks)
	var b CoverBlock
	b.StartLine, b.StartCol = r.position(start)
	b.EndLine, b.EndCol = r.position(end)
	r.blocks = append(r.blocks, b)
	r.insert(insertPos, prioCounter, r.counterVar+"["+strconv.Itoa(k)+"]++;")
}

// Visit implements ast.Visitor. The walk order fixes the counter numbering.
func (r *rewriter) Visit(node ast.Node) ast.Visitor {
	if r.err != nil {
		return nil
	}
	switch n := node.(type) {
	case *ast.FuncDecl:
		// Bodyless (assembly) functions have nothing to count; blank
		// functions can never run.
		if n.Body == nil || n.Name.Name == "_" {
			return nil
		}
		ast.Walk(r, n.Body)
		return nil

	case *ast.BlockStmt:
		// Switch and select bodies are handled by their statements.
		r.addCounters(n.Lbrace+1, n.Lbrace+1, n.Rbrace+1, n.List, true)
		return r

	case *ast.IfStmt:
		if n.Init != nil {
			ast.Walk(r, n.Init)
		}
		ast.Walk(r, n.Cond)
		ast.Walk(r, n.Body)
		switch e := n.Else.(type) {
		case *ast.BlockStmt:
			ast.Walk(r, e)
		case *ast.IfStmt:
			// The condition of an "else if" is a block of its own, but
			// there is no place for a statement before it: wrap the
			// "if" in a block, as go tool cover does:
			//	} else {COUNTER; if y {
			//	}}
			off := r.findText(n.Body.End(), "else")
			if off < 0 {
				r.err = fmt.Errorf("instrument: %s: lost else", r.fset.Position(n.Body.End()))
				return nil
			}
			pos := r.tf.Pos(off + len("else"))
			r.insert(pos, prioBrace, "{")
			r.insert(e.End(), prioBrace, "}")
			r.addCounters(pos, pos, e.End(), []ast.Stmt{e}, false)
			ast.Walk(r, e)
		}
		return nil

	case *ast.SwitchStmt:
		if n.Init != nil {
			ast.Walk(r, n.Init)
		}
		if n.Tag != nil {
			ast.Walk(r, n.Tag)
		}
		r.clauses(n.Body)
		return nil

	case *ast.TypeSwitchStmt:
		if n.Init != nil {
			ast.Walk(r, n.Init)
		}
		ast.Walk(r, n.Assign)
		r.clauses(n.Body)
		return nil

	case *ast.SelectStmt:
		r.clauses(n.Body)
		return nil
	}
	return r
}

// clauses instruments the case or comm clauses of a switch, type switch or
// select body. An empty body gets nothing (a statement there would not parse).
func (r *rewriter) clauses(body *ast.BlockStmt) {
	for _, s := range body.List {
		switch c := s.(type) {
		case *ast.CaseClause:
			for _, e := range c.List {
				ast.Walk(r, e)
			}
			r.clause(c.Case, c.Colon, c.End(), c.Body)
		case *ast.CommClause:
			if c.Comm != nil {
				ast.Walk(r, c.Comm)
			}
			r.clause(c.Case, c.Colon, c.End(), c.Body)
		}
		if r.err != nil {
			return
		}
	}
}

func (r *rewriter) clause(caseKw, colon, end token.Pos, body []ast.Stmt) {
	start := colon + 1
	if len(body) == 0 {
		// An empty clause's block is its "case ...:" header, so that
		// it has a visible extent.
		start = caseKw
	}
	r.addCounters(start, colon+1, end, body, false)
	for _, s := range body {
		ast.Walk(r, s)
	}
}

// findText finds text in the original source, starting at pos, skipping
// comments. It returns a byte offset within r.src, or -1.
func (r *rewriter) findText(pos token.Pos, text string) int {
	b := []byte(text)
	s := r.src
	for i := r.offset(pos); i < len(s); {
		switch {
		case bytes.HasPrefix(s[i:], b):
			return i
		case bytes.HasPrefix(s[i:], []byte("//")):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case bytes.HasPrefix(s[i:], []byte("/*")):
			j := bytes.Index(s[i+2:], []byte("*/"))
			if j < 0 {
				return -1
			}
			i += 2 + j + 2
		default:
			i++
		}
	}
	return -1
}

// item is one element of a statement list being split into basic blocks. A
// labeled statement whose statement is not a loop, switch or select is split
// into a label marker (stmt == nil) and its statement, since a goto may
// branch to the label and start a block there.
type item struct {
	stmt  ast.Stmt
	label *ast.LabeledStmt // the label of a marker
}

func (it item) pos() token.Pos {
	if it.stmt == nil {
		return it.label.Pos()
	}
	return it.stmt.Pos()
}

// addCounters adds counters to the beginning of each basic block at the top
// level of list (nested blocks are visited separately). The first block
// starts at start, its counter goes at insertPos; each later one starts, and
// gets its counter, at its first statement. blockEnd is the end of the list's
// text (used for an empty list, and for a list that is one block when
// extendToEnd is set).
func (r *rewriter) addCounters(start, insertPos, blockEnd token.Pos, list []ast.Stmt, extendToEnd bool) {
	for _, s := range list {
		r.exitHook(s)
	}
	if len(list) == 0 {
		r.counter(insertPos, start, blockEnd)
		return
	}

	var items []item
	for _, s := range list {
		for {
			l, ok := s.(*ast.LabeledStmt)
			if !ok || isControl(l.Stmt) {
				break
			}
			items = append(items, item{label: l})
			s = l.Stmt
		}
		items = append(items, item{stmt: s})
	}

	// afterTerm[i]: items[i] follows a terminating statement of this list
	// with no label in between.
	afterTerm := make([]bool, len(items))
	term := false
	for i, it := range items {
		if it.stmt == nil {
			term = false
			continue
		}
		afterTerm[i] = term
		if _, ok := it.stmt.(*ast.LabeledStmt); ok {
			term = false // break L may resume after it
		}
		if isTerminating(it.stmt) {
			term = true
		}
	}

	first := true
	for i := 0; i < len(items); {
		pos, ins := start, insertPos
		live := true
		if !first {
			pos = items[i].pos()
			ins = pos
			live = items[i].stmt != nil && !afterTerm[i] && !r.dead[items[i].stmt]
		}
		// Find the first statement that affects the flow of control: it
		// is the last one of this basic block.
		end := blockEnd
		real := 0
		broke := false
		j := i
		for ; j < len(items); j++ {
			it := items[j]
			if it.stmt == nil {
				end = it.label.Pos() // the block ends before the label
				j++
				broke = true
				break
			}
			real++
			end = boundary(it.stmt)
			if endsBlock(it.stmt) {
				j++
				broke = true
				break
			}
		}
		if first && extendToEnd && j == len(items) && (!broke || boundary(items[j-1].stmt) == items[j-1].stmt.End()) {
			end = blockEnd
		}
		if live && real > 0 && pos < end {
			r.counter(ins, pos, end)
		}
		first = false
		i = j
	}
}

// exitHook inserts a call of the exit hook before s if s is a call that ends
// the process.
func (r *rewriter) exitHook(s ast.Stmt) {
	for {
		l, ok := s.(*ast.LabeledStmt)
		if !ok {
			break
		}
		s = l.Stmt // after the label, where a goto lands too
	}
	if es, ok := s.(*ast.ExprStmt); ok && r.isExitCall(es.X) {
		r.insert(es.Pos(), prioHook, r.hookVar+"();")
	}
}

// isExitCall reports whether x is a call of os.Exit, log.Fatal, log.Fatalf,
// log.Fatalln (by the file's names for "os" and "log"), or of a method
// Fatal, Fatalf or Fatalln of something that is not a package.
func (r *rewriter) isExitCall(x ast.Expr) bool {
	call, ok := ast.Unparen(x).(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	fatal := false
	switch sel.Sel.Name {
	case "Fatal", "Fatalf", "Fatalln":
		fatal = true
	case "Exit":
	default:
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return fatal // method of an expression
	}
	if id.Obj != nil {
		return fatal // a declared variable, not a package
	}
	if fatal && r.logNames[id.Name] {
		return true
	}
	if !fatal && r.osNames[id.Name] {
		return true
	}
	return fatal && !r.pkgNames[id.Name]
}

// isControl reports whether s is a statement that, labeled, cannot be
// separated from its label (break L and continue L refer to it).
func isControl(s ast.Stmt) bool {
	for {
		l, ok := s.(*ast.LabeledStmt)
		if !ok {
			break
		}
		s = l.Stmt
	}
	switch s.(type) {
	case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.SelectStmt, *ast.TypeSwitchStmt:
		return true
	}
	return false
}

// isPanic reports whether s is a call statement of the predeclared panic (as
// far as the syntax tells).
func isPanic(s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == "panic" && id.Obj == nil
}

// isTerminating reports whether no statement of the same list after s can
// run (unless it is labeled).
func isTerminating(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	}
	return isPanic(s)
}

// endsBlock reports whether s ends a basic block: it changes the flow of
// control, it is compound, or it contains a function literal (whose body is
// counted apart).
func endsBlock(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.BlockStmt, *ast.BranchStmt, *ast.ReturnStmt, *ast.ForStmt, *ast.IfStmt,
		*ast.LabeledStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.SelectStmt, *ast.TypeSwitchStmt:
		return true
	}
	if isPanic(s) {
		return true
	}
	return funcLit(s).IsValid()
}

// boundary finds the position in s where its basic block ends: the opening
// brace of a compound statement's body, the body of the first function
// literal, or the end of s.
func boundary(s ast.Stmt) token.Pos {
	first := func(nodes ...ast.Node) token.Pos {
		for _, n := range nodes {
			if p := funcLit(n); p.IsValid() {
				return p
			}
		}
		return token.NoPos
	}
	var p token.Pos
	switch s := s.(type) {
	case *ast.BlockStmt:
		return s.Lbrace
	case *ast.IfStmt:
		if p = first(s.Init, s.Cond); !p.IsValid() {
			p = s.Body.Lbrace
		}
	case *ast.ForStmt:
		if p = first(s.Init, s.Cond, s.Post); !p.IsValid() {
			p = s.Body.Lbrace
		}
	case *ast.RangeStmt:
		if p = first(s.Key, s.Value, s.X); !p.IsValid() {
			p = s.Body.Lbrace
		}
	case *ast.SwitchStmt:
		if p = first(s.Init, s.Tag); !p.IsValid() {
			p = s.Body.Lbrace
		}
	case *ast.TypeSwitchStmt:
		if p = first(s.Init, s.Assign); !p.IsValid() {
			p = s.Body.Lbrace
		}
	case *ast.SelectStmt:
		p = s.Body.Lbrace
	case *ast.LabeledStmt:
		p = boundary(s.Stmt)
	default:
		if p = funcLit(s); !p.IsValid() {
			p = s.End()
		}
	}
	return p
}

// funcLit returns the position of the body of the first function literal in
// n, or NoPos.
func funcLit(n ast.Node) token.Pos {
	if n == nil {
		return token.NoPos
	}
	p := token.NoPos
	ast.Inspect(n, func(n ast.Node) bool {
		if p.IsValid() {
			return false
		}
		if fl, ok := n.(*ast.FuncLit); ok {
			p = fl.Body.Lbrace
			return false
		}
		return true
	})
	return p
}

// Reachability, mirroring go vet's "unreachable" analyzer
// (golang.org/x/tools/go/analysis/passes/unreachable), except that it does
// not pretend code is reachable again after dead code: it records in
// r.dead every statement whose start vet could find unreachable, so that no
// counter put right before such a statement can draw a vet warning.

type reachState struct {
	hasBreak    map[ast.Stmt]bool
	hasGoto     map[string]bool
	labels      map[string]ast.Stmt
	breakTarget ast.Stmt
	reachable   bool
	dead        map[ast.Stmt]bool
}

func (r *rewriter) analyzeReachability(body *ast.BlockStmt) {
	d := &reachState{
		hasBreak: map[ast.Stmt]bool{},
		hasGoto:  map[string]bool{},
		labels:   map[string]ast.Stmt{},
		dead:     r.dead,
	}
	d.findLabels(body)
	d.reachable = true
	d.findDead(body)
}

func (d *reachState) findLabels(stmt ast.Stmt) {
	switch x := stmt.(type) {
	case *ast.BlockStmt:
		for _, s := range x.List {
			d.findLabels(s)
		}
	case *ast.BranchStmt:
		switch x.Tok {
		case token.GOTO:
			if x.Label != nil {
				d.hasGoto[x.Label.Name] = true
			}
		case token.BREAK:
			s := d.breakTarget
			if x.Label != nil {
				s = d.labels[x.Label.Name]
			}
			if s != nil {
				d.hasBreak[s] = true
			}
		}
	case *ast.IfStmt:
		d.findLabels(x.Body)
		if x.Else != nil {
			d.findLabels(x.Else)
		}
	case *ast.LabeledStmt:
		d.labels[x.Label.Name] = x.Stmt
		d.findLabels(x.Stmt)
	case *ast.ForStmt:
		d.withBreakTarget(x, x.Body)
	case *ast.RangeStmt:
		d.withBreakTarget(x, x.Body)
	case *ast.SelectStmt:
		d.withBreakTarget(x, x.Body)
	case *ast.SwitchStmt:
		d.withBreakTarget(x, x.Body)
	case *ast.TypeSwitchStmt:
		d.withBreakTarget(x, x.Body)
	case *ast.CommClause:
		for _, s := range x.Body {
			d.findLabels(s)
		}
	case *ast.CaseClause:
		for _, s := range x.Body {
			d.findLabels(s)
		}
	}
}

func (d *reachState) withBreakTarget(s ast.Stmt, body *ast.BlockStmt) {
	outer := d.breakTarget
	d.breakTarget = s
	d.findLabels(body)
	d.breakTarget = outer
}

func (d *reachState) findDead(stmt ast.Stmt) {
	if !d.reachable {
		d.dead[stmt] = true
	}
	if x, ok := stmt.(*ast.LabeledStmt); ok && d.hasGoto[x.Label.Name] {
		d.reachable = true
	}
	switch x := stmt.(type) {
	case *ast.BlockStmt:
		for _, s := range x.List {
			d.findDead(s)
		}
	case *ast.BranchStmt:
		d.reachable = false
	case *ast.ExprStmt:
		if isPanic(x) {
			d.reachable = false
		}
	case *ast.ForStmt:
		d.findDead(x.Body)
		d.reachable = x.Cond != nil || d.hasBreak[x]
	case *ast.IfStmt:
		d.findDead(x.Body)
		if x.Else != nil {
			r := d.reachable
			d.reachable = true
			d.findDead(x.Else)
			d.reachable = d.reachable || r
		} else {
			d.reachable = true
		}
	case *ast.LabeledStmt:
		d.findDead(x.Stmt)
	case *ast.RangeStmt:
		d.findDead(x.Body)
		d.reachable = true
	case *ast.ReturnStmt:
		d.reachable = false
	case *ast.SelectStmt:
		anyReach := false
		for _, c := range x.Body.List {
			d.reachable = true
			for _, s := range c.(*ast.CommClause).Body {
				d.findDead(s)
			}
			anyReach = anyReach || d.reachable
		}
		d.reachable = anyReach || d.hasBreak[x]
	case *ast.SwitchStmt:
		d.reachable = d.caseClauses(x.Body) || d.hasBreak[x]
	case *ast.TypeSwitchStmt:
		d.reachable = d.caseClauses(x.Body) || d.hasBreak[x]
	}
}

// caseClauses walks the clauses of a switch body and reports whether the
// statement after the switch may be reached through them.
func (d *reachState) caseClauses(body *ast.BlockStmt) bool {
	anyReach, hasDefault := false, false
	for _, c := range body.List {
		cc := c.(*ast.CaseClause)
		if cc.List == nil {
			hasDefault = true
		}
		d.reachable = true
		for _, s := range cc.Body {
			d.findDead(s)
		}
		anyReach = anyReach || d.reachable
	}
	return anyReach || !hasDefault
}

package instrument

// Comparison instrumentation: feedback for input-to-state mutations (like
// go-fuzz's sonar or libFuzzer's -use_cmp). Without type information, only
// rewrites that type-check exactly like the original are made:
//
//   - L op R (op one of == != < <= > >=) where one side is an untyped
//     constant made of literals becomes FuzzlsEq_N(site, L, R) == true (and
//     so on for the other operators). The generic helper's type argument is
//     inferred from the typed side, which the constant converts to as it
//     does in the comparison; "== true" keeps the result an untyped boolean,
//     assignable to named boolean types like the original's. Comparisons of
//     a known checksum or decoded integer (encoding/binary's
//     LittleEndian.Uint32(...) and co, hash/crc32's ChecksumIEEE(...) and
//     co) with anything get the other side converted to the known type.
//   - With cmpOptions.Vars, L op R with two typed operands becomes the
//     same call, the type argument inferred from both.
//   - bytes.Equal(a, b), strings.HasPrefix(s, p), ... become calls of
//     per-file wrappers with the same parameter and result types.
//   - switch tag { case lit...: } (any typed tag) becomes
//     switch FuzzlsSwitch_N(site, tag, lit...) { ...: the helper lists the
//     literal cases and returns the tag.
//   - With cmpOptions.Vars, the divisor of L / R and L % R (R typed, not a
//     constant) becomes FuzzlsDiv_N(site, R), which reports R against 0 and
//     returns it (SanitizerCoverage's trace-div): a divisor the input sets
//     is driven to zero as a compared operand is, and a division on a
//     changed line is a changed comparison (engine/focus.go).
//
// Nothing is rewritten in constant contexts (const declarations, array
// lengths, case expressions of switches with a tag). Inserted text never
// contains a newline; declarations go at the end of the file.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// cmpOptions enable comparison instrumentation in rewriteFileCmp.
type cmpOptions struct {
	// UntypedConsts are the package-level constants (of the whole package,
	// all files) declared without a type whose values are constant
	// expressions of literals and other such constants: they behave like
	// literals. See packageUntypedConsts.
	UntypedConsts map[string]bool
	// Vars also hooks comparisons of two typed operands (`fd.Checksum != c`),
	// outside loop conditions and bounds checks (len or cap on either side).
	// Without type information this is a guess: the generic helper's type
	// argument cannot be inferred where an interface meets a concrete type
	// (`v == x` with v of type any), and the build fails there; Build then
	// retries with those lines in NoVarLines. Wherever the call compiles it
	// means what the comparison did.
	Vars bool
	// NoVarLines are lines where Vars leaves comparisons alone.
	NoVarLines map[int]bool
	// VarLines, if not nil, receives the line of each comparison Vars hooked.
	VarLines map[int]bool
	// Sites, if not nil, receives where each site is, in site order.
	Sites *[]CmpSite
}

// CmpSite is where a comparison site is: the line and column of its operator
// (a call's parenthesis, a switch case's value), and the site whose counter
// counts its executions (a switch's cases share their first one's). File and
// Counter are the file's (File 0, Counter among the file's sites) as
// rewriteFileCmp returns them; Binary.CmpSites numbers them for the binary.
type CmpSite struct {
	File, Line, Col, Counter int
}

// cmpOnVar is the name of the *bool variable that rewriteFileCmp declares in
// the file id: the comparison hook is called
// only while it points to true. It starts as new(bool); the harness points it
// at the runtime's flag.
func cmpOnVar(id fileID) string { return "FuzzlsCmpOn_" + string(id) }

// cmpCovVar is the name of the per-site counter array rewriteFileCmp declares.
func cmpCovVar(id fileID) string { return "FuzzlsCmpCov_" + string(id) }

// cmpHookVar is the name of the func(site int, a, b any) variable that
// instrumented comparisons call with their site and operands. It starts as a
// function that does nothing; the harness replaces it.
func cmpHookVar(id fileID) string { return "FuzzlsCmpHook_" + string(id) }

// rewriteFileCmp is RewriteFile plus comparison hooks: the same blocks, the
// same counters and exit hooks, and calls of cmpHookVar(id) at the
// comparisons (see the comment at the top of cmp.go). sites is the number
// of comparison sites used by this file: the hook receives site ids in
// [0, sites), numbered in source order.
//
// Besides RewriteFile's, the declarations of cmpOnVar(id),
// cmpHookVar(id) and the helpers are appended at the end of the file
// (they are there even when sites is 0). A file that imports "C" is
// returned unchanged, with no blocks and no sites (and no declarations).
func rewriteFileCmp(filename string, src []byte, id fileID, opts cmpOptions) (out []byte, blocks []CoverBlock, sites int, err error) {
	return rewrite(filename, src, id, &opts)
}

// packageUntypedConsts returns the package-level constants of the parsed
// files of one package that are declared without a type and whose values
// are constant expressions of basic literals (not imaginary), iota and other
// such constants, with the operators + - * / % & | ^ &^ << >> and
// parentheses. A name declared more than once (in files for different
// platforms, say) is included only if every declaration qualifies.
func packageUntypedConsts(files []*ast.File) map[string]bool {
	values := map[string][]ast.Expr{}
	bad := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			var typ ast.Expr
			var vals []ast.Expr
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				// A spec without type and values repeats the previous ones.
				if vs.Type != nil || len(vs.Values) > 0 {
					typ, vals = vs.Type, vs.Values
				}
				for i, n := range vs.Names {
					switch {
					case n.Name == "_":
					case typ != nil || i >= len(vals):
						bad[n.Name] = true
					default:
						values[n.Name] = append(values[n.Name], vals[i])
					}
				}
			}
		}
	}
	consts := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, vals := range values {
			if consts[name] || bad[name] {
				continue
			}
			ok := true
			for _, v := range vals {
				ok = ok && constExpr(v, consts)
			}
			if ok {
				consts[name] = true
				changed = true
			}
		}
	}
	return consts
}

// constExpr reports whether e is an untyped constant expression of literals,
// iota and the names in consts.
func constExpr(e ast.Expr, consts map[string]bool) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind != token.IMAG
	case *ast.Ident:
		return e.Name == "iota" || consts[e.Name]
	case *ast.ParenExpr:
		return constExpr(e.X, consts)
	case *ast.UnaryExpr:
		return isConstUnary(e.Op) && constExpr(e.X, consts)
	case *ast.BinaryExpr:
		return isArith(e.Op) && constExpr(e.X, consts) && constExpr(e.Y, consts)
	}
	return false
}

func isConstUnary(op token.Token) bool {
	return op == token.ADD || op == token.SUB || op == token.XOR
}

func isArith(op token.Token) bool {
	switch op {
	case token.ADD, token.SUB, token.MUL, token.QUO, token.REM,
		token.AND, token.OR, token.XOR, token.AND_NOT, token.SHL, token.SHR:
		return true
	}
	return false
}

// cmpHelpers names the helper of each comparison operator.
var cmpHelpers = map[token.Token]string{
	token.EQL: "Eq", token.NEQ: "Ne",
	token.LSS: "Lt", token.LEQ: "Le", token.GTR: "Gt", token.GEQ: "Ge",
}

// wrapped lists the functions of bytes and strings whose calls go through a
// wrapper: their parameter type (both parameters have it) and result type.
var wrapped = map[string]map[string]string{
	"bytes": {
		"Equal": "bool", "HasPrefix": "bool", "HasSuffix": "bool", "Contains": "bool",
		"Index": "int", "EqualFold": "bool", "Compare": "int",
	},
	"strings": {
		"HasPrefix": "bool", "HasSuffix": "bool", "Contains": "bool",
		"Index": "int", "EqualFold": "bool", "Compare": "int",
	},
}

// knownFuncs are the package-level functions whose result type is known:
// import path, then function name.
var knownFuncs = map[string]map[string]string{
	"hash/crc32":   {"ChecksumIEEE": "uint32", "Checksum": "uint32", "Update": "uint32"},
	"hash/adler32": {"Checksum": "uint32"},
	"hash/crc64":   {"Checksum": "uint64", "Update": "uint64"},
}

// knownMethods are the methods of encoding/binary's byte orders whose result
// type is known.
var knownMethods = map[string]string{"Uint16": "uint16", "Uint32": "uint32", "Uint64": "uint64"}

type cmpState struct {
	r    *rewriter
	file *ast.File
	opts cmpOptions
	idx  string // file index

	sites int
	seq   int // orders the edits made at one offset

	// Per top-level function (nil outside functions): every name the
	// function declares anywhere, parameters included.
	shadow map[string]bool
	// The file declares "true" at package level: no comparison rewrites.
	trueShadowed bool
	// The package-level const specs of the file.
	pkgConsts map[any]bool
	// Inside a for statement's condition (nesting depth).
	loopCond int
	// The outermost labeled statement of each labeled switch.
	labels map[*ast.SwitchStmt]*ast.LabeledStmt

	wrappers []string        // declarations of the wrappers, in order of first use
	wrapSeen map[string]bool // names of the wrappers declared
}

func newCmpState(r *rewriter, file *ast.File, id fileID, opts cmpOptions) *cmpState {
	c := &cmpState{
		r:         r,
		file:      file,
		opts:      opts,
		idx:       string(id),
		pkgConsts: map[any]bool{},
		labels:    map[*ast.SwitchStmt]*ast.LabeledStmt{},
		wrapSeen:  map[string]bool{},
	}
	if file.Scope != nil && file.Scope.Lookup("true") != nil {
		c.trueShadowed = true
	}
	for _, d := range file.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
			for _, s := range gd.Specs {
				c.pkgConsts[s] = true
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if l, ok := n.(*ast.LabeledStmt); ok {
			s := l.Stmt
			for {
				inner, ok := s.(*ast.LabeledStmt)
				if !ok {
					break
				}
				s = inner.Stmt
			}
			if sw, ok := s.(*ast.SwitchStmt); ok && c.labels[sw] == nil {
				c.labels[sw] = l // Inspect sees the outermost label first
			}
		}
		return true
	})
	return c
}

func (c *cmpState) name(helper string) string { return "Fuzzls" + helper + "_" + c.idx }

// edit records an edit of the source. Opening text is ordered by the order
// of the calls, closing text (prioCmpClose) by their reverse order, so that
// edits of nested expressions nest.
func (c *cmpState) edit(off, del, prio int, text string) {
	c.seq++
	order := c.seq
	if prio == prioCmpClose {
		order = -order
	}
	c.r.inserts = append(c.r.inserts, insertion{off: off, prio: prio, order: order, del: del, text: text})
}

// wrap inserts open at the start of e and close at its end, closing after
// anything opened later inside e and before anything opened earlier.
func (c *cmpState) wrap(e ast.Expr, open, close string) {
	c.seq++
	c.r.inserts = append(c.r.inserts,
		insertion{off: c.r.offset(e.Pos()), prio: prioCmpOpen, order: c.seq, text: open},
		insertion{off: c.r.offset(e.End()), prio: prioCmpClose, order: -c.seq, text: close})
}

func (c *cmpState) instrument(file *ast.File) {
	for _, d := range file.Decls {
		c.walk(d)
	}
}

// walk instruments the comparisons in n, in source order.
func (c *cmpState) walk(n ast.Node) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			return n.Tok != token.CONST
		case *ast.FuncDecl:
			// Blank functions can never run; bodyless ones have nothing.
			if n.Body != nil && n.Name.Name != "_" {
				c.function(n, n.Body)
			}
			return false
		case *ast.FuncLit:
			if c.shadow == nil {
				c.function(n, n.Body)
				return false
			}
		case *ast.ArrayType:
			c.walk(n.Elt) // not the length, a constant
			return false
		case *ast.SwitchStmt:
			c.switchStmt(n)
			return false
		case *ast.TypeSwitchStmt:
			c.walk(n.Init)
			c.walk(n.Assign)
			for _, s := range n.Body.List {
				for _, st := range s.(*ast.CaseClause).Body {
					c.walk(st)
				}
			}
			return false
		case *ast.ForStmt:
			// A loop's condition runs once per iteration and compares an index
			// with a bound: no hooks of two variables there.
			c.walk(n.Init)
			c.loopCond++
			c.walk(n.Cond)
			c.loopCond--
			c.walk(n.Post)
			c.walk(n.Body)
			return false
		case *ast.BinaryExpr:
			c.binary(n)
		case *ast.CallExpr:
			c.call(n)
		}
		return true
	})
}

// function instruments a top-level function or function literal (one not
// inside a function).
func (c *cmpState) function(fn ast.Node, body *ast.BlockStmt) {
	c.shadow = declaredNames(fn)
	c.walk(body)
	c.shadow = nil
}

// declaredNames returns every name declared anywhere in fn (conservatively:
// struct fields and interface methods too).
func declaredNames(fn ast.Node) map[string]bool {
	names := map[string]bool{}
	ident := func(e ast.Expr) {
		if id, ok := e.(*ast.Ident); ok {
			names[id.Name] = true
		}
	}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Recv != nil {
				// All of it: the type parameters of the receiver's type
				// are plain identifiers there.
				ast.Inspect(n.Recv, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok {
						names[id.Name] = true
					}
					return true
				})
			}
		case *ast.Field:
			for _, id := range n.Names {
				names[id.Name] = true
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					ident(e)
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				ident(n.Key)
				ident(n.Value)
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				names[id.Name] = true
			}
		case *ast.TypeSpec:
			names[n.Name.Name] = true
		}
		return true
	})
	return names
}

// constIdent reports whether id is one of opts.UntypedConsts, not shadowed.
func (c *cmpState) constIdent(id *ast.Ident) bool {
	if !c.opts.UntypedConsts[id.Name] || c.shadow[id.Name] {
		return false
	}
	if id.Obj != nil && (id.Obj.Kind != ast.Con || !c.pkgConsts[id.Obj.Decl]) {
		return false
	}
	return true
}

// literal reports whether e is an untyped constant expression of literals
// and untyped package-level constants: something that takes the type of the
// other operand of a comparison.
func (c *cmpState) literal(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind != token.IMAG
	case *ast.Ident:
		return c.constIdent(e)
	case *ast.ParenExpr:
		return c.literal(e.X)
	case *ast.UnaryExpr:
		return isConstUnary(e.Op) && c.literal(e.X)
	case *ast.BinaryExpr:
		return isArith(e.Op) && c.literal(e.X) && c.literal(e.Y)
	}
	return false
}

// untyped reports whether e might be untyped as far as the syntax tells:
// a literal, nil, true, false, iota, a boolean operation, or arithmetic of
// such things (a shift takes the type of its left operand).
func (c *cmpState) untyped(e ast.Expr) bool {
	if c.literal(e) {
		return true
	}
	switch e := e.(type) {
	case *ast.Ident:
		switch e.Name {
		case "nil", "true", "false", "iota":
			return true
		}
	case *ast.ParenExpr:
		return c.untyped(e.X)
	case *ast.UnaryExpr:
		return (isConstUnary(e.Op) || e.Op == token.NOT) && c.untyped(e.X)
	case *ast.BinaryExpr:
		switch {
		case e.Op == token.SHL || e.Op == token.SHR:
			return c.untyped(e.X)
		case isArith(e.Op):
			return c.untyped(e.X) && c.untyped(e.Y)
		}
		return true // comparison or logical operation: untyped boolean
	}
	return false
}

// pkgIdent returns the import path of e if it is an identifier that names
// an import of the file (not a local declaration, which the parser
// resolves), or "".
func (c *cmpState) pkgIdent(e ast.Expr) string {
	id, ok := e.(*ast.Ident)
	if !ok || id.Obj != nil {
		return ""
	}
	return c.r.imports[id.Name]
}

// known returns the type of e if it is a call with a known result type
// (uint16, uint32 or uint64), or "".
func (c *cmpState) known(e ast.Expr) string {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	var typ string
	switch x := sel.X.(type) {
	case *ast.SelectorExpr: // binary.LittleEndian.Uint32
		switch x.Sel.Name {
		case "LittleEndian", "BigEndian", "NativeEndian":
			if c.pkgIdent(x.X) == "encoding/binary" {
				typ = knownMethods[sel.Sel.Name]
			}
		}
	case *ast.Ident: // crc32.ChecksumIEEE
		typ = knownFuncs[c.pkgIdent(x)][sel.Sel.Name]
	}
	if typ == "" || c.shadow[typ] || c.file.Scope != nil && c.file.Scope.Lookup(typ) != nil {
		return ""
	}
	return typ
}

// binary rewrites a comparison L op R, or the divisor of a division.
func (c *cmpState) binary(n *ast.BinaryExpr) {
	if n.Op == token.QUO || n.Op == token.REM {
		c.division(n)
		return
	}
	helper, ok := cmpHelpers[n.Op]
	if !ok || c.trueShadowed || c.shadow["true"] {
		return
	}
	x, y := n.X, n.Y
	var convX, convY string
	switch lx, ly := c.literal(x), c.literal(y); {
	case lx && ly:
		return // a constant expression
	case lx:
		if c.untyped(y) {
			return
		}
	case ly:
		if c.untyped(x) {
			return
		}
	default:
		kx, ky := c.known(x), c.known(y)
		switch {
		case kx != "" && ky == kx:
		case kx != "" && ky == "" && !c.untyped(y):
			convY = kx
		case ky != "" && kx == "" && !c.untyped(x):
			convX = ky
		case kx == "" && ky == "" && c.varOperands(n):
			if c.opts.VarLines != nil {
				c.opts.VarLines[c.r.fset.Position(n.OpPos).Line] = true
			}
		default:
			return
		}
	}

	site := c.newSite(n.OpPos, -1)
	r := c.r
	c.seq++
	seq := c.seq
	r.inserts = append(r.inserts, insertion{off: r.offset(x.Pos()), prio: prioCmpOpen, order: seq,
		text: c.name(helper) + "(" + strconv.Itoa(site) + ", "})
	if convX != "" {
		c.wrap(x, convX+"(", ")")
	}
	// The operator becomes a comma; blanks between the left operand and
	// the operator go too.
	opOff := r.offset(n.OpPos)
	start := opOff
	xEnd := r.offset(x.End())
	if strings.Trim(string(r.src[xEnd:opOff]), " \t") == "" {
		start = xEnd
	}
	end := opOff + len(n.Op.String())
	comma := ","
	if end < len(r.src) && !isBlank(r.src[end]) {
		comma = ", "
	}
	c.edit(start, end-start, prioCmpReplace, comma)
	if convY != "" {
		c.wrap(y, convY+"(", ")")
	}
	r.inserts = append(r.inserts, insertion{off: r.offset(y.End()), prio: prioCmpClose, order: -seq, text: ") == true"})
}

// division hooks the divisor of n, a division or remainder, when the syntax
// shows it is typed and not a constant (see typedValue): an untyped constant
// would take the helper's default type, and a line the compiler rejects costs a
// failed build before its retry without the hook.
func (c *cmpState) division(n *ast.BinaryExpr) {
	line := c.r.fset.Position(n.OpPos).Line
	if !c.opts.Vars || c.loopCond > 0 || c.opts.NoVarLines[line] || !c.typedValue(n.Y) {
		return
	}
	if c.opts.VarLines != nil {
		c.opts.VarLines[line] = true
	}
	site := c.newSite(n.OpPos, -1)
	c.wrap(n.Y, c.name("Div")+"("+strconv.Itoa(site)+", ", ")")
}

// typedValue reports whether e is surely a typed value, not a constant: a
// call, an index, a dereference, a variable this file declares (a parameter, a
// local, a package-level variable of the file) or a field of one, or arithmetic
// with such an operand. A package-level name of another file or an imported
// package's (blockSize, math.MaxInt) may be an untyped constant: no.
func (c *cmpState) typedValue(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.typedValue(e.X)
	case *ast.CallExpr, *ast.IndexExpr, *ast.IndexListExpr, *ast.StarExpr:
		return true
	case *ast.Ident:
		return e.Obj != nil && e.Obj.Kind == ast.Var
	case *ast.SelectorExpr:
		return c.typedValue(e.X)
	case *ast.UnaryExpr:
		return e.Op != token.AND && c.typedValue(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.SHL || e.Op == token.SHR {
			return c.typedValue(e.X)
		}
		return isArith(e.Op) && (c.typedValue(e.X) || c.typedValue(e.Y))
	}
	return false
}

// varOperands reports whether cmpOptions.Vars hooks n, a comparison of two
// operands neither of which is a literal or a known call.
func (c *cmpState) varOperands(n *ast.BinaryExpr) bool {
	if !c.opts.Vars || c.loopCond > 0 || c.opts.NoVarLines[c.r.fset.Position(n.OpPos).Line] {
		return false
	}
	return !c.untyped(n.X) && !c.untyped(n.Y) && !c.lenOrCap(n.X) && !c.lenOrCap(n.Y)
}

// lenOrCap reports whether e is a call of the builtin len or cap: a bounds
// check, run in inner loops and never solved by writing a value into the input.
func (c *cmpState) lenOrCap(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	return ok && (id.Name == "len" || id.Name == "cap") && !c.shadow[id.Name] &&
		(c.file.Scope == nil || c.file.Scope.Lookup(id.Name) == nil)
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// call rewrites a call of one of the wrapped functions of bytes or strings.
func (c *cmpState) call(n *ast.CallExpr) {
	sel, ok := n.Fun.(*ast.SelectorExpr)
	if !ok || len(n.Args) != 2 || n.Ellipsis.IsValid() {
		return
	}
	path := c.pkgIdent(sel.X)
	result, ok := wrapped[path][sel.Sel.Name]
	if !ok {
		return
	}
	r := c.r
	from, to := r.offset(sel.Pos()), r.offset(sel.End())
	if bytes.ContainsAny(r.src[from:to], "\r\n") {
		return
	}
	pkg := sel.X.(*ast.Ident).Name
	name := c.name(strings.ToUpper(path[:1]) + path[1:] + sel.Sel.Name)
	if !c.wrapSeen[name] {
		c.wrapSeen[name] = true
		param := "string"
		if path == "bytes" {
			param = "[]byte"
		}
		c.wrappers = append(c.wrappers, fmt.Sprintf(
			"func %s(fuzzlsSite int, fuzzlsA, fuzzlsB %s) %s {\n\t%s[fuzzlsSite]++\n\tif *%s {\n\t\t%s(fuzzlsSite, fuzzlsA, fuzzlsB)\n\t}\n\treturn %s.%s(fuzzlsA, fuzzlsB)\n}\n",
			name, param, result, c.name("CmpCov"), c.name("CmpOn"), c.name("CmpHook"), pkg, sel.Sel.Name))
	}
	site := c.newSite(n.Lparen, -1)
	c.edit(from, to-from, prioCmpReplace, name)
	c.edit(r.offset(n.Lparen)+1, 0, prioCmpOpen, strconv.Itoa(site)+", ")
}

// switchStmt instruments a switch statement: a hook for its literal cases,
// and the comparisons in it outside constant contexts.
func (c *cmpState) switchStmt(n *ast.SwitchStmt) {
	c.walk(n.Init)
	if n.Tag != nil {
		c.switchHook(n) // before walking the tag: its wrapper closes last
	}
	c.walk(n.Tag)
	for _, s := range n.Body.List {
		cc := s.(*ast.CaseClause)
		if n.Tag == nil {
			// Boolean conditions, not constants.
			for _, e := range cc.List {
				c.walk(e)
			}
		}
		for _, st := range cc.Body {
			c.walk(st)
		}
	}
}

// switchHook wraps the tag of a switch statement with literal cases in a call
// of the switch helper, which reports the tag's value against each literal
// case and returns it: `switch tag {` becomes `switch FuzzlsSwitch_N(site,
// tag, lit...) {`. The tag is still evaluated once, in its place, so any tag
// expression can be wrapped (a call, a conversion, one using the switch's init
// statement); the helper's type argument is the tag's type, which the literals
// convert to as they do in the cases.
func (c *cmpState) switchHook(n *ast.SwitchStmt) {
	if c.untyped(n.Tag) || c.r.dead[c.outer(n)] {
		return // a constant switch; or one that never runs
	}
	var cases []string
	var pos []token.Pos
	for _, s := range n.Body.List {
		for _, e := range s.(*ast.CaseClause).List {
			if !c.literal(e) {
				continue
			}
			text := c.r.src[c.r.offset(e.Pos()):c.r.offset(e.End())]
			if bytes.ContainsAny(text, "\r\n") {
				continue // a raw string or a comment over several lines
			}
			cases = append(cases, string(text))
			pos = append(pos, e.Pos())
		}
	}
	if len(cases) == 0 {
		return
	}
	site := c.sites
	for _, p := range pos {
		c.newSite(p, site)
	}
	c.wrap(n.Tag, c.name("Switch")+"("+strconv.Itoa(site)+", ", ", "+strings.Join(cases, ", ")+")")
}

// newSite numbers the next site, at p, whose executions the counter of site
// counter counts (-1: its own).
func (c *cmpState) newSite(p token.Pos, counter int) int {
	site := c.sites
	c.sites++
	if counter < 0 {
		counter = site
	}
	if c.opts.Sites != nil {
		pos := c.r.tf.PositionFor(p, false) // physical, as the blocks' positions
		*c.opts.Sites = append(*c.opts.Sites, CmpSite{Line: pos.Line, Col: pos.Column, Counter: counter})
	}
	return site
}

// outer returns the statement that holds n in its block: n, or the outermost
// label on it.
func (c *cmpState) outer(n *ast.SwitchStmt) ast.Stmt {
	if l := c.labels[n]; l != nil {
		return l
	}
	return n
}

// decls writes the declarations of the comparison instrumentation.
func (c *cmpState) decls(b *bytes.Buffer) {
	on, hook, cov := c.name("CmpOn"), c.name("CmpHook"), c.name("CmpCov")
	// One counter per site, bumped whenever the comparison runs: reaching a
	// comparison is coverage, so the second half of `a == X && b == Y` is kept
	// once the first half holds, though no block boundary lies between them.
	fmt.Fprintf(b, "var %s [%d]uint8\n", cov, max(1, c.sites))
	fmt.Fprintf(b, "var %s = new(bool)\n", on)
	fmt.Fprintf(b, "var %s = func(site int, a, b any) {}\n", hook)
	ord := c.name("Ord")
	const ordered = "~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64 | ~string"
	fmt.Fprintf(b, "type %s interface {\n\t%s\n}\n", ord, ordered)
	for _, h := range []struct{ name, constraint, op string }{
		{"Eq", "comparable", "=="}, {"Ne", "comparable", "!="},
		{"Lt", ord, "<"}, {"Le", ord, "<="}, {"Gt", ord, ">"}, {"Ge", ord, ">="},
	} {
		fmt.Fprintf(b, "func %s[T %s](site int, a, b T) bool {\n\t%s[site]++\n\tif *%s {\n\t\t%s(site, a, b)\n\t}\n\treturn a %s b\n}\n",
			c.name(h.name), h.constraint, cov, on, hook, h.op)
	}
	fmt.Fprintf(b, "func %s[T %s | ~complex64 | ~complex128](site int, y T) T {\n\t%s[site]++\n\tif *%s {\n\t\t%s(site, y, T(0))\n\t}\n\treturn y\n}\n",
		c.name("Div"), strings.TrimSuffix(ordered, " | ~string"), cov, on, hook)
	fmt.Fprintf(b, "func %s[T comparable](site int, x T, cases ...T) T {\n\t%s[site]++\n\tif *%s {\n\t\tfor i, c := range cases {\n\t\t\t%s(site+i, x, c)\n\t\t}\n\t}\n\treturn x\n}\n",
		c.name("Switch"), cov, on, hook)
	for _, w := range c.wrappers {
		b.WriteString(w)
	}
}

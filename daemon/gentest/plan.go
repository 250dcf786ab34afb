// Package gentest writes a fuzz test for a function or method: `func FuzzXxx(f
// *testing.F)` whose fuzz arguments are the types go test supports, from which
// it builds the function's parameters and calls it. The daemon offers it as a
// code action ("Generate fuzz test FuzzXxx") and applies it as a WorkspaceEdit.
//
// What becomes of a parameter (and of a method's receiver):
//   - a type go test fuzzes ([]byte, string, bool, the integer and float types;
//     fuzzrt's table says which) is a fuzz argument, and a type defined from one
//     (`type Mode int`, time.Duration) is converted from one;
//   - a slice of those is decoded from one argument: a []string from a string
//     split at NUL bytes, any other from a []byte, each element the next Size
//     bytes of it, little-endian (8 bytes an int), which input-to-state
//     comparison feedback finds values in;
//   - a struct (or a pointer to one, built as &T{…}) is a composite literal of
//     its fields, each built the same way, nested structs up to maxDepth levels
//     and maxArgs fuzz arguments in all; a field that cannot be built (a func, a
//     map, a channel, an interface, an array, a slice of structs, past those
//     bounds) keeps its zero value and a comment in the literal says so;
//   - context.Context is t.Context();
//   - a receiver is built from its exported fields only (its zero value when it
//     has none): its unexported fields are state its constructor and methods
//     keep, and arbitrary values there find failures no caller can cause.
//
// A parameter or receiver that cannot be built makes the action unavailable,
// rather than passing a nil func or interface the function would fail on at
// once; so are generic functions and functions with nothing to fuzz.
//
// f.Add seeds come from the function's calls in its module (callers.go): the
// constants and composite literals of constants passed to it, the other
// arguments zero; with no such call, one seed of zero values.
package gentest

import (
	"fmt"
	"go/types"
	"strings"
	"unicode"
	"unicode/utf8"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

const (
	// maxDepth is how deep structs are built: a parameter's struct is level 1,
	// its struct fields level 2, theirs level 3; deeper ones keep their zero
	// value.
	maxDepth = 3
	// maxArgs bounds the fuzz arguments of fields: past it, fields keep their
	// zero value (the parameters themselves always get theirs).
	maxArgs = 16
)

type nodeKind int

const (
	nArg    nodeKind = iota // a fuzz argument as is
	nConv                   // T(arg): a type defined from a fuzzable one
	nSlice                  // a slice decoded from a []byte or string argument
	nStruct                 // a composite literal of the fields
	nPtr                    // &T{…}
	nCtx                    // t.Context()
)

// A node builds one value, of type typ, from fuzz arguments.
type node struct {
	kind    nodeKind
	typ     types.Type
	arg     int         // nArg, nConv, nSlice: the argument's index
	elem    fuzzrt.Kind // nSlice: the elements' kind
	local   string      // nSlice: the decoded slice's variable
	loopVar string      // nSlice: the decoding loop's variable
	fields  []field     // nStruct
	omitted []string    // nStruct: fields the rules would build but cannot, and why
	ptr     *node       // nPtr: the struct pointed to
}

type field struct {
	name  string
	index int // in the struct type, for positional composite literals
	n     *node
}

// A fuzzArg is one parameter of the generated fuzz function.
type fuzzArg struct {
	name string
	kind fuzzrt.Kind
	typ  string // its type as the function spells it: "byte", "rune", "[]byte"
}

// A Plan is how to fuzz one function: its fuzz arguments and how its receiver
// and parameters are built from them.
type Plan struct {
	// Name is the fuzz test's name, FuzzXxx (FuzzTypeMethod for a method),
	// unique among the package's names and its test files'.
	Name string
	// Func is the function as go doc names it: "Parse", "Parser.Parse".
	Func string

	fn       *types.Func
	pkg      *types.Package
	recv     *node
	recvName string // the receiver's variable
	params   []*node
	locals   []string // each parameter's variable, or "" when its expression is used in the call
	variadic bool
	args     []fuzzArg
	names    *namer
}

// FuncName is fn as go doc names it: "Parse", "Parser.Parse".
func FuncName(fn *types.Func) string {
	if named := recvNamed(fn); named != nil {
		return named.Obj().Name() + "." + fn.Name()
	}
	return fn.Name()
}

func recvNamed(fn *types.Func) *types.Named {
	sig := fn.Type().(*types.Signature)
	if sig.Recv() == nil {
		return nil
	}
	t := types.Unalias(sig.Recv().Type())
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	named, _ := t.(*types.Named)
	return named
}

// NewPlan plans a fuzz test of fn, declared in pkg. taken holds the names the
// fuzz test's name must not be (the package's and its test files'). The error
// says why fn cannot be fuzzed.
func NewPlan(fn *types.Func, pkg *types.Package, taken map[string]bool) (*Plan, error) {
	sig := fn.Type().(*types.Signature)
	switch {
	case fn.Name() == "_" || fn.Name() == "init" || fn.Name() == "main" && pkg.Name() == "main":
		return nil, fmt.Errorf("%s cannot be called", fn.Name())
	case sig.TypeParams().Len() > 0 || sig.RecvTypeParams().Len() > 0:
		return nil, fmt.Errorf("%s is generic", FuncName(fn))
	case sig.Recv() != nil && recvNamed(fn) == nil:
		return nil, fmt.Errorf("%s is an interface method", fn.Name())
	}
	p := &Plan{Func: FuncName(fn), fn: fn, pkg: pkg, variadic: sig.Variadic(), names: newNamer(pkg)}
	if named := recvNamed(fn); named != nil {
		if types.IsInterface(named) {
			return nil, fmt.Errorf("%s is an interface method", p.Func)
		}
		name := sig.Recv().Name()
		if name == "" || name == "_" {
			name = lowerFirst(named.Obj().Name())
		}
		n, why := p.build(named, name, 1, true)
		if n == nil {
			return nil, fmt.Errorf("its receiver, %s, %s", named.Obj().Name(), why)
		}
		p.recv, p.recvName = n, p.local(n, name, true)
	}
	for i := range sig.Params().Len() {
		v := sig.Params().At(i)
		name := v.Name()
		if name == "" || name == "_" {
			name = fmt.Sprintf("arg%d", i)
		}
		n, why := p.build(v.Type(), name, 1, false)
		if n == nil {
			return nil, fmt.Errorf("parameter %s %s %s", name, types.TypeString(v.Type(), types.RelativeTo(pkg)), why)
		}
		p.params = append(p.params, n)
		p.locals = append(p.locals, p.local(n, name, false))
	}
	if len(p.args) == 0 {
		return nil, fmt.Errorf("%s has nothing to fuzz", p.Func)
	}
	// The loops' variables are named last, so that the parameters keep their
	// names.
	for _, n := range append([]*node{p.recv}, p.params...) {
		n.walk(func(n *node) {
			switch {
			case n.kind == nSlice && n.elem == fuzzrt.KindString:
				n.loopVar = p.names.fresh("s")
			case n.kind == nSlice:
				n.loopVar = p.names.fresh("b")
			}
		})
	}
	base := "Fuzz" + upperFirst(fn.Name())
	if named := recvNamed(fn); named != nil {
		base = "Fuzz" + upperFirst(named.Obj().Name()) + upperFirst(fn.Name())
	}
	p.Name = base
	for i := 2; taken[p.Name]; i++ {
		p.Name = fmt.Sprintf("%s%d", base, i)
	}
	return p, nil
}

// build plans a value of type t, named name (the base of its arguments'
// names), at struct level depth; exportedOnly builds only exported fields of
// structs (a receiver's). A nil node comes with the reason it cannot be built.
func (p *Plan) build(t types.Type, name string, depth int, exportedOnly bool) (*node, string) {
	if isContext(t) {
		return &node{kind: nCtx, typ: t}, ""
	}
	if why := p.unnameable(t); why != "" {
		return nil, why
	}
	if k := kindOf(t); k != fuzzrt.NoKind {
		return p.addArg(nArg, t, name, k), ""
	}
	switch u := t.Underlying().(type) {
	case *types.Basic, *types.Slice:
		if k := kindOf(u); k != fuzzrt.NoKind {
			return p.addArg(nConv, t, name, k), ""
		}
		if s, ok := u.(*types.Slice); ok {
			if why := p.unnameable(s.Elem()); why != "" {
				return nil, why
			}
			ek := kindOf(s.Elem().Underlying())
			if ek == fuzzrt.NoKind || ek == fuzzrt.KindBytes {
				return nil, "is a slice of " + describe(s.Elem())
			}
			raw := fuzzrt.KindBytes
			suffix := "Data"
			if ek == fuzzrt.KindString {
				raw, suffix = fuzzrt.KindString, "Text"
			}
			n := p.addArg(nSlice, t, name+suffix, raw)
			n.elem = ek
			n.local = p.names.fresh(name)
			return n, ""
		}
		return nil, "is a " + u.String()
	case *types.Struct:
		return p.buildStruct(t, u, name, depth, exportedOnly)
	case *types.Pointer:
		if _, ok := u.Elem().Underlying().(*types.Struct); ok {
			n, why := p.build(u.Elem(), name, depth, exportedOnly)
			if n == nil {
				return nil, why
			}
			return &node{kind: nPtr, typ: t, ptr: n}, ""
		}
		return nil, "is a pointer to " + describe(u.Elem())
	}
	return nil, "is " + describe(t)
}

func (p *Plan) buildStruct(t types.Type, st *types.Struct, name string, depth int, exportedOnly bool) (*node, string) {
	if depth > maxDepth {
		return nil, fmt.Sprintf("is deeper than %d levels of structs", maxDepth)
	}
	n := &node{kind: nStruct, typ: t}
	for i := range st.NumFields() {
		f := st.Field(i)
		if f.Name() == "_" || !f.Exported() && (exportedOnly || f.Pkg() == nil || f.Pkg().Path() != p.pkg.Path()) {
			continue // cannot be set from the test, or state the receiver's methods keep
		}
		if len(p.args) >= maxArgs && !isContext(f.Type()) {
			n.omitted = append(n.omitted, fmt.Sprintf("%s (past %d fuzz arguments)", f.Name(), maxArgs))
			continue
		}
		mark := len(p.args)
		fn, why := p.build(f.Type(), name+upperFirst(f.Name()), depth+1, false)
		if fn == nil {
			p.args = p.args[:mark] // a nested struct may have added some before failing
			n.omitted = append(n.omitted, fmt.Sprintf("%s (%s)", f.Name(), strings.TrimPrefix(why, "is ")))
			continue
		}
		n.fields = append(n.fields, field{name: f.Name(), index: i, n: fn})
	}
	if depth > 1 && len(n.fields) == 0 && len(n.omitted) == 0 {
		return nil, "is a struct with no field the test can set" // time.Time: nothing to fuzz, no reason to spell it
	}
	return n, ""
}

// walk calls f on n and the nodes below it.
func (n *node) walk(f func(*node)) {
	if n == nil {
		return
	}
	f(n)
	n.ptr.walk(f)
	for _, fl := range n.fields {
		fl.n.walk(f)
	}
}

// local is the variable holding n's value, built before the call: a struct's,
// a decoded slice's, a receiver's (a method with a pointer receiver needs an
// addressable one); "" for a value the call takes as an expression.
func (p *Plan) local(n *node, name string, recv bool) string {
	switch {
	case n.kind == nSlice:
		return n.local
	case n.kind == nStruct || n.kind == nPtr || recv:
		return p.names.fresh(name)
	}
	return ""
}

func (p *Plan) addArg(kind nodeKind, t types.Type, name string, k fuzzrt.Kind) *node {
	typ := "[]byte"
	if b, ok := types.Unalias(t.Underlying()).(*types.Basic); ok {
		typ = b.Name()
	} else if k == fuzzrt.KindString {
		typ = "string" // a []string's
	}
	p.args = append(p.args, fuzzArg{name: p.names.fresh(name), kind: k, typ: typ})
	return &node{kind: kind, typ: t, arg: len(p.args) - 1}
}

// unnameable says why the generated test could not spell t (a type parameter,
// another package's unexported type), or "".
func (p *Plan) unnameable(t types.Type) string {
	switch t := types.Unalias(t).(type) {
	case *types.TypeParam:
		return "is a type parameter"
	case *types.Named:
		if o := t.Obj(); !o.Exported() && o.Pkg() != nil && o.Pkg().Path() != p.pkg.Path() {
			return "is unexported in " + o.Pkg().Path()
		}
		if t.TypeArgs().Len() > 0 {
			return "is an instantiated generic type"
		}
	}
	return ""
}

// kindOf is the fuzz argument kind of t when go test fuzzes t itself (a
// predeclared type, []byte), else NoKind.
func kindOf(t types.Type) fuzzrt.Kind {
	switch t := types.Unalias(t).(type) {
	case *types.Basic:
		return fuzzrt.KindNamed(t.Name())
	case *types.Slice:
		if b, ok := types.Unalias(t.Elem()).(*types.Basic); ok && b.Kind() == types.Uint8 {
			return fuzzrt.KindBytes
		}
	}
	return fuzzrt.NoKind
}

func isContext(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "context" && named.Obj().Name() == "Context"
}

// describe names what kind of type t is, for the reasons given.
func describe(t types.Type) string {
	switch t.Underlying().(type) {
	case *types.Signature:
		return "a func"
	case *types.Map:
		return "a map"
	case *types.Chan:
		return "a channel"
	case *types.Interface:
		return "an interface"
	case *types.Array:
		return "an array"
	case *types.Struct:
		return "a struct"
	case *types.Pointer:
		return "a pointer"
	case *types.Slice:
		return "a slice"
	}
	return t.Underlying().String()
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// A namer hands out the fuzz function's local names: none of them is a name
// the generated code refers to (the package's own, the imports', predeclared
// ones, t and f), nor another local.
type namer struct {
	used   map[string]bool
	locals map[string]bool // the names handed out
}

func newNamer(pkg *types.Package) *namer {
	n := &namer{used: map[string]bool{"t": true, "f": true}, locals: map[string]bool{}}
	for _, name := range types.Universe.Names() {
		n.used[name] = true
	}
	for _, name := range pkg.Scope().Names() {
		n.used[name] = true
	}
	for _, imp := range append(pkg.Imports(), types.NewPackage("testing", "testing"), types.NewPackage("encoding/binary", "binary"),
		types.NewPackage("math", "math"), types.NewPackage("strings", "strings")) {
		n.used[imp.Name()] = true
	}
	return n
}

func (n *namer) fresh(base string) string {
	name := base
	for i := 2; n.used[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	n.used[name] = true
	n.locals[name] = true
	return name
}

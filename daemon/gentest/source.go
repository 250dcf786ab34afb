package gentest

import (
	"fmt"
	"go/types"
	"go/version"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// imports are the packages a generated test refers to: path → the name it
// uses. fixed are the names it must not take for another path (the test
// file's own imports and declarations, the package's).
type imports struct {
	names map[string]string // path → name
	fixed map[string]bool   // names taken
	added map[string]bool   // paths the test file does not import yet
}

// newImports starts from the imports the test file has (path → name).
func newImports(existing map[string]string, taken map[string]bool) *imports {
	im := &imports{names: map[string]string{}, fixed: map[string]bool{}, added: map[string]bool{}}
	for name := range taken {
		im.fixed[name] = true
	}
	for path, name := range existing {
		im.names[path] = name
		im.fixed[name] = true
	}
	return im
}

// name is the name the test refers to package path by, adding the import if
// the file lacks it.
func (im *imports) name(path, pkgName string) string {
	if name, ok := im.names[path]; ok {
		return name
	}
	name := pkgName
	for i := 2; im.fixed[name]; i++ {
		name = fmt.Sprintf("%s%d", pkgName, i)
	}
	im.names[path] = name
	im.fixed[name] = true
	im.added[path] = true
	return name
}

// Source is the fuzz test's declaration, gofmt-formatted once in its file, for
// seeds (each a value per fuzz argument, nil for a zero value), importing
// through im.
func (p *Plan) source(seeds [][]any, im *imports) string {
	// An import the package under test lacks must not take a local's name.
	for name := range p.names.locals {
		im.fixed[name] = true
	}
	qual := func(pkg *types.Package) string {
		if pkg.Path() == p.pkg.Path() {
			return ""
		}
		return im.name(pkg.Path(), pkg.Name())
	}
	g := &gen{p: p, im: im, qual: qual}
	testing := im.name("testing", "testing")

	var b strings.Builder
	fmt.Fprintf(&b, "// %s fuzzes %s with parameters built from the fuzz arguments.\n", p.Name, p.Func)
	fmt.Fprintf(&b, "func %s(f *%s.F) {\n", p.Name, testing)
	for _, seed := range seeds {
		fmt.Fprintf(&b, "f.Add(%s)\n", strings.Join(p.seedArgs(seed), ", "))
	}
	fmt.Fprintf(&b, "f.Fuzz(func(t *%s.T", testing)
	for _, a := range p.args {
		fmt.Fprintf(&b, ", %s %s", a.name, a.typ)
	}
	b.WriteString(") {\n")

	call := p.fn.Name()
	if p.recv != nil {
		g.define(&b, p.recv, p.recvName)
		call = p.recvName + "." + call
	}
	var args []string
	for i, n := range p.params {
		if p.locals[i] != "" {
			g.define(&b, n, p.locals[i])
			args = append(args, p.locals[i])
		} else {
			args = append(args, g.expr(n))
		}
	}
	if p.variadic && len(args) > 0 {
		args[len(args)-1] += "..."
	}
	// The results are dropped explicitly: vet's unusedresult flags a String
	// method's, say.
	if n := p.fn.Type().(*types.Signature).Results().Len(); n > 0 {
		b.WriteString(strings.Repeat("_, ", n-1) + "_ = ")
	}
	fmt.Fprintf(&b, "%s(%s)\n", call, strings.Join(args, ", "))
	b.WriteString("})\n}\n")
	return b.String()
}

// seedArgs are f.Add's arguments for seed (nil values zero), expressions of
// exactly the fuzz arguments' types, as f.Add wants them.
func (p *Plan) seedArgs(seed []any) []string {
	args := make([]string, len(p.args))
	for i, a := range p.args {
		v := a.kind.Zero()
		if seed != nil && seed[i] != nil {
			v = seed[i]
		}
		args[i] = literal(a, v)
	}
	return args
}

// literal is v as an expression of a's type: an integer in the type its
// parameter spells (byte(7), not go test's byte('\a')), anything else as go
// test writes it in a corpus file, without the conversions an untyped
// constant makes anyway (int, string, bool).
func literal(a fuzzArg, v any) string {
	if k, u := fuzzrt.Bits(v); k.IsInt() {
		n := strconv.FormatUint(u, 10)
		if k.Signed() {
			n = strconv.FormatInt(int64(u), 10)
		}
		switch r := rune(u); {
		case a.typ == "int":
			return n
		case a.typ == "rune" && utf8.ValidRune(r) && strconv.IsPrint(r):
			return strconv.QuoteRune(r)
		}
		return a.typ + "(" + n + ")"
	}
	l := strings.TrimSuffix(strings.SplitN(string(fuzzrt.Marshal([]any{v})), "\n", 2)[1], "\n")
	for _, conv := range []string{"string(", "bool("} {
		if inner, ok := strings.CutPrefix(l, conv); ok {
			return strings.TrimSuffix(inner, ")")
		}
	}
	return l
}

// gen writes the statements that build values.
type gen struct {
	p    *Plan
	im   *imports
	qual types.Qualifier
}

func (g *gen) typ(t types.Type) string { return types.TypeString(t, g.qual) }

// define declares local, holding n's value, after what it needs: the slices
// it decodes.
func (g *gen) define(b *strings.Builder, n *node, local string) {
	g.decodeSlices(b, n)
	switch {
	case n.kind == nSlice:
		// decodeSlices declared it.
	case n.kind == nStruct && len(n.fields) == 0 && len(n.omitted) == 0:
		fmt.Fprintf(b, "var %s %s\n", local, g.typ(n.typ))
	default:
		fmt.Fprintf(b, "%s := %s\n", local, g.expr(n))
	}
}

// decodeSlices writes the loops decoding the slices in n.
func (g *gen) decodeSlices(b *strings.Builder, n *node) {
	switch n.kind {
	case nStruct:
		for _, f := range n.fields {
			g.decodeSlices(b, f.n)
		}
	case nPtr:
		g.decodeSlices(b, n.ptr)
	case nSlice:
		raw := g.p.args[n.arg].name
		elem := g.typ(n.typ.Underlying().(*types.Slice).Elem())
		if n.elem == fuzzrt.KindString {
			fmt.Fprintf(b, "// %s: the elements of %s, split at NUL bytes.\n", n.local, raw)
		} else {
			fmt.Fprintf(b, "// %s: the elements of %s, %s each, little-endian.\n", n.local, raw, map[int]string{1: "a byte", 2: "2 bytes", 4: "4 bytes", 8: "8 bytes"}[n.elem.Size()])
		}
		fmt.Fprintf(b, "var %s %s\n", n.local, g.typ(n.typ))
		if n.elem == fuzzrt.KindString {
			fmt.Fprintf(b, "if %s != \"\" {\n", raw)
			fmt.Fprintf(b, "for _, %s := range %s.Split(%s, \"\\x00\") {\n", n.loopVar, g.im.name("strings", "strings"), raw)
			x := n.loopVar
			if elem != "string" {
				x = elem + "(" + x + ")"
			}
			fmt.Fprintf(b, "%s = append(%s, %s)\n}\n}\n", n.local, n.local, x)
			return
		}
		size := n.elem.Size()
		fmt.Fprintf(b, "for %s := %s; len(%s) >= %d; %s = %s[%d:] {\n", n.loopVar, raw, n.loopVar, size, n.loopVar, n.loopVar, size)
		fmt.Fprintf(b, "%s = append(%s, %s)\n}\n", n.local, n.local, g.element(n.elem, elem, n.loopVar))
	}
}

// element is the expression decoding one element of kind k, type elem, from
// the start of b.
func (g *gen) element(k fuzzrt.Kind, elem, b string) string {
	var x, typ string // the decoding and its type
	switch {
	case k == fuzzrt.KindBool:
		x, typ = b+"[0]&1 == 1", "bool"
	case k.Size() == 1:
		x, typ = b+"[0]", "byte"
	default:
		x = fmt.Sprintf("%s.LittleEndian.Uint%d(%s)", g.im.name("encoding/binary", "binary"), 8*k.Size(), b)
		typ = fmt.Sprintf("uint%d", 8*k.Size())
		if k.IsFloat() {
			x = fmt.Sprintf("%s.Float%dfrombits(%s)", g.im.name("math", "math"), 8*k.Size(), x)
			typ = fmt.Sprintf("float%d", 8*k.Size())
		}
	}
	if elem == typ || elem == "uint8" && typ == "byte" {
		return x
	}
	return elem + "(" + x + ")"
}

// expr is n's value as an expression (its slices decoded before).
func (g *gen) expr(n *node) string {
	switch n.kind {
	case nArg:
		return g.p.args[n.arg].name
	case nConv:
		return g.typ(n.typ) + "(" + g.p.args[n.arg].name + ")"
	case nSlice:
		return n.local
	case nCtx:
		// t.Context is cancelled when the execution ends, but a module whose
		// go line is older than go1.24 cannot use it.
		if version.Compare(g.p.pkg.GoVersion(), "go1.24") >= 0 {
			return "t.Context()"
		}
		return g.im.name("context", "context") + ".Background()"
	case nPtr:
		return "&" + g.expr(n.ptr)
	}
	var b strings.Builder
	b.WriteString(g.typ(n.typ) + "{")
	if len(n.fields) > 0 || len(n.omitted) > 0 {
		b.WriteString("\n")
	}
	for _, f := range n.fields {
		fmt.Fprintf(&b, "%s: %s,\n", f.name, g.expr(f.n))
	}
	if len(n.omitted) > 0 {
		sort.Strings(n.omitted)
		fmt.Fprintf(&b, "// Left zero, not built from fuzz arguments: %s.\n", strings.Join(n.omitted, ", "))
	}
	b.WriteString("}")
	return b.String()
}

package gentest

import (
	"bytes"
	"context"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// Bounds of the search for calls, which runs while the user waits for the
// edit: the module's Go files are read (at most maxScanFiles) for the
// function's name followed by "(", and only the directories with such a file
// (at most maxCallerDirs, the function's own first) are type-checked.
const (
	maxScanFiles  = 20000
	maxCallerDirs = 8
	maxSeeds      = 8
)

// callerDirs lists the directories of the module at modDir that may call the
// function name of package path in dir: dir itself when one of its files has
// "name(" (".name(" for a method), another directory when one of its files
// also names the package's path. It says whether a bound cut the search short.
func callerDirs(ctx context.Context, modDir, dir, path, name string, method bool, read func(string) ([]byte, error)) (dirs []string, cut bool) {
	needle := []byte(name + "(")
	if method {
		needle = []byte("." + name + "(")
	}
	quoted := []byte(`"` + path + `"`)
	found := map[string]bool{}
	dirs = []string{dir}
	files := 0
	err := filepath.WalkDir(modDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			base := d.Name()
			if p != modDir && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "vendor" || exists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		pdir := filepath.Dir(p)
		if !strings.HasSuffix(p, ".go") || found[pdir] {
			return nil
		}
		if files++; files > maxScanFiles || ctx.Err() != nil {
			cut = true
			return filepath.SkipAll
		}
		data, err := read(p)
		if err != nil || !bytes.Contains(data, needle) || pdir != dir && !bytes.Contains(data, quoted) {
			return nil
		}
		found[pdir] = true
		if pdir == dir {
			return nil
		}
		if len(dirs) == maxCallerDirs {
			cut = true
			return filepath.SkipAll
		}
		dirs = append(dirs, pdir)
		return nil
	})
	if err != nil {
		cut = true
	}
	return dirs, cut
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// callSeeds are the seeds of the calls of p's function in pkgs, in the order
// found, without duplicates, at most maxSeeds: for each call with a constant
// argument, the values of the constants (nil for the other fuzz arguments).
func (p *Plan) callSeeds(pkgs []*packages.Package) [][]any {
	want := p.fn.FullName()
	seen := map[token.Position]bool{}
	dup := map[string]bool{}
	var seeds [][]any
	packages.Visit(pkgs, nil, func(pkg *packages.Package) {
		if pkg.TypesInfo == nil {
			return
		}
		for _, f := range pkg.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(seeds) == maxSeeds {
					return len(seeds) < maxSeeds
				}
				callee := typeutil.StaticCallee(pkg.TypesInfo, call)
				if callee == nil || callee.FullName() != want {
					return true
				}
				pos := pkg.Fset.Position(call.Pos())
				if seen[pos] { // a file of both the package and its test variant
					return true
				}
				seen[pos] = true
				if seed := p.seedOf(pkg.TypesInfo, call); seed != nil {
					key := strings.Join(p.seedArgs(seed), ", ")
					if !dup[key] {
						dup[key] = true
						seeds = append(seeds, seed)
					}
				}
				return true
			})
		}
	})
	return seeds
}

// seedOf is the fuzz arguments' values in call, nil if none is a constant.
func (p *Plan) seedOf(info *types.Info, call *ast.CallExpr) []any {
	s := &seeder{p: p, info: info, vals: make([]any, len(p.args))}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && p.recv != nil {
		if info.Selections[sel] == nil || info.Selections[sel].Kind() != types.MethodVal {
			return nil // a method expression, (*T).M(x, …), rare enough to leave
		}
		s.fill(p.recv, sel.X)
	}
	for i, n := range p.params {
		switch {
		case i >= len(call.Args):
		case p.variadic && i == len(p.params)-1 && !call.Ellipsis.IsValid():
			s.fillSlice(n, call.Args[i:])
		default:
			s.fill(n, call.Args[i])
		}
	}
	if !s.found {
		return nil
	}
	return s.vals
}

type seeder struct {
	p     *Plan
	info  *types.Info
	vals  []any
	found bool
}

func (s *seeder) set(i int, v any) {
	s.vals[i] = v
	s.found = true
}

// fill takes the values n is built from out of e.
func (s *seeder) fill(n *node, e ast.Expr) {
	e = ast.Unparen(e)
	switch n.kind {
	case nArg, nConv:
		if v, ok := s.value(s.p.args[n.arg].kind, e); ok {
			s.set(n.arg, v)
		}
	case nSlice:
		if lit, ok := e.(*ast.CompositeLit); ok {
			s.fillSlice(n, lit.Elts)
		}
	case nPtr:
		if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
			s.fill(n.ptr, u.X)
		}
	case nStruct:
		// A literal of that type (by name: the caller's package has its own
		// types.Package for the function's), not of one embedding it.
		lit, ok := e.(*ast.CompositeLit)
		if !ok || types.TypeString(s.info.TypeOf(lit), nil) != types.TypeString(n.typ, nil) {
			return
		}
		for i, el := range lit.Elts {
			for _, f := range n.fields {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok && id.Name == f.name {
						s.fill(f.n, kv.Value)
					}
				} else if f.index == i {
					s.fill(f.n, el)
				}
			}
		}
	}
}

// fillSlice encodes the elements of a slice n is decoded from, when all are
// constants: as decodeSlices decodes them.
func (s *seeder) fillSlice(n *node, elts []ast.Expr) {
	var text []string
	var data []byte
	for _, el := range elts {
		v, ok := s.value(n.elem, ast.Unparen(el))
		if !ok {
			return
		}
		if n.elem == fuzzrt.KindString {
			text = append(text, v.(string))
			continue
		}
		_, u := fuzzrt.Bits(v)
		for i := range n.elem.Size() {
			data = append(data, byte(u>>(8*i)))
		}
	}
	if len(elts) == 0 {
		return
	}
	if n.elem == fuzzrt.KindString {
		s.set(n.arg, strings.Join(text, "\x00"))
	} else {
		s.set(n.arg, data)
	}
}

// value is e's value as a fuzz argument of kind k, if e is a constant (or, for
// []byte, a conversion of one or a literal of them).
func (s *seeder) value(k fuzzrt.Kind, e ast.Expr) (any, bool) {
	if c := s.info.Types[e].Value; c != nil {
		return constValue(k, c)
	}
	if k != fuzzrt.KindBytes {
		return nil, false
	}
	switch e := e.(type) {
	case *ast.CallExpr:
		if len(e.Args) == 1 && s.info.Types[e.Fun].IsType() {
			if c := s.info.Types[e.Args[0]].Value; c != nil && c.Kind() == constant.String {
				return []byte(constant.StringVal(c)), true
			}
		}
	case *ast.CompositeLit:
		var b []byte
		for _, el := range e.Elts {
			c := s.info.Types[el].Value
			if c == nil {
				return nil, false
			}
			v, ok := constValue(fuzzrt.KindUint8, c)
			if !ok {
				return nil, false
			}
			b = append(b, v.(uint8))
		}
		return b, true
	}
	return nil, false
}

// constValue is constant c as a value of kind k.
func constValue(k fuzzrt.Kind, c constant.Value) (any, bool) {
	switch {
	case k == fuzzrt.KindString && c.Kind() == constant.String:
		return constant.StringVal(c), true
	case k == fuzzrt.KindBytes && c.Kind() == constant.String:
		return []byte(constant.StringVal(c)), true
	case k == fuzzrt.KindBool && c.Kind() == constant.Bool:
		return constant.BoolVal(c), true
	case k.IsInt():
		c = constant.ToInt(c)
		if c.Kind() != constant.Int {
			return nil, false
		}
		if k.Signed() {
			v, ok := constant.Int64Val(c)
			return k.FromBits(uint64(v)), ok
		}
		v, ok := constant.Uint64Val(c)
		return k.FromBits(v), ok
	case k.IsFloat():
		c = constant.ToFloat(c)
		if c.Kind() != constant.Float {
			return nil, false
		}
		f, _ := constant.Float64Val(c)
		return k.FromFloat(f), true
	}
	return nil, false
}

package instrument

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// The runtime implements testing's unexported testDeps interface and its
// corpusEntry alias (testing.MainStart is outside the Go 1 promise). Rather than
// trust a list of Go versions, every build checks the user's toolchain: its
// GOROOT's testing sources are read and compared with what the runtime's deps.go
// declares. A toolchain whose testing matches builds, whatever its version; one
// that changed gets one sentence naming the version and the change, instead of
// compiler errors from files the user never wrote.

// toolchainError says the user's Go toolchain cannot run fuzzls's runtime.
type toolchainError struct {
	GoVersion string   // as `go env GOVERSION` says, e.g. "go1.28.0"
	Changes   []string // what differs, e.g. "testDeps.Foo added"
}

func (e *toolchainError) Error() string {
	return fmt.Sprintf("fuzzls cannot run fuzz targets with %s: its testing package changed what a test binary's fuzzing hooks must implement (%s); use a Go release whose testing matches (Go 1.26 and 1.27 do, e.g. GOTOOLCHAIN=go1.27.3) or a newer fuzzls",
		e.GoVersion, strings.Join(e.Changes, "; "))
}

// toolchain is what one GOROOT's testing package asks of the runtime.
type toolchain struct {
	version string
	methods map[string]string // testDeps method → its signature, parameter names left out
	entry   string            // corpusEntry's struct type
	err     error             // the sources could not be read
}

var toolchains sync.Map // GOROOT → *toolchain

// CheckToolchain reports a *toolchainError when the Go toolchain that builds in dir
// has a testing package the runtime (rt, package fuzzrt's sources) does not fit.
func CheckToolchain(ctx context.Context, dir string, rt fs.FS) error {
	cmd := exec.CommandContext(ctx, "go", "env", "GOROOT", "GOVERSION")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return fmt.Errorf("go env GOROOT GOVERSION: %v %s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		return fmt.Errorf("go env GOROOT GOVERSION: unexpected output %q", out)
	}
	goroot, version := strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
	want, err := goTesting(goroot, version)
	if err != nil {
		return err
	}
	have, err := runtimeTesting(rt)
	if err != nil {
		return err
	}
	changes := testingChanges(want, have)
	links, err := linknameChanges(goroot, rt)
	if err != nil {
		return err
	}
	if changes = append(changes, links...); len(changes) > 0 {
		return &toolchainError{GoVersion: version, Changes: changes}
	}
	return nil
}

// linknameChanges lists the standard library functions the runtime reaches by a
// linkname directive (deps.go) that goroot no longer has with the same
// signature: the linker's "relocation target not defined" would otherwise be all
// the user saw.
func linknameChanges(goroot string, rt fs.FS) ([]string, error) {
	src, err := fs.ReadFile(rt, "deps.go")
	if err != nil {
		return nil, fmt.Errorf("fuzzls's runtime sources: %v", err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "deps.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("fuzzls's runtime sources: %v", err)
	}
	local := map[string]string{} // function declared without a body → its signature
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body == nil {
			local[fd.Name.Name] = typeString(fset, fd.Type)
		}
	}
	var changes []string
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			fields := strings.Fields(c.Text)
			if len(fields) != 3 || fields[0] != "//go:linkname" {
				continue
			}
			sig, ok := local[fields[1]]
			dot := strings.LastIndex(fields[2], ".")
			if !ok || dot < 0 {
				continue
			}
			pkg, name := fields[2][:dot], fields[2][dot+1:]
			have, found := stdFunc(filepath.Join(goroot, "src", filepath.FromSlash(pkg)), name)
			switch {
			case !found:
				changes = append(changes, fields[2]+" removed")
			case have != sig:
				changes = append(changes, fields[2]+" is now "+have)
			}
		}
	}
	return changes, nil
}

// stdFunc finds the package-level function name in the Go files of dir (tests
// left out) and returns its signature as typeString prints it.
func stdFunc(dir, name string) (sig string, found bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				return typeString(fset, fd.Type), true
			}
		}
	}
	return "", false
}

// goTesting reads testDeps and corpusEntry from goroot's testing package, once.
func goTesting(goroot, version string) (*toolchain, error) {
	if tc, ok := toolchains.Load(goroot); ok {
		return tc.(*toolchain), tc.(*toolchain).err
	}
	dir := filepath.Join(goroot, "src", "testing")
	tc := &toolchain{version: version}
	tc.methods, tc.entry, tc.err = readTesting(func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, name))
	}, []string{"testing.go", "fuzz.go"}, "testDeps", nil)
	if tc.err != nil {
		tc.err = fmt.Errorf("reading %s's testing package in %s: %v", version, dir, tc.err)
	}
	toolchains.Store(goroot, tc)
	return tc, tc.err
}

// runtimeTesting reads what the runtime's deps type implements.
func runtimeTesting(rt fs.FS) (*toolchain, error) {
	tc := &toolchain{}
	tc.methods, tc.entry, tc.err = readTesting(func(name string) ([]byte, error) {
		return fs.ReadFile(rt, name)
	}, []string{"deps.go"}, "", []string{"deps"})
	if tc.err != nil {
		tc.err = fmt.Errorf("fuzzls's runtime sources: %v", tc.err)
	}
	return tc, tc.err
}

// readTesting parses files and returns the methods of interface iface (or, when
// iface is empty, the methods declared on the receiver types recv) and the
// corpusEntry alias's struct type, all printed without parameter names.
func readTesting(read func(string) ([]byte, error), files []string, iface string, recv []string) (map[string]string, string, error) {
	methods := map[string]string{}
	entry := ""
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := read(name)
		if err != nil {
			return nil, "", err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, "", err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					switch {
					case ts.Name.Name == "corpusEntry":
						if ts.Assign == 0 {
							return nil, "", fmt.Errorf("corpusEntry is not an alias")
						}
						entry = typeString(fset, ts.Type)
					case iface != "" && ts.Name.Name == iface:
						it, ok := ts.Type.(*ast.InterfaceType)
						if !ok {
							return nil, "", fmt.Errorf("%s is not an interface", iface)
						}
						for _, m := range it.Methods.List {
							for _, n := range m.Names {
								methods[n.Name] = typeString(fset, m.Type)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if iface != "" || d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				rt := d.Recv.List[0].Type
				if star, ok := rt.(*ast.StarExpr); ok {
					rt = star.X
				}
				if id, ok := rt.(*ast.Ident); ok && contains(recv, id.Name) {
					methods[d.Name.Name] = typeString(fset, d.Type)
				}
			}
		}
	}
	switch {
	case iface != "" && len(methods) == 0:
		return nil, "", fmt.Errorf("no interface %s", iface)
	case entry == "":
		return nil, "", fmt.Errorf("no corpusEntry type")
	}
	return methods, entry, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// typeString prints a type expression with every function type's parameter and
// result names left out, so that a method declaration and an interface's method
// compare equal exactly when their signatures do.
func typeString(fset *token.FileSet, expr ast.Expr) string {
	ast.Inspect(expr, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			ft.Params = unnamed(ft.Params)
			ft.Results = unnamed(ft.Results)
		}
		return true
	})
	var b bytes.Buffer
	printer.Fprint(&b, fset, expr)
	return strings.Join(strings.Fields(b.String()), " ")
}

// unnamed is list with one field a parameter and no names.
func unnamed(list *ast.FieldList) *ast.FieldList {
	if list == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range list.List {
		n := max(len(f.Names), 1)
		for range n {
			out.List = append(out.List, &ast.Field{Type: f.Type})
		}
	}
	return out
}

// testingChanges lists how the runtime (have) falls short of testing (want).
func testingChanges(want, have *toolchain) []string {
	var changes []string
	names := make([]string, 0, len(want.methods))
	for n := range want.methods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sig, ok := have.methods[n]
		switch {
		case !ok:
			changes = append(changes, fmt.Sprintf("testDeps.%s added", n))
		case sig != want.methods[n]:
			changes = append(changes, fmt.Sprintf("testDeps.%s is now %s", n, want.methods[n]))
		}
	}
	if want.entry != have.entry {
		changes = append(changes, "corpusEntry is now "+want.entry)
	}
	return changes
}

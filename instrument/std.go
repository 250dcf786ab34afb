package instrument

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// The standard library's own fuzz targets (archive/tar's FuzzReader, run in
// GOROOT/src/archive/tar as a Go contributor would) belong to no module. Such a
// package is taken as its own module: the runtime's overlay package goes in a
// directory below it, so it is a standard package too (those may import only
// standard ones), only the package's own frames are the user's, and its standard
// dependencies are not instrumented, as for any other target.

// stdRoot recognizes standard library packages among those one load returns.
type stdRoot struct {
	asked      bool
	goroot     string
	inModCache bool   // GOROOT lies in the module cache
	goLine     string // GOROOT/src/go.mod's go line
}

// module is the module a standard library package p stands in, and the GOROOT to
// build it with when that GOROOT is in the module cache; nil if p is not one.
func (s *stdRoot) module(ctx context.Context, dir string, p *packages.Package) (*packages.Module, string) {
	if !s.asked {
		s.asked = true
		cmd := exec.CommandContext(ctx, "go", "env", "GOROOT", "GOMODCACHE")
		cmd.Dir = dir
		out, err := cmd.Output()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil || len(lines) != 2 || lines[0] == "" {
			return nil, ""
		}
		s.goroot = strings.TrimSpace(lines[0])
		mc := strings.TrimSpace(lines[1])
		s.inModCache = mc != "" && strings.HasPrefix(s.goroot, filepath.Clean(mc)+string(filepath.Separator))
		if data, err := os.ReadFile(filepath.Join(s.goroot, "src", "go.mod")); err == nil {
			if f, err := modfile.ParseLax("go.mod", data, nil); err == nil && f.Go != nil {
				s.goLine = f.Go.Version
			}
		}
	}
	if s.goroot == "" || len(p.GoFiles) == 0 {
		return nil, ""
	}
	pdir := filepath.Dir(p.GoFiles[0])
	if rel, err := filepath.Rel(filepath.Join(s.goroot, "src"), pdir); err != nil || rel != filepath.FromSlash(p.PkgPath) {
		return nil, ""
	}
	goroot := ""
	if s.inModCache {
		goroot = s.goroot
	}
	return &packages.Module{Path: p.PkgPath, Dir: pdir, GoVersion: s.goLine}, goroot
}

// goCommand points cmd, a go command building pkg, at the toolchain that can. A
// GOROOT in the module cache is a toolchain GOTOOLCHAIN fetched; the go command
// refuses overlays of files beneath the module cache, so that GOROOT's own go runs
// with a module cache of its own under cacheDir (the standard library needs no
// module) and GOTOOLCHAIN=local (the user's go line chose it already).
func (pkg *Package) goCommand(cmd *exec.Cmd, cacheDir string) {
	if pkg.StdGOROOT == "" {
		return
	}
	cmd.Path = filepath.Join(pkg.StdGOROOT, "bin", "go")
	cmd.Env = append(cmd.Environ(), "GOTOOLCHAIN=local", "GOMODCACHE="+filepath.Join(cacheDir, "gomodcache"))
}

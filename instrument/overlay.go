package instrument

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// writeOverlay writes what the build adds to the user's module or puts in
// place of its files, besides the rewritten files already in overlay: the
// bridges, the runtime, the go.mod or go.work whose replace directives point
// at the dependencies' copies, and the harness. Then it writes the overlay
// file (go build -overlay) naming them all, and returns its path. All of it
// goes under the plan's build directory.
func writeOverlay(ctx context.Context, p *buildPlan, files []instrumented, runtime fs.FS, overlay map[string]string) (string, error) {
	if err := writeBridges(files, p.bridges, p.dir, overlay); err != nil {
		return "", fmt.Errorf("bridges: %w", err)
	}
	rtImport, err := overlayRuntime(p.pkg, runtime, p.dir, overlay)
	if err != nil {
		return "", fmt.Errorf("runtime sources: %w", err)
	}
	if len(p.copied) > 0 {
		if err := replaceModules(ctx, p.pkg, p.dir, p.copied, overlay); err != nil {
			return "", fmt.Errorf("replacing the dependencies by their copies: %w", err)
		}
	}
	harness, _ := generateHarness(p.pkg, files, rtImport)
	hpath := filepath.Join(p.dir, harnessFile)
	if err := writeIfChanged(hpath, harness); err != nil {
		return "", fmt.Errorf("harness: %w", err)
	}
	overlay[filepath.Join(p.pkg.Dir, harnessFile)] = hpath
	ovl, _ := json.MarshalIndent(map[string]any{"Replace": overlay}, "", "\t")
	ovlPath := filepath.Join(p.dir, "overlay.json")
	if err := writeIfChanged(ovlPath, ovl); err != nil {
		return "", err
	}
	return ovlPath, nil
}

// overlayRuntime writes the runtime's sources (not its tests, nor the
// coordinator's half: files named coordinator*.go) under dir and overlays them as
// a package of the target's module in a directory that exists only in the
// overlay; it returns that package's import path.
func overlayRuntime(pkg *Package, runtime fs.FS, dir string, overlay map[string]string) (string, error) {
	rtDir := filepath.Join(pkg.ModuleDir, runtimeDir)
	entries, err := fs.ReadDir(runtime, ".")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		n := e.Name()
		if !runtimeSource(n) {
			continue
		}
		data, err := fs.ReadFile(runtime, n)
		if err != nil {
			return "", err
		}
		data = withGoVersion(data, runtimeGoVersion, "")
		backing := filepath.Join(dir, "rt", n)
		if err := os.MkdirAll(filepath.Dir(backing), 0o755); err != nil {
			return "", err
		}
		if err := writeIfChanged(backing, data); err != nil {
			return "", err
		}
		overlay[filepath.Join(rtDir, n)] = backing
	}
	return pkg.ModulePath + "/" + runtimeDir, nil
}

// runtimeSource says whether the file name of the runtime's sources goes into
// a build: not its tests, nor the coordinator's half (coordinator*.go).
func runtimeSource(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, "coordinator")
}

// replaceModules overlays the file that decides module resolution (go.work in
// workspace mode, else the main module's go.mod) with replace directives pointing
// at the instrumented copies.
func replaceModules(ctx context.Context, pkg *Package, dir string, copied map[string]string, overlay map[string]string) error {
	cmd := exec.CommandContext(ctx, "go", "env", "GOWORK")
	cmd.Dir = pkg.Dir
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go env GOWORK: %w", err)
	}
	file := strings.TrimSpace(string(out))
	if file == "" || file == "off" {
		file = filepath.Join(pkg.ModuleDir, "go.mod")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	mods := make([]string, 0, len(copied))
	for m := range copied {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	// The copies replace whatever the file said (a module replaced by a local
	// directory is copied too): a second replace of one module is an error.
	var edited []byte
	if filepath.Base(file) == "go.work" {
		wf, err := modfile.ParseWork(file, data, nil)
		if err != nil {
			return err
		}
		if err := replaceWith(wf, wf.Replace, mods, copied); err != nil {
			return err
		}
		wf.Cleanup()
		edited = modfile.Format(wf.Syntax)
	} else {
		mf, err := modfile.Parse(file, data, nil)
		if err != nil {
			return err
		}
		if err := replaceWith(mf, mf.Replace, mods, copied); err != nil {
			return err
		}
		mf.Cleanup()
		if edited, err = mf.Format(); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	b.WriteString("// Rewritten by fuzzls: dependencies replaced by their instrumented copies.\n\n")
	b.Write(edited)
	backing := filepath.Join(dir, "replace-"+filepath.Base(file))
	if err := writeIfChanged(backing, b.Bytes()); err != nil {
		return err
	}
	overlay[file] = backing
	return nil
}

// replacer is what go.mod and go.work files have in common for replace directives.
type replacer interface {
	DropReplace(oldPath, oldVers string) error
	AddReplace(oldPath, oldVers, newPath, newVers string) error
}

// replaceWith points each module of mods at its copy, dropping the replace
// directives (existing) the file had for it.
func replaceWith(f replacer, existing []*modfile.Replace, mods []string, copied map[string]string) error {
	for _, m := range mods {
		for _, r := range existing {
			if r.Old.Path == m {
				if err := f.DropReplace(m, r.Old.Version); err != nil {
					return err
				}
			}
		}
		if err := f.AddReplace(m, "", copied[m], ""); err != nil {
			return err
		}
	}
	return nil
}

package instrument

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// unit is one package a build instruments.
type unit struct {
	importPath string
	files      []string
	bridge     string // see Dep.Bridge
	goVersion  string // its module's go line
	modVersion string // module@version of a dependency from the module cache, whose files never change; else ""
	noCmp      bool   // counters only, never comparison hooks (stdRole)
	prune      bool   // the package under test or its external tests: pruneTests
}

// buildPlan is what one build instruments and where the results go.
type buildPlan struct {
	pkg *Package
	dir string // the build directory (buildDir)
	// units are the package itself (test files included), its external test
	// package when the harness goes there, then its dependencies.
	units []unit
	// external: the harness goes into the external test package (generateHarness).
	external bool
	copied   map[string]string     // module path → the directory of its copy
	copyDst  map[string]string     // a dependency's file → where its instrumented copy goes
	bridges  map[string]bridgeDest // bridge import path → where its source goes
	copies   map[string]string     // Binary.Copies: a copy's directory → the module's; nil if none
	// pruned holds the test files pruneTests changed (their names).
	pruned map[string]bool
}

// planBuild lists the units of pkg's build in dir. Test files are instrumented
// too: fuzz functions often hold logic of their own (round trips, invariants).
// External test files only when the harness is in the external package, the
// only place their counters are visible from. Dependencies from the module
// cache are instrumented in a copy of their module, which a replace directive
// (in an overlaid go.mod or go.work: replaceModules) points to: planBuild
// makes those copies, under dir/mods, and says where each of their files'
// instrumented version goes. It reads the user's files and writes only under
// dir.
func planBuild(pkg *Package, dir string, role stdRole, prune bool) (*buildPlan, error) {
	_, external := generateHarness(pkg, nil, "")
	p := &buildPlan{pkg: pkg, dir: dir, external: external,
		copied: map[string]string{}, copyDst: map[string]string{}, bridges: map[string]bridgeDest{}, pruned: map[string]bool{}}
	files := append(append([]string(nil), pkg.GoFiles...), pkg.TestFiles...)
	if role == stdRuntime {
		files = append([]string(nil), pkg.TestFiles...)
	}
	p.units = []unit{{importPath: pkg.ImportPath, files: files, goVersion: pkg.GoVersion, noCmp: role != stdPlain, prune: prune}}
	if external && len(pkg.XTestFiles) > 0 {
		p.units = append(p.units, unit{importPath: pkg.ImportPath + "_test", files: pkg.XTestFiles, goVersion: pkg.GoVersion, prune: prune})
	}
	// Packages only copied go last, into the copies the others made.
	for _, copyOnly := range []bool{false, true} {
		for _, d := range pkg.Deps {
			if d.CopyOnly != copyOnly {
				continue
			}
			if err := p.addDep(d); err != nil {
				return nil, fmt.Errorf("%s: %w", d.ImportPath, err)
			}
		}
	}
	cgo := map[string]bool{}
	for _, d := range pkg.Deps {
		if root, ok := p.copied[d.ModulePath]; ok && d.Cgo && !cgo[root] {
			cgo[root] = true
			if err := copyOtherFiles(d.ModuleDir, root); err != nil {
				return nil, fmt.Errorf("%s: %w", d.ModulePath, err)
			}
		}
	}
	return p, nil
}

// addDep adds the unit of dependency d, if it has one: a workspace package the
// harness cannot reach, even through a bridge, has none, and neither has a
// package of another module only copied (Dep.CopyOnly, or its bridge has no
// place) for its module's copy to build. A package of another module is
// copied into its module's copy, made on its first package that is not
// CopyOnly: a module nothing of which is instrumented is not copied.
func (p *buildPlan) addDep(d *Dep) error {
	bdir, bridged := "", d.Bridge != ""
	if bridged {
		if bdir, bridged = bridgeDir(d); !bridged && d.ModulePath == "" {
			return nil // a workspace package the harness cannot reach
		}
	}
	if d.ModulePath == "" {
		if bridged {
			p.bridges[d.Bridge] = bridgeDest{path: filepath.Join(bdir, bridgeName+".go")}
		}
		p.units = append(p.units, unit{importPath: d.ImportPath, files: d.GoFiles, bridge: d.Bridge, goVersion: d.GoVersion})
		return nil
	}
	root, ok := p.copied[d.ModulePath]
	if !ok && d.CopyOnly {
		return nil
	}
	if !ok {
		root = filepath.Join(p.dir, "mods", strings.NewReplacer("/", "_", "@", "_").Replace(d.ModulePath+"@"+d.ModuleVersion))
		if err := copyModuleFile(d, root); err != nil {
			return err
		}
		p.copied[d.ModulePath] = root
		if p.copies == nil {
			p.copies = map[string]string{}
		}
		p.copies[root] = d.ModuleDir
	}
	rel, err := filepath.Rel(d.ModuleDir, d.Dir)
	if err != nil {
		return err
	}
	// The Go files the rewrite writes into the copy are left to it: copied
	// here, they would be written twice each build.
	instrumented := !d.CopyOnly && (d.Bridge == "" || bridged)
	var rewritten map[string]bool
	if instrumented {
		rewritten = map[string]bool{}
		for _, f := range d.GoFiles {
			rewritten[filepath.Base(f)] = true
		}
	}
	if err := copyPackageDir(d.Dir, filepath.Join(root, rel), rewritten); err != nil {
		return err
	}
	if !instrumented {
		return nil
	}
	for _, f := range d.GoFiles {
		p.copyDst[f] = filepath.Join(root, rel, filepath.Base(f))
	}
	if bridged {
		brel, err := filepath.Rel(d.ModuleDir, bdir)
		if err != nil {
			return err
		}
		p.bridges[d.Bridge] = bridgeDest{path: filepath.Join(root, brel, bridgeName+".go"), inCopy: true}
	}
	modVersion := ""
	if d.ModuleVersion != "" { // not a local replacement, which can change
		modVersion = d.ModulePath + "@" + d.ModuleVersion
	}
	p.units = append(p.units, unit{importPath: d.ImportPath, files: d.GoFiles, bridge: d.Bridge, goVersion: d.GoVersion, modVersion: modVersion})
	return nil
}

// copyModuleFile writes the go.mod of a dependency's copy.
func copyModuleFile(d *Dep, root string) error {
	data, err := os.ReadFile(filepath.Join(d.ModuleDir, "go.mod"))
	if err != nil {
		data = []byte("module " + d.ModulePath + "\n")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	return writeIfChanged(filepath.Join(root, "go.mod"), data)
}

// copyPackageDir copies a package's files (not its tests, nor the files named
// in skip), and the subdirectories without Go files that it may embed.
func copyPackageDir(from, to string, skip map[string]bool) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		src := filepath.Join(from, e.Name())
		if e.IsDir() {
			if e.Name() == "testdata" || hasGoFiles(src) {
				continue
			}
			if err := copyPackageDir(src, filepath.Join(to, e.Name()), nil); err != nil {
				return err
			}
			continue
		}
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), "_test.go") || skip[e.Name()] {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := writeIfChanged(filepath.Join(to, e.Name()), data); err != nil {
			return err
		}
	}
	return nil
}

// copyOtherFiles copies the files of the module at from that are not Go source,
// outside its testdata directories, to its copy at to: what a cgo package's C
// compiler may read (headers, C and assembly sources) wherever it lies.
func copyOtherFiles(from, to string) error {
	return filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == "testdata" && path != from {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".go") {
			return nil
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return writeIfChanged(dst, data)
	})
}

func hasGoFiles(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

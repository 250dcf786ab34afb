package instrument

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

// Binary is a built, instrumented test binary for one package.
type Binary struct {
	Path    string
	Package *Package
	// Files and Blocks describe the counters, in the order the runtime numbers them:
	// counter i belongs to Blocks[i], in file Files[Blocks[i].File].
	Files  []string
	Blocks []Block
	// Inputs are the user files this build read (for deciding what a change affects).
	Inputs  []string
	Seconds float64
	// Dict holds the literals of the instrumented packages, for the mutators.
	Dict []string
	// CmpCounters follow the block counters: one per comparison site.
	CmpCounters int
	// CmpSites are the comparison sites, CmpCounters of them, in the runtime's
	// order (site i's counter is len(Blocks)+i, its Counter's is
	// len(Blocks)+Counter), File an index into Files.
	CmpSites []CmpSite
	// Warnings say what the build left out (comparison hooks a package's build
	// failed with), for the user to see: a fuzzer without them still runs, weaker.
	Warnings []string
	// Copies maps the directory of each dependency module's instrumented copy to
	// the module's own directory: the compiler, and so every stack trace, names
	// the copy's files.
	Copies map[string]string
	// Flags are the go test flags it was built with (Race: run it with GORACE set).
	Flags BuildFlags
}

// Block is one counter's range in the user's original file.
type Block struct {
	File int // index into Binary.Files
	CoverBlock
}

// BuildOptions configure Build.
type BuildOptions struct {
	CacheDir string // build products go under CacheDir/build
	Runtime  fs.FS  // the runtime's Go sources (package fuzzrt), copied into the build
	NoCmp    bool   // leave out comparison hooks (for measuring their cost)
	Flags    BuildFlags
}

// BuildError is a package that does not compile. Output names the user's files.
type BuildError struct {
	Package     string
	Output      string
	Diagnostics []Diagnostic
}

// Diagnostic is one positioned message (1-based line and byte column).
type Diagnostic struct {
	File    string
	Line    int
	Col     int
	Message string
}

func (e *BuildError) Error() string { return e.Output }

// maxDict bounds the literals collected for the dictionary.
const maxDict = 4096

// shareDict merges the packages' literals, without duplicates, taking one from
// each package in turn until max: a dependency with a table of thousands of
// strings (HTML's entity names) must not crowd out the literals of the others, as
// taking them in order until max did.
func shareDict(perPkg [][]string, max int) []string {
	var out []string
	seen := map[string]bool{}
	next := make([]int, len(perPkg))
	for more := true; more && len(out) < max; {
		more = false
		for p, lits := range perPkg {
			for next[p] < len(lits) && len(out) < max {
				s := lits[next[p]]
				next[p]++
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
					more = true
					break
				}
			}
		}
	}
	return out
}

// Build instruments pkg and builds its test binary. The user's files are only read.
//
// Comparison hooks are added without type information (cmp.go). Those of two
// typed operands are a guess that fails to compile in some code: a build that
// fails on their lines is retried without the hooks on those lines. Should it
// still fail, the package is built again without any hooks, and the user's own
// compile errors come from that build.
func Build(ctx context.Context, pkg *Package, opts BuildOptions) (*Binary, error) {
	if len(pkg.Errors) > 0 {
		return nil, loadError(pkg)
	}
	if err := CheckToolchain(ctx, pkg.Dir, opts.Runtime); err != nil {
		return nil, err
	}
	if err := opts.Flags.checkRace(ctx, pkg.Dir); err != nil {
		return nil, err
	}
	var warnings []string
	if !opts.NoCmp {
		vh := loadVarHooks(buildDir(opts, pkg))
		for attempt := 0; ; attempt++ {
			bin, err := build(ctx, pkg, opts, vh)
			var be *BuildError
			if !errors.As(err, &be) {
				if err == nil {
					if attempt > 0 {
						vh.save()
					}
					bin.Warnings = vh.warnings()
				}
				return bin, err
			}
			if attempt == maxVarRetries || !vh.blame(be) && !vh.blamePackages(be) {
				warnings = []string{"comparison hooks left out: the build with them failed: " + firstError(be)}
				break
			}
		}
	}
	bin, err := build(ctx, pkg, opts, nil)
	if err == nil {
		bin.Warnings = warnings
	}
	return bin, err
}

// firstError is the first compiler message of be.
func firstError(be *BuildError) string {
	if len(be.Diagnostics) > 0 {
		d := be.Diagnostics[0]
		return fmt.Sprintf("%s:%d: %s", filepath.Base(d.File), d.Line, d.Message)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(be.Output), "\n")
	return line
}

// buildDir is where pkg's build products go: one directory per set of flags.
func buildDir(opts BuildOptions, pkg *Package) string {
	sum := sha256.Sum256([]byte(pkg.ImportPath + "\x00" + pkg.Dir + opts.Flags.key()))
	return filepath.Join(opts.CacheDir, "build", pkg.Name+"-"+hex.EncodeToString(sum[:6]))
}

// build instruments and builds pkg: with comparison hooks when vh is not nil.
func build(ctx context.Context, pkg *Package, opts BuildOptions, vh *varHooks) (*Binary, error) {
	start := time.Now()
	dir := buildDir(opts, pkg)
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	bin := &Binary{Package: pkg, Flags: opts.Flags}
	overlay := map[string]string{}
	var files []instrumented
	var berr BuildError
	berr.Package = pkg.ImportPath
	if vh != nil {
		vh.lines = map[string]hookedLines{}
		vh.hookedPkgs = map[string]string{}
	}

	// Instrument the package itself, then its workspace dependencies.
	type unit struct {
		importPath string
		files      []string
		bridge     string // see Dep.Bridge
		goVersion  string // its module's go line
		modVersion string // module@version of a dependency from the module cache, whose files never change; else ""
	}
	// Test files are instrumented too: fuzz functions often hold logic of their
	// own (round trips, invariants). External test files only when the harness is
	// in the external package, the only place their counters are visible from.
	_, external := generateHarness(pkg, nil, "")
	units := []unit{{pkg.ImportPath, append(append([]string(nil), pkg.GoFiles...), pkg.TestFiles...), "", pkg.GoVersion, ""}}
	if external && len(pkg.XTestFiles) > 0 {
		units = append(units, unit{pkg.ImportPath + "_test", pkg.XTestFiles, "", pkg.GoVersion, ""})
	}
	// Dependencies from the module cache are instrumented in a copy of their
	// module, which a replace directive (in an overlaid go.mod or go.work) points to.
	copied := map[string]string{}      // module path → copy
	copyDst := map[string]string{}     // original file → where its instrumented copy goes
	bridges := map[string]bridgeDest{} // bridge import path → where its source goes
	for _, d := range pkg.Deps {
		bdir, bridged := "", d.Bridge != ""
		if bridged {
			if bdir, bridged = bridgeDir(d); !bridged && d.ModulePath == "" {
				continue // a workspace package the harness cannot reach
			}
		}
		if d.ModulePath == "" {
			if bridged {
				bridges[d.Bridge] = bridgeDest{path: filepath.Join(bdir, bridgeName+".go")}
			}
			units = append(units, unit{d.ImportPath, d.GoFiles, d.Bridge, d.GoVersion, ""})
			continue
		}
		root, ok := copied[d.ModulePath]
		if !ok {
			root = filepath.Join(dir, "mods", strings.NewReplacer("/", "_", "@", "_").Replace(d.ModulePath+"@"+d.ModuleVersion))
			if err := copyModuleFile(d, root); err != nil {
				return nil, err
			}
			copied[d.ModulePath] = root
			if bin.Copies == nil {
				bin.Copies = map[string]string{}
			}
			bin.Copies[root] = d.ModuleDir
		}
		rel, err := filepath.Rel(d.ModuleDir, d.Dir)
		if err != nil {
			return nil, err
		}
		if err := copyPackageDir(d.Dir, filepath.Join(root, rel)); err != nil {
			return nil, err
		}
		if d.CopyOnly || d.Bridge != "" && !bridged {
			continue
		}
		for _, f := range d.GoFiles {
			copyDst[f] = filepath.Join(root, rel, filepath.Base(f))
		}
		if bridged {
			brel, err := filepath.Rel(d.ModuleDir, bdir)
			if err != nil {
				return nil, err
			}
			bridges[d.Bridge] = bridgeDest{path: filepath.Join(root, brel, bridgeName+".go"), inCopy: true}
		}
		modVersion := ""
		if d.ModuleVersion != "" { // not a local replacement, which can change
			modVersion = d.ModulePath + "@" + d.ModuleVersion
		}
		units = append(units, unit{d.ImportPath, d.GoFiles, d.Bridge, d.GoVersion, modVersion})
	}
	bridgePkgs := map[string]map[string]int{} // bridge → its packages, numbered
	literals := make([][]string, len(units))
	for ui, u := range units {
		if vh != nil {
			vh.knownPlain(u.importPath, u.modVersion)
		}
		srcs := make([][]byte, len(u.files))
		var consts map[string]bool
		if vh != nil {
			var parsed []*ast.File
			fset := token.NewFileSet()
			for i, name := range u.files {
				data, err := os.ReadFile(name)
				if err != nil {
					return nil, err
				}
				srcs[i] = data
				if f, err := parser.ParseFile(fset, name, data, parser.SkipObjectResolution); err == nil {
					parsed = append(parsed, f)
				}
			}
			consts = PackageUntypedConsts(parsed)
		}
		for i, name := range u.files {
			data := srcs[i]
			if data == nil {
				var err error
				if data, err = os.ReadFile(name); err != nil {
					return nil, err
				}
			}
			bin.Inputs = append(bin.Inputs, name)
			literals[ui] = append(literals[ui], Literals(name, data)...)
			var out []byte
			var blocks []CoverBlock
			var sites int
			var err error
			var fileSites []CmpSite
			if vh != nil && vh.plain[u.importPath] == "" {
				vh.hookedPkgs[u.importPath] = u.modVersion
				compiled := name // the name the compiler reports
				if dst, ok := copyDst[name]; ok {
					compiled = dst
				}
				hooked := map[int]bool{}
				out, blocks, sites, err = RewriteFileCmp(name, data, NewFileID(u.importPath, i), CmpOptions{UntypedConsts: consts,
					Vars: true, NoVarLines: vh.skipped(compiled, data), VarLines: hooked, Sites: &fileSites})
				vh.hooked(compiled, data, hooked)
				if err == nil && predatesHooks(u.goVersion) {
					// The hooks' helpers need go1.21.
					out = withGoVersion(out, hooksGoVersion, compiled)
				}
			} else {
				out, blocks, err = RewriteFile(name, data, NewFileID(u.importPath, i))
			}
			if err != nil {
				berr.add(err)
				continue
			}
			if bytes.Equal(out, data) { // not instrumented (cgo)
				continue
			}
			if opts.Flags.Race {
				if out, err = raceSafe(out, NewFileID(u.importPath, i)); err != nil {
					return nil, err
				}
			}
			origName := name
			if dst, ok := copyDst[name]; ok { // a dependency's copy: ours to write
				if err := writeIfChanged(dst, out); err != nil {
					return nil, err
				}
				name = dst
			} else {
				backing := filepath.Join(src, fmt.Sprintf("%d_%d_%s", ui, i, filepath.Base(name)))
				if err := writeIfChanged(backing, out); err != nil {
					return nil, err
				}
				overlay[name] = backing
			}
			fi := len(bin.Files)
			bin.Files = append(bin.Files, origName)
			for _, b := range blocks {
				bin.Blocks = append(bin.Blocks, Block{File: fi, CoverBlock: b})
			}
			f := instrumented{importPath: u.importPath, id: NewFileID(u.importPath, i), cmpSites: sites, bridge: u.bridge}
			if u.bridge != "" {
				if bridgePkgs[u.bridge] == nil {
					bridgePkgs[u.bridge] = map[string]int{}
				}
				n, ok := bridgePkgs[u.bridge][u.importPath]
				if !ok {
					n = len(bridgePkgs[u.bridge])
					bridgePkgs[u.bridge][u.importPath] = n
				}
				f.bridgePkg = n
			}
			files = append(files, f)
			for _, cs := range fileSites[:sites] {
				cs.File, cs.Counter = fi, bin.CmpCounters+cs.Counter
				bin.CmpSites = append(bin.CmpSites, cs)
			}
			bin.CmpCounters += sites
		}
	}
	if !external {
		bin.Inputs = append(bin.Inputs, pkg.XTestFiles...)
	}
	bin.Dict = shareDict(literals, maxDict)
	if len(berr.Diagnostics) > 0 {
		return nil, &berr
	}

	if err := writeBridges(files, bridges, dir, overlay); err != nil {
		return nil, err
	}

	// The runtime, as a package of the target's module that exists only in the overlay.
	rtDir := filepath.Join(pkg.ModuleDir, runtimeDir)
	rtImport := pkg.ModulePath + "/" + runtimeDir
	entries, err := fs.ReadDir(opts.Runtime, ".")
	if err != nil {
		return nil, fmt.Errorf("runtime sources: %v", err)
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		data, err := fs.ReadFile(opts.Runtime, n)
		if err != nil {
			return nil, err
		}
		data = withGoVersion(data, runtimeGoVersion, "")
		backing := filepath.Join(dir, "rt", n)
		if err := os.MkdirAll(filepath.Dir(backing), 0o755); err != nil {
			return nil, err
		}
		if err := writeIfChanged(backing, data); err != nil {
			return nil, err
		}
		overlay[filepath.Join(rtDir, n)] = backing
	}
	if len(copied) > 0 {
		if err := replaceModules(ctx, pkg, dir, copied, overlay); err != nil {
			return nil, err
		}
	}
	harness, _ := generateHarness(pkg, files, rtImport)
	hpath := filepath.Join(dir, harnessFile)
	if err := writeIfChanged(hpath, harness); err != nil {
		return nil, err
	}
	overlay[filepath.Join(pkg.Dir, harnessFile)] = hpath

	ovl, _ := json.MarshalIndent(map[string]any{"Replace": overlay}, "", "\t")
	ovlPath := filepath.Join(dir, "overlay.json")
	if err := writeIfChanged(ovlPath, ovl); err != nil {
		return nil, err
	}
	// Build next to the final name and rename: workers running the old binary keep it.
	bin.Path = filepath.Join(dir, pkg.Name+".test")
	tmp := fmt.Sprintf("%s.%d.tmp", bin.Path, time.Now().UnixNano())
	args := append([]string{"test", "-c", "-o", tmp, "-overlay", ovlPath, "-vet=off"}, opts.Flags.Args()...)
	cmd := exec.CommandContext(ctx, "go", append(args, ".")...)
	cmd.Dir = pkg.Dir
	pkg.goCommand(cmd, dir)
	unguard := guard(cmd)
	out, err := cmd.CombinedOutput()
	unguard()
	if err != nil {
		os.Remove(tmp)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, compileError(pkg, string(out), overlay)
	}
	if err := os.Rename(tmp, bin.Path); err != nil {
		return nil, err
	}
	bin.Seconds = time.Since(start).Seconds()
	return bin, nil
}

func (e *BuildError) add(err error) {
	var list scanner.ErrorList
	if errors.As(err, &list) {
		for _, se := range list {
			e.Diagnostics = append(e.Diagnostics, Diagnostic{File: se.Pos.Filename, Line: se.Pos.Line, Col: se.Pos.Column, Message: se.Msg})
			e.Output += se.Error() + "\n"
		}
		return
	}
	e.Diagnostics = append(e.Diagnostics, Diagnostic{Message: err.Error()})
	e.Output += err.Error() + "\n"
}

func loadError(pkg *Package) error {
	e := &BuildError{Package: pkg.ImportPath}
	for _, err := range pkg.Errors {
		e.add(err)
		// Errors made by findTargets start with "file:line: ".
		if d := &e.Diagnostics[len(e.Diagnostics)-1]; d.File == "" {
			if m := diagRE.FindStringSubmatch(d.Message); m != nil {
				d.File = m[1]
				d.Line, _ = strconv.Atoi(m[2])
				d.Col, _ = strconv.Atoi(m[3])
				d.Message = m[4]
			}
		}
	}
	return e
}

// diagRE matches "file.go:12:5: message" and "file.go:12: message".
var diagRE = regexp.MustCompile(`^(\S+\.go):(\d+):(?:(\d+):)? ?(.*)$`)

// compilerPosRE matches the compiler's positioned messages, whose position may be
// followed by the physical one in brackets when a //line directive moved it:
// "zz_fuzzls_instrumentation.go:1[/dir/x.go:582:5]: message".
var compilerPosRE = regexp.MustCompile(`^(\S+?):(\d+)(?::(\d+))?(?:\[(\S+?):(\d+)(?::(\d+))?\])?: (.*)$`)

// generatedPrefix starts the name of every file and directory fuzzls generates
// (the harness, the runtime, bridges, the //line name of added declarations).
const generatedPrefix = "zz_fuzzls_"

// IsGenerated reports whether path names code fuzzls generated, not the user's:
// such a file exists only in a build's overlay, and a stack frame in it is no
// place to show a user.
func IsGenerated(path string) bool {
	return strings.HasPrefix(filepath.Base(path), generatedPrefix) || strings.Contains(filepath.ToSlash(path), "/"+generatedPrefix)
}

// compileError maps the compiler's output back to the user's files (overlay backing
// files keep the user's line numbers) and parses its positioned messages. A
// message about code fuzzls generated is never placed in a user's file: it has no
// position and says whose code it is about.
func compileError(pkg *Package, out string, overlay map[string]string) error {
	back := make([]string, 0, len(overlay))
	for orig, b := range overlay {
		back = append(back, b, orig)
	}
	// Longer paths first, so no path is replaced inside another.
	type pair struct{ from, to string }
	var pairs []pair
	for i := 0; i < len(back); i += 2 {
		pairs = append(pairs, pair{back[i], back[i+1]})
	}
	sort.Slice(pairs, func(i, j int) bool { return len(pairs[i].from) > len(pairs[j].from) })
	for _, p := range pairs {
		out = strings.ReplaceAll(out, p.from, p.to)
		if rel, err := filepath.Rel(pkg.Dir, p.from); err == nil {
			out = strings.ReplaceAll(out, rel, p.to)
		}
	}
	e := &BuildError{Package: pkg.ImportPath, Output: out}
	for _, line := range strings.Split(out, "\n") {
		m := compilerPosRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		file, ln, col := m[1], m[2], m[3]
		if IsGenerated(file) || IsGenerated(m[4]) {
			e.Diagnostics = append(e.Diagnostics, Diagnostic{Message: "fuzzls's generated code does not compile (a fuzzls bug): " + m[7]})
			continue
		}
		if !strings.HasSuffix(file, ".go") {
			if m[4] == "" {
				continue
			}
			file, ln, col = m[4], m[5], m[6] // a //line name that is no Go file: the physical position
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(pkg.Dir, file)
		}
		d := Diagnostic{File: file, Message: m[7]}
		d.Line, _ = strconv.Atoi(ln)
		d.Col, _ = strconv.Atoi(col)
		e.Diagnostics = append(e.Diagnostics, d)
	}
	return e
}

// writeIfChanged keeps mtimes stable for unchanged files, which keeps the go
// command's cache effective.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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

// copyPackageDir copies a package's files (not its tests), and the subdirectories
// without Go files that it may embed.
func copyPackageDir(from, to string) error {
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
			if err := copyPackageDir(src, filepath.Join(to, e.Name())); err != nil {
				return err
			}
			continue
		}
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), "_test.go") {
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

func hasGoFiles(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

// replaceModules overlays the file that decides module resolution (go.work in
// workspace mode, else the main module's go.mod) with replace directives pointing
// at the instrumented copies.
func replaceModules(ctx context.Context, pkg *Package, dir string, copied map[string]string, overlay map[string]string) error {
	cmd := exec.CommandContext(ctx, "go", "env", "GOWORK")
	cmd.Dir = pkg.Dir
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go env GOWORK: %v", err)
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

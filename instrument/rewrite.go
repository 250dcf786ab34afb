package instrument

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// unitRewriter rewrites the files of a build's units (rewriteUnits) and records
// what the Binary says of them.
type unitRewriter struct {
	plan    *buildPlan
	race    bool      // a -race build: raceSafe
	vh      *varHooks // nil: no comparison hooks
	bin     *Binary   // gets Inputs, Files, Blocks, CmpCounters, CmpSites and Dict
	overlay map[string]string
	berr    BuildError     // the files that do not parse
	files   []instrumented // for the harness and the bridges
	// bridgePkgs numbers the packages of each bridge: bridge → import path → n.
	bridgePkgs map[string]map[string]int
	literals   [][]string  // per unit, for the dictionary
	rec        *unitRecord // what the unit being rewritten gave, for rwcache.go
}

// rewriteUnits instruments every file of the plan's units, with comparison
// hooks when vh is not nil (except in the packages vh builds plain). A
// dependency's copy gets its files overwritten; any other file is written to
// a backing file under the build directory that overlay puts in place of the
// user's, whose files are only read. It fills bin's Inputs, Files, Blocks,
// CmpCounters, CmpSites and Dict, and returns the files the harness hands to the
// runtime. Files that do not parse are a *BuildError, after all were tried.
func rewriteUnits(p *buildPlan, race bool, vh *varHooks, bin *Binary, overlay map[string]string) ([]instrumented, error) {
	if vh != nil {
		vh.lines = map[string]hookedLines{}
		vh.hookedPkgs = map[string]string{}
	}
	r := &unitRewriter{plan: p, race: race, vh: vh, bin: bin, overlay: overlay,
		berr:       BuildError{Package: p.pkg.ImportPath},
		bridgePkgs: map[string]map[string]int{}, literals: make([][]string, len(p.units))}
	for ui, u := range p.units {
		if err := r.unit(ui, u); err != nil {
			return nil, fmt.Errorf("%s: %w", u.importPath, err)
		}
	}
	if !p.external {
		bin.Inputs = append(bin.Inputs, p.pkg.XTestFiles...)
		if len(p.units) > 0 && p.units[0].prune {
			if err := r.pruneXTests(); err != nil {
				return nil, err
			}
		}
	}
	bin.Dict = shareDict(r.literals, maxDict)
	if len(r.berr.Diagnostics) > 0 {
		return nil, &r.berr
	}
	return r.files, nil
}

// unit reads the files of u, the ui-th unit, and rewrites them. The package's
// untyped constants, which the comparison hooks need, are those of all its files.
func (r *unitRewriter) unit(ui int, u unit) error {
	if r.vh != nil {
		r.vh.knownPlain(u.importPath, u.modVersion)
	}
	srcs := make([][]byte, len(u.files))
	for i, name := range u.files {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		srcs[i] = data
	}
	key := r.unitKey(ui, u, srcs)
	if r.replay(ui, u, key, srcs) {
		return nil
	}
	texts := srcs              // what the compiler gets
	var xtests map[string]bool // what the external tests may call
	if u.prune && ui == 0 {
		xtests = identsOf(r.plan.pkg.XTestFiles) // nil: one does not parse, so no pruning
	}
	if u.prune && (ui != 0 || xtests != nil) {
		if pruned := pruneTests(u.files, srcs, r.plan.pkg.ImportNames, xtests); pruned != nil {
			texts = append([][]byte(nil), srcs...)
			for i, b := range pruned {
				if b != nil {
					texts[i] = b
					r.plan.pruned[u.files[i]] = true
				}
			}
		}
	}
	r.rec = &unitRecord{Key: key}
	errs := len(r.berr.Diagnostics)
	defer func() {
		if r.rec != nil && len(r.berr.Diagnostics) == errs {
			r.saveRecord(u, r.rec)
		}
		r.rec = nil
	}()
	var consts map[string]bool
	if r.vh != nil {
		var parsed []*ast.File
		fset := token.NewFileSet()
		for i, name := range u.files {
			if f, err := parser.ParseFile(fset, name, texts[i], parser.SkipObjectResolution); err == nil {
				parsed = append(parsed, f)
			}
		}
		consts = packageUntypedConsts(parsed)
	}
	for i, name := range u.files {
		if err := r.file(ui, u, i, name, srcs[i], texts[i], consts); err != nil {
			return err
		}
	}
	return nil
}

// file rewrites the i-th file of u, name with the contents src, as data (src
// pruned, pruneTests), and writes it where the build reads it. The dictionary
// takes src's literals: tests' literals are the format's words. A file that
// does not parse goes into r.berr; one the rewrite leaves as it is (cgo) is not
// instrumented.
func (r *unitRewriter) file(ui int, u unit, i int, name string, src, data []byte, consts map[string]bool) error {
	id := newFileID(u.importPath, i)
	r.bin.Inputs = append(r.bin.Inputs, name)
	lits := literals(name, src)
	r.literals[ui] = append(r.literals[ui], lits...)
	rw, err := r.rewrite(u, id, name, data, consts)
	if err != nil {
		r.berr.add(err)
		return nil
	}
	rec := fileRecord{Literals: lits, Hooked: rw.hooked != nil, HookedLines: sortedLines(rw.hooked), Pruned: r.plan.pruned[name]}
	out := rw.out
	if bytes.Equal(out, data) { // not instrumented (cgo)
		if dst, ok := r.plan.copyDst[name]; ok { // a copy gets it as it is
			if err := writeIfChanged(dst, data); err != nil {
				return err
			}
		}
		r.rec.add(rec)
		return nil
	}
	adapted := false
	if strings.HasSuffix(name, "_test.go") && u.bridge == "" { // where fuzz targets are
		out, adapted = adaptCalls(name, out, id)
	}
	if r.race {
		if out, err = raceSafe(out, id); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	dst, ok := r.plan.copyDst[name] // a dependency's copy: ours to write
	if !ok {
		dst = filepath.Join(r.plan.dir, "src", fmt.Sprintf("%d_%d_%s", ui, i, filepath.Base(name)))
		r.overlay[name] = dst
	}
	if err := writeIfChanged(dst, out); err != nil {
		return err
	}
	rec.Dest, rec.Blocks, rec.Sites, rec.Where, rec.Adapted = dst, rw.blocks, rw.sites, rw.where[:rw.sites], adapted
	rec.Size, rec.ModTime = fileStamp(dst)
	r.rec.add(rec)
	r.record(u, name, id, rw.blocks, rw.where[:rw.sites], adapted)
	return nil
}

// record adds name, a file of u, instrumented (its blocks and comparison
// sites), to the Binary and the files the harness hands to the runtime.
func (r *unitRewriter) record(u unit, name string, id fileID, blocks []CoverBlock, where []CmpSite, adapted bool) {
	fi := len(r.bin.Files)
	r.bin.Files = append(r.bin.Files, name)
	for _, b := range blocks {
		r.bin.Blocks = append(r.bin.Blocks, Block{File: fi, CoverBlock: b})
	}
	f := instrumented{importPath: u.importPath, id: id, cmpSites: len(where), bridge: u.bridge, adapted: adapted}
	if u.bridge != "" {
		f.bridgePkg = r.bridgePkg(u)
	}
	r.files = append(r.files, f)
	for _, cs := range where {
		cs.File, cs.Counter = fi, r.bin.CmpCounters+cs.Counter
		r.bin.CmpSites = append(r.bin.CmpSites, cs)
	}
	r.bin.CmpCounters += len(where)
}

// rewritten is one file instrumented.
type rewritten struct {
	out    []byte
	blocks []CoverBlock
	sites  int          // comparison sites; 0 without hooks
	where  []CmpSite    // where each site is, numbered in the file
	hooked map[int]bool // the lines with two-operand hooks; nil without hooks
}

// rewrite instruments one file: with comparison hooks unless the build has none
// or builds the package without them (vh.plain). The hooked lines are noted
// in vh, under the name the compiler reports (a dependency's copy).
func (r *unitRewriter) rewrite(u unit, id fileID, name string, data []byte, consts map[string]bool) (rewritten, error) {
	var rw rewritten
	var err error
	if r.vh == nil || u.noCmp || r.vh.plain[u.importPath] != "" {
		rw.out, rw.blocks, err = RewriteFile(name, data, id)
		return rw, err
	}
	r.vh.hookedPkgs[u.importPath] = u.modVersion
	compiled := name // the name the compiler reports
	if dst, ok := r.plan.copyDst[name]; ok {
		compiled = dst
	}
	rw.hooked = map[int]bool{}
	rw.out, rw.blocks, rw.sites, err = rewriteFileCmp(name, data, id, cmpOptions{UntypedConsts: consts,
		Vars: true, NoVarLines: r.vh.skipped(compiled, data), VarLines: rw.hooked, Sites: &rw.where})
	r.vh.hooked(compiled, data, rw.hooked)
	if err == nil && predatesHooks(u.goVersion) {
		// The hooks' helpers need go1.21.
		rw.out = withGoVersion(rw.out, hooksGoVersion, compiled)
	}
	return rw, err
}

// pruneXTests prunes the external test files, which the harness leaves
// uninstrumented, into backing files the overlay puts in their place.
func (r *unitRewriter) pruneXTests() error {
	names := r.plan.pkg.XTestFiles
	srcs := make([][]byte, len(names))
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		srcs[i] = data
	}
	for i, b := range pruneTests(names, srcs, r.plan.pkg.ImportNames, nil) {
		if b == nil {
			continue
		}
		dst := filepath.Join(r.plan.dir, "src", fmt.Sprintf("x_%d_%s", i, filepath.Base(names[i])))
		if err := writeIfChanged(dst, b); err != nil {
			return err
		}
		r.overlay[names[i]] = dst
		r.plan.pruned[names[i]] = true
	}
	return nil
}

// bridgePkg numbers u's package within its bridge, in the order they come.
func (r *unitRewriter) bridgePkg(u unit) int {
	pkgs := r.bridgePkgs[u.bridge]
	if pkgs == nil {
		pkgs = map[string]int{}
		r.bridgePkgs[u.bridge] = pkgs
	}
	n, ok := pkgs[u.importPath]
	if !ok {
		n = len(pkgs)
		pkgs[u.importPath] = n
	}
	return n
}

package instrument

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
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
	// Steps are how long each step of the build took, in order: where a slow
	// build's time goes (a big repository's copies, or the compiler).
	Steps []Step
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

// ShareWith makes b use prev's Files, Blocks, CmpSites, Inputs and Dict where
// they are equal to b's: another target of the same package, or the same
// code built again, has the same ones, and a daemon fuzzing many targets then
// keeps one copy. A Binary's slices are not modified after Build.
func (b *Binary) ShareWith(prev *Binary) {
	share(&b.Files, prev.Files)
	share(&b.Blocks, prev.Blocks)
	share(&b.CmpSites, prev.CmpSites)
	share(&b.Inputs, prev.Inputs)
	share(&b.Dict, prev.Dict)
}

func share[S ~[]E, E comparable](dst *S, src S) {
	if slices.Equal(*dst, src) {
		*dst = src
	}
}

// Step is one step of a build and how long it took.
type Step struct {
	Name    string
	Seconds float64
}

// steps times a build's steps.
type steps struct {
	list []Step
	last time.Time
}

func newSteps() *steps { return &steps{last: time.Now()} }

// done ends the step named name, begun when the one before it ended.
func (s *steps) done(name string) {
	now := time.Now()
	s.list = append(s.list, Step{name, now.Sub(s.last).Seconds()})
	s.last = now
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

// Build instruments pkg and builds its test binary. The user's files are only read.
//
// Comparison hooks are added without type information (cmp.go). Those of two
// typed operands are a guess that fails to compile in some code: a build that
// fails on their lines is retried without the hooks on those lines. Should it
// still fail, the package is built again without any hooks, and the user's own
// compile errors come from that build.
//
// A package that does not load or compile is a *BuildError, as it is (never
// wrapped: its Output is for the user). A step that fails for another cause is a
// *StepError, which says which package and which step, and wraps the cause
// (errors.Is finds a full disk's syscall.ENOSPC, a cancelled ctx's
// context.Canceled).
func Build(ctx context.Context, pkg *Package, opts BuildOptions) (*Binary, error) {
	if len(pkg.Errors) > 0 {
		return nil, loadError(pkg)
	}
	st := newSteps()
	if err := CheckToolchain(ctx, pkg.Dir, opts.Runtime); err != nil {
		return nil, err
	}
	if err := opts.Flags.checkRace(ctx, pkg.Dir); err != nil {
		return nil, err
	}
	role, err := roleOf(ctx, pkg, opts.Runtime, buildDir(opts, pkg))
	if err != nil {
		return nil, stepError(pkg, "standard library", err)
	}
	st.done("checks")
	var warnings []string
	switch role {
	case stdMachinery:
		warnings = append(warnings, pkg.ImportPath+" has no comparison hooks: testing and fuzzls's runtime, which runs them, use it themselves")
	case stdRuntime:
		warnings = append(warnings, pkg.ImportPath+" is not instrumented, only its tests are: the Go runtime is built from it, and its code runs for the runtime itself (go test -fuzz leaves it uninstrumented too)")
	}
	// A build with the unreachable tests pruned (pruneTests) that fails in a
	// file pruning changed is made again without, and if that one builds, the
	// package is never pruned again.
	dir := buildDir(opts, pkg)
	prune := !fileExists(filepath.Join(dir, noPruneFile))
	try := func(vh *varHooks) (*Binary, error) {
		bin, pruned, err := build(ctx, pkg, opts, role, vh, st, prune)
		var be *BuildError
		if prune && errors.As(err, &be) && blamesPruning(pkg, be, pruned) {
			if bin, _, err = build(ctx, pkg, opts, role, vh, st, false); err == nil {
				prune = false
				_ = os.WriteFile(filepath.Join(dir, noPruneFile), []byte(firstError(be)+"\n"), 0o644)
			}
		}
		return bin, err
	}
	if !opts.NoCmp {
		vh := loadVarHooks(dir)
		for attempt := 0; ; attempt++ {
			bin, err := try(vh)
			var be *BuildError
			if !errors.As(err, &be) {
				if err == nil {
					if attempt > 0 {
						vh.save()
					}
					bin.Warnings = append(warnings, vh.warnings()...)
				}
				return bin, err
			}
			if attempt == maxVarRetries || !vh.blame(be) && !vh.blamePackages(be) {
				warnings = append(warnings, "comparison hooks left out: the build with them failed: "+firstError(be))
				break
			}
		}
	}
	bin, err := try(nil)
	if err == nil {
		bin.Warnings = warnings
	}
	return bin, err
}

// noPruneFile, in a build directory, says its package is built unpruned: a
// pruned build failed where the whole one did not (its first message).
const noPruneFile = "noprune"

// blamesPruning: be has a message in a test file of pkg, and pruneTests changed
// one (the external tests, unchanged, may miss what an internal one lost).
func blamesPruning(pkg *Package, be *BuildError, pruned map[string]bool) bool {
	if len(pruned) == 0 {
		return false
	}
	for _, d := range be.Diagnostics {
		if pruned[d.File] || slices.Contains(pkg.TestFiles, d.File) || slices.Contains(pkg.XTestFiles, d.File) {
			return true
		}
	}
	return false
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
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

// build instruments and builds pkg once: with comparison hooks when vh is not
// nil. Its steps, each in a function of its own, write only under the build
// directory: plan what to instrument and copy the dependency modules it goes
// into (planBuild, plan.go), rewrite the files (rewriteUnits, rewrite.go), write
// the bridges, the runtime, the replace directives and the harness, and the
// overlay file naming them all (writeOverlay, overlay.go), then compile
// (compile, compile.go). Errors are Build's. Each step's time is added to st
// (a retry's steps after the failed attempt's) and the Binary gets them all.
func build(ctx context.Context, pkg *Package, opts BuildOptions, role stdRole, vh *varHooks, st *steps, prune bool) (*Binary, map[string]bool, error) {
	start := time.Now()
	dir := buildDir(opts, pkg)
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		return nil, nil, stepError(pkg, "build directory", err)
	}
	p, err := planBuild(pkg, dir, role, prune)
	if err != nil {
		return nil, nil, stepError(pkg, "copying dependency modules", err)
	}
	st.done("plan")
	bin := &Binary{Package: pkg, Flags: opts.Flags, Copies: p.copies}
	overlay := map[string]string{}
	files, err := rewriteUnits(p, opts.Flags.Race, vh, bin, overlay)
	if err != nil {
		return nil, p.pruned, stepError(pkg, "instrumenting", err)
	}
	st.done("instrument")
	ovl, err := writeOverlay(ctx, p, files, opts.Runtime, overlay)
	if err != nil {
		return nil, p.pruned, stepError(pkg, "overlay", err)
	}
	st.done("overlay")
	if bin.Path, err = compile(ctx, pkg, opts.Flags, dir, ovl, overlay); err != nil {
		st.done("go test -c failed")
		return nil, p.pruned, stepError(pkg, "go test -c", err)
	}
	st.done("go test -c")
	bin.Seconds = time.Since(start).Seconds()
	bin.Steps = st.list
	return bin, p.pruned, nil
}

// StepError is a step of a build that failed for a cause other than the
// user's code (a full disk, a cache directory that cannot be written): it says
// which package and which step, and wraps the cause.
type StepError struct {
	Package string
	Step    string
	Err     error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("building %s: %s: %v", e.Package, e.Step, e.Err)
}
func (e *StepError) Unwrap() error { return e.Err }

// stepError is a *StepError of err; a *BuildError, the user's, goes as it is.
func stepError(pkg *Package, step string, err error) error {
	if _, ok := err.(*BuildError); ok {
		return err
	}
	return &StepError{Package: pkg.ImportPath, Step: step, Err: err}
}

// IsDiskFull reports whether err, from the file system or a tool's output
// carried in it, says a disk is full.
func IsDiskFull(err error) bool {
	return err != nil && (errors.Is(err, syscall.ENOSPC) || diskFullText(err.Error()))
}

// diskFullText reports whether a message says a disk is full: Unix's ENOSPC,
// Windows's ERROR_DISK_FULL.
func diskFullText(msg string) bool {
	return strings.Contains(msg, "no space left on device") || strings.Contains(msg, "not enough space on the disk")
}

// writeIfChanged keeps mtimes stable for unchanged files, which keeps the go
// command's cache effective.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	// A name of this process's: builds of other processes may write the
	// same file (the cache-wide varskip.json).
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	err := os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

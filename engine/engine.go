package engine

import (
	"context"
	"fmt"
	"go/ast"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/protocol"
)

// Engine runs sessions and shares the worker processes (Options.Parallel) between
// them. It is safe for concurrent use.
type Engine struct {
	opts    Options
	observe func(Event)
	loader  instrument.Loader

	mu       sync.Mutex
	sessions map[*Session]bool
	buildMu  sync.Mutex
	// built is the last build of each test binary (by its Path), while a
	// session holds it: the next build of it shares its blocks (under buildMu).
	built map[string]weak.Pointer[instrument.Binary]
	sched *scheduler
	// texts are the text sets of each test binary's last build (by its
	// Path), while a session holds them (under mu).
	texts map[string]weak.Pointer[textSets]
}

// shareBuild makes bin share what it has in common with the last build of the
// same test binary that a session still holds (another target of the package, or
// the same code again), and makes it the one the next build shares. Called
// under buildMu.
func (e *Engine) shareBuild(bin *instrument.Binary) {
	if e.built == nil {
		e.built = map[string]weak.Pointer[instrument.Binary]{}
	}
	if prev := e.built[bin.Path].Value(); prev != nil {
		bin.ShareWith(prev)
	}
	e.built[bin.Path] = weak.Make(bin)
}

// shareTexts returns the text sets of the last build of the test binary at
// path that a session still holds if they are t's, and makes t the ones the
// next build shares otherwise.
func (e *Engine) shareTexts(path string, t *textSets) *textSets {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.texts == nil {
		e.texts = map[string]weak.Pointer[textSets]{}
	}
	if prev := e.texts[path].Value(); prev != nil && slices.Equal(prev.blocks, t.blocks) && slices.Equal(prev.sites, t.sites) {
		return prev
	}
	e.texts[path] = weak.Make(t)
	return t
}

// New returns an Engine that reports to observe (called from engine goroutines; it
// must not block for long). observe may be nil.
func New(opts Options, observe func(Event)) *Engine {
	if opts.CacheDir == "" {
		opts.CacheDir = DefaultCacheDir()
	}
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.NumCPU()
	}
	if opts.MinimizeTime <= 0 {
		opts.MinimizeTime = DefaultMinimizeTime
	}
	if opts.RSSLimitMB == 0 {
		opts.RSSLimitMB = protocol.DefaultSettings().RSSLimitMB
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if observe == nil {
		observe = func(Event) {}
	}
	removeOrphanTempDirs(opts.CacheDir)
	turn := slice
	if opts.Engine == protocol.EngineGoTest || opts.Engine == protocol.EngineLibFuzzer {
		turn = goTestSlice
	}
	e := &Engine{opts: opts, observe: observe, sessions: map[*Session]bool{}, sched: newScheduler(opts.Parallel, turn)}
	e.loader.Flags = opts.Build
	return e
}

// IsFuzzTarget reports whether fd, a function declared in f, is a fuzz target
// as go test takes one (see instrument.IsFuzzTarget).
func IsFuzzTarget(f *ast.File, fd *ast.FuncDecl) bool { return instrument.IsFuzzTarget(f, fd) }

// Discover lists the fuzz targets of the packages matching patterns (as `go test`
// patterns, e.g. "./...") in the module or workspace at dir. Targets whose shape is
// wrong are reported in the error, together with the ones found. The build flags
// decide which files are in (-tags).
func Discover(ctx context.Context, flags BuildFlags, dir string, patterns ...string) ([]Target, error) {
	l := instrument.Loader{Flags: flags}
	return discover(ctx, &l, dir, patterns)
}

// Targets is Discover with the engine's package cache (see instrument.Loader).
func (e *Engine) Targets(ctx context.Context, dir string, patterns ...string) ([]Target, error) {
	return discover(ctx, &e.loader, dir, patterns)
}

func discover(ctx context.Context, l *instrument.Loader, dir string, patterns []string) ([]Target, error) {
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	pkgs, err := l.Load(ctx, dir, patterns...)
	if err != nil {
		return nil, err
	}
	var out []Target
	var berr error
	for _, p := range pkgs {
		for _, t := range p.Targets {
			out = append(out, Target{Package: p.ImportPath, Name: t.Name, Dir: p.Dir, File: t.File, Line: t.Line})
		}
		if len(p.Errors) > 0 && berr == nil {
			_, berr = instrument.Build(ctx, p, instrument.BuildOptions{})
		}
	}
	if len(out) == 0 && berr == nil {
		berr = constrainedError(dir, pkgs)
	}
	return out, berr
}

// constrainedError says, when no target was found, which targets the build
// constraints leave out (a file behind //go:build integration without -tags
// integration): go test would say "no test files" or run nothing. nil if none.
func constrainedError(dir string, pkgs []*instrument.Package) error {
	var list []string
	for _, p := range pkgs {
		for _, t := range p.Constrained {
			file := t.File
			if abs, err := filepath.Abs(dir); err == nil {
				if rel, err := filepath.Rel(abs, file); err == nil && !strings.HasPrefix(rel, "..") {
					file = rel
				}
			}
			why := "the build constraints"
			if t.Constraint != "" {
				why = t.Constraint
			}
			list = append(list, fmt.Sprintf("%s (%s:%d, left out by %s)", t.Name, file, t.Line, why))
		}
	}
	if len(list) == 0 {
		return nil
	}
	return fmt.Errorf("no fuzz targets with these build flags: %s; give the tags they need (fuzzls fuzz -tags, or the buildFlags setting)", strings.Join(list, ", "))
}

// Close stops every session and waits until all worker processes are gone.
func (e *Engine) Close() {
	e.mu.Lock()
	var ss []*Session
	for s := range e.sessions {
		ss = append(ss, s)
	}
	e.mu.Unlock()
	for _, s := range ss {
		s.Stop()
	}
}

// Start begins a session for t: build (a *BuildEvent reports the result), then fuzz
// until stopped, until FuzzTime/FuzzExecs, or (without KeepFuzzing) until a failure.
func (e *Engine) Start(t Target) *Session {
	s := newSession(e, t)
	e.mu.Lock()
	e.sessions[s] = true
	e.mu.Unlock()
	go func() {
		s.run()
		e.mu.Lock()
		delete(e.sessions, s)
		e.mu.Unlock()
	}()
	return s
}

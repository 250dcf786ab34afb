// Command fuzzls is coverage-guided fuzzing of Go code while you write it.
//
//	fuzzls fuzz [flags] [packages]   fuzz the FuzzXxx targets headless (terminal, CI)
//	fuzzls cmin [flags] [packages]   minimize the generated corpus of the targets
//	fuzzls report -sync dir [flags] [packages]  the failures a sync directory holds that still fail
//	fuzzls export [flags] [packages] what OSS-Fuzz / ClusterFuzzLite projects ship beside a fuzzer
//	fuzzls import [flags] paths...   their crash files and corpora, as testdata/fuzz seeds
//	fuzzls serve                     the LSP daemon, over stdin/stdout
//	fuzzls version                   print fuzzls's and Go's versions
//
// With no arguments and stdin not a terminal, fuzzls serves LSP. This file holds the
// flags and the wiring only; the work is in the engine and daemon packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"fuzzls.dev/fuzzls/daemon"
	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/protocol"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
			return serve(nil, stdin, stdout, stderr)
		}
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "fuzz":
		return fuzz(args[1:], stdout, stderr)
	case "serve":
		return serve(args[1:], stdin, stdout, stderr)
	case "cmin":
		return cmin(args[1:], stdout, stderr)
	case "report":
		return report(args[1:], stdout, stderr)
	case "export":
		return export(args[1:], stdout, stderr)
	case "import":
		return importCmd(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "fuzzls %s (%s %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return 0
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "fuzzls: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
	fuzzls fuzz [flags] [packages]   fuzz the FuzzXxx targets of packages (default ".")
	fuzzls cmin [flags] [packages]   drop generated corpus entries that add no coverage
	fuzzls report -sync dir [flags] [packages]  replay the failures a sync directory holds; report those that still fail
	fuzzls export [flags] [packages] seed corpus zip, dictionary, options for OSS-Fuzz/ClusterFuzzLite
	fuzzls import [flags] paths...   libFuzzer crash files or corpora of a target → testdata/fuzz seeds
	fuzzls serve                     run the LSP daemon over stdin/stdout
	fuzzls version                   print versions
Run "fuzzls fuzz -h" for the fuzz flags.
`)
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// fuzztime is go test's -fuzztime: a duration or "Nx" executions.
type fuzztime struct {
	d time.Duration
	n int64
}

func (f *fuzztime) String() string {
	if f.n > 0 {
		return fmt.Sprintf("%dx", f.n)
	}
	return f.d.String()
}

func (f *fuzztime) Set(s string) error {
	if strings.HasSuffix(s, "x") {
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "x"), 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("invalid count %q", s)
		}
		f.n, f.d = n, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("invalid duration %q", s)
	}
	f.d, f.n = d, 0
	return nil
}

func fuzz(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runRE := fs.String("run", "", "fuzz only the targets whose names match this regular expression; FuzzXxx/name runs the seeds whose names match name once each instead, as go test -run does, with fuzzls's checks (-leaks)")
	var ft fuzztime
	fs.Var(&ft, "fuzztime", "how long to fuzz each target: a duration (30s) or a number of executions (10000x); default: until a failure")
	parallel := fs.Int("parallel", 0, "worker processes in total (default: one per CPU)")
	timeout := fs.Duration("timeout", 0, "an input running longer than this is a hang (default: past 10× the slowest input so far, at least 0.5s, a suspected hang, a hang if still running at 10s; one that finishes first is a slow input, a warning)")
	minimizeTime := fs.Duration("minimizetime", engine.DefaultMinimizeTime, "time to minimize each failure")
	plateau := fs.Duration("plateau", 0, "stop a target after this much fuzzing without new coverage; its workers go to the targets still fuzzing (default: never)")
	jsonOut := fs.Bool("json", false, "print events as JSON, one object a line")
	cacheDir := fs.String("cachedir", engine.DefaultCacheDir(), "directory for build products, the generated corpus and failures")
	keep := fs.Bool("keepfuzzing", false, "go on fuzzing after a failure")
	leaks := fs.Bool("leaks", false, "report inputs that leave goroutines blocked (kind leak); costs about a microsecond an execution")
	rss := fs.Int("rsslimit", protocol.DefaultSettings().RSSLimitMB, "memory limit of a worker in MiB (0: none)")
	nice := fs.Int("nice", 0, "nice value of the workers (1 to 19: they yield the cores to other work; the daemon uses 10)")
	dict := fs.String("dict", "", "dictionary file (AFL/libFuzzer syntax); testdata/fuzz/FuzzXxx.dict is read too")
	chdir := fs.String("C", "", "change to this directory before doing anything (as go -C)")
	engineName := fs.String("engine", protocol.EngineFuzzls, "who fuzzes: fuzzls, gotest (go test -fuzz, whose failing input go test writes into testdata/fuzz/FuzzXxx; fuzzls replays it, and go test's corpus for coverage) or libfuzzer (the target built with go-118-fuzz-build and clang into the cache; fuzzls replays its crash file, and its corpus for coverage)")
	ci := addCIFlags(fs)
	focus := addFocusFlag(fs)
	build := buildFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fuzzls fuzz [flags] [packages]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return 2
	}
	if err := chdirTo(*chdir); err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	if err := engine.CheckEngine(*engineName); err != nil {
		fmt.Fprintf(stderr, "fuzzls: -engine: %v\n", err)
		return 2
	}
	// As go test's -run, "/" separates the target's pattern from its seeds'.
	var re, seedRE *regexp.Regexp
	var err error
	targetPat, seedPat, replay := strings.Cut(*runRE, "/")
	if targetPat != "" {
		re, err = regexp.Compile(targetPat)
	}
	if err == nil && replay {
		seedRE, err = regexp.Compile(seedPat)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: -run: %v\n", err)
		return 2
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	rep := &reporter{W: stdout, JSON: *jsonOut}
	opts := engine.Options{CacheDir: *cacheDir, Parallel: *parallel, Timeout: *timeout, MinimizeTime: *minimizeTime,
		KeepFuzzing: *keep, Plateau: *plateau, Leaks: *leaks, RSSLimitMB: engine.RSSLimit(*rss), Nice: *nice, Dict: *dict, FuzzTime: ft.d, FuzzExecs: ft.n, Build: build(), Log: stderr, Engine: *engineName}
	opts.ReplaySeeds = seedRE
	ci.options(&opts)
	if err := focus.options(&opts); err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	if opts.Focus != nil {
		rep.Focus = true
		fmt.Fprintf(stderr, "fuzzls: %s\n", focus.describe(opts.Focus))
	}
	e := engine.New(opts, rep.Observe)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	targets, err := e.Targets(ctx, ".", patterns...)
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	var chosen []engine.Target
	for _, t := range targets {
		if re == nil || re.MatchString(t.Name) {
			chosen = append(chosen, t)
		}
	}
	if len(chosen) == 0 {
		// As go test -fuzz: nothing to fuzz is a warning, not an error.
		why := "no fuzz targets in " + strings.Join(patterns, " ")
		if re != nil {
			why = fmt.Sprintf("no target in %s matches -run %q", strings.Join(patterns, " "), *runRE)
		}
		fmt.Fprintf(stderr, "fuzzls: warning: no fuzz tests to fuzz (%s)\n", why)
		return 0
	}
	sessions := make([]*engine.Session, len(chosen))
	for i, t := range chosen {
		sessions[i] = e.Start(t)
	}
	defer ci.start(sessions)()
	go func() {
		<-ctx.Done()
		for _, s := range sessions {
			go s.Stop()
		}
	}()
	status := waitAll(rep, sessions)
	e.Close()
	if err := ci.finish(sessions); err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		if status == 0 {
			status = 2
		}
	}
	return status
}

// Exit statuses of fuzz and report, besides 0: what a run found comes first,
// then what kept it from running.
const (
	exitFailure = 1 // a failure whose input failed again when replayed on a fresh process
	exitUsage   = 2 // bad usage, or the code does not build
	exitFuzzls  = 3 // fuzzls itself failed (a full disk, a worker that could not run, a failure that could not be replayed): no verdict on the code
)

// worse is the exit status of two outcomes together: a failure found, then
// bad usage or code that does not build, then a failure of fuzzls.
func worse(a, b int) int {
	rank := map[int]int{0: 0, exitFuzzls: 1, exitUsage: 2, exitFailure: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// waitAll waits for every session, reports each one's end, and returns the
// exit status (see worse): a flaky failure, which did not fail again, is a
// warning.
func waitAll(rep *reporter, sessions []*engine.Session) int {
	var wg sync.WaitGroup
	status := 0
	var mu sync.Mutex
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Wait()
			st := s.Stats()
			done := &engine.DoneEvent{Target: s.Target(), Execs: st.Execs, Crashes: st.Crashes, Err: err, Skipped: s.Skipped(), Mutators: st.Mutators}
			if st.Plateaued {
				done.Plateau = st.SinceCoverage
			}
			if bs := s.Blockers(); err == nil && len(bs) > 0 {
				rep.Observe(&engine.BlockersEvent{Target: s.Target(), Blockers: bs[:min(len(bs), engine.TopBlockers)]})
			}
			rep.Observe(done)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.As(err, new(*engine.BuildError)):
				status = worse(status, exitUsage)
			case err != nil:
				status = worse(status, exitFuzzls)
			}
			for _, c := range s.Crashes() {
				switch {
				case c.Verified:
					status = worse(status, exitFailure)
				case !c.Flaky && c.Kind != protocol.KindSlow: // it could not be replayed
					status = worse(status, exitFuzzls)
				}
			}
		}()
	}
	wg.Wait()
	return status
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	memProfile := fs.String("memprofile", os.Getenv(memProfileEnv), "write the daemon's heap profile to this file at exit and, on Unix, on SIGUSR1 (default $"+memProfileEnv+")")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *memProfile != "" {
		h := &heapProfiler{path: *memProfile, log: stderr}
		defer h.write("exit")
		defer h.onSignal()()
	}
	err := daemon.Serve(context.Background(), stdin, stdout, daemon.Options{Log: stderr, Version: version()})
	if errors.Is(err, daemon.ErrNoShutdown) {
		return 1 // the client went away without shutdown: LSP says exit code 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls serve: %v\n", err)
		return 1
	}
	return 0
}

func cmin(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cmin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runRE := fs.String("run", "", "only the targets whose names match this regular expression")
	cacheDir := fs.String("cachedir", engine.DefaultCacheDir(), "directory of the generated corpus")
	chdir := fs.String("C", "", "change to this directory first")
	build := buildFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fuzzls cmin [flags] [packages]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return 2
	}
	re, patterns, err := targetArgs(fs, *chdir, *runRE, ".")
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	e := engine.New(engine.Options{CacheDir: *cacheDir, Build: build(), Log: stderr}, nil)
	defer e.Close()
	targets, err := e.Targets(context.Background(), ".", patterns...)
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	status := 0
	for _, t := range targets {
		if !re.MatchString(t.Name) {
			continue
		}
		before, after, err := e.MinimizeCorpus(t)
		if err != nil {
			fmt.Fprintf(stderr, "fuzzls: %s: %v\n", t.Name, err)
			status = 2
			continue
		}
		fmt.Fprintf(stdout, "%s: corpus %d → %d entries\n", t.Name, before, after)
	}
	return status
}

// buildFlags defines go test's build flags that fuzzing takes (-tags, -race,
// -ldflags, -gcflags) on fs; the function returned reads them once parsed.
func buildFlags(fs *flag.FlagSet) func() engine.BuildFlags {
	tags := fs.String("tags", "", "build tags, comma-separated, as go test -tags (e.g. integration)")
	race := fs.Bool("race", false, "build the workers with the race detector (needs cgo and a C compiler): a data race is a failure of kind race")
	ldflags := fs.String("ldflags", "", "linker flags, as go test -ldflags")
	gcflags := fs.String("gcflags", "", "compiler flags, as go test -gcflags")
	return func() engine.BuildFlags {
		return engine.BuildFlags{Tags: *tags, Race: *race, LDFlags: *ldflags, GCFlags: *gcflags}
	}
}

// targetArgs is what cmin and report take after their flags: the directory
// of -C changed to, the -run expression, and the package patterns (def when
// none).
func targetArgs(fs *flag.FlagSet, chdir, runRE, def string) (*regexp.Regexp, []string, error) {
	if err := chdirTo(chdir); err != nil {
		return nil, nil, err
	}
	re, err := regexp.Compile(runRE)
	if err != nil {
		return nil, nil, fmt.Errorf("-run: %v", err)
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{def}
	}
	return re, patterns, nil
}

// parseFlags parses args as go test does, flags before and after the packages
// (`./p -fuzztime 3s`), up to "--", after which all are packages. An unknown flag
// anywhere is an error, which the flag set has said with its usage. fs.Args()
// are then the arguments that are not flags, in their order.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		left := fs.Args()
		if endsFlags(fs, args[:len(args)-len(left)]) {
			rest = append(rest, left...)
			break
		}
		if len(left) > 0 {
			rest, left = append(rest, left[0]), left[1:]
		}
		args = left
	}
	// Parsed again with only "--": no flag changes, and fs.Args() is rest.
	return fs.Parse(append([]string{"--"}, rest...))
}

// endsFlags reports whether the arguments Parse consumed end with the "--" that
// ends the flags (and not with a flag's value "--": -run --).
func endsFlags(fs *flag.FlagSet, consumed []string) bool {
	n := len(consumed)
	if n == 0 || consumed[n-1] != "--" {
		return false
	}
	if n == 1 {
		return true
	}
	prev := consumed[n-2]
	name := strings.TrimPrefix(strings.TrimPrefix(prev, "-"), "-")
	if !strings.HasPrefix(prev, "-") || strings.Contains(name, "=") {
		return true
	}
	f := fs.Lookup(name)
	if f == nil {
		return true
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// chdirTo is go's -C: an empty dir means stay.
func chdirTo(dir string) error {
	if dir == "" {
		return nil
	}
	return os.Chdir(dir)
}

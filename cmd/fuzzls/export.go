package main

// fuzzls export and fuzzls import: the way to OSS-Fuzz / ClusterFuzzLite
// (go-118-fuzz-build under libFuzzer) and back.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/libfuzzer"
	"fuzzls.dev/fuzzls/protocol"
)

// chooseTargets lists the targets of patterns (default ".") whose names match re.
func chooseTargets(e *engine.Engine, runRE string, patterns []string) ([]engine.Target, error) {
	re, err := regexp.Compile(runRE)
	if err != nil {
		return nil, fmt.Errorf("-run: %v", err)
	}
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	targets, err := e.Targets(context.Background(), ".", patterns...)
	if err != nil {
		return nil, err
	}
	var out []engine.Target
	for _, t := range targets {
		if re.MatchString(t.Name) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fuzz targets match in %s", strings.Join(patterns, " "))
	}
	return out, nil
}

// subcommand is the flag set of export or import: usage is what -h prints
// above the flags; -C is defined, which parseIn obeys.
func subcommand(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("C", "", "change to this directory first")
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseIn parses args and changes to the directory of the -C flag.
func parseIn(fs *flag.FlagSet, args []string, stderr io.Writer) bool {
	if err := parseFlags(fs, args); err != nil {
		return false
	}
	if err := chdirTo(fs.Lookup("C").Value.String()); err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return false
	}
	return true
}

func export(args []string, stdout, stderr io.Writer) int {
	fs := subcommand("export", "usage: fuzzls export [flags] [packages]\nWrites, per target, what compile_native_go_fuzzer_v2 projects ship beside a fuzzer.", stderr)
	runRE := fs.String("run", "", "only the targets whose names match this regular expression")
	outDir := fs.String("o", ".", "directory to write FuzzXxx_seed_corpus.zip, FuzzXxx.dict and FuzzXxx.options into")
	cacheDir := fs.String("cachedir", engine.DefaultCacheDir(), "directory of the generated corpus")
	dict := fs.String("dict", "", "dictionary file (AFL/libFuzzer syntax) to add to each target's")
	timeout := fs.Duration("timeout", 0, "the hang limit to write in the options (default 10s)")
	rss := fs.Int("rsslimit", protocol.DefaultSettings().RSSLimitMB, "the memory limit in MiB to write in the options (0: none)")
	if !parseIn(fs, args, stderr) {
		return 2
	}
	e := engine.New(engine.Options{CacheDir: *cacheDir, Dict: *dict, Log: stderr}, nil)
	defer e.Close()
	targets, err := chooseTargets(e, *runRE, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	status := 0
	for i, name := range exportNames(targets) {
		t := targets[i]
		p, err := e.Prepare(t)
		var x *libfuzzer.Exported
		if err == nil {
			x, err = libfuzzer.Export(p, *outDir, name, *timeout, *rss)
		}
		if err != nil {
			fmt.Fprintf(stderr, "fuzzls: %s: %v\n", t.ID(), err)
			status = 2
			continue
		}
		fmt.Fprintf(stdout, "%s: %d seeds → %s, %d tokens → %s, limits → %s\n", t.ID(), x.Seeds, x.Zip, x.Tokens, x.Dict, x.Options)
	}
	return status
}

// exportNames names each target's files (and so its fuzzer): its own name, or,
// where packages share a target name, the name after its package's, so that no
// target's files overwrite another's: a_FuzzParse, b_FuzzParse (the whole
// import path, if the packages' names are shared too).
func exportNames(targets []engine.Target) []string {
	count := func(key func(engine.Target) string) map[string]int {
		n := map[string]int{}
		for _, t := range targets {
			n[key(t)]++
		}
		return n
	}
	byName := count(func(t engine.Target) string { return t.Name })
	short := func(t engine.Target) string { return path.Base(t.Package) + "_" + t.Name }
	byShort := count(short)
	names := make([]string, len(targets))
	for i, t := range targets {
		switch {
		case byName[t.Name] == 1:
			names[i] = t.Name
		case byShort[short(t)] == 1:
			names[i] = short(t)
		default:
			names[i] = strings.Map(func(r rune) rune {
				if r == '/' || r == '.' || r == '-' || r == '~' {
					return '_'
				}
				return r
			}, t.Package) + "_" + t.Name
		}
	}
	return names
}

func importCmd(args []string, stdout, stderr io.Writer) int {
	fs := subcommand("import", "usage: fuzzls import [-run FuzzXxx] [-pkg package] crash-file|artifact-dir|corpus-dir...\nWrites each libFuzzer input of a go-118-fuzz-build harness as a testdata/fuzz/FuzzXxx seed.", stderr)
	runRE := fs.String("run", "", "the target (a regular expression matching exactly one name)")
	pkg := fs.String("pkg", ".", "the package of the target")
	cacheDir := fs.String("cachedir", engine.DefaultCacheDir(), "directory for build products")
	if !parseIn(fs, args, stderr) {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	e := engine.New(engine.Options{CacheDir: *cacheDir, Log: stderr}, nil)
	defer e.Close()
	targets, err := chooseTargets(e, *runRE, []string{*pkg})
	if err == nil && len(targets) > 1 {
		var names []string
		for _, t := range targets {
			names = append(names, t.Name)
		}
		err = fmt.Errorf("-run matches %d targets (%s): name one", len(targets), strings.Join(names, ", "))
	}
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	t := targets[0]
	start := time.Now()
	p, err := e.Prepare(t)
	var got []libfuzzer.Imported
	if err == nil {
		got, err = libfuzzer.Import(p, fs.Args())
	}
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %s: %v\n", t.Name, err)
		return 2
	}
	status, n := 0, 0
	for _, im := range got {
		if im.Err != nil {
			fmt.Fprintf(stderr, "fuzzls: %s: %v\n", im.From, im.Err)
			status = 1
			continue
		}
		n++
		fmt.Fprintf(stdout, "%s → %s\n", im.From, im.Seed)
	}
	fmt.Fprintf(stdout, "%s: %d of %d inputs imported in %.1fs; go test -run=%s replays them\n", t.Name, n, len(got), time.Since(start).Seconds(), t.Name)
	return status
}

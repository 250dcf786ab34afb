package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"fuzzls.dev/fuzzls/engine"
)

// report is the last step over a sync directory (fuzzls report -sync DIR): it
// replays the failures the directory holds on the targets of the packages as
// they are now and reports those that still fail, whichever process found
// them, in the terminal, as JSON events and in SARIF; the exit status is 1
// when one still fails.
func report(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	syncDir := fs.String("sync", "", "the sync directory whose failures to replay (required)")
	sarif := fs.String("sarif", "", "write the failures that still fail to this file in SARIF 2.1.0")
	runRE := fs.String("run", "", "only the targets whose names match this regular expression")
	jsonOut := fs.Bool("json", false, "print events as JSON, one object a line")
	cacheDir := fs.String("cachedir", engine.DefaultCacheDir(), "directory for build products and the failing inputs")
	minimizeTime := fs.Duration("minimizetime", 10*time.Second, "time to minimize each failure that still fails")
	chdir := fs.String("C", "", "change to this directory first")
	build := buildFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fuzzls report -sync dir [flags] [packages] (default ./...)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return 2
	}
	if *syncDir == "" {
		fmt.Fprintln(stderr, "fuzzls report: -sync is required")
		fs.Usage()
		return 2
	}
	if _, err := os.Stat(*syncDir); err != nil {
		fmt.Fprintf(stderr, "fuzzls report: %v\n", err)
		return 2
	}
	re, patterns, err := targetArgs(fs, *chdir, *runRE, "./...")
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	rep := &reporter{W: stdout, JSON: *jsonOut}
	e := engine.New(engine.Options{CacheDir: *cacheDir, MinimizeTime: *minimizeTime, Sync: *syncDir, ReplayOnly: true,
		Build: build(), Log: stderr}, rep.Observe)
	defer e.Close()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	targets, err := e.Targets(ctx, ".", patterns...)
	if err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		return 2
	}
	var sessions []*engine.Session
	recorded := 0
	for _, t := range targets {
		if n := len(e.RecordedFailures(t)); n > 0 && re.MatchString(t.Name) {
			recorded += n
			sessions = append(sessions, e.Start(t))
		}
	}
	go func() {
		<-ctx.Done()
		for _, s := range sessions {
			go s.Stop()
		}
	}()
	status := waitAll(rep, sessions)
	still := 0
	for _, s := range sessions {
		for _, c := range s.Crashes() {
			if c.Verified {
				still++
			}
		}
	}
	fmt.Fprintf(stderr, "fuzzls report: %d failures recorded in %s for %d targets; %d distinct still fail\n", recorded, *syncDir, len(sessions), still)
	ci := &ciFlags{sarif: *sarif}
	if err := ci.finish(sessions); err != nil {
		fmt.Fprintf(stderr, "fuzzls: %v\n", err)
		if status == 0 {
			status = 2
		}
	}
	return status
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"fuzzls.dev/fuzzls/engine"
)

// ciFlags are fuzz's flags for CI and for fuzzing on many machines: one time
// budget for all the targets, SARIF output, and a sync directory.
type ciFlags struct {
	budget   time.Duration
	sarif    string
	sync     string
	syncName string
}

func addCIFlags(fs *flag.FlagSet) *ciFlags {
	c := &ciFlags{}
	fs.DurationVar(&c.budget, "budget", 0, "one time budget shared by all the targets (CI mode, as ClusterFuzzLite's fuzz-seconds): the run ends when it is spent")
	fs.StringVar(&c.sarif, "sarif", "", "write the failures to this file in SARIF 2.1.0 (GitHub code scanning)")
	fs.StringVar(&c.sync, "sync", "", "share corpus entries and failures with other fuzzls processes through this directory")
	fs.StringVar(&c.syncName, "syncname", "", "this process's subdirectory of the -sync directory (default: host-pid)")
	return c
}

// options sets the engine options the flags stand for.
func (c *ciFlags) options(o *engine.Options) {
	o.Sync, o.SyncName = c.sync, c.syncName
}

// start stops every session when the budget is spent; the returned function
// cancels that.
func (c *ciFlags) start(sessions []*engine.Session) func() {
	if c.budget <= 0 {
		return func() {}
	}
	t := time.AfterFunc(c.budget, func() {
		for _, s := range sessions {
			go s.Stop()
		}
	})
	return func() { t.Stop() }
}

// finish writes the SARIF file once every session is done: every failure that
// failed in this run, whichever process of the sync directory found it first.
func (c *ciFlags) finish(sessions []*engine.Session) error {
	if c.sarif == "" {
		return nil
	}
	var crashes []*engine.Crash
	var notes []sarifNotification
	for _, s := range sessions {
		crashes = append(crashes, s.Crashes()...)
		if err := s.Wait(); err != nil {
			id, what := "fuzzls/fuzzls-failure", "fuzzls could not fuzz it (a failure of fuzzls or the machine, not of the code)"
			if errors.As(err, new(*engine.BuildError)) {
				id, what = "fuzzls/build-error", "the code does not build"
			}
			notes = append(notes, sarifNotification{Descriptor: sarifDescriptorRef{ID: id}, Level: "error",
				Message: sarifMessage{Text: fmt.Sprintf("%s (%s): %s: %v", s.Target().Name, s.Target().Package, what, err)}})
		}
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := writeSARIF(c.sarif, root, crashes, notes); err != nil {
		return fmt.Errorf("-sarif: %v", err)
	}
	return nil
}

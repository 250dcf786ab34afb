package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/internal/jsonevents"
	"fuzzls.dev/fuzzls/protocol"
)

// reporter prints a headless run's events for a terminal or, with JSON, one object
// a line for machines (package jsonevents). It observes the engine (engine.New).
type reporter struct {
	W          io.Writer
	JSON       bool
	StatsEvery time.Duration // between status lines in text mode; default 3s
	Focus      bool          // status lines say how many changed blocks are reached, even none of none (Options.Focus)

	mu        sync.Mutex
	lastStats map[string]time.Time
}

// quietAfter is how long without new coverage a text status line says so.
const quietAfter = time.Minute

// Observe prints one event.
func (r *reporter) Observe(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.JSON {
		r.json(ev)
		return
	}
	switch ev := ev.(type) {
	case *engine.BuildEvent:
		var be *engine.BuildError
		if ev.Err != nil && !errors.As(ev.Err, &be) {
			fmt.Fprintf(r.W, "fuzzls: could not build %s (no fault of your code): %v\n", ev.Package, ev.Err)
			return
		}
		if ev.Err != nil {
			fmt.Fprintf(r.W, "fuzzls: build of %s failed:\n%s\n", ev.Package, strings.TrimRight(ev.Err.Error(), "\n"))
			return
		}
		fmt.Fprintf(r.W, "fuzzls: built %s (%s) in %.1fs: %s\n", ev.Package, strings.Join(ev.Targets, ", "), ev.Seconds, ev.StepsText())
		for _, w := range ev.Warnings {
			fmt.Fprintf(r.W, "fuzzls: warning: %s\n", w)
		}
	case *engine.SeedsEvent:
		fmt.Fprintln(r.W, ev)
		if ev.Done && ev.Layout != "" {
			fmt.Fprintf(r.W, "%s: note: %s (%s); its saved inputs replay with fuzzls fuzz -run, not go test\n", ev.Target.Name, engine.GoTestCannot(ev.Target.Name, ev.Layout), ev.Layout)
		}
	case *engine.StatsEvent:
		st := ev.Stats
		every := r.StatsEvery
		if every == 0 {
			every = 3 * time.Second
		}
		if r.lastStats == nil {
			r.lastStats = map[string]time.Time{}
		}
		if time.Since(r.lastStats[st.Target.ID()]) < every {
			return
		}
		r.lastStats[st.Target.ID()] = time.Now()
		quiet := ""
		if st.SinceCoverage >= quietAfter {
			quiet = fmt.Sprintf(", no new coverage for %s (%d execs)", st.SinceCoverage.Round(time.Second), st.ExecsSinceCoverage)
		}
		changed := ""
		if r.Focus || st.Changed > 0 {
			changed = fmt.Sprintf(", changed: %d/%d reached", st.ChangedReached, st.Changed)
		}
		mutators := ""
		if len(st.Mutators) > 0 {
			var execs, finds int64
			for _, m := range st.Mutators {
				execs, finds = execs+m.Execs, finds+m.Finds
			}
			mutators = fmt.Sprintf(", your mutators: %d finds in %d execs", finds, execs)
		}
		fmt.Fprintf(r.W, "%s: elapsed: %s, execs: %d (%.0f/sec), corpus: %d, blocks: %d/%d%s%s%s\n",
			st.Target.Name, st.Elapsed.Round(time.Second), st.Execs, st.ExecsPerSec, st.Corpus, st.Covered, st.Blocks, changed, mutators, quiet)
	case *engine.CrashEvent:
		c := ev.Crash
		if c.Kind == protocol.KindSlow {
			fmt.Fprintf(r.W, "%s: warning: %s\n    input saved to %s\n", c.Target.Name, c.Message, c.Path)
			return
		}
		if !c.Minimized && !c.Flaky && !c.Replayed {
			fmt.Fprintf(r.W, "%s: found a failure (%s: %s), minimizing…\n", c.Target.Name, c.Kind, firstLine(c.Message))
			return
		}
		fmt.Fprint(r.W, formatCrash(c))
	case *engine.BlockersEvent:
		fmt.Fprint(r.W, formatBlockers(ev))
	case *engine.DoneEvent:
		if ev.Err != nil {
			var be *engine.BuildError
			var se *instrument.StepError
			if !errors.As(ev.Err, &be) && !errors.As(ev.Err, &se) { // the build's were said with it
				fmt.Fprintf(r.W, "%s: fuzzls could not fuzz it (no fault of your code): %v\n", ev.Target.Name, ev.Err)
			}
			return
		}
		if ev.Skipped != "" {
			fmt.Fprintf(r.W, "%s: skipped: %s\n", ev.Target.Name, ev.Skipped)
			return
		}
		plateau := ""
		if ev.Plateau > 0 {
			plateau = fmt.Sprintf("; stopped after %s without new coverage (-plateau)", ev.Plateau.Round(time.Second))
		}
		fmt.Fprintf(r.W, "%s: done: %d execs, %d failures%s\n", ev.Target.Name, ev.Execs, ev.Crashes, plateau)
		for _, m := range ev.Mutators {
			panics := ""
			if m.Panics > 0 {
				panics = fmt.Sprintf(", %d panics", m.Panics)
			}
			fmt.Fprintf(r.W, "%s: %s %s: %d execs, %d finds%s\n", ev.Target.Name, m.Kind, m.Name, m.Execs, m.Finds, panics)
		}
	}
}

func (r *reporter) json(ev engine.Event) {
	j := jsonevents.Of(ev)
	if j == nil {
		return
	}
	data, _ := json.Marshal(j)
	r.W.Write(append(data, '\n'))
}

// maxShownInput bounds the input a report prints: a failing seed of megabytes
// would flood the terminal, and the saved file holds it whole.
const maxShownInput = 4 << 10

// formatCrash is the human report of a failure: kind, message, location, stack
// (user frames first), the input, where it is saved and how to replay it.
func formatCrash(c *engine.Crash) string {
	var b strings.Builder
	flaky := ""
	if c.Flaky {
		flaky = ", flaky: it did not fail again on replay"
	}
	if c.Known {
		flaky += ", its input is already in testdata/fuzz"
	}
	fmt.Fprintf(&b, "--- FAIL: %s (%s%s)\n", c.Target.Name, c.Kind, flaky)
	for _, l := range strings.Split(strings.TrimRight(c.Message, "\n"), "\n") {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	if c.File != "" {
		fmt.Fprintf(&b, "    at %s:%d\n", c.File, c.Line)
	}
	if c.Kind == protocol.KindRace && c.Output != "" {
		// Both accesses' stacks and their goroutines' creation, as the race detector says them.
		b.WriteString("\n")
		for _, l := range strings.Split(c.Output, "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	} else if len(c.Frames) > 0 {
		b.WriteString("\n    stack:\n")
		for _, f := range c.Frames {
			if f.Function != "" {
				fmt.Fprintf(&b, "      %s\n", f.Function)
			}
			fmt.Fprintf(&b, "          %s:%d\n", f.File, f.Line)
		}
	}
	what := "failing input"
	if c.Minimized {
		what = "minimized failing input"
	}
	fmt.Fprintf(&b, "\n    %s:\n", what)
	shown := c.Input
	if len(shown) > maxShownInput {
		shown = strings.ToValidUTF8(shown[:maxShownInput], "")
	}
	for _, l := range strings.Split(strings.TrimRight(shown, "\n"), "\n") {
		fmt.Fprintf(&b, "      %s\n", l)
	}
	if len(shown) < len(c.Input) {
		where := ""
		if c.Path != "" {
			where = ": the whole input is in the saved file"
		}
		fmt.Fprintf(&b, "      … (the first %d of %d bytes%s)\n", len(shown), len(c.Input), where)
	}
	if c.Path != "" {
		name := filepath.Base(c.Path)
		fmt.Fprintf(&b, "\n    saved to %s\n", c.Path)
		cmd, why := c.ReplayCommand(name)
		if why != "" {
			fmt.Fprintf(&b, "    replay with fuzzls (in %s; %s):\n", c.Target.Dir, why)
		} else {
			fmt.Fprintf(&b, "    replay with go test (in %s):\n", c.Target.Dir)
		}
		fmt.Fprintf(&b, "      mkdir -p testdata/fuzz/%s && cp %s testdata/fuzz/%s/\n", c.Target.Name, c.Path, c.Target.Name)
		fmt.Fprintf(&b, "      %s\n", cmd)
		if c.Layout != "" { // Delve runs it as go test does
			b.WriteString("\n")
			return b.String()
		}
		fmt.Fprintf(&b, "    debug it with Delve, stopping at the failure%s:\n", atLine(c))
		fmt.Fprintf(&b, "      dlv %s\n", engine.ShellJoin(engine.DlvTestArgs(c, name)))
		if c.File != "" {
			fmt.Fprintf(&b, "      (dlv) break %s:%d\n      (dlv) continue\n", c.File, c.Line)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func atLine(c *engine.Crash) string {
	if c.File == "" {
		return ""
	}
	return fmt.Sprintf(" (line %d of %s)", c.Line, filepath.Base(c.File))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// formatBlockers is a BlockersEvent for people, a line each:
//
//	FuzzCheck: not covered, behind these comparisons (uncovered blocks of the function behind each):
//	    magic.go:17: compared `h == 0x89504e47`: nearest 0x896f7f51, ... (6 blocks)
func formatBlockers(ev *engine.BlockersEvent) string {
	if len(ev.Blockers) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: not covered, behind these comparisons (uncovered blocks of the function behind each):\n", ev.Target.Name)
	wd, _ := os.Getwd()
	for _, bl := range ev.Blockers {
		file := bl.File
		if rel, err := filepath.Rel(wd, file); err == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
		fmt.Fprintf(&b, "    %s:%d: %s (%d blocks)\n", file, bl.Line, bl.Message(), bl.Behind)
	}
	return b.String()
}

package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/protocol"
)

// Reporter prints a headless run's events for a terminal or, with JSON, one object
// a line for machines (jsonevents.go). It is an observer for New.
type Reporter struct {
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
func (r *Reporter) Observe(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.JSON {
		r.json(ev)
		return
	}
	switch ev := ev.(type) {
	case *BuildEvent:
		var be *BuildError
		if ev.Err != nil && !errors.As(ev.Err, &be) {
			fmt.Fprintf(r.W, "fuzzls: could not build %s (no fault of your code): %v\n", ev.Package, ev.Err)
			return
		}
		if ev.Err != nil {
			fmt.Fprintf(r.W, "fuzzls: build of %s failed:\n%s\n", ev.Package, strings.TrimRight(ev.Err.Error(), "\n"))
			return
		}
		fmt.Fprintf(r.W, "fuzzls: built %s (%s) in %.1fs\n", ev.Package, strings.Join(ev.Targets, ", "), ev.Seconds)
		for _, w := range ev.Warnings {
			fmt.Fprintf(r.W, "fuzzls: warning: %s\n", w)
		}
	case *SeedsEvent:
		fmt.Fprintln(r.W, ev)
	case *StatsEvent:
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
		fmt.Fprintf(r.W, "%s: elapsed: %s, execs: %d (%.0f/sec), corpus: %d, blocks: %d/%d%s%s\n",
			st.Target.Name, st.Elapsed.Round(time.Second), st.Execs, st.ExecsPerSec, st.Corpus, st.Covered, st.Blocks, changed, quiet)
	case *CrashEvent:
		c := ev.Crash
		if c.Kind == protocol.KindSlow {
			fmt.Fprintf(r.W, "%s: warning: %s\n    input saved to %s\n", c.Target.Name, c.Message, c.Path)
			return
		}
		if !c.Minimized && !c.Flaky && !c.Replayed {
			fmt.Fprintf(r.W, "%s: found a failure (%s: %s), minimizing…\n", c.Target.Name, c.Kind, firstLine(c.Message))
			return
		}
		fmt.Fprint(r.W, FormatCrash(c))
	case *BlockersEvent:
		fmt.Fprint(r.W, FormatBlockers(ev))
	case *DoneEvent:
		if ev.Err != nil {
			var be *BuildError
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
	}
}

func (r *Reporter) json(ev Event) {
	j := JSONEvent(ev)
	if j == nil {
		return
	}
	data, _ := json.Marshal(j)
	r.W.Write(append(data, '\n'))
}

// maxShownInput bounds the input a report prints: a failing seed of megabytes
// would flood the terminal, and the saved file holds it whole.
const maxShownInput = 4 << 10

// FormatCrash is the human report of a failure: kind, message, location, stack
// (user frames first), the input, where it is saved and how to replay it.
func FormatCrash(c *Crash) string {
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
		fmt.Fprintf(&b, "    debug it with Delve, stopping at the failure%s:\n", atLine(c))
		fmt.Fprintf(&b, "      dlv %s\n", shellJoin(DlvTestArgs(c, name)))
		if c.File != "" {
			fmt.Fprintf(&b, "      (dlv) break %s:%d\n      (dlv) continue\n", c.File, c.Line)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func atLine(c *Crash) string {
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

// Package jsonevents is the format of `fuzzls fuzz -json`: one JSON object a
// line, whose "event" member names its type below. These types are the
// format's one definition: fuzzls fuzz writes them (Of), the README's "-json
// events" section documents them for users (each member, one example line
// each), cmd/fuzzls's TestJSONEvents checks both a real run's lines and the
// README against them, and the bench tools read them. A member tagged
// omitempty may be absent; every other one is always there.
package jsonevents

import (
	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/failure"
)

// Values of the "event" member.
const (
	EventBuild = "build"
	EventSeeds = "seeds"
	EventStats = "stats"
	EventCrash = "crash"
	EventFixed = "fixed"
	EventDone  = "done"
	// EventBlockers is a target's top blockers (engine/blockers.go), before its "done".
	EventBlockers = "blockers"
)

// Build: a package was built for its targets, or failed to build.
type Build struct {
	Event    string   `json:"event"`   // "build"
	Package  string   `json:"package"` // import path
	Targets  []string `json:"targets"` // the targets built: FuzzXxx names
	Seconds  float64  `json:"seconds"` // how long the build took
	Warnings []string `json:"warnings,omitempty"`
	// Error is why the build failed; Diagnostics are its messages placed in the
	// user's files.
	Error       string       `json:"error,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// Diagnostic is a build message placed in the user's files (a build
// event's diagnostics).
type Diagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line"` // 1-based
	Col     int    `json:"col"`  // 1-based, in bytes
	Message string `json:"message"`
}

// Seeds: a target's seeds (f.Add and testdata/fuzz) being read, about once
// a second and when all are in (Done).
type Seeds struct {
	Event   string `json:"event"` // "seeds"
	Target  string `json:"target"`
	Package string `json:"package"`
	Count   int    `json:"count"` // seeds read so far
	Total   int    `json:"total"` // seeds the target has
	Bytes   int64  `json:"bytes"` // size of those read, in the go test fuzz v1 encoding
	Done    bool   `json:"done"`
	// Layout: the target takes structs or unmarshalers, which go test refuses
	// and fuzzls fuzzes field by field (the layout line of its saved inputs).
	Layout string `json:"layout,omitempty"`
}

// Stats: a target's progress, when fuzzing starts and then every second or so.
type Stats struct {
	Event       string  `json:"event"` // "stats"
	Target      string  `json:"target"`
	Package     string  `json:"package"`
	Elapsed     float64 `json:"elapsed"` // seconds of fuzzing
	Execs       int64   `json:"execs"`
	ExecsPerSec float64 `json:"execsPerSec"`
	Corpus      int     `json:"corpus"`  // entries of the generated corpus
	Covered     int     `json:"covered"` // basic blocks reached
	Blocks      int     `json:"blocks"`  // basic blocks instrumented
	Workers     int     `json:"workers"` // worker processes fuzzing it now
	// SinceCoverage is the fuzzing time, in seconds, since its coverage last
	// grew, and ExecsSinceCoverage the executions since (see Stats).
	SinceCoverage      float64 `json:"sinceCoverage"`
	ExecsSinceCoverage int64   `json:"execsSinceCoverage"`
	// Changed are the build's changed blocks (with -focus, those on the lines
	// changed since its revision: Options.Focus), ChangedReached how many of
	// them inputs reached; 0 without -focus.
	Changed        int `json:"changed"`
	ChangedReached int `json:"changedReached"`
	// Mutators: the target's own mutators and generators (package fuzzhook)
	// and what each did in this run; none without them.
	Mutators []engine.MutatorStats `json:"mutators,omitempty"`
}

// Crash: a failure, first when it is found, then again once minimized
// (Minimized) or found flaky (Flaky); a "slow" kind is a warning, no failure. A
// seed run on request (fuzzls fuzz -run=FuzzXxx/name) is reported once, Replayed.
type Crash struct {
	Event     string          `json:"event"` // "crash"
	ID        string          `json:"id"`    // stable over runs
	Target    string          `json:"target"`
	Package   string          `json:"package"`
	Kind      string          `json:"kind"` // one of protocol's Kind constants: panic, error, goroutine-panic, fatal, exit, hang, oom, leak, race, slow
	Message   string          `json:"message"`
	File      string          `json:"file"` // the failure's place in the user's code; "" if unknown
	Line      int             `json:"line"`
	Frames    []failure.Frame `json:"frames"` // the failing goroutine's stack, innermost first
	Input     string          `json:"input"`  // the input, in the go test fuzz v1 format
	Minimized bool            `json:"minimized"`
	Flaky     bool            `json:"flaky"`              // it did not fail again on replay: a warning
	Verified  bool            `json:"verified"`           // it failed again on replay (or is a seed run on request): a failure that fails the run
	Path      string          `json:"path"`               // where the input is saved
	Count     int             `json:"count"`              // times this failure was seen
	Known     bool            `json:"known"`              // its input is a seed in testdata/fuzz already
	Replayed  bool            `json:"replayed,omitempty"` // a seed run on request, reported once, as it is
}

// Fixed: a known failure's input passes on a new build. `fuzzls fuzz`
// builds once, so it writes none; an engine that rebuilds does.
type Fixed struct {
	Event  string `json:"event"` // "fixed"
	ID     string `json:"id"`    // the crash event's id
	Target string `json:"target"`
}

// Done: a target's run ended.
type Done struct {
	Event   string `json:"event"` // "done"
	Target  string `json:"target"`
	Package string `json:"package"`
	Execs   int64  `json:"execs"`
	Crashes int    `json:"crashes"`           // distinct failures
	Error   string `json:"error,omitempty"`   // why it could not run
	Skipped string `json:"skipped,omitempty"` // why the target skipped itself
	// Plateau: it stopped after this many seconds without new coverage (-plateau).
	Plateau float64 `json:"plateau,omitempty"`
	// Mutators: as in Stats, at the end of the run.
	Mutators []engine.MutatorStats `json:"mutators,omitempty"`
}

// Blockers: a target's reached comparisons in front of uncovered code, the
// most code behind first (at most engine.TopBlockers), when its run ends; none when it
// has none.
type Blockers struct {
	Event    string           `json:"event"` // "blockers"
	Target   string           `json:"target"`
	Package  string           `json:"package"`
	Blockers []engine.Blocker `json:"blockers"`
}

// Of is the -json line of ev (without its newline), or nil for an event -json
// does not report.
func Of(ev engine.Event) any {
	switch ev := ev.(type) {
	case *engine.BuildEvent:
		j := &Build{Event: EventBuild, Package: ev.Package, Targets: ev.Targets, Seconds: ev.Seconds, Warnings: ev.Warnings}
		if ev.Err != nil {
			j.Error = ev.Err.Error()
			if be, ok := ev.Err.(*engine.BuildError); ok {
				for _, d := range be.Diagnostics {
					j.Diagnostics = append(j.Diagnostics, Diagnostic{File: d.File, Line: d.Line, Col: d.Col, Message: d.Message})
				}
			}
		}
		return j
	case *engine.SeedsEvent:
		return &Seeds{Event: EventSeeds, Target: ev.Target.Name, Package: ev.Target.Package,
			Count: ev.Count, Total: ev.Total, Bytes: ev.Bytes, Done: ev.Done, Layout: ev.Layout}
	case *engine.StatsEvent:
		st := ev.Stats
		return &Stats{Event: EventStats, Target: st.Target.Name, Package: st.Target.Package, Elapsed: st.Elapsed.Seconds(),
			Execs: st.Execs, ExecsPerSec: st.ExecsPerSec, Corpus: st.Corpus, Covered: st.Covered, Blocks: st.Blocks,
			Workers: st.Workers, SinceCoverage: st.SinceCoverage.Seconds(), ExecsSinceCoverage: st.ExecsSinceCoverage,
			Changed: st.Changed, ChangedReached: st.ChangedReached, Mutators: st.Mutators}
	case *engine.CrashEvent:
		c := ev.Crash
		frames := c.Frames
		if frames == nil {
			frames = []failure.Frame{}
		}
		return &Crash{Event: EventCrash, ID: c.ID, Target: c.Target.Name, Package: c.Target.Package, Kind: string(c.Kind),
			Message: c.Message, File: c.File, Line: c.Line, Frames: frames, Input: c.Input,
			Minimized: c.Minimized, Flaky: c.Flaky, Verified: c.Verified, Path: c.Path, Count: c.Count, Known: c.Known, Replayed: c.Replayed}
	case *engine.CrashFixedEvent:
		return &Fixed{Event: EventFixed, ID: ev.Crash.ID, Target: ev.Crash.Target.Name}
	case *engine.BlockersEvent:
		return &Blockers{Event: EventBlockers, Target: ev.Target.Name, Package: ev.Target.Package, Blockers: ev.Blockers}
	case *engine.DoneEvent:
		j := &Done{Event: EventDone, Target: ev.Target.Name, Package: ev.Target.Package, Execs: ev.Execs, Crashes: ev.Crashes, Skipped: ev.Skipped,
			Plateau: ev.Plateau.Seconds(), Mutators: ev.Mutators}
		if ev.Err != nil {
			j.Error = ev.Err.Error()
		}
		return j
	}
	return nil
}

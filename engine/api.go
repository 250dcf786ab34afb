package engine

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
	"fuzzls.dev/fuzzls/protocol"
)

// Options configure an Engine. Zero values take the defaults noted.
type Options struct {
	CacheDir     string        // build products, generated corpus, crash records; default DefaultCacheDir()
	Parallel     int           // worker processes shared by all sessions; default runtime.NumCPU()
	Timeout      time.Duration // an input running longer is a hang; default adaptive (see hang.go): 10× the slowest input, 0.5s to 10s
	MinimizeTime time.Duration // budget to minimize one failure; default DefaultMinimizeTime
	KeepFuzzing  bool          // go on after a failure (the daemon's default) instead of stopping the session
	RSSLimitMB   int           // per-worker memory limit; 0: the rssLimitMB setting's default, negative: none (see RSSLimit)
	FuzzTime     time.Duration // stop a session after this long; 0 = no limit
	FuzzExecs    int64         // stop a session after this many executions; 0 = no limit
	// Plateau stops a session after this much fuzzing without new coverage
	// (Stats.SinceCoverage): its workers go to the sessions still fuzzing. 0 = never.
	Plateau time.Duration
	Log     io.Writer // progress and diagnostics for humans; nil discards
	Dict    string    // a dictionary file (AFL/libFuzzer syntax) for every target
	Nice    int       // workers' nice value (1 to 19), so that they yield the cores to the editor and builds; 0 = unchanged
	Leaks   bool      // report inputs that leave goroutines blocked (a leak); costs a goroutine count per execution
	// Sync is a directory shared with other fuzzls processes (sync.go): corpus
	// entries and failures each found go there, under SyncName (default
	// host-pid), and what it holds is taken up: the corpus entries join the
	// corpus, the failures are run and, when they fail here, reported like
	// those found here. With ReplayOnly, sessions only replay the failures it
	// held when their build was ready, write nothing into it, and end.
	Sync       string
	SyncName   string
	ReplayOnly bool
	// ReplaySeeds makes sessions run only the seeds whose names match, once
	// each, as `go test -run=FuzzXxx/name` runs them (testing's names: seed#N
	// for the f.Add values, the file's name for testdata/fuzz/FuzzXxx files),
	// but with fuzzls's checks (Leaks, the memory and hang limits): each that
	// fails is reported as it is (Crash.Replayed, not minimized), and the
	// session ends.
	ReplaySeeds *regexp.Regexp
	// Persistent sessions (the daemon's) outlive a build error, a failure without
	// KeepFuzzing and the end of FuzzTime: they wait for the next Rebuild or Stop.
	Persistent bool
	// NoCmp leaves out comparison feedback, NoLiteralDict the dictionary of the
	// code's literals: both only to measure what they bring.
	NoCmp         bool
	NoLiteralDict bool
	// Focus names changed lines (e.g. from a git diff): the first build of each
	// session directs fuzzing toward the blocks overlapping them, as a rebuild
	// does toward the blocks an edit changed.
	Focus *ChangedLines
	// NoFocus counts changed blocks but does not direct fuzzing at them: only to
	// measure what the direction brings (bench/focus).
	NoFocus bool
	// Seed seeds the workers' mutators (the n-th worker a session starts gets
	// Seed+n), for runs that repeat (tests); 0 draws a random seed per worker.
	Seed uint64
	// Engine fuzzes the targets: protocol.EngineFuzzls ("" too) or
	// protocol.EngineGoTest, go test -fuzz (gotest.go), or
	// protocol.EngineLibFuzzer, libFuzzer through go-118-fuzz-build (libfuzzerrun.go).
	Engine string
	// Build are go test's flags for the load and the build (-tags, -race,
	// -ldflags, -gcflags); with Race, a data race is a failure of kind race.
	Build BuildFlags
}

// DefaultMinimizeTime is Options.MinimizeTime's default.
const DefaultMinimizeTime = 60 * time.Second

// RSSLimit is Options.RSSLimitMB for a limit in MiB as users give one (the
// rssLimitMB setting, fuzzls fuzz -rsslimit), where 0 means none.
func RSSLimit(userMB int) int {
	if userMB == 0 {
		return -1
	}
	return userMB
}

// BuildFlags are the go test flags the engine passes to the package load and the
// build (see instrument.BuildFlags).
type BuildFlags = instrument.BuildFlags

// ParseBuildFlags reads a list of go command flags such as vscode-go's
// go.buildFlags ("-tags=integration", "-race"); see instrument.ParseBuildFlags.
func ParseBuildFlags(args []string) (BuildFlags, error) { return instrument.ParseBuildFlags(args) }

// Target is one fuzz function found in a package's test files.
type Target struct {
	Package string // import path
	Name    string // FuzzXxx
	Dir     string // absolute package directory
	File    string // absolute path of the _test.go file that declares it
	Line    int    // line of `func FuzzXxx`
}

// ID is "importpath.FuzzXxx".
func (t Target) ID() string { return t.Package + "." + t.Name }

// KindInfo describes a kind of Crash.
type KindInfo struct {
	Kind        failure.Kind
	Description string // what happened, for people: "the fuzz function panicked"
	Warning     bool   // not a failure (protocol.KindSlow)
	// GoTestMisses says why `go test -run` passes on an input of this kind
	// (go test lacks the check that found it), or is "" when go test fails on
	// it; Flag is then the fuzzls fuzz flag that turns the check on, for the
	// replay with fuzzls (Crash.ReplayCommand).
	GoTestMisses string
	Flag         string
}

// kinds is the one list of protocol's Kind constants: what reports every kind
// (SARIF's rules) walks it, and TestFailureKinds checks that it holds every
// constant.
var kinds = []KindInfo{
	{Kind: protocol.KindPanic, Description: "the fuzz function panicked"},
	{Kind: protocol.KindError, Description: "the fuzz function called t.Error or t.Fatal"},
	{Kind: protocol.KindGoroutinePanic, Description: "a goroutine started by the fuzz function panicked"},
	{Kind: protocol.KindFatal, Description: "the Go runtime stopped with a fatal error"},
	{Kind: protocol.KindExit, Description: "the process exited while running an input"},
	{Kind: protocol.KindHang, Description: "an input ran longer than the hang limit"},
	{Kind: protocol.KindOOM, Description: "an input used more memory than the limit"},
	{Kind: protocol.KindLeak, Description: "goroutines the fuzz function started stay blocked after it returned (-leaks)",
		GoTestMisses: "go test has no goroutine-leak check", Flag: "-leaks"},
	{Kind: protocol.KindRace, Description: "a data race between goroutines of the fuzz function (a -race build)"},
	{Kind: protocol.KindSlow, Description: "an input ran past the adaptive hang limit, then finished (a warning, not a failure)", Warning: true},
}

// Kinds lists every kind of Crash.
func Kinds() []KindInfo { return append([]KindInfo(nil), kinds...) }

// LookupKind is kind's KindInfo (with only Kind set for a kind not listed).
func LookupKind(kind failure.Kind) KindInfo {
	for _, k := range kinds {
		if k.Kind == kind {
			return k
		}
	}
	return KindInfo{Kind: kind}
}

// Crash is one distinct failure of a target.
type Crash struct {
	ID        string // stable over runs: derived from target, kind and location
	Target    Target //
	Kind      failure.Kind
	Message   string          // first line(s) of the failure: panic value, t.Fatal text, fatal error
	File      string          // absolute path of the first frame inside the user's module ("" if unknown)
	Line      int             //
	Frames    []failure.Frame // the failing goroutine's stack, innermost first
	Output    string          // the raw failure text (error or stderr excerpt)
	Input     string          // the failing input in the `go test fuzz v1` format
	Minimized bool            // Input is the result of minimization
	Flaky     bool            // the input did not fail again when replayed: not minimized, a warning
	// Verified: Input failed again, the same way, on a fresh worker (as go
	// test's replay runs it): a failure that fails a run. Neither Verified nor
	// Flaky: it could not be replayed (see CrashEvent).
	Verified bool
	Path     string // where Input is saved in the cache directory
	Count    int    // how many times this failure was seen
	// Known: the input that failed is a seed in testdata/fuzz/FuzzXxx, on which
	// go test fails already: not a new failure (CI reports it as unchanged).
	Known bool
	// BuildFlags are the go test flags of the build that found it (-race,
	// -tags=...): a replay with go test needs them.
	BuildFlags []string
	// Replayed: found running a seed on request (Options.ReplaySeeds): the
	// seed's input, reported once, not minimized.
	Replayed bool
	// Layout: the target is fuzzed field by field (SeedsEvent.Layout); its
	// saved inputs carry the layout line and only fuzzls replays them.
	Layout string
}

// Block is one instrumented basic block: a counter and its source range.
// Lines and columns are 1-based; columns count bytes; End is exclusive.
type Block struct {
	File      string `json:"file"`
	StartLine int    `json:"startLine"`
	StartCol  int    `json:"startCol"`
	EndLine   int    `json:"endLine"`
	EndCol    int    `json:"endCol"`
	Changed   bool   `json:"changed,omitempty"` // new or changed since the previous build (focus.go)
}

// Stats is a snapshot of a session's progress.
type Stats struct {
	Target      Target
	Elapsed     time.Duration
	Execs       int64
	ExecsPerSec float64
	Corpus      int
	Covered     int
	Blocks      int
	Crashes     int // distinct failures (a slow input is none)
	// Changed blocks of this build (new or edited since the previous one, or
	// in Options.Focus) and how many of them are reached.
	Changed        int
	ChangedReached int
	// Workers is the number of worker processes fuzzing it now.
	Workers int
	// SinceCoverage is how long the session has fuzzed since its coverage last
	// grew (a block, a hit count bucket or a comparison site reached for the first
	// time by this build), counting only time it had workers; ExecsSinceCoverage
	// the executions since. Both start again with each build.
	SinceCoverage      time.Duration
	ExecsSinceCoverage int64
	// Plateaued: the session stopped fuzzing after Options.Plateau without new
	// coverage (a persistent session fuzzes again on the next build).
	Plateaued bool
	// Mutators are the user's own mutators and generators (package fuzzhook)
	// the current build's workers used, in the order first reported.
	Mutators []MutatorStats
	// Engine fuzzes it (Options.Engine, the default filled in).
	Engine string
}

// MutatorStats is what one of the user's mutators or generators did in the
// current build: the executions of the inputs it made, how many of them
// reached new coverage, and how often it panicked (those inputs never ran).
// Problem is its first panic (value and stack) or why the target cannot use it.
type MutatorStats struct {
	Name    string `json:"name"` // its function, as the runtime names it: example.com/expr.FuzzExpr.func1
	Kind    string `json:"kind"` // "mutator" or "generator"
	Execs   int64  `json:"execs"`
	Finds   int64  `json:"finds"`
	Panics  int64  `json:"panics"`
	Problem string `json:"problem,omitempty"`
}

// Event is what an Engine reports to its observer: one of *BuildEvent, *SeedsEvent,
// *StatsEvent, *CrashEvent, *CrashFixedEvent, *CoverageEvent, *DoneEvent (and, from
// `fuzzls fuzz`, *BlockersEvent).
type Event interface{ event() }

// BuildEvent reports a finished build of a package (successful or not).
type BuildEvent struct {
	Package string
	Targets []string
	Seconds float64
	// Steps say where the time went: load, the build's own steps, seeds.
	Steps []BuildStep
	Err   error // a *BuildError when the code does not compile
	// Warnings say what a successful build left out (a package's comparison
	// hooks, when its build with them failed): fuzzing runs, weaker.
	Warnings []string
}

// StepsText is "load 0.1s, checks 0.0s, …, seeds 0.2s": where the build's time went.
func (ev *BuildEvent) StepsText() string {
	parts := make([]string, len(ev.Steps))
	for i, st := range ev.Steps {
		parts[i] = fmt.Sprintf("%s %.1fs", st.Name, st.Seconds)
	}
	return strings.Join(parts, ", ")
}

// SeedsEvent reports a target's seed corpus (f.Add values and testdata/fuzz
// files) coming in from the run of a new build that reads it: about once a second
// while seeds arrive, and once when all are in (Done), before the BuildEvent.
type SeedsEvent struct {
	Target Target
	Count  int   // seeds received so far
	Total  int   // seeds the target has
	Bytes  int64 // size of those received, in the `go test fuzz v1` encoding
	Done   bool
	// Layout: the target takes arguments go test refuses, which fuzzls fuzzes
	// field by field (fuzzrt's layout of them; GoTestCannot says it for people).
	Layout string
}

// String is the event for people: "FuzzXxx: reading seeds: 4000 of 9187 (12.3 MB)",
// then "FuzzXxx: 9187 seeds (25.1 MB)".
func (ev *SeedsEvent) String() string {
	if ev.Done {
		return fmt.Sprintf("%s: %d seeds (%s)", ev.Target.Name, ev.Count, fuzzrt.ByteSize(ev.Bytes))
	}
	return fmt.Sprintf("%s: reading seeds: %d of %d (%s)", ev.Target.Name, ev.Count, ev.Total, fuzzrt.ByteSize(ev.Bytes))
}

// StatsEvent is sent every few seconds per running session.
type StatsEvent struct{ Stats Stats }

// CrashEvent is sent when a new distinct failure is found, and again when its
// minimization ends (Crash.Minimized) or it turns out flaky (Crash.Flaky).
type CrashEvent struct{ Crash *Crash }

// CrashFixedEvent is sent when a rebuilt binary no longer fails on a crash's input.
type CrashFixedEvent struct{ Crash *Crash }

// CoverageEvent is sent when a session's coverage grows (at most about once a second).
type CoverageEvent struct{ Target Target }

// DoneEvent is sent when a session ends.
type DoneEvent struct {
	Target  Target
	Execs   int64
	Crashes int
	Err     error
	Skipped string // why the target was skipped (see Session.Skipped); "" = it was not
	// Plateau is the fuzzing time without new coverage after which it stopped
	// (Options.Plateau); 0 when it stopped otherwise.
	Plateau time.Duration
	// Mutators: the user's mutators and generators, as in Stats.
	Mutators []MutatorStats
}

func (*BuildEvent) event()      {}
func (*SeedsEvent) event()      {}
func (*StatsEvent) event()      {}
func (*CrashEvent) event()      {}
func (*CrashFixedEvent) event() {}
func (*CoverageEvent) event()   {}
func (*DoneEvent) event()       {}

// BuildError is a package that does not compile (or whose targets cannot be
// fuzzed): positioned diagnostics in the user's files and the compiler's output.
type BuildError = instrument.BuildError

// BuildStep is one step of a build and how long it took.
type BuildStep = instrument.Step

// Diagnostic is one positioned build message. Line and Col are 1-based; Col counts bytes.
type Diagnostic = instrument.Diagnostic

// Package protocol defines the wire types of fuzzls's extensions to the Language
// Server Protocol: the custom notifications the daemon sends, the arguments of its
// commands, and the data attached to its diagnostics.
//
// These types are the single definition shared with the VS Code extension: its
// TypeScript declarations (vscode-extension/src/protocol.ts) are generated from this
// file by `go run ./protocol/gen` and a test fails when the two drift apart.
// Keep this package free of logic: types, method names, constants and the
// settings' defaults (DefaultSettings, a literal) only.
package protocol

// Method names of fuzzls's notifications (server → client).
const (
	// MethodCoverage carries a target's coverage, as CoverageParams.
	MethodCoverage = "fuzzls/coverage"
	// MethodStatus carries the state of every session, as StatusParams.
	MethodStatus = "fuzzls/status"
)

// Command names accepted by workspace/executeCommand.
const (
	CommandStart       = "fuzzls.start"
	CommandStop        = "fuzzls.stop"
	CommandAddToCorpus = "fuzzls.addToCorpus"
	CommandAddSeed     = "fuzzls.addSeed"
	CommandSeedCorpus  = "fuzzls.seedFromCorpus"
	CommandStatus      = "fuzzls.status"
	CommandShowInput   = "fuzzls.showInput"
	CommandDebugCrash  = "fuzzls.debugCrash"
	// CommandCoverage answers a target's coverage of every instrumented file of
	// the workspace (a TargetID argument; CoverageParams): fuzzls/coverage
	// carries only the target's package and the files the client has open.
	CommandCoverage = "fuzzls.coverage"
	// CommandGenerateFuzzTest writes a fuzz test of a function (a FuncArgs
	// argument) into its package's test file through workspace/applyEdit; the
	// code action "Generate fuzz test FuzzXxx" runs it. Its result is a
	// GeneratedTest.
	CommandGenerateFuzzTest = "fuzzls.generateFuzzTest"
	// CommandBlockers answers a running target's top blockers (a TargetID
	// argument; BlockersResult), for the Fuzzing view.
	CommandBlockers = "fuzzls.blockers"
)

// Session states, as in SessionStatus.State.
const (
	StateBuilding = "building"
	StateFuzzing  = "fuzzing"
	StateStopped  = "stopped"
	StateError    = "error"
	StateSkipped  = "skipped" // the target skips itself (f.Skip before f.Fuzz, a TestMain without m.Run)
)

// Failure kinds, as in CrashData.Kind (and a crash diagnostic's code, fuzzls
// fuzz's reports): what failed.
const (
	KindPanic          = "panic"           // the fuzz function panicked
	KindError          = "error"           // t.Error, t.Fatal
	KindGoroutinePanic = "goroutine-panic" // a goroutine the fuzz function started panicked
	KindFatal          = "fatal"           // the runtime stopped: fatal error, a signal it does not turn into a panic
	KindExit           = "exit"            // the process exited while running an input
	KindHang           = "hang"
	KindOOM            = "oom"
	KindLeak           = "leak" // goroutines the input started stay blocked (the leaks setting)
	KindRace           = "race" // a data race, found by a -race build
	// KindSlow is no failure: an input that ran past the adaptive hang limit and
	// then finished. A warning: it never fails a run nor counts in the crashes.
	KindSlow = "slow"
)

// Position is a zero-based line and UTF-16 column, as in LSP.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is an LSP range (end exclusive).
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TargetID names one fuzz target: its package import path and its function name.
type TargetID struct {
	Package string `json:"package"`
	Name    string `json:"name"`
}

// FileCoverage is the coverage of one instrumented file of a target's build.
// Ranges are in the text the client has; a file edited since the last build is sent
// with empty lists until the next build.
type FileCoverage struct {
	URI       string  `json:"uri"`
	Covered   []Range `json:"covered"`
	Uncovered []Range `json:"uncovered"`
	// UncoveredChanged are the blocks not reached yet that the last save (or
	// fuzzls fuzz -focus) changed: drawn apart from Uncovered, which leaves them out.
	UncoveredChanged []Range `json:"uncoveredChanged,omitempty"`
}

// CoverageParams is the payload of fuzzls/coverage: the files of the target's
// package and those the client has open (the workspace's other files of the
// build come on request, fuzzls.coverage), so that a notification stays small
// on a big repository.
type CoverageParams struct {
	Target TargetID       `json:"target"`
	Files  []FileCoverage `json:"files"`
}

// SessionStatus describes one fuzzing session.
type SessionStatus struct {
	Package     string  `json:"package"`
	Name        string  `json:"name"`
	URI         string  `json:"uri"`
	State       string  `json:"state"`
	Execs       int64   `json:"execs"`
	ExecsPerSec float64 `json:"execsPerSec"`
	Corpus      int     `json:"corpus"`
	Covered     int     `json:"covered"`
	Blocks      int     `json:"blocks"`
	Crashes     int     `json:"crashes"`
	Message     string  `json:"message,omitempty"`
	// Changed blocks of the current build (new or edited by the last save) and
	// how many of them fuzzing has reached; fuzzing is directed at them first.
	Changed        int `json:"changed,omitempty"`
	ChangedReached int `json:"changedReached,omitempty"`
	// SinceCoverage is the fuzzing time in seconds since the session's coverage
	// last grew (a new block, hit count or comparison reached; time without a
	// worker does not count), and ExecsSinceCoverage the executions since: the
	// plateau a target is on. Both start again with each build.
	SinceCoverage      float64 `json:"sinceCoverage,omitempty"`
	ExecsSinceCoverage int64   `json:"execsSinceCoverage,omitempty"`
	// Mutators are the target's own mutators and generators (package
	// fuzzhook) and what each did with the current build.
	Mutators []MutatorStatus `json:"mutators,omitempty"`
	// Engine fuzzes it: Settings.Engine's values.
	Engine string `json:"engine,omitempty"`
}

// MutatorStatus is what one of a target's own mutators or generators did: the
// executions of its inputs, how many reached new coverage, and its panics
// (whose inputs never ran). Problem is its first panic, with the stack, or why
// the target cannot use it.
type MutatorStatus struct {
	Name    string `json:"name"` // its function: example.com/expr.FuzzExpr.func1
	Kind    string `json:"kind"` // "mutator" or "generator"
	Execs   int64  `json:"execs"`
	Finds   int64  `json:"finds"`
	Panics  int64  `json:"panics"`
	Problem string `json:"problem,omitempty"`
}

// StatusParams is the payload of fuzzls/status and the result of fuzzls.status.
type StatusParams struct {
	Sessions []SessionStatus `json:"sessions"`
}

// Blocker is a comparison fuzzing reaches in front of code no input has
// reached yet: what it compared and the operands fuzzing fed it.
type Blocker struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"` // the comparison's line
	// Expr is the comparison as written, Want its constant operand ("": none).
	Expr string `json:"expr"`
	Want string `json:"want,omitempty"`
	// Nearest is the operand seen nearest Want (or the pair nearest each
	// other), Frequent the one seen most often: FrequentCount of Count records.
	Nearest       string `json:"nearest"`
	Frequent      string `json:"frequent"`
	FrequentCount int64  `json:"frequentCount"`
	Count         int64  `json:"count"`
	// Behind is how many uncovered blocks of the function lie behind it.
	Behind int `json:"behind"`
	// Message says it in a line: "compared `x == 0x10`: nearest 0xf (12 of 30)".
	Message string `json:"message"`
}

// BlockersResult is the result of fuzzls.blockers: the most code behind first.
type BlockersResult struct {
	Blockers []Blocker `json:"blockers"`
}

// TargetArgs is the argument of fuzzls.start and fuzzls.stop. Both fields empty (or
// no argument at all) means every target in the workspace.
type TargetArgs struct {
	URI    string `json:"uri,omitempty"`
	Target string `json:"target,omitempty"`
}

// CrashArgs is the argument of fuzzls.addToCorpus, fuzzls.addSeed and fuzzls.showInput.
type CrashArgs struct {
	Crash string `json:"crash"`
}

// DebugArgs is the argument of fuzzls.debugCrash.
type DebugArgs struct {
	Crash string `json:"crash"`
	// Launch: the client starts the debugger itself from the result. Without
	// it the daemon also shows the dlv command line in a message.
	Launch bool `json:"launch,omitempty"`
}

// DebugResult is the result of fuzzls.debugCrash, which first saves the
// crash's input in the target's seed corpus (a WorkspaceEdit) unless it is
// there: how to run that seed alone under Delve, stopping at the failure.
type DebugResult struct {
	Target TargetID `json:"target"`
	// Dir is the target's package directory: where dlv test runs (the launch
	// configuration's program).
	Dir     string `json:"dir"`
	Seed    string `json:"seed"` // the seed's file name in testdata/fuzz/<target>/
	SeedURI string `json:"seedURI"`
	// Run is go test's -test.run pattern of that seed alone: ^FuzzX$/^<seed>$.
	Run string `json:"run"`
	// BuildFlags are go test's flags of the build that found the crash
	// (-race, -tags=…), for the debugger's build.
	BuildFlags []string `json:"buildFlags"`
	// URI and Line (zero-based) are where the failure is: the breakpoint.
	URI  string `json:"uri"`
	Line uint32 `json:"line"`
	// Dlv is the dlv the daemon found (PATH, GOBIN, GOPATH/bin); "" if none.
	Dlv string `json:"dlv"`
	// Args are dlv's arguments, run in Dir: test [--build-flags=…] . -- -test.run=<Run>.
	Args []string `json:"args"`
	// Command is the same for a shell, with the Delve commands that stop at
	// the failure after it.
	Command string `json:"command"`
}

// FuncArgs is the argument of fuzzls.generateFuzzTest: a function or method of
// the package of the Go file at URI, as go doc names it ("Parse", "Parser.Parse").
type FuncArgs struct {
	URI  string `json:"uri"`
	Func string `json:"func"`
}

// GeneratedTest is the result of fuzzls.generateFuzzTest: the fuzz test's name
// and the test file it went into.
type GeneratedTest struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// CrashData is the data field of a crash diagnostic.
type CrashData struct {
	Crash     string   `json:"crash"`
	Target    TargetID `json:"target"`
	Kind      string   `json:"kind"`  // one of the Kind constants
	Input     string   `json:"input"` // "" when longer than the daemon carries in a diagnostic: ask fuzzls.showInput
	Minimized bool     `json:"minimized"`
}

// ShowInputResult is the result of fuzzls.showInput: the crash's input in the
// `go test fuzz v1` format.
type ShowInputResult struct {
	Input string `json:"input"`
}

// Values of Settings.AutoStart.
const (
	AutoStartOff       = "off"       // fuzz only what the user starts
	AutoStartOpenFiles = "openFiles" // the targets of the packages whose files are open
	AutoStartWorkspace = "workspace" // every target of the workspace
)

// Values of Settings.Engine: who fuzzes a target.
const (
	EngineFuzzls = "fuzzls" // fuzzls's own workers
	// EngineGoTest is go test's native engine (go test -fuzz); fuzzls replays
	// its corpus for coverage and its failing input for the diagnostic.
	EngineGoTest = "gotest"
	// EngineLibFuzzer is libFuzzer, the target built as OSS-Fuzz builds it
	// (go-118-fuzz-build, clang); fuzzls replays its corpus for coverage and
	// its crash file for the diagnostic.
	EngineLibFuzzer = "libfuzzer"
)

// Settings are the daemon's settings, sent by the client as initializationOptions
// and in workspace/didChangeConfiguration (either as they are or under a "fuzzls"
// key). A member left out keeps its value (at first DefaultSettings'). The
// extension's package.json declares each as fuzzls.<name>, with the same type and
// default (a test in protocol/gen checks it).
type Settings struct {
	AutoStart   string `json:"autoStart"`   // AutoStartOff, AutoStartOpenFiles or AutoStartWorkspace
	Parallel    int    `json:"parallel"`    // worker processes in total; 0: one per CPU
	KeepFuzzing bool   `json:"keepFuzzing"` // go on after a failure
	Timeout     string `json:"timeout"`     // per input, a Go duration ("10s"; the daemon also takes seconds as a number); "": adaptive
	RSSLimitMB  int    `json:"rssLimitMB"`  // a worker's memory limit in MiB; 0: none
	Nice        int    `json:"nice"`        // the workers' nice value, 0 to 19; 0: the daemon's own priority
	CacheDir    string `json:"cacheDir"`    // build products, corpus, crashes; "": the user cache folder's fuzzls
	SyncDir     string `json:"syncDir"`     // a directory shared with fuzzls fuzz -sync: others' corpus and failures; "": none
	// BuildFlags are go test flags for the load and the build, as vscode-go's
	// go.buildFlags: "-tags=integration", "-race", "-ldflags=…", "-gcflags=…".
	BuildFlags []string `json:"buildFlags"`
	// Leaks reports inputs that leave goroutines blocked (failure kind "leak").
	Leaks bool `json:"leaks"`
	// Plateau stops a target after fuzzing this long without new coverage, a Go
	// duration ("5m"); its workers go to the others, and a save fuzzes it again.
	// "": never.
	Plateau string `json:"plateau"`
	// Blockers publishes an Information diagnostic at each reached comparison in
	// front of uncovered code, saying what fuzzing fed it (the hover on the
	// uncovered block says it either way). Off by default: a workspace's blockers
	// are many, and the Problems list is for failures.
	Blockers bool `json:"blockers"`
	// Engine fuzzes the targets: EngineFuzzls, EngineGoTest or EngineLibFuzzer. go test writes
	// a failing input into the package's testdata/fuzz/FuzzXxx, as it always does.
	Engine string `json:"engine"`
}

// DefaultSettings are the settings of a client that sends none: the one
// definition of their defaults, generated into protocol.ts as defaultSettings.
// The daemon's workers run at nice 10 so that fuzzing on every core does not
// make the editor, gopls or the build of a save wait.
func DefaultSettings() Settings {
	return Settings{
		AutoStart:   AutoStartOff,
		KeepFuzzing: true,
		RSSLimitMB:  2048,
		Nice:        10,
		BuildFlags:  []string{},
		Engine:      EngineFuzzls,
	}
}

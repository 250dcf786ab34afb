package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// failure is a failure as classified from a worker's output, before it becomes a Crash.
type failure struct {
	kind    string
	message string
	frames  []Frame
	file    string // first frame inside the user's module
	line    int
	fn      string // that frame's function
	output  string
	// exitSignal: the process was killed by a signal the watchdogs did not send.
	exitSignal bool
	// peer: of a race, the other access's place ("file.go:12"), part of the signature.
	peer string
}

// signature identifies "the same failure": its kind and where in the user's code it
// happens. Minimization keeps it and deduplication groups by it (see same).
func (f *failure) signature() string {
	if f.file != "" {
		return f.kind + "@" + f.where(f.file)
	}
	return f.kind + ":" + f.message
}

// where is the failure's place in file: its line, or for a hang or an oom its
// function. Those are located by stacks taken while the input runs (on the
// watchdog's request), which land on any line of the loop that spins or
// allocates, different ones on each replay.
func (f *failure) where(file string) string {
	if (f.kind == KindHang || f.kind == KindOOM) && f.fn != "" {
		return file + ":" + f.fn
	}
	if f.peer != "" {
		return fmt.Sprintf("%s:%d&%s", file, f.line, f.peer)
	}
	return fmt.Sprintf("%s:%d", file, f.line)
}

// crashID is stable across runs: target, kind and location (file relative to the module).
func crashID(t Target, f *failure, moduleDir string) string {
	file := f.file
	if rel, err := filepath.Rel(moduleDir, file); err == nil {
		file = rel
	}
	loc := f.where(file)
	if f.file == "" {
		loc = f.message
	}
	sum := sha256.Sum256([]byte(t.ID() + "\x00" + f.kind + "\x00" + loc))
	return hex.EncodeToString(sum[:6])
}

// userFrames says which frames belong to the user: inside one of the module
// directories, and not the fuzzls harness or runtime. It also reads frames,
// naming a dependency's own files where the binary ran its instrumented copy.
type userFrames struct {
	dirs   []string
	copies map[string]string // a module copy's directory → the module's own (instrument.Binary.Copies)
}

// frames reads a goroutine's frames (see parseFrames) with the files of module
// copies named by their originals, and without the frames of code fuzzls
// generated (the harness's exit hook, the runtime): those files exist only in the
// build's overlay, so no editor can show them, and the user's frames follow.
func (u userFrames) frames(lines []string) []Frame {
	var frames []Frame
	for _, fr := range parseFrames(lines) {
		if instrument.IsGenerated(fr.File) {
			continue
		}
		for cp, orig := range u.copies {
			if strings.HasPrefix(fr.File, cp+string(filepath.Separator)) {
				fr.File = orig + fr.File[len(cp):]
				break
			}
		}
		frames = append(frames, fr)
	}
	return frames
}

func (u userFrames) is(file string) bool {
	if instrument.IsGenerated(file) {
		return false
	}
	for _, d := range u.dirs {
		if strings.HasPrefix(file, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

var (
	frameFileRE = regexp.MustCompile(`^\s*(\S.*\.(?:go|s)):(\d+)(?: \+0x[0-9a-f]+)?(?: fp=.*)?$`)
	testLineRE  = regexp.MustCompile(`^\s*([^\s:]+\.go):(\d+): (.*)$`)
	goroutineRE = regexp.MustCompile(`^goroutine \d+ (?:gp=.*)?\[`)
)

// parseFrames reads the frames of one goroutine's traceback (innermost first).
func parseFrames(lines []string) []Frame {
	var frames []Frame
	for i := 1; i < len(lines); i++ {
		m := frameFileRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		fn := strings.TrimSpace(lines[i-1])
		if strings.HasPrefix(fn, "created by ") {
			fn = strings.TrimPrefix(fn, "created by ")
			if j := strings.Index(fn, " in goroutine"); j > 0 {
				fn = fn[:j]
			}
		} else if j := strings.LastIndex(fn, "("); j > 0 {
			fn = fn[:j]
		}
		line, _ := strconv.Atoi(m[2])
		// The runtime prints a file as the compiler recorded it, with forward
		// slashes on Windows too (C:/Users/me/m.go); Frame.File is the OS's
		// spelling, as go list and the user's editor have it.
		frames = append(frames, Frame{Function: symbolName(fn), File: filepath.FromSlash(m[1]), Line: line})
	}
	return frames
}

// goroutines splits a traceback into its goroutines' lines.
func goroutines(text string) [][]string {
	var out [][]string
	var cur []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if goroutineRE.MatchString(t) {
			if cur != nil {
				out = append(out, cur)
			}
			cur = []string{t}
			continue
		}
		if cur != nil {
			if t == "" {
				out = append(out, cur)
				cur = nil
				continue
			}
			cur = append(cur, line)
		}
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

func (f *failure) locate(u userFrames) {
	for _, fr := range f.frames {
		if u.is(fr.File) {
			f.file, f.line, f.fn = fr.File, fr.Line, fr.Function
			return
		}
	}
}

// classifyOutput classifies a failure the worker survived: the text testing returns
// for a panic or a t.Error/t.Fatal in the fuzz function. Its lines are the test's
// log, "file.go:12: message" (file names as testing prints them, relative to
// the package). A panic (or runtime.Goexit) is the log line of testing's own
// tRunner, which logs it from testing.go with the stack it happened on; anything
// else the test logged is the user's, also a message that says "panic: ".
func classifyOutput(out string, u userFrames, pkgDir string) *failure {
	f := &failure{output: out}
	if msg, ok := strings.CutPrefix(out, fuzzrt.OOMPrefix); ok {
		// The worker's own check: the input allocated past the limit at one place.
		f.kind = KindOOM
		f.message, _, _ = strings.Cut(msg, "\n")
		if gs := goroutines(msg); len(gs) > 0 {
			f.frames = u.frames(gs[0])
		}
		f.locate(u)
		return f
	}
	if msg, ok := strings.CutPrefix(out, fuzzrt.LeakPrefix); ok {
		// The worker's own check: goroutines the input started stay blocked. The
		// failure is where the first of them was started (its "created by"
		// frame, the last), if that is the user's code.
		f.kind = KindLeak
		f.message, _, _ = strings.Cut(msg, "\n")
		if gs := goroutines(msg); len(gs) > 0 {
			f.frames = u.frames(gs[0])
		}
		if n := len(f.frames); n > 0 && u.is(f.frames[n-1].File) {
			last := f.frames[n-1]
			f.file, f.line, f.fn = last.File, last.Line, last.Function
		} else {
			f.locate(u)
		}
		return f
	}
	f.kind = KindError
	var msgs []string
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		m := testLineRE.FindStringSubmatch(line)
		if m == nil {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "--- FAIL") && len(msgs) > 0 {
				msgs[len(msgs)-1] += "\n" + t
			}
			continue
		}
		if msg, ok := testingPanic(m[1], m[3]); ok {
			// The stack is the rest of the output, indented as the log line's.
			f.kind, f.message = KindPanic, msg
			rest := strings.Join(lines[i+1:], "\n")
			if gs := goroutines(rest); len(gs) > 0 {
				f.frames = dropPanicFrames(u.frames(gs[0]))
			}
			f.file, f.line = "", 0
			f.locate(u)
			return f
		}
		file := m[1]
		if !filepath.IsAbs(file) {
			file = filepath.Join(pkgDir, file)
		}
		n, _ := strconv.Atoi(m[2])
		if f.file == "" && u.is(file) && exists(file) {
			f.file, f.line = file, n
		}
		f.frames = append(f.frames, Frame{File: file, Line: n})
		msgs = append(msgs, m[3])
	}
	f.message = strings.Join(msgs, "\n")
	if f.message == "" {
		f.message = strings.TrimSpace(out)
	}
	return f
}

// errNilPanicOrGoexit is the message of testing's tRunner for a test that
// called runtime.Goexit or panic(nil) (testing.go).
const errNilPanicOrGoexit = "test executed panic(nil) or runtime.Goexit"

// testingPanic reports whether a log line from file says what testing's tRunner
// logs for a panic in the fuzz function (from testing.go: "panic: " and the
// value, or errNilPanicOrGoexit), and the failure's message.
func testingPanic(file, msg string) (string, bool) {
	if file != "testing.go" {
		return "", false
	}
	if msg == errNilPanicOrGoexit {
		return msg, true
	}
	v, ok := strings.CutPrefix(msg, "panic: ")
	if !ok {
		return "", false
	}
	v = strings.TrimSuffix(strings.TrimSuffix(v, " [recovered]"), " [recovered, repanicked]")
	return strings.TrimSpace(v), true
}

func exists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}

// symbolName undoes the linker's escaping of a function's package path, which
// tracebacks show: "gopkg.in/yaml%2ev3.(*decoder).mapping" is
// gopkg.in/yaml.v3's (*decoder).mapping.
func symbolName(fn string) string {
	if !strings.Contains(fn, "%") {
		return fn
	}
	if u, err := url.PathUnescape(fn); err == nil {
		return u
	}
	return fn
}

// dropPanicFrames removes the frames of the panic (or Goexit) machinery above
// the call that panicked.
func dropPanicFrames(frames []Frame) []Frame {
	for i := len(frames) - 1; i >= 0; i-- {
		fn := frames[i].Function
		if fn == "panic" || fn == "runtime.Goexit" || strings.HasPrefix(fn, "runtime.gopanic") || strings.HasPrefix(fn, "runtime.panic") || strings.HasPrefix(fn, "runtime.sigpanic") {
			return frames[i+1:]
		}
	}
	return frames
}

// death describes how a worker process ended.
type death struct {
	stderr   string
	exitCode int           // -1 when killed by a signal
	hung     bool          // the watchdog asked for its stacks
	hangAt   time.Duration // the hang limit it ran past
	oom      bool          // the memory watchdog killed it
	exitSite string        // stack recorded by the exit hook, if any
}

// classifyDeath classifies a worker's death from its stderr and exit status.
// fuzzFn is the name prefix of the fuzz function's closure, to find the goroutine
// running it in a hang's dump.
func classifyDeath(d death, u userFrames, fuzzFn string) *failure {
	samples, text := cutSamples(d.stderr)
	if strings.Contains(text, raceReport) {
		return classifyRace(text, u)
	}
	f := &failure{output: text}
	switch {
	case d.oom:
		f.kind = KindOOM
		f.message = "worker exceeded the memory limit"
		f.frames = sampledFrames(samples, text, u, fuzzFn)
	case strings.Contains(text, "fatal error: "):
		f.kind = KindFatal
		i := strings.Index(text, "fatal error: ")
		msg := text[i:]
		if j := strings.IndexByte(msg, '\n'); j >= 0 {
			msg = msg[:j]
		}
		f.message = strings.TrimPrefix(msg, "fatal error: ")
		if gs := goroutines(text[i:]); len(gs) > 0 {
			f.frames = u.frames(raisingGoroutine(gs, u, fuzzFn))
		}
		// The innermost frame of a stack overflow is the prologue of the function
		// that could not grow its stack; the call that recursed is the next one.
		if f.message == "stack overflow" && len(f.frames) > 1 {
			f.frames = f.frames[1:]
		}
	case d.hung:
		f.kind = KindHang
		f.message = fmt.Sprintf("input ran longer than %v", d.hangAt)
		f.frames = sampledFrames(samples, text, u, fuzzFn)
	case signalRE.MatchString(text):
		// The runtime's report of a signal it does not turn into a panic
		// (SIGILL, SIGSEGV outside Go code, ...): "SIGILL: illegal instruction",
		// "PC=…", then the stacks, the signalled goroutine's first; on Windows
		// of an exception (runtime.winthrow): "Exception 0xc000001d 0x0 0x0 <pc>".
		i := signalRE.FindStringIndex(text)[0]
		f.kind = KindFatal
		f.message, _, _ = strings.Cut(text[i:], "\n")
		report := text[i:]
		if m := exceptionRE.FindStringSubmatch(f.message); m != nil {
			f.message = "Exception " + m[1] // without the addresses, which differ each run
			if name := windowsExceptions[m[1]]; name != "" {
				f.message += ": " + name
			}
			// winthrow prints the faulting goroutine's frames after a blank
			// line with no "goroutine N [...]:" header; the others have one.
			if j := strings.Index(report, "\n\n"); j >= 0 {
				report = report[:j+2] + "goroutine 0 [exception]:\n" + report[j+2:]
			}
		}
		if gs := goroutines(report); len(gs) > 0 {
			g := gs[0]
			if !hasUserFrame(u, g) {
				g = pickGoroutine(gs, u, fuzzFn)
			}
			f.frames = u.frames(g)
		}
	case strings.Contains(text, "panic: "):
		f.kind = KindGoroutinePanic
		i := strings.LastIndex(text, "panic: ")
		// With nested panics the last "panic: " line starts the traceback.
		msg := text[strings.Index(text, "panic: ")+len("panic: "):]
		if j := strings.IndexByte(msg, '\n'); j >= 0 {
			msg = msg[:j]
		}
		f.message = strings.TrimSpace(msg)
		if gs := goroutines(text[i:]); len(gs) > 0 {
			f.frames = dropPanicFrames(u.frames(gs[0]))
		}
	default:
		f.kind = KindExit
		if d.exitCode >= 0 {
			f.message = fmt.Sprintf("the process exited with status %d", d.exitCode)
		} else {
			f.message = "the process was killed by a signal"
			f.exitSignal = true
		}
		if d.exitSite != "" {
			if gs := goroutines(d.exitSite); len(gs) > 0 {
				f.frames = u.frames(gs[0])
			}
		}
	}
	f.locate(u)
	if f.kind == KindFatal && f.message == "stack overflow" {
		f.locateRecursion(u)
	}
	return f
}

// signalRE matches the first line of the runtime's report of a fatal signal,
// followed by its PC line: "SIGILL: illegal instruction" on Unix, "Exception
// 0xc000001d 0x0 0x0 0x7ff6…" on Windows (exceptionRE).
var signalRE = regexp.MustCompile(`(?m)^(?:SIG[A-Z]+: |Exception 0x[0-9a-f]+ )[^\n]*\nPC=`)

// exceptionRE is the first line of the Windows runtime's report of an exception
// it does not turn into a panic (runtime.winthrow): its code, two words of
// information, the PC.
var exceptionRE = regexp.MustCompile(`^Exception (0x[0-9a-f]+) `)

// windowsExceptions names the exception codes a Go program dies of rather than
// panics with (access violations and arithmetic faults in Go code are panics).
var windowsExceptions = map[string]string{
	"0xc000001d": "illegal instruction",
	"0xc0000096": "privileged instruction",
	"0x80000003": "breakpoint",
	"0xc00000fd": "stack overflow",
	"0xc0000005": "access violation",
}

func hasUserFrame(u userFrames, g []string) bool {
	for _, fr := range u.frames(g) {
		if u.is(fr.File) {
			return true
		}
	}
	return false
}

// sampledFrames is the stack of a hang or an oom the watchdog caught: the frames
// common to all the worker's stack samples (see fuzzrt/stacks.go), from the
// outermost in, so that the innermost is the loop that does not end rather than
// wherever it was at one moment; lines are the first sample's. Without samples
// (a worker that could not take them), the one stack of the runtime's dump.
func sampledFrames(samples []string, dump string, u userFrames, fuzzFn string) []Frame {
	var common []Frame
	n := 0
	for _, s := range samples {
		gs := goroutines(s)
		if len(gs) == 0 {
			continue
		}
		frames := u.frames(pickGoroutine(gs, u, fuzzFn))
		if n++; n == 1 {
			common = frames
			continue
		}
		k := 0
		for k < len(common) && k < len(frames) && sameFunction(common[len(common)-1-k], frames[len(frames)-1-k]) {
			k++
		}
		common = common[len(common)-k:]
	}
	if len(common) > 0 {
		return common
	}
	if gs := goroutines(dump); len(gs) > 0 {
		return u.frames(pickGoroutine(gs, u, fuzzFn))
	}
	return nil
}

// cutSamples separates a worker's stack samples from the rest of its stderr.
func cutSamples(stderr string) (samples []string, rest string) {
	i := strings.Index(stderr, fuzzrt.StackSampleMarker)
	if i < 0 {
		return nil, stderr
	}
	text, after, _ := strings.Cut(stderr[i:], fuzzrt.StackSamplesEnd+"\n")
	return strings.Split(text, fuzzrt.StackSampleMarker)[1:], stderr[:i] + after
}

func sameFunction(a, b Frame) bool { return a.Function == b.Function && a.File == b.File }

// same reports whether g, a replay's failure, is f again. A hang or an oom the
// watchdog caught is located in its loop's function, but when every stack sample
// happened to be in one function the loop calls, there: the same failure still if
// either's function is on the other's stack.
func (f *failure) same(g *failure) bool {
	if f == nil || g == nil || f.kind != g.kind {
		return false
	}
	if f.signature() == g.signature() {
		return true
	}
	if (f.kind != KindHang && f.kind != KindOOM) || f.fn == "" || g.fn == "" {
		return false
	}
	return onStack(f.frames, g.file, g.fn) || onStack(g.frames, f.file, f.fn)
}

func onStack(frames []Frame, file, fn string) bool {
	for _, fr := range frames {
		if sameFunction(fr, Frame{File: file, Function: fn}) {
			return true
		}
	}
	return false
}

// locateRecursion places a stack overflow at the call that recursed: the user
// frame that repeats most. The innermost frames are wherever the stack happened
// to run out.
func (f *failure) locateRecursion(u userFrames) {
	counts := map[Frame]int{}
	best, bestN := Frame{}, 1
	for _, fr := range f.frames {
		if !u.is(fr.File) {
			continue
		}
		k := Frame{File: fr.File, Line: fr.Line}
		counts[k]++
		if counts[k] > bestN {
			best, bestN = k, counts[k]
		}
	}
	if bestN > 1 {
		f.file, f.line = best.File, best.Line
	}
}

// pickGoroutine chooses the goroutine that matters in a full dump: the one running
// the fuzz function, else the first with a frame in the user's code.
// raisingGoroutine is the goroutine a fatal error is about: the one that raised
// it, which the runtime prints first (a map written by two goroutines the target
// started is where they write, not where the fuzz function waits for them), when
// it runs the user's code; else (a deadlock, raised by no goroutine) the one
// pickGoroutine picks.
func raisingGoroutine(gs [][]string, u userFrames, fuzzFn string) []string {
	for _, fr := range u.frames(gs[0]) {
		if u.is(fr.File) {
			return gs[0]
		}
	}
	return pickGoroutine(gs, u, fuzzFn)
}

func pickGoroutine(gs [][]string, u userFrames, fuzzFn string) []string {
	// Of the goroutines that mention the fuzz function, the one whose user code is
	// nearest the top: the one waiting for it has testing's frames on top.
	var best []string
	bestDepth := 1 << 30
	for _, g := range gs {
		mentions := false
		for _, l := range g {
			if fuzzFn != "" && strings.Contains(l, fuzzFn) {
				mentions = true
				break
			}
		}
		if !mentions {
			continue
		}
		for depth, fr := range u.frames(g) {
			if u.is(fr.File) {
				if depth < bestDepth {
					best, bestDepth = g, depth
				}
				break
			}
		}
	}
	if best != nil {
		return best
	}
	for _, g := range gs {
		if hasUserFrame(u, g) {
			return g
		}
	}
	return gs[0]
}

// KindRace: a data race the race detector reported (a -race build). The worker
// runs with GORACE=halt_on_error=1 (raceEnv), so the first report ends it with the
// input in shared memory, and is read from its stderr:
//
//	==================
//	WARNING: DATA RACE
//	Write at 0x00c000012345 by goroutine 8:
//	  example.com/m.Count.func1()
//	      /src/m/m.go:13 +0x44
//
//	Previous write at 0x00c000012345 by goroutine 7:
//	  example.com/m.Count()
//	      /src/m/m.go:15 +0x100
//
//	Goroutine 8 (running) created at:
//	  ...
//	==================
//
// Either access may come first on another run, so the failure is placed at the
// one whose place in the user's code sorts first, and the other is part of its
// signature: the same race is the same failure whichever goroutine won.

// raceReport starts the race detector's report.
const raceReport = "WARNING: DATA RACE"

// raceEnv is the GORACE setting of a race build's worker: stop at the first
// report, and do not wait a second at exit for other goroutines' reports. The
// user's own GORACE options (history_size...) are kept.
func raceEnv() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" halt_on_error=1 atexit_sleep_ms=0")
}

// raceAccessRE matches the heading of an access section of a race report.
var raceAccessRE = regexp.MustCompile(`^((?:Previous )?(?:[Rr]ead|[Ww]rite)) at \S+ by (goroutine \d+|main goroutine):$`)

// raceSection is one part of a race report: a heading and its frames.
type raceSection struct {
	heading string
	access  string // "Write", "Previous read"...; "" for a goroutine's creation site
	by      string // "goroutine 8"
	frames  []Frame
	user    *Frame // the first frame in the user's code
}

// classifyRace reads the first race report in text.
func classifyRace(text string, u userFrames) *failure {
	i := strings.Index(text, raceReport)
	report := text[i+len(raceReport):]
	if j := strings.Index(report, "=================="); j >= 0 {
		report = report[:j]
	}
	var sections []*raceSection
	var lines []string
	flush := func() {
		if len(lines) == 0 {
			return
		}
		sec := &raceSection{heading: strings.TrimSpace(lines[0]), frames: u.frames(lines)}
		if m := raceAccessRE.FindStringSubmatch(sec.heading); m != nil {
			sec.access, sec.by = m[1], m[2]
		}
		for k := range sec.frames {
			if u.is(sec.frames[k].File) {
				sec.user = &sec.frames[k]
				break
			}
		}
		sections = append(sections, sec)
		lines = nil
	}
	for _, l := range strings.Split(report, "\n") {
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		lines = append(lines, l)
	}
	flush()
	var accesses []*raceSection
	for _, sec := range sections {
		if sec.access != "" && len(accesses) < 2 {
			accesses = append(accesses, sec)
		}
	}
	f := &failure{kind: KindRace, output: strings.TrimSpace(raceReport + report)}
	// The access placed first: the one in the user's code that sorts first.
	if len(accesses) == 2 && accesses[1].user != nil && (accesses[0].user == nil || raceLess(*accesses[1].user, *accesses[0].user)) {
		accesses[0], accesses[1] = accesses[1], accesses[0]
	}
	var parts []string
	for _, a := range accesses {
		at := ""
		if a.user != nil {
			at = fmt.Sprintf(" at %s:%d", filepath.Base(a.user.File), a.user.Line)
		}
		parts = append(parts, fmt.Sprintf("%s by %s%s", strings.ToLower(a.access), a.by, at))
	}
	f.message = "data race: " + strings.Join(parts, ", ")
	// Frames: both accesses' stacks, then where their goroutines were created,
	// so that the diagnostic sits on the first and points at the rest.
	ordered := append([]*raceSection(nil), accesses...)
	for _, sec := range sections {
		if sec.access == "" {
			ordered = append(ordered, sec)
		}
	}
	for _, sec := range ordered {
		f.frames = append(f.frames, sec.frames...)
	}
	if len(accesses) > 0 && accesses[0].user != nil {
		f.file, f.line, f.fn = accesses[0].user.File, accesses[0].user.Line, accesses[0].user.Function
	}
	if len(accesses) == 2 && accesses[1].user != nil {
		f.peer = fmt.Sprintf("%s:%d", filepath.Base(accesses[1].user.File), accesses[1].user.Line)
	}
	return f
}

// raceLess orders two places in the user's code.
func raceLess(a, b Frame) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Line < b.Line
}

package failure

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/protocol"
)

// Death describes how a worker process ended.
type Death struct {
	Stderr   string
	ExitCode int           // -1 when killed by a signal
	Hung     bool          // the watchdog asked for its stacks
	HangAt   time.Duration // the hang limit it ran past
	OOM      bool          // the memory watchdog killed it
	ExitSite string        // stack recorded by the exit hook, if any
}

// ClassifyDeath classifies a worker's Death from its stderr and exit status.
// fuzzFn is the name prefix of the fuzz function's closure, to find the goroutine
// running it in a hang's dump.
func ClassifyDeath(d Death, u UserFrames, fuzzFn string) *Failure {
	samples, text := cutSamples(d.Stderr)
	if strings.Contains(text, raceReport) {
		return classifyRace(text, u)
	}
	f := &Failure{Output: text}
	switch {
	case d.OOM:
		f.Kind = protocol.KindOOM
		f.Message = "worker exceeded the memory limit"
		f.Frames = sampledFrames(samples, text, u, fuzzFn)
	case strings.Contains(text, "fatal error: "):
		f.Kind = protocol.KindFatal
		i := strings.Index(text, "fatal error: ")
		msg := text[i:]
		if j := strings.IndexByte(msg, '\n'); j >= 0 {
			msg = msg[:j]
		}
		f.Message = strings.TrimPrefix(msg, "fatal error: ")
		if gs := goroutines(text[i:]); len(gs) > 0 {
			f.Frames = u.frames(raisingGoroutine(gs, u, fuzzFn))
		}
		// The innermost frame of a stack overflow is the prologue of the function
		// that could not grow its stack; the call that recursed is the next one.
		if f.Message == "stack overflow" && len(f.Frames) > 1 {
			f.Frames = f.Frames[1:]
		}
	case d.Hung:
		f.Kind = protocol.KindHang
		f.Message = fmt.Sprintf("input ran longer than %v", d.HangAt)
		f.Frames = sampledFrames(samples, text, u, fuzzFn)
	case signalRE.MatchString(text):
		// The runtime's report of a signal it does not turn into a panic
		// (SIGILL, SIGSEGV outside Go code, ...): "SIGILL: illegal instruction",
		// "PC=…", then the stacks, the signalled goroutine's first; on Windows
		// of an exception (runtime.winthrow): "Exception 0xc000001d 0x0 0x0 <pc>".
		i := signalRE.FindStringIndex(text)[0]
		f.Kind = protocol.KindFatal
		f.Message, _, _ = strings.Cut(text[i:], "\n")
		report := text[i:]
		if m := exceptionRE.FindStringSubmatch(f.Message); m != nil {
			f.Message = "Exception " + m[1] // without the addresses, which differ each run
			if name := windowsExceptions[m[1]]; name != "" {
				f.Message += ": " + name
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
			f.Frames = u.frames(g)
		}
	case strings.Contains(text, "panic: "):
		f.Kind = protocol.KindGoroutinePanic
		i := strings.LastIndex(text, "panic: ")
		// With nested panics the last "panic: " line starts the traceback.
		msg := text[strings.Index(text, "panic: ")+len("panic: "):]
		if j := strings.IndexByte(msg, '\n'); j >= 0 {
			msg = msg[:j]
		}
		f.Message = strings.TrimSpace(msg)
		if gs := goroutines(text[i:]); len(gs) > 0 {
			f.Frames = dropPanicFrames(u.frames(gs[0]))
		}
	default:
		f.Kind = protocol.KindExit
		if d.ExitCode >= 0 {
			f.Message = fmt.Sprintf("the process exited with status %d", d.ExitCode)
		} else {
			f.Message = "the process was killed by a signal"
			f.ExitSignal = true
		}
		if d.ExitSite != "" {
			if gs := goroutines(d.ExitSite); len(gs) > 0 {
				f.Frames = u.frames(gs[0])
			}
		}
	}
	f.locate(u)
	if f.Kind == protocol.KindFatal && f.Message == "stack overflow" {
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

// Package failure classifies a failure of a fuzz target from what its worker
// process said: the output testing returns for a failure the worker survived
// (ClassifyOutput), or the stderr and exit status of a worker that died
// (ClassifyDeath). The result, a Failure, says what kind of failure it is, its
// message, its stack and where in the user's code it happens; two failures are
// the same one (Same, ID) by their kind and that place.
//
// It is a function of its input alone: no process, no file but the existence
// check of a logged file name, so its tests feed it text.
package failure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"fuzzls.dev/fuzzls/protocol"
)

// Kind is what failed: one of protocol's Kind constants (KindPanic…), the wire
// values the daemon's diagnostics and the CLI's reports carry.
type Kind string

// Frame is one frame of a failure's stack.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}

// Failure is a failure as classified from a worker's output.
type Failure struct {
	Kind    Kind
	Message string  // first line(s): panic value, t.Fatal text, fatal error
	Frames  []Frame // the failing goroutine's stack, innermost first
	File    string  // the first frame inside the user's code ("" if none)
	Line    int
	Func    string // that frame's function
	Output  string // the raw failure text
	// ExitSignal: the process was killed by a signal the watchdogs did not send.
	ExitSignal bool
	// peer: of a race, the other access's place ("file.go:12"), part of the signature.
	peer string
}

// signature identifies "the same failure": its kind and where in the user's code it
// happens. Minimization keeps it and deduplication groups by it (see Same).
func (f *Failure) signature() string {
	if f.File != "" {
		return string(f.Kind) + "@" + f.where(f.File)
	}
	return string(f.Kind) + ":" + f.Message
}

// where is the failure's place in file: its line, or for a hang or an oom its
// function. Those are located by stacks taken while the input runs (on the
// watchdog's request), which land on any line of the loop that spins or
// allocates, different ones on each replay.
func (f *Failure) where(file string) string {
	if (f.Kind == protocol.KindHang || f.Kind == protocol.KindOOM) && f.Func != "" {
		return file + ":" + f.Func
	}
	if f.peer != "" {
		return fmt.Sprintf("%s:%d&%s", file, f.Line, f.peer)
	}
	return fmt.Sprintf("%s:%d", file, f.Line)
}

// ID is stable across runs: the target's ID ("importpath.FuzzXxx"), the kind
// and the location (file relative to moduleDir).
func (f *Failure) ID(target, moduleDir string) string {
	file := f.File
	if rel, err := filepath.Rel(moduleDir, file); err == nil {
		file = rel
	}
	loc := f.where(file)
	if f.File == "" {
		loc = f.Message
	}
	sum := sha256.Sum256([]byte(target + "\x00" + string(f.Kind) + "\x00" + loc))
	return hex.EncodeToString(sum[:6])
}

// Same reports whether g, a replay's failure, is f again. A hang or an oom the
// watchdog caught is located in its loop's function, but when every stack sample
// happened to be in one function the loop calls, there: the same failure still if
// either's function is on the other's stack.
func (f *Failure) Same(g *Failure) bool {
	if f == nil || g == nil || f.Kind != g.Kind {
		return false
	}
	if f.signature() == g.signature() {
		return true
	}
	if (f.Kind != protocol.KindHang && f.Kind != protocol.KindOOM) || f.Func == "" || g.Func == "" {
		return false
	}
	return onStack(f.Frames, g.File, g.Func) || onStack(g.Frames, f.File, f.Func)
}

func onStack(frames []Frame, file, fn string) bool {
	for _, fr := range frames {
		if sameFunction(fr, Frame{File: file, Function: fn}) {
			return true
		}
	}
	return false
}

func sameFunction(a, b Frame) bool { return a.Function == b.Function && a.File == b.File }

func (f *Failure) locate(u UserFrames) {
	for _, fr := range f.Frames {
		if u.is(fr.File) {
			f.File, f.Line, f.Func = fr.File, fr.Line, fr.Function
			return
		}
	}
}

// locateRecursion places a stack overflow at the call that recursed: the user
// frame that repeats most. The innermost frames are wherever the stack happened
// to run out.
func (f *Failure) locateRecursion(u UserFrames) {
	counts := map[Frame]int{}
	best, bestN := Frame{}, 1
	for _, fr := range f.Frames {
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
		f.File, f.Line = best.File, best.Line
	}
}

// pickGoroutine chooses the goroutine that matters in a full dump: the one running
// the fuzz function, else the first with a frame in the user's code.
// raisingGoroutine is the goroutine a fatal error is about: the one that raised

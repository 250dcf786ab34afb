package failure

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/instrument"
)

// UserFrames says which frames belong to the user: inside one of the module
// directories, and not the fuzzls harness or runtime. It also reads frames,
// naming a dependency's own files where the binary ran its instrumented copy.
type UserFrames struct {
	Dirs   []string
	Copies map[string]string // a module copy's directory → the module's own (instrument.Binary.Copies)
}

// frames reads a goroutine's frames (see parseFrames) with the files of module
// copies named by their originals, and without the frames of code fuzzls
// generated (the harness's exit hook, the runtime): those files exist only in the
// build's overlay, so no editor can show them, and the user's frames follow.
func (u UserFrames) frames(lines []string) []Frame {
	var frames []Frame
	for _, fr := range parseFrames(lines) {
		if instrument.IsGenerated(fr.File) {
			continue
		}
		for cp, orig := range u.Copies {
			if strings.HasPrefix(fr.File, cp+string(filepath.Separator)) {
				fr.File = orig + fr.File[len(cp):]
				break
			}
		}
		frames = append(frames, fr)
	}
	return frames
}

func (u UserFrames) is(file string) bool {
	if instrument.IsGenerated(file) {
		return false
	}
	for _, d := range u.Dirs {
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

func hasUserFrame(u UserFrames, g []string) bool {
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
func sampledFrames(samples []string, dump string, u UserFrames, fuzzFn string) []Frame {
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

// it, which the runtime prints first (a map written by two goroutines the target
// started is where they write, not where the fuzz function waits for them), when
// it runs the user's code; else (a deadlock, raised by no goroutine) the one
// pickGoroutine picks.
func raisingGoroutine(gs [][]string, u UserFrames, fuzzFn string) []string {
	for _, fr := range u.frames(gs[0]) {
		if u.is(fr.File) {
			return gs[0]
		}
	}
	return pickGoroutine(gs, u, fuzzFn)
}

// pickGoroutine chooses the goroutine that matters in a full dump: the one running
// the fuzz function, else the first with a frame in the user's code.
func pickGoroutine(gs [][]string, u UserFrames, fuzzFn string) []string {
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

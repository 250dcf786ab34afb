package failure

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/protocol"
)

// for a panic or a t.Error/t.Fatal in the fuzz function. Its lines are the test's
// log, "file.go:12: message" (file names as testing prints them, relative to
// the package). A panic (or runtime.Goexit) is the log line of testing's own
// tRunner, which logs it from testing.go with the stack it happened on; anything
// else the test logged is the user's, also a message that says "panic: ".
func ClassifyOutput(out string, u UserFrames, pkgDir string) *Failure {
	f := &Failure{Output: out}
	if msg, ok := strings.CutPrefix(out, fuzzrt.OOMPrefix); ok {
		// The worker's own check: the input allocated past the limit at one place.
		f.Kind = protocol.KindOOM
		f.Message, _, _ = strings.Cut(msg, "\n")
		if gs := goroutines(msg); len(gs) > 0 {
			f.Frames = u.frames(gs[0])
		}
		f.locate(u)
		return f
	}
	if msg, ok := strings.CutPrefix(out, fuzzrt.LeakPrefix); ok {
		// The worker's own check: goroutines the input started stay blocked. The
		// failure is where the first of them was started (its "created by"
		// frame, the last), if that is the user's code.
		f.Kind = protocol.KindLeak
		f.Message, _, _ = strings.Cut(msg, "\n")
		if gs := goroutines(msg); len(gs) > 0 {
			f.Frames = u.frames(gs[0])
		}
		if n := len(f.Frames); n > 0 && u.is(f.Frames[n-1].File) {
			last := f.Frames[n-1]
			f.File, f.Line, f.Func = last.File, last.Line, last.Function
		} else {
			f.locate(u)
		}
		return f
	}
	f.Kind = protocol.KindError
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
			f.Kind, f.Message = protocol.KindPanic, msg
			rest := strings.Join(lines[i+1:], "\n")
			if gs := goroutines(rest); len(gs) > 0 {
				f.Frames = dropPanicFrames(u.frames(gs[0]))
			}
			f.File, f.Line = "", 0
			f.locate(u)
			return f
		}
		file := m[1]
		if !filepath.IsAbs(file) {
			file = filepath.Join(pkgDir, file)
		}
		n, _ := strconv.Atoi(m[2])
		if f.File == "" && u.is(file) && exists(file) {
			f.File, f.Line = file, n
		}
		f.Frames = append(f.Frames, Frame{File: file, Line: n})
		msgs = append(msgs, m[3])
	}
	f.Message = strings.Join(msgs, "\n")
	if f.Message == "" {
		f.Message = strings.TrimSpace(out)
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

package daemon

import (
	"path/filepath"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/failure"
)

// TestCrashLocation: the diagnostic goes where the engine located the failure
// when that is in the workspace. A stack overflow is located at the call that
// recursed, not at the innermost frame (wherever the stack ran out); a frame
// outside the workspace gives way to the first one inside.
func TestCrashLocation(t *testing.T) {
	ws := t.TempDir()
	src := filepath.Join(ws, "crashers.go")
	dep := filepath.Join(t.TempDir(), "dep.go")
	target := engine.Target{File: filepath.Join(ws, "crashers_test.go"), Line: 30}
	s := &server{}
	s.folders = []string{ws}
	for _, tc := range []struct {
		desc     string
		crash    engine.Crash
		line     int
		nOthers  int
		wantFile string
	}{
		{"stack overflow: the recursing call", engine.Crash{File: src, Line: 36, Frames: []failure.Frame{
			{File: src, Line: 35}, {File: src, Line: 36}, {File: src, Line: 36}}}, 36, 2, src},
		{"panic: the first frame", engine.Crash{File: src, Line: 18, Frames: []failure.Frame{
			{File: src, Line: 18}, {File: target.File, Line: 10}}}, 18, 1, src},
		{"in a dependency: the first frame in the workspace", engine.Crash{File: dep, Line: 5, Frames: []failure.Frame{
			{File: dep, Line: 5}, {File: src, Line: 12}}}, 12, 0, src},
		{"no frame: the target", engine.Crash{}, 30, 0, target.File},
	} {
		tc.crash.Target = target
		file, line, others := s.crashLocation(&tc.crash)
		if file != tc.wantFile || line != tc.line || len(others) != tc.nOthers {
			t.Errorf("%s: at %s:%d with %d other frames, want %s:%d with %d", tc.desc, file, line, len(others), tc.wantFile, tc.line, tc.nOthers)
		}
	}
}

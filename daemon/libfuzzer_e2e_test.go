package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/internal/proc"
	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestLibFuzzerEngineLSP: with the setting engine "libfuzzer", starting
// FuzzEval builds it with go-118-fuzz-build and clang and runs libFuzzer, and
// the editor gets what fuzzls's own engine gives it: status fuzzing (engine
// libfuzzer), coverage of calc.go (libFuzzer's corpus replayed), and the
// division by zero as the diagnostic at its line, its input shown; nothing is
// written into the workspace. Stopping a target libFuzzer still fuzzes leaves
// no libFuzzer process running.
func TestLibFuzzerEngineLSP(t *testing.T) {
	requireEngine(t)
	testws.RequireInCI(t, engine.CheckLibFuzzer(context.Background(), t.TempDir()))
	e := fuzzEvalWithEngine(t, fproto.EngineLibFuzzer)
	p, dir, quietGo := e.p, e.dir, e.quietGo
	if _, err := os.Stat(filepath.Join(dir, "testdata")); err == nil {
		t.Error("libFuzzer's engine wrote testdata into the workspace")
	}

	// A target libFuzzer fuzzes without end, stopped.
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(quietGo)), Target: "FuzzQuiet"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	p.await(t, "FuzzQuiet fuzzing with libFuzzer", 3*time.Minute, e.session("FuzzQuiet", fproto.StateFuzzing))
	var fuzzers []int
	p.await(t, "libFuzzer running", time.Minute, func() bool {
		fuzzers = slices.DeleteFunc(proc.Descendants(p.Cmd.Process.Pid), func(pid int) bool {
			return !strings.HasPrefix(proc.Name(pid), "FuzzQuiet.lib") // the kernel's name: 15 bytes
		})
		return len(fuzzers) > 0
	})
	if _, err := p.Command(fproto.CommandStop, fproto.TargetArgs{URI: string(uri.File(quietGo)), Target: "FuzzQuiet"}); err != nil {
		t.Fatalf("stop: %v", err)
	}
	awaitGone(t, fuzzers)
}

package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/engine/libfuzzer"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestSyncDirFailure: a failure another machine recorded in the directory the
// syncDir setting names (as fuzzls fuzz -sync writes it) shows in the editor as a
// diagnostic at its line, though fuzzing here could not find it (the input must
// hash to a constant).
func TestSyncDirFailure(t *testing.T) {
	requireEngine(t)
	ws := copyDir(t, "../testdata/synced")
	testGo := filepath.Join(ws, "synced_test.go")
	gate := []byte("sixteen-byte-key") // passes the gate
	line := lineOf(t, testGo, "MARK:gate")
	syncDir := t.TempDir()
	rec := filepath.Join(syncDir, "ci-runner", "failures", "example.com", "synced", "FuzzCheck", "0123456789ab")
	os.MkdirAll(filepath.Dir(rec), 0o755)
	os.WriteFile(rec, fuzzrt.Marshal([]any{append(gate, 'x')}), 0o644)

	p := startProcess(t)
	p.initialize(ws, map[string]any{"parallel": 1, "cacheDir": t.TempDir(), "syncDir": syncDir})
	p.open(testGo)
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzCheck"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	c := p.lspConn
	testURI := string(uri.File(testGo))
	c.await(t, "the synced failure's diagnostic", 2*time.Minute, func() bool {
		return slices.ContainsFunc(c.diags(testURI), func(d protocol.Diagnostic) bool { return d.Range.Start.Line == uint32(line-1) })
	})
}

// TestImportedFailure: a libFuzzer crash file of the target's go-118-fuzz-build
// harness, imported (as fuzzls import does) while the daemon fuzzes, becomes a
// seed in testdata/fuzz, and its failure a diagnostic at its line.
func TestImportedFailure(t *testing.T) {
	requireEngine(t)
	ws := copyDir(t, "../testdata/synced")
	testGo := filepath.Join(ws, "synced_test.go")
	line := lineOf(t, testGo, "MARK:gate")
	p := startProcess(t)
	cache := t.TempDir()
	p.initialize(ws, map[string]any{"parallel": 1, "cacheDir": cache})
	p.open(testGo)
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzCheck"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	c := p.lspConn
	c.await(t, "fuzzing (coverage)", 2*time.Minute, func() bool { return len(c.Coverage) > 0 })
	// The harness's layout of one []byte: its length, big-endian, then the bytes.
	crash := filepath.Join(t.TempDir(), "crash-0123")
	os.WriteFile(crash, append([]byte{0, 0, 0, 17}, "sixteen-byte-keyx"...), 0o644)
	e := engine.New(engine.Options{CacheDir: cache}, nil)
	targets, err := e.Targets(p.Ctx, ws, ".")
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets: %v %v", targets, err)
	}
	prep, err := e.Prepare(targets[0])
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	got, err := libfuzzer.Import(prep, []string{crash})
	if err != nil || len(got) != 1 || got[0].Err != nil {
		t.Fatalf("import: %v %+v", err, got)
	}
	testURI := string(uri.File(testGo))
	c.await(t, "the imported failure's diagnostic", 2*time.Minute, func() bool {
		return slices.ContainsFunc(c.diags(testURI), func(d protocol.Diagnostic) bool { return d.Range.Start.Line == uint32(line-1) })
	})
}

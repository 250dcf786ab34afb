package engine

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
)

// TestKilledMidWrite: a process writing entries into a sync directory one after
// the other is killed with SIGKILL while a write is under way. Every file a
// reader takes (syncState.newFiles) is whole; what was cut short is only a *.tmp file,
// which readers skip.
func TestKilledMidWrite(t *testing.T) {
	data := strings.Repeat("go test fuzz v1\n[]byte(\"0123456789abcdef\")\n", 1<<18) // 10 MiB
	if dir := os.Getenv("FUZZLS_TEST_WRITER"); dir != "" {
		for i := 0; ; i++ {
			if err := WriteFileAtomic(filepath.Join(dir, fmt.Sprintf("entry%d", i)), data); err != nil {
				panic(err)
			}
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledMidWrite$")
	cmd.Env = append(os.Environ(), "FUZZLS_TEST_WRITER="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(time.Minute)
	for {
		ents, _ := os.ReadDir(dir)
		writing := false
		for _, e := range ents {
			if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), partialSuffix) && info.Size() > 0 {
				writing = true
			}
		}
		if writing && len(ents) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer wrote nothing: %v", ents)
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	s := newSession(New(Options{CacheDir: t.TempDir()}, nil), Target{})
	whole := s.sync.newFiles(dir)
	ents, _ := os.ReadDir(dir)
	partial := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), partialSuffix) {
			partial++
		}
	}
	if len(whole) < 2 || partial > 1 || len(whole)+partial != len(ents) {
		t.Errorf("%d whole files read, %d partial of %d files", len(whole), partial, len(ents))
	}
	for _, f := range whole {
		if !bytes.Equal(f.data, []byte(data)) {
			t.Errorf("%s is not whole: %d bytes of %d", f.path, len(f.data), len(data))
		}
	}
}

// TestSyncJoin: a process joining a sync directory starts where the others
// are: the first stats of its fuzzing already show the coverage the entries
// the directory holds give (all the first process found: each entry that added
// coverage there was published), its workers having run them before mutating.
func TestSyncJoin(t *testing.T) {
	dir := testws.Txtar(t, "testdata/join.txtar")
	syncDir := t.TempDir()
	first, _ := fuzzOnce(t, dir, "FuzzLex", Options{Parallel: 1, FuzzTime: 8 * time.Second, Sync: syncDir, SyncName: "first"})
	want := first.Stats().Covered
	entries, _ := os.ReadDir(filepath.Join(syncDir, "first", "corpus", "example.com", "join", "FuzzLex"))
	var mu sync.Mutex
	var stats []Stats
	e := New(Options{CacheDir: t.TempDir(), Parallel: 1, FuzzTime: 3 * time.Second, Sync: syncDir, SyncName: "second"}, func(ev Event) {
		if st, ok := ev.(*StatsEvent); ok {
			mu.Lock()
			stats = append(stats, st.Stats)
			mu.Unlock()
		}
	})
	defer e.Close()
	targets, err := e.Targets(t.Context(), dir, ".")
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets: %v, %v", targets, err)
	}
	if err := e.Start(targets[0]).Wait(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stats) == 0 || stats[0].Covered < want {
		got := -1
		if len(stats) > 0 {
			got = stats[0].Covered
		}
		t.Errorf("the joiner's first stats show %d blocks covered; the first process ended at %d, its %d entries in the directory", got, want, len(entries))
	}
}

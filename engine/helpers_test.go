package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/internal/testws"
)

// copyTree copies the example workspace src into a scratch directory (see treeHash).
func copyTree(t *testing.T, src string) string { return testws.Copy(t, src) }

// treeHash hashes every file's path and content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00"))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

// markerLine is the 1-based line of the first line of file containing marker.
func markerLine(t *testing.T, file, marker string) int { return testws.Line(t, file, marker) }

// recorder collects an engine's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) observe(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// fuzzOnce fuzzes one target of the workspace at dir until its first failure (or
// budget) and returns the session and the recorder.
func fuzzOnce(t *testing.T, dir, target string, opts Options) (*Session, *recorder) {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	if opts.FuzzTime == 0 {
		opts.FuzzTime = 60 * time.Second
	}
	if opts.MinimizeTime == 0 {
		opts.MinimizeTime = 10 * time.Second
	}
	rec := &recorder{}
	e := New(opts, rec.observe)
	t.Cleanup(e.Close)
	targets, err := e.Targets(t.Context(), dir, "./...")
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	for _, tg := range targets {
		if tg.Name == target {
			s := e.Start(tg)
			if err := s.Wait(); err != nil {
				t.Fatalf("session: %v", err)
			}
			return s, rec
		}
	}
	t.Fatalf("no target %s in %s (have %v)", target, dir, targets)
	return nil, nil
}

// goTestFails runs `go test -run=^target$` in dir and reports whether it failed,
// with its output.
func goTestFails(t *testing.T, dir, target string) (bool, string) {
	t.Helper()
	cmd := exec.Command("go", "test", "-count=1", "-run=^"+target+"$", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return err != nil, string(out)
}

// replayFresh runs input once on a new worker of s's, as minimization does (a
// suspected hang is one).
func replayFresh(t *testing.T, s *Session, input string) (*failure.Failure, bool) {
	r := &replayer{s: s, quick: true}
	defer r.close()
	return r.run(t.Context(), input)
}

// workerPIDs lists this process's children that run as fuzz workers.
func workerPIDs() []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := statFields(stat)
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		if cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); strings.Contains(string(cmdline), "-test.fuzzworker") {
			pids = append(pids, pid)
		}
	}
	return pids
}

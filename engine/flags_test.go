package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/internal/testws"
	"fuzzls.dev/fuzzls/protocol"
)

// A target and the code it fuzzes behind //go:build integration: without -tags
// neither fuzzls nor go test sees it, and fuzzls says why; with -tags integration it is fuzzed and its
// bug found, placed in the tagged file.
func TestBuildTags(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzes for real")
	}
	dir := copyTree(t, "../testdata/flags")
	before := treeHash(t, dir)

	targets, err := Discover(t.Context(), BuildFlags{}, dir, "./tagged")
	want := "FuzzTagged (tagged/decode_integration_test.go:7, left out by //go:build integration)"
	if len(targets) != 0 || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("without -tags: targets %v, error %v; want none and an error with %q", targets, err, want)
	}
	// go test's verdict without the tag: the package has no test files.
	cmd := exec.Command("go", "test", "-run=^FuzzTagged$", "-fuzz=^FuzzTagged$", "-fuzztime=1x", "./tagged")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "no test files") {
		t.Errorf("go test without -tags: %v\n%s", err, out)
	}

	s, _ := fuzzOnce(t, dir, "FuzzTagged", Options{Parallel: 1, Build: BuildFlags{Tags: "integration"}})
	cs := s.Crashes()
	if len(cs) != 1 {
		t.Fatalf("crashes: %+v, want one", cs)
	}
	c := cs[0]
	file := filepath.Join(dir, "tagged", "decode_integration.go")
	if c.Kind != protocol.KindPanic || c.File != file || c.Line != markerLine(t, file, "MARK:tags") {
		t.Errorf("crash %s at %s:%d, want panic at the MARK:tags line of %s", c.Kind, c.File, c.Line, file)
	}
	if replay, _ := c.ReplayCommand("x"); !slices.Equal(c.BuildFlags, []string{"-tags=integration"}) || !strings.HasPrefix(replay, "go test -tags=integration -run=FuzzTagged/") {
		t.Errorf("the replay command lacks the tags: %s", replay)
	}
	if treeHash(t, dir) != before {
		t.Error("the workspace changed")
	}
}

// With -race the workers run with the race detector: a data race that an input
// reaches is a failure of kind race, at one of the racing lines in the user's
// code, with both accesses and their goroutines, minimized, and its saved input
// fails go test -race too. Goroutines running the same instrumented blocks and
// comparisons under the user's lock (Sum, on every input) are no race: the
// instrumentation's own counters are not the user's accesses.
func TestRace(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzes for real")
	}
	dir := copyTree(t, "../testdata/flags")
	file := filepath.Join(dir, "racy", "racy.go")
	lines := []int{markerLine(t, file, "MARK:race-goroutine"), markerLine(t, file, "MARK:race-caller")}

	s, _ := fuzzOnce(t, dir, "FuzzCount", Options{Parallel: 1, Build: BuildFlags{Race: true}})
	cs := s.Crashes()
	if len(cs) != 1 {
		t.Fatalf("crashes: %+v, want one", cs)
	}
	c := cs[0]
	t.Logf("%s %s at %s:%d\n%s", c.Kind, c.Message, c.File, c.Line, c.Output)
	if c.Kind != protocol.KindRace || c.File != file || !slices.Contains(lines, c.Line) {
		t.Fatalf("crash %s at %s:%d (%s), want race at %s:%v", c.Kind, c.File, c.Line, c.Message, file, lines)
	}
	for _, l := range lines {
		if !strings.Contains(c.Message, "racy.go:"+strconv.Itoa(l)) || !slices.ContainsFunc(c.Frames, func(f failure.Frame) bool { return f.File == file && f.Line == l }) {
			t.Errorf("racy.go:%d is not in the message %q or the frames", l, c.Message)
		}
	}
	for _, want := range []string{"WARNING: DATA RACE", "Previous ", "created at:"} {
		if !strings.Contains(c.Output, want) {
			t.Errorf("the report lacks %q:\n%s", want, c.Output)
		}
	}
	if !c.Minimized || c.Input != "go test fuzz v1\n[]byte(\"RAC\")\n" {
		t.Errorf("minimized %v to %q, want []byte(\"RAC\")", c.Minimized, c.Input)
	}

	// The input replays: on a fresh worker, as the same failure...
	f, ok := replayFresh(t, s, c.Input)
	if !ok || f == nil || f.Kind != protocol.KindRace || !f.Same(s.failures.first(s.failures.list()[0])) {
		t.Errorf("replay: %+v, want the same race", f)
	}
	// ...and with go test -race, from the seed corpus.
	seeds := filepath.Join(dir, "racy", "testdata", "fuzz", "FuzzCount")
	if err := os.MkdirAll(seeds, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seeds, filepath.Base(c.Path)), []byte(c.Input), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-race", "-count=1", "-run=^FuzzCount$", "./racy")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "WARNING: DATA RACE") {
		t.Errorf("go test -race on the saved input: %v, want the race\n%s", err, out)
	}
}

// The race detector keeps memory for every goroutine ever started, so a race
// build's worker running a target that starts goroutines grows without bound:
// past the memory limit it is replaced, which is no failure (no oom).
func TestRaceWorkerReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzes for real")
	}
	dir := copyTree(t, "../testdata/flags")
	log := new(testws.Buffer)
	e := New(Options{CacheDir: t.TempDir(), Parallel: 1, Build: BuildFlags{Race: true}, RSSLimitMB: 200, KeepFuzzing: true, Log: log}, nil)
	defer e.Close()
	targets, err := e.Targets(t.Context(), filepath.Join(dir, "racy"), ".")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(targets, func(t Target) bool { return t.Name == "FuzzSum" })
	if i < 0 {
		t.Fatalf("no FuzzSum in %v", targets)
	}
	s := e.Start(targets[i])
	defer s.Stop()
	for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(log.String(), "worker replaced") && len(s.Crashes()) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no worker replaced after %d executions:\n%s", s.Stats().Execs, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.Stop()
	if cs := s.Crashes(); len(cs) != 0 {
		t.Errorf("crash %+v, want none", cs[0])
	}
	if err := s.Wait(); err != nil {
		t.Errorf("session: %v", err)
	}
}

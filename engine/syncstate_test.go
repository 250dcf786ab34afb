package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

func newTestSync(t *testing.T, dir, name string, replayOnly bool) *syncState {
	t.Helper()
	e := &Engine{opts: Options{Sync: dir, SyncName: name, ReplayOnly: replayOnly, Log: &strings.Builder{}}}
	return newSyncState(e, Target{Package: "example.com/m", Name: "FuzzX"})
}

// TestSyncStateFiles: a process publishes its new entries and failures under
// its own name, not those that came from the directory, and nothing with
// ReplayOnly; another process loads them (those of its types) when its build
// is ready, then pulls only what is new, not what it knows; what it wrote
// itself is not read back.
func TestSyncStateFiles(t *testing.T) {
	dir := t.TempDir()
	entry := func(s string) string { return string(fuzzrt.Marshal([]any{[]byte(s)})) }
	types := []string{"[]byte"}
	a := newTestSync(t, dir, "a", false)
	a.publish(entry("one"))
	a.publishFailure("f1", entry("crash"))
	os.WriteFile(filepath.Join(a.subdir("corpus", "a"), "other-types"), fuzzrt.Marshal([]any{"a string"}), 0o644)

	b := newTestSync(t, dir, "b", false)
	corpus, failures := b.load(types)
	if !slices.Equal(corpus, []string{entry("one")}) || !slices.Equal(failures, []string{entry("crash")}) {
		t.Fatalf("loaded corpus %q, failures %q", corpus, failures)
	}
	if got := b.recordedInputs(); !slices.Equal(got, []string{entry("crash")}) {
		t.Errorf("recorded %q", got)
	}
	b.publish(entry("one")) // came from the directory
	b.publish(entry("two"))
	if got := a.pull(types, func(string) bool { return false }); !slices.Equal(got, []string{entry("two")}) {
		t.Errorf("a pulled %q, want b's new entry only (not its own)", got)
	}
	a.publish(entry("three"))
	a.publish(entry("four"))
	known := func(in string) bool { return in == entry("three") }
	if got := b.pull(types, known); !slices.Equal(got, []string{entry("four")}) {
		t.Errorf("b pulled %q, want four (three is known)", got)
	}
	if got := b.pull(types, known); len(got) != 0 {
		t.Errorf("b pulled %q again", got)
	}

	r := newTestSync(t, dir, "r", true)
	r.publish(entry("five"))
	r.publishFailure("f2", entry("crash2"))
	if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
		t.Errorf("a ReplayOnly process wrote into the directory")
	}
}

// TestSyncStateExecutions: inputs wait while the session has no worker, then
// go out with those that waited, each under its own negative id, answered
// once; those asked of workers that are gone are asked again.
func TestSyncStateExecutions(t *testing.T) {
	st := newTestSync(t, "", "", false)
	if ids, all := st.schedule([]string{"a"}, 0); ids != nil || all != nil {
		t.Errorf("with no worker: %v %q", ids, all)
	}
	ids, all := st.schedule([]string{"b", "c"}, 2)
	if !slices.Equal(all, []string{"a", "b", "c"}) || len(ids) != 3 || ids[0] >= 0 || ids[0] == ids[1] {
		t.Fatalf("scheduled %q as %v", all, ids)
	}
	if in, ok := st.done(ids[1]); !ok || in != "b" {
		t.Errorf("done(%d) = %q, %v", ids[1], in, ok)
	}
	if _, ok := st.done(ids[1]); ok {
		t.Errorf("an execution answered twice")
	}
	if _, ok := st.done(7); ok {
		t.Errorf("another execution taken as the sync directory's")
	}
	st.requeue()
	_, again := st.schedule(nil, 1)
	slices.Sort(again)
	if !slices.Equal(again, []string{"a", "c"}) {
		t.Errorf("asked again: %q, want a c", again)
	}
}

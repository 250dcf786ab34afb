package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/internal/testws"
)

// wideCases is the number of blocks FuzzWide reaches one at a time.
const wideCases = 2048

// TestPlateau runs fuzzls fuzz -json -budget -plateau 10s -parallel 2 on two
// targets that share the workers: FuzzFlat, with no new code to reach, stops
// after 10 s without new coverage, its stats saying how long and how many
// executions that has been; its worker goes to FuzzWide, whose coverage still
// grows (its stats show one worker, then both); FuzzWide stops on its own
// plateau in turn, and the run ends with status 0 long before the budget. (10 s
// is more than a build takes, so that both fuzz before FuzzFlat stops.)
func TestPlateau(t *testing.T) {
	bin := buildFuzzls(t)
	dir := testws.Txtar(t, "testdata/plateau.txtar")
	var src strings.Builder
	fmt.Fprintf(&src, "package plateau\n\n// Wide reaches one of %d blocks.\nfunc Wide(b []byte) {\n\tswitch hash(b) %% %d {\n", wideCases, wideCases)
	for i := range wideCases {
		fmt.Fprintf(&src, "\tcase %d:\n\t\tsink = %d\n", i, i)
	}
	src.WriteString("\t}\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "cases.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "fuzz", "-json", "-budget", "3m", "-plateau", "10s", "-parallel", "2", "-cachedir", t.TempDir(), ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit status %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	type event struct {
		Event, Target             string
		Workers, Covered          int
		SinceCoverage, Plateau    float64
		ExecsSinceCoverage, Execs int64
	}
	var flatQuiet *event
	var flatDone, wideDone, shared bool
	wideWorkers, wideCovered := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		switch {
		case ev.Event == "stats" && ev.Target == "FuzzFlat" && ev.SinceCoverage >= 1 && ev.ExecsSinceCoverage > 0 && flatQuiet == nil:
			flatQuiet = &ev
		case ev.Event == "stats" && ev.Target == "FuzzWide" && !flatDone && ev.Workers == 1:
			shared = true
		case ev.Event == "done" && ev.Target == "FuzzFlat":
			flatDone = true
			if ev.Plateau < 9.9 || wideDone {
				t.Errorf("FuzzFlat ended with plateau %vs (want 10, to the tick), after FuzzWide: %v", ev.Plateau, wideDone)
			}
		case ev.Event == "stats" && ev.Target == "FuzzWide" && flatDone:
			wideWorkers = max(wideWorkers, ev.Workers)
			wideCovered = ev.Covered
		case ev.Event == "done" && ev.Target == "FuzzWide":
			wideDone = true
			if ev.Plateau < 9.9 {
				t.Errorf("FuzzWide ended with plateau %vs, want 10, to the tick", ev.Plateau)
			}
		}
	}
	if flatQuiet == nil {
		t.Errorf("no stats event of FuzzFlat says a second without new coverage and the executions since")
	}
	if !flatDone || !wideDone {
		t.Errorf("FuzzFlat done: %v, FuzzWide done: %v; want both, stopped on their plateaus", flatDone, wideDone)
	}
	if !shared {
		t.Errorf("FuzzWide never fuzzed with one worker beside FuzzFlat")
	}
	if wideWorkers != 2 {
		t.Errorf("FuzzWide had at most %d workers once FuzzFlat stopped, want 2 (both)", wideWorkers)
	}
	if wideCovered < wideCases/2 {
		t.Errorf("FuzzWide covered %d blocks, want most of its %d cases", wideCovered, wideCases)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr.String())
	}
}

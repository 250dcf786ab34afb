package daemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A real Emacs (Debian's emacs-nox) with Eglot (elpa-eglot), set up as the
// README says, shows the crash diagnostic on the BUG line of calc.go through
// Flymake with fuzzing started by autoStart (Eglot has no code lenses), offers
// "Add input to seed corpus" there, and its command writes the seed file. Eglot
// kills the server right after `exit`: no process of the daemon may outlive it.
func TestEmacs(t *testing.T) {
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		t.Skip("emacs is not on PATH (apt-get install emacs-nox elpa-eglot)")
	}
	if out, err := exec.Command(emacs, "--batch", "-q", "--eval", "(require 'eglot)").CombinedOutput(); err != nil {
		t.Skipf("Eglot is not installed (apt-get install elpa-eglot): %v\n%s", err, out)
	}
	bin := fuzzlsBinary(t)
	dir := copyDir(t, "../testdata/calc")
	bugLine := lineOf(t, filepath.Join(dir, "calc.go"), "// BUG")
	script, err := filepath.Abs("testdata/eglot.el")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "result.json")
	cache := filepath.Join(tmp, "fuzzls-cache")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-q", "-l", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"FUZZLS_EMACS_OUT="+out, "FUZZLS_EMACS_ROOT="+dir, "FUZZLS_BIN="+bin, "FUZZLS_EMACS_CACHE="+cache)
	data, output := runEditor(t, cmd, out)
	var res struct {
		Error       string `json:"error"`
		Diagnostics []struct {
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"diagnostics"`
		Actions  []string `json:"actions"`
		Executed bool     `json:"executed"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	t.Logf("emacs saw: %s", data)
	if res.Error != "" {
		t.Fatalf("in emacs: %s\n%s", res.Error, output)
	}
	if len(res.Diagnostics) == 0 {
		t.Fatal("no diagnostics in emacs")
	}
	// Eglot writes a diagnostic as "source [code]: message".
	d := res.Diagnostics[0]
	if d.Line != bugLine || !strings.HasPrefix(d.Message, "fuzzls [panic]: ") || !strings.Contains(d.Message, "integer divide by zero") {
		t.Errorf("diagnostic in emacs = %+v, want a fuzzls panic on line %d", d, bugLine)
	}
	if !slices.Contains(res.Actions, "Add input to seed corpus") {
		t.Errorf("code actions in emacs = %q, want \"Add input to seed corpus\"", res.Actions)
	}
	seeds, _ := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzEval"))
	if !res.Executed || len(seeds) != 1 {
		t.Errorf("running \"Add input to seed corpus\" from emacs: executed %v, seed files %v", res.Executed, seeds)
	}

	// The workers and builds run binaries under the cache directory.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = processesMentioning(cache)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("processes of the daemon outlived Eglot's shutdown by 5 s: %q", left)
	}
}

// processesMentioning lists the command lines (Linux /proc) that contain s.
func processesMentioning(s string) []string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), s) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

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

// A real Neovim (Debian's neovim package) with its built-in LSP client and the
// real fuzzls binary shows the crash diagnostic on the BUG line of calc.go and
// offers, at its position, "Add input to seed corpus", whose command writes
// the seed file.
func TestNeovim(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not on PATH (apt-get install neovim)")
	}
	bin := fuzzlsBinary(t)
	dir := copyDir(t, "../testdata/calc")
	calcGo := filepath.Join(dir, "calc.go")
	bugLine := lineOf(t, calcGo, "// BUG")
	script, err := filepath.Abs("testdata/neovim.lua")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	out := filepath.Join(home, "result.json")

	// Go's build cache defaults to $XDG_CACHE_HOME/go-build: keep the user's
	// (warm) one when Neovim's XDG folders move below.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"FUZZLS_NVIM_OUT="+out, "FUZZLS_NVIM_ROOT="+dir, "FUZZLS_BIN="+bin, "FUZZLS_NVIM_CACHE="+filepath.Join(home, "fuzzls-cache"),
		// Neovim's own files (the LSP log among them) stay in the test's folder.
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"GOCACHE="+strings.TrimSpace(string(gocache)),
	)
	data, output := runEditor(t, cmd, out)
	var res struct {
		Error       string `json:"error"`
		Diagnostics []struct {
			Lnum    int    `json:"lnum"`
			Message string `json:"message"`
			Source  string `json:"source"`
			Code    string `json:"code"`
		} `json:"diagnostics"`
		Actions  []string `json:"actions"`
		Coverage int      `json:"coverage"`
		Executed bool     `json:"executed"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	t.Logf("nvim saw: %s", data)
	if res.Error != "" {
		lspLog, _ := os.ReadFile(filepath.Join(home, "cache", "nvim", "lsp.log"))
		t.Fatalf("in nvim: %s\n%s\nNeovim's LSP log (with the daemon's stderr):\n%s", res.Error, output, lspLog)
	}
	if len(res.Diagnostics) == 0 {
		t.Fatal("no diagnostics in nvim")
	}
	d := res.Diagnostics[0]
	if d.Lnum != bugLine-1 || d.Source != "fuzzls" || d.Code != "panic" || !strings.Contains(d.Message, "integer divide by zero") {
		t.Errorf("diagnostic in nvim = %+v, want a fuzzls panic on line %d (0-based %d)", d, bugLine, bugLine-1)
	}
	if !slices.Contains(res.Actions, "Add input to seed corpus") {
		t.Errorf("code actions in nvim = %q, want \"Add input to seed corpus\"", res.Actions)
	}
	if !slices.ContainsFunc(res.Actions, func(a string) bool { return strings.HasPrefix(a, "Add as f.Add(") }) {
		t.Errorf("code actions in nvim = %q, want \"Add as f.Add(…) to FuzzEval\"", res.Actions)
	}
	if res.Coverage == 0 {
		t.Error("no fuzzls/coverage notification reached nvim's custom handler")
	}
	seeds, _ := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzEval"))
	if !res.Executed || len(seeds) != 1 {
		t.Errorf("running \"Add input to seed corpus\" from nvim: executed %v, seed files %v", res.Executed, seeds)
	}
}

// runEditor runs an editor's headless test script and returns the result it
// wrote to out, and its output.
func runEditor(t *testing.T, cmd *exec.Cmd, out string) (data, output []byte) {
	t.Helper()
	name := filepath.Base(cmd.Path)
	start := time.Now()
	output, err := cmd.CombinedOutput()
	t.Logf("%s ran %v", name, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, output)
	}
	data, err = os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result from %s (%v):\n%s", name, err, output)
	}
	return data, output
}

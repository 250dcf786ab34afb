package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
)

// TestStructTarget: testdata/structs's FuzzServe takes a struct and a
// TextUnmarshaler, which go test refuses. fuzzls fuzzes it field by field and
// finds the bug behind a field, a nested field and the unmarshaled value;
// the minimized input (the other fields emptied) is saved with its layout
// line and still fails when `fuzzls fuzz -run FuzzServe/<name>` replays it as
// a seed, whose report says go test cannot run the target; f.Add's struct
// seed passes.
func TestStructTarget(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/structs")
	cache := t.TempDir()
	bug := fmt.Sprintf("config.go:%d", markLine(t, filepath.Join(dir, "config.go"), "MARK:bug"))
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"fuzz", "-cachedir", cache}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), exitCode(err)
	}

	out, code := run("-json", "-fuzztime", "120s", "-minimizetime", "30s", ".")
	if code != 1 {
		t.Fatalf("exit status %d, want 1 (a failure)\n%s", code, out)
	}
	var crash map[string]any
	layoutEvent := false
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev["event"] == "crash" && ev["minimized"] == true {
			crash = ev
		}
		layoutEvent = layoutEvent || ev["event"] == "seeds" && ev["done"] == true && ev["layout"] == "structs.Config{Name, Port, Limits.Max, Limits.Strict, Tags}, structs.Level(text)"
	}
	if !layoutEvent {
		t.Errorf("no seeds event with the layout:\n%s", out)
	}
	if crash == nil {
		t.Fatalf("no minimized crash:\n%s", out)
	}
	if where := fmt.Sprintf("%s:%v", filepath.Base(fmt.Sprint(crash["file"])), crash["line"]); where != bug {
		t.Errorf("crash at %s, want %s", where, bug)
	}
	saved, err := os.ReadFile(crash["path"].(string))
	if err != nil {
		t.Fatal(err)
	}
	layout := "// fuzzls: structs.Config{Name, Port, Limits.Max, Limits.Strict, Tags}, structs.Level(text)\n"
	if !strings.HasPrefix(string(saved), fuzzrt.Header+"\n"+layout) {
		t.Errorf("the saved input does not start with the header and the layout line %q:\n%s", layout, saved)
	}
	vals, err := fuzzrt.Unmarshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"", uint16(8443), uint16(0), true, "", "crit"}
	if fmt.Sprintf("%#v", vals) != fmt.Sprintf("%#v", want) {
		t.Errorf("minimized values %#v, want %#v (the fields the bug needs, the others emptied)", vals, want)
	}

	// The saved input as a seed: fuzzls replays it, go test cannot.
	name := filepath.Base(crash["path"].(string))
	seeds := filepath.Join(dir, "testdata", "fuzz", "FuzzServe")
	os.MkdirAll(seeds, 0o755)
	if err := os.WriteFile(filepath.Join(seeds, name), saved, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = run("-run", "FuzzServe/"+name, ".")
	if code != 1 || !strings.Contains(out, "--- FAIL: FuzzServe") || !strings.Contains(out, bug) {
		t.Errorf("fuzzls fuzz -run FuzzServe/%s: status %d, want 1 and the failure at %s\n%s", name, code, bug, out)
	}
	for _, s := range []string{
		"go test cannot run FuzzServe: argument structs.Config is a struct, argument structs.Level is an encoding.TextUnmarshaler; fuzzls fuzzes them field by field",
		"fuzzls fuzz -run=FuzzServe/" + name + " .",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("the report does not say %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "go test -run") || strings.Contains(out, "dlv test") {
		t.Errorf("the report offers go test or Delve, which cannot run the target:\n%s", out)
	}
	if out, code := run("-run", "FuzzServe/seed#0", "."); code != 0 || strings.Contains(out, "FAIL") {
		t.Errorf("f.Add's seed: status %d, want 0\n%s", code, out)
	}
}

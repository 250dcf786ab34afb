package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/internal/jsonevents"
)

// TestBlockersCLI: fuzzls fuzz on a target whose branch needs a hash equal to a
// constant ends with a blockers event (-json) and summary (text) naming the
// comparison, the constant and a nearest value, with the code behind it.
func TestBlockersCLI(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/blockers")
	cmd := exec.Command(bin, "fuzz", "-json", "-fuzztime", "4s", "-parallel", "1", "-cachedir", t.TempDir(), "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fuzzls fuzz -json: %v\n%s", err, out)
	}
	var line []byte
	for _, l := range bytes.Split(out, []byte("\n")) {
		if ev, err := checkJSONLine(l); err == nil && ev == jsonevents.EventBlockers {
			line = l
		}
	}
	t.Logf("%s", line)
	for _, want := range []string{`"want":"0x89504e47"`, `"expr":"binary.BigEndian.Uint32(h[:4]) == 0x89504e47"`, `"nearest":"0x`, `"behind":`} {
		if !bytes.Contains(line, []byte(want)) {
			t.Errorf("blockers event %s: no %s", line, want)
		}
	}

	cmd = exec.Command(bin, "fuzz", "-fuzztime", "4s", "-parallel", "1", "-cachedir", t.TempDir(), "./...")
	cmd.Dir = dir
	text, _ := cmd.CombinedOutput()
	t.Logf("%s", text)
	if !strings.Contains(string(text), "FuzzCheck: not covered, behind these comparisons") ||
		!strings.Contains(string(text), "magic.go:17: compared `binary.BigEndian.Uint32(h[:4]) == 0x89504e47`: nearest 0x") {
		t.Errorf("the summary names no blocker at magic.go:17:\n%s", text)
	}
}

package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestChangedBlocksLens: a save that adds a branch no input reaches (behind a
// checksum) makes its blocks changed; fuzzls/status carries the figures, the code
// lens says "changed: k/n blocks reached", and fuzzls/coverage sends the
// unreached changed blocks apart from the other uncovered ones.
func TestChangedBlocksLens(t *testing.T) {
	w := startCalc(t, Options{}, nil)
	c := w.lspConn
	w.start(t)
	w.awaitState(t, 0, fproto.StateFuzzing)
	src := mustRead(t, w.calcGo)
	edited := strings.Replace(src, "import \"fmt\"", "import (\n\t\"fmt\"\n\t\"hash/crc32\"\n)", 1)
	edited = strings.Replace(edited, "func (p *parser) factor() (int, error) {\n",
		"func (p *parser) factor() (int, error) {\n\tif len(p.src) > 40 && crc32.ChecksumIEEE([]byte(p.src)) == 0x0badf00d { // MARK:new\n\t\treturn 42, nil\n\t}\n", 1)
	if edited == src {
		t.Fatal("calc.go's factor not found")
	}
	n := c.statusCount()
	w.save(t, w.calcGo, edited)
	body := uint32(lineOf(t, w.calcGo, "MARK:new")) // 0-based line of `return 42, nil`
	var ss fproto.SessionStatus
	nc := 0 // notifications before the new build's (which may still hold the old build's lines)
	c.await(t, "fuzzls/status with changed blocks", 90*time.Second, func() bool {
		for _, st := range c.statuses()[min(n, len(c.Status)):] {
			for _, s := range st.Sessions {
				if s.Name == "FuzzEval" && s.State == fproto.StateFuzzing && s.Changed > 0 {
					ss, nc = s, len(c.Coverage)
					return true
				}
			}
		}
		return false
	})
	if ss.ChangedReached >= ss.Changed {
		t.Errorf("status %+v: every changed block reached, though the branch's body cannot be", ss)
	}
	lenses := w.lenses(t)
	if len(lenses) != 1 || !strings.Contains(lenses[0].Command.Title, fmt.Sprintf("/%d blocks reached", ss.Changed)) ||
		!strings.Contains(lenses[0].Command.Title, " · changed: ") {
		t.Errorf("code lens after the edit = %+v, want \"changed: k/%d blocks reached\"", lenses, ss.Changed)
	}
	c.await(t, "the branch's body among the uncovered changed ranges", 90*time.Second, func() bool {
		for _, p := range c.coverage()[nc:] {
			for _, f := range p.Files {
				if f.URI != string(w.calcURI) {
					continue
				}
				holds := func(r fproto.Range) bool { return r.Start.Line <= body && body <= r.End.Line }
				for _, r := range f.Uncovered {
					if holds(r) {
						t.Errorf("the new branch's body (line %d) is drawn as uncovered, not changed", body+1)
					}
				}
				for _, r := range f.UncoveredChanged {
					if holds(r) {
						return true
					}
				}
			}
		}
		return false
	})
}

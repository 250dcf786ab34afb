package daemon

import (
	"strings"
	"testing"
	"time"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestPlateauStatus: fuzzls/status says how long a session has fuzzed without
// new coverage and how many executions that has been; with the plateau setting
// the session stops after that long, its message saying why, and a save fuzzes
// it again.
func TestPlateauStatus(t *testing.T) {
	w := startCalc(t, Options{}, map[string]any{"plateau": "3s"})
	c := w.lspConn
	// FuzzEval with nothing to find: whatever its input, the same code runs.
	src := mustRead(t, w.testGo)
	flat := strings.Replace(src, "Eval(expr)", "_ = len(expr)", 1)
	if flat == src {
		t.Fatal("calc_test.go has no Eval(expr)")
	}
	w.save(t, w.testGo, flat)
	w.start(t)
	c.await(t, "FuzzEval fuzzing a second without new coverage in fuzzls/status", 90*time.Second, func() bool {
		for _, st := range c.statuses() {
			for _, s := range st.Sessions {
				if s.Name == "FuzzEval" && s.State == fproto.StateFuzzing && s.SinceCoverage >= 1 && s.ExecsSinceCoverage > 0 {
					return true
				}
			}
		}
		return false
	})
	n := c.statusCount()
	stopped := w.awaitState(t, 0, fproto.StateStopped)
	if stopped.SinceCoverage < 2.9 || !strings.Contains(stopped.Message, "without new coverage") {
		t.Errorf("stopped on its plateau: %+v, want at least 3 s without new coverage and a message saying so", stopped)
	}
	w.save(t, w.calcGo, mustRead(t, w.calcGo)+"\nfunc unused() {}\n")
	w.awaitState(t, n, fproto.StateBuilding)
	again := w.awaitState(t, n, fproto.StateFuzzing)
	if again.Message != "" {
		t.Errorf("fuzzing again after a save: message %q", again.Message)
	}
}

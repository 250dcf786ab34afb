package daemon

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestMutatorStatus: a target's own mutator (package fuzzhook) shows in
// fuzzls/status, with the executions of its inputs.
func TestMutatorStatus(t *testing.T) {
	w := startCalc(t, Options{}, nil)
	c := w.lspConn
	hook, err := filepath.Abs("../fuzzhook")
	if err != nil {
		t.Fatal(err)
	}
	w.save(t, filepath.Join(w.dir, "go.mod"), "module example.com/calc\n\ngo 1.26\n\nrequire fuzzls.dev/fuzzls/fuzzhook v0.0.0\n\nreplace fuzzls.dev/fuzzls/fuzzhook => "+hook+"\n")
	src := mustRead(t, w.testGo)
	// Eval is left out, so that its bug does not stop the session.
	with := strings.Replace(src, "\tf.Fuzz(", "\tfuzzhook.Mutator(f, func(data []byte, rand uint64) []byte { return append(data, '+', '1') })\n\tf.Fuzz(", 1)
	with = strings.Replace(with, "Eval(expr)", "_ = len(expr)", 1)
	with = strings.Replace(with, `import "testing"`, "import (\n\t\"testing\"\n\n\t\"fuzzls.dev/fuzzls/fuzzhook\"\n)", 1)
	if with == src || !strings.Contains(with, "fuzzhook.Mutator") || !strings.Contains(with, "fuzzls.dev/fuzzls/fuzzhook") {
		t.Fatalf("calc_test.go is not as expected:\n%s", src)
	}
	w.save(t, w.testGo, with)
	w.start(t)
	var got []fproto.MutatorStatus
	c.await(t, "FuzzEval's mutator with executions in fuzzls/status", 90*time.Second, func() bool {
		for _, st := range c.statuses() {
			for _, s := range st.Sessions {
				if s.Name == "FuzzEval" && len(s.Mutators) == 1 && s.Mutators[0].Execs > 0 {
					got = s.Mutators
					return true
				}
			}
		}
		return false
	})
	if m := got[0]; m.Kind != "mutator" || !strings.HasPrefix(m.Name, "example.com/calc.FuzzEval.func") || m.Panics != 0 {
		t.Errorf("mutator status %+v", m)
	}
}

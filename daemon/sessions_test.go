package daemon

import (
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestWireStates: every state of the engine's sessions has its own state on the
// wire, and every state of the protocol is one of them.
func TestWireStates(t *testing.T) {
	wire := map[string]engine.State{}
	for st := engine.State(0); !strings.HasPrefix(st.String(), "State("); st++ {
		w := wireState(st)
		if prev, ok := wire[w]; ok {
			t.Errorf("engine states %v and %v are both %q on the wire", prev, st, w)
		}
		wire[w] = st
	}
	protocolStates := []string{fproto.StateBuilding, fproto.StateFuzzing, fproto.StateStopped, fproto.StateError, fproto.StateSkipped}
	for _, w := range protocolStates {
		if _, ok := wire[w]; !ok {
			t.Errorf("no engine state is %q on the wire", w)
		}
	}
	if len(wire) != len(protocolStates) {
		t.Errorf("the engine's states map to %v, the protocol has %v", wire, protocolStates)
	}
}

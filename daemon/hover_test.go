package daemon

import (
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestHoverReplay: the hover's replay line is the engine's (the CLI's and
// SARIF's): go test's for a panic, with the build's flags, and fuzzls's for a
// leak, which go test -run passes on, saying why.
func TestHoverReplay(t *testing.T) {
	input := "go test fuzz v1\nstring(\"x\")\n"
	name := fuzzrt.FileName([]byte(input))
	target := engine.Target{Name: "FuzzX", Dir: "/src/my pkg"}
	for _, tc := range []struct {
		kind  failure.Kind
		flags []string
		want  string
	}{
		{fproto.KindPanic, []string{"-race"}, "cd '/src/my pkg' && go test -race -run=FuzzX/" + name},
		{fproto.KindLeak, nil, "cd '/src/my pkg' && fuzzls fuzz -leaks -run=FuzzX/" + name + " .  # go test has no goroutine-leak check"},
	} {
		c := &engine.Crash{Target: target, Kind: tc.kind, Input: input, BuildFlags: tc.flags}
		if got := replayCommand(c); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: replay %q, want %q…", tc.kind, got, tc.want)
		}
	}
}

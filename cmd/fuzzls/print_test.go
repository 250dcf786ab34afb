package main

import (
	"fmt"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/protocol"
)

// A report prints a short input whole and a long one's first maxShownInput
// bytes, saying where the rest is.
func TestFormatCrashInput(t *testing.T) {
	short := `[]byte("0/0")`
	long := fmt.Sprintf("[]byte(%q)", strings.Repeat("A", 1<<20))
	for _, tc := range []struct {
		input, path string
		want        string
		max         int
	}{
		{short, "/cache/crashes/x", "      " + short + "\n", 1 << 10},
		{long, "/cache/crashes/x", fmt.Sprintf("… (the first %d of %d bytes: the whole input is in the saved file)", maxShownInput, len(long)), 2 * maxShownInput},
		{long, "", fmt.Sprintf("… (the first %d of %d bytes)\n", maxShownInput, len(long)), 2 * maxShownInput},
	} {
		c := &engine.Crash{Kind: protocol.KindPanic, Message: "boom", Input: tc.input, Path: tc.path, Target: engine.Target{Name: "FuzzX"}}
		got := formatCrash(c)
		if !strings.Contains(got, tc.want) || len(got) > tc.max {
			t.Errorf("formatCrash of a %d-byte input (%d bytes) does not say %q:\n%.600s", len(tc.input), len(got), tc.want, got)
		}
	}
}

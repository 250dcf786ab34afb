package engine

import (
	"strings"
	"testing"
)

// TestGoTestCannot: what fuzzls says of a target go test cannot run, read
// from fuzzrt's layout; and its failures replay with fuzzls, not go test.
func TestGoTestCannot(t *testing.T) {
	for layout, want := range map[string]string{
		"cfg.Config{Name, Port}":                      "go test cannot run FuzzX: argument cfg.Config is a struct; fuzzls fuzzes it field by field",
		"*cfg.Config{Name, In.A}, int, cfg.Lvl(text)": "go test cannot run FuzzX: argument *cfg.Config is a struct, argument cfg.Lvl is an encoding.TextUnmarshaler; fuzzls fuzzes them field by field",
		"netip.Addr(text)":                            "go test cannot run FuzzX: argument netip.Addr is an encoding.TextUnmarshaler; fuzzls fuzzes it through its text",
		"a.T(text), a.U(text)":                        "go test cannot run FuzzX: arguments a.T, a.U are encoding.TextUnmarshalers; fuzzls fuzzes them through their text",
		"[]uint8, a.D(bytes)":                         "go test cannot run FuzzX: argument a.D is an encoding.BinaryUnmarshaler; fuzzls fuzzes it through its bytes",
		"a.B{X}, a.C{Y}, a.D(bytes)":                  "go test cannot run FuzzX: arguments a.B, a.C are structs, argument a.D is an encoding.BinaryUnmarshaler; fuzzls fuzzes them field by field",
	} {
		if got := GoTestCannot("FuzzX", layout); got != want {
			t.Errorf("%s:\n got %s\nwant %s", layout, got, want)
		}
	}
	c := &Crash{Target: Target{Name: "FuzzX"}, Layout: "cfg.Config{Name, Port}", BuildFlags: []string{"-race"}}
	if cmd, why := c.ReplayCommand("abc"); cmd != "fuzzls fuzz -race -run=FuzzX/abc ." || !strings.HasPrefix(why, "go test cannot run FuzzX") {
		t.Errorf("replay: %q, %q", cmd, why)
	}
	c.Layout = ""
	if cmd, why := c.ReplayCommand("abc"); cmd != "go test -race -run=FuzzX/abc" || why != "" {
		t.Errorf("replay without a layout: %q, %q", cmd, why)
	}
}

package instrument

import "testing"

func TestBridgePath(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"github.com/pierrec/lz4/v4/internal/lz4stream", "github.com/pierrec/lz4/v4/zz_fuzzls_bridge"},
		{"example.com/m/a/internal", "example.com/m/a/zz_fuzzls_bridge"},
		{"example.com/m/internal/x/internal/y", "example.com/m/internal/x/zz_fuzzls_bridge"},
		{"example.com/m/codec", ""},
		{"internal/abi", ""},
	} {
		if got := bridgePath(c.path); got != c.want {
			t.Errorf("bridgePath(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	// A bridge under another internal directory is reachable only from inside
	// that directory's parent.
	nested := bridgePath("example.com/m/internal/x/internal/y")
	if !importable("example.com/m/tool", nested) || importable("example.com/other/tool", nested) {
		t.Errorf("importable(%q): from example.com/m/tool %v (want true), from example.com/other/tool %v (want false)",
			nested, importable("example.com/m/tool", nested), importable("example.com/other/tool", nested))
	}
}

func TestBridgeDir(t *testing.T) {
	d := &Dep{ImportPath: "example.com/m/codec/internal/frame", Dir: "/w/m/codec/internal/frame", Bridge: "example.com/m/codec/zz_fuzzls_bridge"}
	if dir, ok := bridgeDir(d); !ok || dir != "/w/m/codec/zz_fuzzls_bridge" {
		t.Errorf("bridgeDir = %q, %v", dir, ok)
	}
	d.Dir = "/elsewhere/frame" // a directory that does not mirror the import path
	if dir, ok := bridgeDir(d); ok {
		t.Errorf("bridgeDir of a directory not ending in the import path = %q", dir)
	}
}

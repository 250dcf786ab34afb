package engine

import (
	"strings"
	"testing"
)

// TestPickHangingGoroutine: of two goroutines mentioning the fuzz function, the
// hanging one (user code on top) is chosen, not the one waiting for it.
func TestPickHangingGoroutine(t *testing.T) {
	dump := `SIGQUIT: quit

goroutine 1 gp=0x1 m=nil [chan receive]:
runtime.gopark(0x0)
	/usr/local/go/src/runtime/proc.go:462 +0xce fp=0x1 sp=0x1 pc=0x1
testing.(*F).Fuzz.func1(0x1)
	/usr/local/go/src/testing/fuzz.go:329 +0x1
example.com/m.FuzzHang.func1(0x1)
	/work/m/m_test.go:9 +0x1
example.com/m.FuzzHang(0x1)
	/work/m/m_test.go:8 +0x1

goroutine 7 gp=0x2 m=0 [running]:
example.com/m.Ring(0x1)
	/work/m/m.go:12 +0x1 fp=0x1 sp=0x1 pc=0x1
example.com/m.FuzzHang.func1(0x1)
	/work/m/m_test.go:9 +0x1
testing.tRunner(0x1)
	/usr/local/go/src/testing/testing.go:2036 +0x1
`
	f := classifyDeath(death{stderr: dump, hung: true}, userFrames{dirs: []string{"/work/m"}}, "FuzzHang.func")
	if f.kind != KindHang || f.file != "/work/m/m.go" || f.line != 12 {
		t.Errorf("got %s at %s:%d, want hang at /work/m/m.go:12", f.kind, f.file, f.line)
	}
	if len(f.frames) == 0 || !strings.HasSuffix(f.frames[0].Function, "Ring") {
		t.Errorf("frames %v do not start at Ring", f.frames)
	}
}

// TestEscapedPackagePath: a frame in a package whose last path element has a
// dot (gopkg.in/yaml.v3) is named as the user writes it, not as the linker
// escapes it.
func TestEscapedPackagePath(t *testing.T) {
	out := `panic: runtime error: hash of unhashable type map[string]interface {}

goroutine 7 [running]:
gopkg.in/yaml%2ev3.(*decoder).mapping(0xc000, 0xc001, {0x1, 0x2, 0x3})
	/root/go/pkg/mod/gopkg.in/yaml.v3@v3.0.1/decode.go:835 +0x1
example.com/m.FuzzYAML.func1(0x1)
	/work/m/m_test.go:9 +0x1
`
	frames := parseFrames(strings.Split(out, "\n"))
	if len(frames) != 2 || frames[0].Function != "gopkg.in/yaml.v3.(*decoder).mapping" {
		t.Errorf("frames %+v, want gopkg.in/yaml.v3.(*decoder).mapping first", frames)
	}
}

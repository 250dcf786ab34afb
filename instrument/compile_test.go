package instrument

import (
	"path/filepath"
	"testing"
)

// Positioned messages are placed whatever the path holds: spaces (a home
// folder "John Smith"), a drive letter, a //line name with the physical
// position in brackets; lines that only look positioned are not.
func TestCompilerPositions(t *testing.T) {
	for _, tc := range []struct {
		line, file, pos, msg string
	}{
		{"/home/John Smith/go/pkg/mod/x@v1/x.go:12:5: undefined: y", "/home/John Smith/go/pkg/mod/x@v1/x.go", "12:5", "undefined: y"},
		{`C:\Users\John Smith\proj\x.go:3: syntax error`, `C:\Users\John Smith\proj\x.go`, "3:", "syntax error"},
		{"a.go:1[/dir/my dir/x.go:582:5]: bad", "a.go", "1:", "bad"},
		{"go: downloading example.com/m v1.2.3", "", "", ""},
		{"vet: x.go:1:2: something", "", "", ""},
	} {
		m := compilerPosRE.FindStringSubmatch(tc.line)
		if tc.file == "" {
			if m != nil {
				t.Errorf("%q read as a position in %q", tc.line, m[1])
			}
			continue
		}
		if m == nil || m[1] != tc.file || m[2]+":"+m[3] != tc.pos || m[7] != tc.msg {
			t.Errorf("%q read as %q, want file %q at %s, message %q", tc.line, m, tc.file, tc.pos, tc.msg)
		}
	}
	if m := compilerPosRE.FindStringSubmatch("a.go:1[/dir/my dir/x.go:582:5]: bad"); m == nil || m[4] != "/dir/my dir/x.go" || m[5] != "582" {
		t.Errorf("physical position read as %q", m)
	}
	if m := diagRE.FindStringSubmatch(`C:\Users\John Smith\proj\x_test.go:7: FuzzX has the wrong shape`); m == nil || m[1] != `C:\Users\John Smith\proj\x_test.go` || m[2] != "7" {
		t.Errorf("diagRE read %q", m)
	}

	// Through compileError: a message in a file whose path has a space.
	dir := filepath.Join(t.TempDir(), "John Smith", "proj")
	file := filepath.Join(dir, "x.go")
	err := compileError(&Package{Dir: dir, ImportPath: "example.com/proj"}, "# example.com/proj\n"+file+":4:2: undefined: z\n", nil)
	be, ok := err.(*BuildError)
	if !ok || len(be.Diagnostics) != 1 || be.Diagnostics[0].File != file || be.Diagnostics[0].Line != 4 || be.Diagnostics[0].Col != 2 {
		t.Errorf("compileError = %#v", err)
	}
}

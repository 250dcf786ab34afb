package instrument

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The toolchain running the test (1.26 or 1.27 in CI) has a testing package the
// runtime fits.
func TestToolchainMatches(t *testing.T) {
	if err := CheckToolchain(t.Context(), ".", os.DirFS("../engine/fuzzrt")); err != nil {
		t.Fatal(err)
	}
}

// A future release that changes testing's hooks is told apart by what changed:
// the real GOROOT's testing sources, edited as such a release might.
func TestToolchainChanged(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(strings.TrimSpace(string(out)), "src", "testing")
	testingSrc, err := os.ReadFile(filepath.Join(real, "testing.go"))
	if err != nil {
		t.Fatal(err)
	}
	fuzzSrc, err := os.ReadFile(filepath.Join(real, "fuzz.go"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(src []byte, old, new string) []byte {
		t.Helper()
		if !strings.Contains(string(src), old) {
			t.Fatalf("testing's sources no longer hold %q", old)
		}
		return []byte(strings.Replace(string(src), old, new, 1))
	}
	for _, tc := range []struct {
		desc          string
		testing, fuzz []byte
		want          []string
	}{
		{"unchanged", testingSrc, fuzzSrc, nil},
		{"method added",
			edit(testingSrc, "\tResetCoverage()\n", "\tResetCoverage()\n\tFuzzSeed(int64) bool\n"), fuzzSrc,
			[]string{"testDeps.FuzzSeed added"}},
		{"signature changed",
			edit(testingSrc, "\tImportPath() string\n", "\tImportPath() (string, error)\n"), fuzzSrc,
			[]string{"testDeps.ImportPath is now func() (string, error)"}},
		{"corpusEntry changed",
			testingSrc, edit(fuzzSrc, "\tIsSeed     bool\n", "\tIsSeed     bool\n\tWeight     float64\n"),
			[]string{"corpusEntry is now struct"}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			goroot := t.TempDir()
			dir := filepath.Join(goroot, "src", "testing")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "testing.go"), tc.testing, 0o644)
			os.WriteFile(filepath.Join(dir, "fuzz.go"), tc.fuzz, 0o644)
			want, err := goTesting(goroot, "go1.99.0")
			if err != nil {
				t.Fatal(err)
			}
			have, err := runtimeTesting(os.DirFS("../engine/fuzzrt"))
			if err != nil {
				t.Fatal(err)
			}
			changes := testingChanges(want, have)
			if len(changes) != len(tc.want) {
				t.Fatalf("changes %q, want %q", changes, tc.want)
			}
			for i := range changes {
				if !strings.HasPrefix(changes[i], tc.want[i]) {
					t.Errorf("change %q, want %q", changes[i], tc.want[i])
				}
			}
			if len(changes) > 0 {
				msg := (&toolchainError{GoVersion: "go1.99.0", Changes: changes}).Error()
				if !strings.Contains(msg, "go1.99.0") || strings.Contains(msg, "\n") {
					t.Errorf("not one sentence naming the version: %q", msg)
				}
			}
		})
	}
}

// The runtime reaches internal/testlog.SetPanicOnExit0 by go:linkname: a
// release that drops or changes it is named, rather than left to the linker.
func TestToolchainLinkname(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	exit, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "internal", "testlog", "exit.go"))
	if err != nil {
		t.Fatal(err)
	}
	const decl = "func SetPanicOnExit0(v bool) {"
	if !strings.Contains(string(exit), decl) {
		t.Fatalf("internal/testlog no longer holds %q", decl)
	}
	for _, tc := range []struct{ desc, decl, want string }{
		{"unchanged", decl, ""},
		{"removed", "func SetPanicOnExitZero(v bool) {", "internal/testlog.SetPanicOnExit0 removed"},
		{"signature changed", "func SetPanicOnExit0(v bool, code int) {", "internal/testlog.SetPanicOnExit0 is now func(bool, int)"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			goroot := t.TempDir()
			dir := filepath.Join(goroot, "src", "internal", "testlog")
			os.MkdirAll(dir, 0o755)
			src := strings.Replace(string(exit), decl, tc.decl, 1)
			if err := os.WriteFile(filepath.Join(dir, "exit.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			changes, err := linknameChanges(goroot, os.DirFS("../engine/fuzzrt"))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(changes, "; ")
			if got != tc.want {
				t.Errorf("changes %q, want %q", got, tc.want)
			}
		})
	}
}

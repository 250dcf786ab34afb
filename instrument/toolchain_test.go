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
				msg := (&ToolchainError{GoVersion: "go1.99.0", Changes: changes}).Error()
				if !strings.Contains(msg, "go1.99.0") || strings.Contains(msg, "\n") {
					t.Errorf("not one sentence naming the version: %q", msg)
				}
			}
		})
	}
}

package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/internal/testws"
)

// requireLibFuzzer skips the test where clang with libFuzzer is missing, except
// in CI, where scripts/test.sh installs it (Debian's clang) and it must run.
func requireLibFuzzer(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds with go-118-fuzz-build and clang")
	}
	testws.RequireInCI(t, engine.CheckLibFuzzer(context.Background(), t.TempDir()))
}

// TestRequireLibFuzzer: where clang is missing (an empty PATH here),
// TestLibFuzzerRoundTrip skips saying why, except in CI (CI set, as
// scripts/test.sh sets it), where it fails saying why.
func TestRequireLibFuzzer(t *testing.T) {
	if testing.Short() {
		t.Skip("TestLibFuzzerRoundTrip skips under -short before looking for clang")
	}
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLibFuzzerRoundTrip$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "PATH="+t.TempDir(), "CI="+ci)
		out, err := cmd.CombinedOutput()
		verdict, code := "--- SKIP: TestLibFuzzerRoundTrip", 0
		if ci != "" {
			verdict, code = "--- FAIL: TestLibFuzzerRoundTrip", 1
		}
		if exitCode(err) != code || !strings.Contains(string(out), verdict) || !strings.Contains(string(out), "clang with libFuzzer is not installed (apt-get install clang; scripts/test.sh does)") {
			t.Errorf("CI=%q without clang: status %d, want %d, %q and why\n%s", ci, exitCode(err), code, verdict, out)
		}
	}
}

// TestLibFuzzerRoundTrip is the round trip through the real thing: the target
// is built as compile_native_go_fuzzer_v2 builds it (go-118-fuzz-build through
// the module proxy, Debian's clang and libFuzzer), run on `fuzzls export`'s seed
// corpus and dictionary, and crashes on the one seed that reaches the failure
// (a name that must hash to a constant, six more arguments of other types that
// must all be right: the harness decoded every argument of our layout as
// encoded); its crash file goes through `fuzzls import`, and `go test -run`
// fails on the imported seed at the line libFuzzer's crash names.
func TestLibFuzzerRoundTrip(t *testing.T) {
	requireLibFuzzer(t)
	bin := buildFuzzls(t)
	tmp := t.TempDir()
	run := func(dir string, env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(out string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}

	// The fuzzer, as compile_native_go_fuzzer_v2 builds it.
	src, err := filepath.Abs("../../testdata/oss")
	if err != nil {
		t.Fatal(err)
	}
	fuzzer, err := engine.BuildLibFuzzer(context.Background(), engine.Target{Package: "example.com/oss", Name: "FuzzRecord", Dir: src}, src, filepath.Join(tmp, "lfcache"), "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	// fuzzls export, in the project's own tree.
	ws := copyDir(t, "../../testdata/oss")
	out := filepath.Join(tmp, "out")
	must(run(ws, nil, bin, "export", "-o", out, "-cachedir", filepath.Join(tmp, "cache"), "."))
	seeds := filepath.Join(tmp, "seeds")
	unzip(t, filepath.Join(out, "FuzzRecord_seed_corpus.zip"), seeds)

	// libFuzzer on the seed corpus: the seed's failure at once.
	art := filepath.Join(tmp, "artifacts") + "/"
	os.MkdirAll(art, 0o755)
	lf, err := run(tmp, nil, fuzzer, "-artifact_prefix="+art, "-max_total_time=60", "-dict="+filepath.Join(out, "FuzzRecord.dict"), seeds)
	if err == nil || !strings.Contains(lf, "reached by the seed") {
		t.Fatalf("libFuzzer did not fail on the seed (%v):\n%s", err, lf)
	}
	if !strings.Contains(lf, "Dictionary: ") {
		t.Errorf("libFuzzer did not load the dictionary:\n%s", lf)
	}
	line := markLine(t, filepath.Join(ws, "oss.go"), "MARK:seed")
	where := fmt.Sprintf("oss.go:%d ", line)
	if !strings.Contains(lf, "example.com/oss/"+where) {
		t.Fatalf("libFuzzer's crash is not at %s:\n%s", where, lf)
	}
	crashes, _ := filepath.Glob(art + "crash-*")
	if len(crashes) != 1 {
		t.Fatalf("crash files: %v\n%s", crashes, lf)
	}

	// fuzzls import of the artifact directory, then go test on the seed.
	im := must(run(ws, nil, bin, "import", "-cachedir", filepath.Join(tmp, "cache"), art))
	m := regexp.MustCompile(`→ (\S+/testdata/fuzz/FuzzRecord/(\w+))`).FindStringSubmatch(im)
	if m == nil {
		t.Fatalf("no seed imported:\n%s", im)
	}
	gt, err := run(ws, nil, "go", "test", "-run", "FuzzRecord/"+m[2], ".")
	if err == nil || !strings.Contains(gt, "--- FAIL: FuzzRecord/"+m[2]) || !strings.Contains(gt, "/"+where) {
		t.Fatalf("go test on the imported seed does not fail at %s (%v):\n%s", where, err, gt)
	}
}

func unzip(t *testing.T, file, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	os.MkdirAll(dir, 0o755)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		io.Copy(&b, rc)
		rc.Close()
		os.WriteFile(filepath.Join(dir, filepath.Base(f.Name)), b.Bytes(), 0o644)
	}
}

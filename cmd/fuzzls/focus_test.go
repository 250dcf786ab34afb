package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"fuzzls.dev/fuzzls/engine"
)

// TestFocusDiff: -focus REF reads the lines git diff reports as added or changed,
// in a real repository, as absolute paths.
func TestFocusDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("a.go", "package a\n\nfunc A() int {\n\tx := 1\n\ty := 2\n\treturn x + y\n}\n")
	write("b.go", "package a\n")
	git("add", ".")
	git("commit", "-q", "-m", "v1")
	write("a.go", "package a\n\nfunc A() int {\n\tx := 1\n\tif x > 0 {\n\t\tx++\n\t}\n\treturn x\n}\n")
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	var opts engine.Options
	if err := (&focusFlag{ref: "HEAD"}).options(&opts); err != nil {
		t.Fatal(err)
	}
	top, _ := filepath.EvalSymlinks(dir)
	want := map[string][]engine.LineRange{filepath.Join(top, "a.go"): {{Start: 5, End: 8}}}
	if got := opts.Focus.Files; !reflect.DeepEqual(got, want) {
		t.Errorf("focus %v, want %v", got, want)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
)

// TestFocusDiff: -focus REF reads the lines git diff reports as added or changed,
// in a real repository, as absolute paths.
func TestFocusDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, git, write := gitRepo(t)
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

// TestFocusCLI runs `fuzzls fuzz -focus HEAD -json` on a target whose package
// imports another of the repository, edited since HEAD: run from the top and
// from the target's own directory, the edit's blocks are the changed ones, the
// run says what the focus is, and the stats events count the changed blocks
// and those reached (the seed reaches the edit).
func TestFocusCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	bin := buildFuzzls(t)
	dir, git, write := gitRepo(t)
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("lib/lib.go", "package lib\n\nfunc Count(s string) int {\n\treturn len(s)\n}\n")
	write("fz/fz_test.go", `package fz

import (
	"testing"

	"example.com/m/lib"
)

func FuzzCount(f *testing.F) {
	f.Add("hello")
	f.Fuzz(func(t *testing.T, s string) { lib.Count(s) })
}
`)
	git("add", ".")
	git("commit", "-q", "-m", "v1")
	write("lib/lib.go", "package lib\n\nfunc Count(s string) int {\n\tn := len(s)\n\tif n > 3 {\n\t\tn++\n\t}\n\treturn n\n}\n")
	for _, c := range []struct{ name, wd, pkg string }{{"top", dir, "./fz"}, {"subdirectory", filepath.Join(dir, "fz"), "."}} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, "fuzz", "-focus", "HEAD", "-json", "-fuzztime", "3s", "-parallel", "1", "-cachedir", t.TempDir(), c.pkg)
			cmd.Dir = c.wd
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, out, stderr.String())
			}
			if !strings.Contains(stderr.String(), "-focus HEAD: 5 changed lines in 1 Go file") {
				t.Errorf("the run does not say what the focus is:\n%s", stderr.String())
			}
			var last map[string]any
			for line := range strings.SplitSeq(string(out), "\n") {
				var ev map[string]any
				if json.Unmarshal([]byte(line), &ev) == nil && ev["event"] == "stats" {
					last = ev
				}
			}
			changed, _ := last["changed"].(float64)
			reached, _ := last["changedReached"].(float64)
			if changed < 2 || reached != changed {
				t.Errorf("last stats event %v: want changed ≥ 2 (the edit's blocks), all reached\n%s", last, out)
			}
		})
	}
}

// gitRepo makes a git repository in a scratch directory: git runs a git command
// in it, write writes a file of it (its directories made).
func gitRepo(t *testing.T) (dir string, git func(args ...string), write func(name, src string)) {
	dir = t.TempDir()
	git = func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write = func(name, src string) {
		t.Helper()
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	return dir, git, write
}

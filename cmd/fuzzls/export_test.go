package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"fuzzls.dev/fuzzls/engine"
)

// Two packages with a FuzzParse each: fuzzls export writes both targets' files,
// named after their packages, each zip holding its own target's seed (before,
// the second target's files replaced the first's).
func TestExportSameName(t *testing.T) {
	bin := buildFuzzls(t)
	ws := copyDir(t, "../../testdata/samename")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	cmd := exec.Command(bin, "export", "-o", out, "-cachedir", filepath.Join(tmp, "cache"), "./...")
	cmd.Dir = ws
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fuzzls export: %v\n%s", err, b)
	}
	for _, pkg := range []string{"a", "b"} {
		zr, err := zip.OpenReader(filepath.Join(out, pkg+"_FuzzParse_seed_corpus.zip"))
		if err != nil {
			t.Fatal(err)
		}
		var seeds [][]byte
		for _, f := range zr.File {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r)
			r.Close()
			seeds = append(seeds, b)
		}
		zr.Close()
		if !slices.ContainsFunc(seeds, func(b []byte) bool { return bytes.Contains(b, []byte(pkg+"-seed")) }) {
			t.Errorf("%s_FuzzParse_seed_corpus.zip holds %q, want package %s's seed %q", pkg, seeds, pkg, pkg+"-seed")
		}
	}
}

func TestExportNames(t *testing.T) {
	targets := []engine.Target{
		{Package: "example.com/m/a", Name: "FuzzParse"},
		{Package: "example.com/m/b", Name: "FuzzParse"},
		{Package: "example.com/m/x/util", Name: "FuzzRead"},
		{Package: "example.com/m/y/util", Name: "FuzzRead"},
		{Package: "example.com/m/a", Name: "FuzzOnly"},
	}
	got := exportNames(targets)
	want := []string{"a_FuzzParse", "b_FuzzParse", "example_com_m_x_util_FuzzRead", "example_com_m_y_util_FuzzRead", "FuzzOnly"}
	if !slices.Equal(got, want) {
		t.Errorf("exportNames = %q, want %q", got, want)
	}
}

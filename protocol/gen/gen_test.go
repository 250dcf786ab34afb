package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFileIsCurrent fails when vscode-extension/src/protocol.ts differs
// from what the generator makes of protocol/protocol.go today.
func TestGeneratedFileIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join(root, defaultIn))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Generate(defaultIn, src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, defaultOut))
	if err != nil {
		t.Fatalf("%v (run go run ./protocol/gen)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: run go run ./protocol/gen from the module root", defaultOut)
	}
}

func TestGenerate(t *testing.T) {
	for _, tc := range []struct {
		desc    string
		src     string
		want    []string // substrings of the output
		wantErr string
	}{
		{
			desc: "constants and struct with tags",
			src: `package p
// A is a.
const A = "a/b"
// S is s.
type S struct {
	// X is x.
	X  int64    ` + "`json:\"x\"`" + `
	Y  string   ` + "`json:\"y,omitempty\"`" + `
	Z  []T      ` + "`json:\"z\"`" + `
	B  bool
	Skip int    ` + "`json:\"-\"`" + `
	hidden int
}
type T struct{}
`,
			want: []string{
				"DO NOT EDIT",
				`export const A = "a/b";`,
				"/** S is s. */\nexport interface S {",
				"\t/** X is x. */\n\tx: number;",
				"\ty?: string;",
				"\tz: T[] | null;",
				"\tB: boolean;",
				"export interface T {\n}",
			},
		},
		{desc: "map field", src: "package p\ntype S struct{ M map[string]int }", wantErr: "unsupported field type"},
		{desc: "non-string constant", src: "package p\nconst N = 1", wantErr: "only string literals"},
		{desc: "non-struct type", src: "package p\ntype K string", wantErr: "only struct types"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			out, err := Generate("p.go", []byte(tc.src))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(string(out), "hidden") || strings.Contains(string(out), "Skip") {
				t.Errorf("output has unexported or json:\"-\" fields:\n%s", out)
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/protocol"
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

// TestSettingsDeclared: every daemon setting (protocol.Settings) is declared in
// the extension's package.json as fuzzls.<name>, with the JSON type of its Go field.
func TestSettingsDeclared(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "vscode-extension", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]struct {
					Type  string `json:"type"`
					Items *struct {
						Type string `json:"type"`
					} `json:"items"`
				} `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	jsonType := func(k reflect.Kind) string {
		switch k {
		case reflect.String:
			return "string"
		case reflect.Int, reflect.Int64:
			return "integer"
		case reflect.Bool:
			return "boolean"
		case reflect.Slice:
			return "array"
		}
		return k.String()
	}
	st := reflect.TypeFor[protocol.Settings]()
	for i := range st.NumField() {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p, ok := pkg.Contributes.Configuration.Properties["fuzzls."+name]
		if !ok {
			t.Errorf("package.json does not declare fuzzls.%s", name)
			continue
		}
		if want := jsonType(f.Type.Kind()); p.Type != want {
			t.Errorf("fuzzls.%s is declared %q, want %q", name, p.Type, want)
		}
		if f.Type.Kind() == reflect.Slice && (p.Items == nil || p.Items.Type != jsonType(f.Type.Elem().Kind())) {
			t.Errorf("fuzzls.%s's items are not declared %s", name, jsonType(f.Type.Elem().Kind()))
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// TestExtensionREADMECurrent fails when vscode-extension/README.md's settings
// table differs from package.json's settings; a setting added to package.json
// changes it.
func TestExtensionREADMECurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, readmePath))
	if err != nil {
		t.Fatal(err)
	}
	pkg := readPackageJSON(t)
	want, err := SettingsREADME(readme, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, want) {
		t.Fatalf("%s's settings are out of date: run go run ./protocol/gen from the module root", readmePath)
	}
	for _, name := range []string{"fuzzls.path", "fuzzls.rssLimitMB", "fuzzls.plateau", "fuzzls.trace.server"} {
		if !bytes.Contains(readme, []byte("| `"+name+"` |")) {
			t.Errorf("%s does not list %s", readmePath, name)
		}
	}
	added := bytes.Replace(pkg, []byte(`"fuzzls.path": {`), []byte(`"fuzzls.extra": {"type": "string", "default": "x"}, "fuzzls.path": {`), 1)
	if again, err := SettingsREADME(readme, added); err != nil || bytes.Equal(again, readme) {
		t.Errorf("a setting added to package.json left the README as it was (%v)", err)
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
		{
			desc: "defaults",
			src: `package p
const On = "on"
type S struct {
	A string   ` + "`json:\"a\"`" + `
	N int      ` + "`json:\"n\"`" + `
	M int      ` + "`json:\"m\"`" + `
	B bool     ` + "`json:\"b\"`" + `
	L []string ` + "`json:\"l\"`" + `
	E []string ` + "`json:\"e\"`" + `
}
// DefaultS is s's defaults.
func DefaultS() S { return S{A: On, N: -3, B: true, L: []string{"x", "y"}} }
func helper() int { return 1 }
`,
			want: []string{
				"/** DefaultS is s's defaults. */\nexport const defaultS: S = {\n\ta: \"on\",\n\tn: -3,\n\tm: 0,\n\tb: true,\n\tl: [\"x\", \"y\"],\n\te: null,\n};",
			},
		},
		{desc: "defaults with logic", src: "package p\ntype S struct{ N int }\nfunc DefaultS() S { n := 1; return S{N: n} }", wantErr: "only func DefaultT() T"},
		{desc: "defaults of another type", src: "package p\ntype S struct{ N int }\ntype T struct{ N int }\nfunc DefaultS() T { return T{N: 1} }", wantErr: "only func DefaultT() T"},
		{desc: "defaults with a computed value", src: "package p\ntype S struct{ N int }\nfunc DefaultS() S { return S{N: 1 + 2} }", wantErr: "unsupported value"},
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

// extensionOnly are the extension's settings that are not the daemon's (VS Code
// reads them itself).
var extensionOnly = []string{"fuzzls.path", "fuzzls.coverageDecorator", "fuzzls.trace.server"}

// TestSettingsDeclared: package.json's contributes.configuration and
// protocol.Settings agree. Every daemon setting is declared as fuzzls.<json
// name>, with the JSON type of its Go field and DefaultSettings' value as its
// default; autoStart's enum is the AutoStart constants; and package.json
// declares no other fuzzls.* setting than those and the extension's own.
func TestSettingsDeclared(t *testing.T) {
	for _, p := range settingsDrift(t, readPackageJSON(t)) {
		t.Error(p)
	}
}

// TestSettingsDriftCaught: settingsDrift finds a package.json that differs
// from protocol.Settings in a name, a type, a default or autoStart's values.
func TestSettingsDriftCaught(t *testing.T) {
	type props = map[string]any
	for _, tc := range []struct {
		desc   string
		change func(p props)
	}{
		{"renamed", func(p props) { p["fuzzls.rssLimitMb"] = p["fuzzls.rssLimitMB"]; delete(p, "fuzzls.rssLimitMB") }},
		{"default", func(p props) { p["fuzzls.rssLimitMB"].(props)["default"] = 1024 }},
		{"no default", func(p props) { delete(p["fuzzls.nice"].(props), "default") }},
		{"type", func(p props) { p["fuzzls.leaks"].(props)["type"] = "string" }},
		{"items", func(p props) { p["fuzzls.buildFlags"].(props)["items"] = props{"type": "integer"} }},
		{"enum", func(p props) { p["fuzzls.autoStart"].(props)["enum"] = []string{"off", "open", "workspace"} }},
		{"missing", func(p props) { delete(p, "fuzzls.syncDir") }},
		{"extra", func(p props) { p["fuzzls.minimizeTime"] = props{"type": "string", "default": ""} }},
	} {
		var pkg map[string]any
		if err := json.Unmarshal(readPackageJSON(t), &pkg); err != nil {
			t.Fatal(err)
		}
		tc.change(pkg["contributes"].(props)["configuration"].(props)["properties"].(props))
		changed, err := json.Marshal(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if p := settingsDrift(t, changed); len(p) == 0 {
			t.Errorf("%s: not found", tc.desc)
		}
	}
	var pkg map[string]any
	json.Unmarshal(readPackageJSON(t), &pkg)
	same, _ := json.Marshal(pkg)
	if p := settingsDrift(t, same); len(p) != 0 {
		t.Errorf("package.json re-encoded unchanged: %q", p)
	}
}

func readPackageJSON(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "vscode-extension", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// settingsDrift lists the differences between package.json's settings and
// protocol.Settings.
func settingsDrift(t *testing.T, packageJSON []byte) (problems []string) {
	t.Helper()
	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]struct {
					Type    string          `json:"type"`
					Default json.RawMessage `json:"default"`
					Enum    []string        `json:"enum"`
					Items   *struct {
						Type string `json:"type"`
					} `json:"items"`
				} `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(packageJSON, &pkg); err != nil {
		t.Fatal(err)
	}
	props := pkg.Contributes.Configuration.Properties
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
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	declared := map[string]bool{}
	for name := range props {
		declared[name] = true
	}
	for _, name := range extensionOnly {
		delete(declared, name)
	}
	defaults := reflect.ValueOf(protocol.DefaultSettings())
	st := defaults.Type()
	for i := range st.NumField() {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		key := "fuzzls." + name
		p, ok := props[key]
		if !ok {
			fail("package.json does not declare %s", key)
			continue
		}
		delete(declared, key)
		if want := jsonType(f.Type.Kind()); p.Type != want {
			fail("%s is declared %q, want %q", key, p.Type, want)
		}
		if f.Type.Kind() == reflect.Slice && (p.Items == nil || p.Items.Type != jsonType(f.Type.Elem().Kind())) {
			fail("%s's items are not declared %s", key, jsonType(f.Type.Elem().Kind()))
		}
		want, err := json.Marshal(defaults.Field(i).Interface())
		if err != nil {
			t.Fatal(err)
		}
		var got, wantV any
		if err := json.Unmarshal(p.Default, &got); err != nil {
			fail("%s has no default, protocol.DefaultSettings has %s", key, want)
			continue
		}
		if err := json.Unmarshal(want, &wantV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantV) {
			fail("%s's default is %s, protocol.DefaultSettings has %s", key, p.Default, want)
		}
	}
	if enum := props["fuzzls.autoStart"].Enum; !slices.Equal(enum, []string{protocol.AutoStartOff, protocol.AutoStartOpenFiles, protocol.AutoStartWorkspace}) {
		fail("fuzzls.autoStart's enum is %q, want the AutoStart constants", enum)
	}
	for name := range declared {
		fail("package.json declares %s, which is neither in protocol.Settings nor one of the extension's own settings", name)
	}
	return problems
}

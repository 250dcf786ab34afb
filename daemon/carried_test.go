package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
	"go.lsp.dev/protocol"
)

// A failing input of megabytes is not carried in the diagnostic's data nor in
// code actions' edits, which the client receives again and again: the
// diagnostic's data says "" (the extension asks fuzzls.showInput), "Add input to
// seed corpus" is the command that writes the file, and no f.Add literal is
// offered. A short input is carried as before. An input already in the seed
// corpus (go test's engine writes its failing input there) is not offered
// again, and the other actions stay.
func TestCarriedInput(t *testing.T) {
	dir := copyDir(t, "../testdata/calc")
	calc := filepath.Join(dir, "calc.go")
	target := engine.Target{Package: "example.com/calc", Name: "FuzzEval", Dir: dir,
		File: filepath.Join(dir, "calc_test.go"), Line: lineOf(t, filepath.Join(dir, "calc_test.go"), "func FuzzEval")}
	line := lineOf(t, calc, "// BUG")
	for _, tc := range []struct {
		desc       string
		input      string
		wantData   bool
		wantTitles string
		inCorpus   bool
	}{
		{"short", `string("0/0")`, true, "Add input to seed corpus (edit); Debug this crash (command); Add as f.Add(…) to FuzzEval (edit)", false},
		{"long", fmt.Sprintf("string(%q)", "0/0"+strings.Repeat(" ", 1<<20)), false, "Add input to seed corpus (command); Debug this crash (command)", false},
		{"in corpus", `string("1/0")`, true, "Debug this crash (command); Add as f.Add(…) to FuzzEval (edit)", true},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			if tc.inCorpus {
				data := corpusFile(tc.input)
				p := corpusPath(target, data)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := &engine.Crash{ID: "c1", Kind: fproto.KindPanic, Message: "boom", File: calc, Line: line, Input: tc.input, Minimized: true, Target: target}
			s := &server{}
			s.folders = []string{dir}
			s.crashes = map[string]*engine.Crash{c.ID: c}
			s.caps.createFiles = true

			_, d, ok := s.crashDiagnostic(c)
			if !ok {
				t.Fatal("no diagnostic")
			}
			var data fproto.CrashData
			if err := json.Unmarshal(d.Data, &data); err != nil {
				t.Fatal(err)
			}
			if got := data.Input == tc.input; got != tc.wantData || (!tc.wantData && data.Input != "") {
				t.Errorf("diagnostic data carries %d bytes of a %d-byte input", len(data.Input), len(tc.input))
			}

			actions, err := s.CodeAction(context.Background(), &protocol.CodeActionParams{
				TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(calc)},
				Range:        protocol.Range{Start: protocol.Position{Line: uint32(line - 1)}, End: protocol.Position{Line: uint32(line - 1)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, a := range actions {
				ca, ok := a.(*protocol.CodeAction)
				if !ok {
					t.Fatalf("action %T", a)
				}
				how := "command"
				if ca.Edit != nil {
					how = "edit"
				}
				titles = append(titles, ca.Title+" ("+how+")")
			}
			if got := strings.Join(titles, "; "); got != tc.wantTitles {
				t.Errorf("code actions %q, want %q", got, tc.wantTitles)
			}
		})
	}
}

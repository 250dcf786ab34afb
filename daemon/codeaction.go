package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// CodeAction offers, on a crash diagnostic, "Add input to seed corpus",
// "Debug this crash" (debug.go) and "Add as f.Add(…) to FuzzXxx", on any line of a running target "Seed
// corpus from the current corpus", and at a blocker an input that takes its
// branch as a seed (blockers.go). All are WorkspaceEdits the client applies
// (so undo works); a client that cannot create files gets commands instead.
func (s *server) CodeAction(ctx context.Context, params *protocol.CodeActionParams) ([]protocol.CommandOrCodeAction, error) {
	path, err := filePath(params.TextDocument.URI)
	if err != nil {
		return nil, nil
	}
	s.mu.Lock()
	createFiles := s.caps.createFiles
	s.mu.Unlock()

	// The crashes: those whose diagnostic the client passed, and those on the lines of the range.
	seen := map[string]bool{}
	var crashes []*engine.Crash
	diagOf := map[string]protocol.Diagnostic{}
	for _, d := range params.Context.Diagnostics {
		var data fproto.CrashData
		if src, _ := d.Source.Get(); src == diagnosticSource && len(d.Data) > 0 && json.Unmarshal(d.Data, &data) == nil && data.Crash != "" {
			diagOf[data.Crash] = d
			if c := s.crash(data.Crash); c != nil && !seen[c.ID] {
				seen[c.ID] = true
				crashes = append(crashes, c)
			}
		}
	}
	first, last := int(params.Range.Start.Line)+1, int(params.Range.End.Line)+1
	if m, _, err := s.fileText(path); err == nil {
		first, last = m.goLine(params.Range.Start), m.goLine(params.Range.End)
	}
	for line := first; line <= last && line < first+1000; line++ {
		for _, c := range s.crashesAt(path, line) {
			if !seen[c.ID] {
				seen[c.ID] = true
				crashes = append(crashes, c)
			}
		}
	}

	quickfix := protocol.CodeActionKindQuickFix
	var actions []protocol.CommandOrCodeAction
	for _, c := range crashes {
		var diags []protocol.Diagnostic
		if d, ok := diagOf[c.ID]; ok {
			diags = []protocol.Diagnostic{d}
		}
		arg, _ := json.Marshal(fproto.CrashArgs{Crash: c.ID})
		add := &protocol.CodeAction{Title: "Add input to seed corpus", Kind: &quickfix, Diagnostics: diags}
		if c.Layout != "" {
			add.Title += fmt.Sprintf(" (fuzzls replays it; go test cannot run %s)", c.Target.Name)
		}
		if createFiles && len(c.Input) <= maxCarriedInput {
			// Not offered when the input is in the seed corpus already (go
			// test's engine writes its failing input there itself).
			if edit, err := s.corpusEdit(c.Target, []string{c.Input}); err == nil {
				add.Edit = edit
				actions = append(actions, add)
			}
		} else {
			add.Command = protocol.Command{Title: add.Title, Command: fproto.CommandAddToCorpus, Arguments: []protocol.LSPAny{arg}}
			actions = append(actions, add)
		}
		if c.Layout != "" { // Delve and f.Add take it as go test does, which cannot
			continue
		}
		if c.Kind != fproto.KindSlow {
			actions = append(actions, debugAction(c, diags))
		}

		if len(c.Input) > maxCarriedInput { // a literal of megabytes in the test file helps nobody
			continue
		}
		if edit, err := s.addSeedEdit(c); err == nil {
			actions = append(actions, &protocol.CodeAction{
				Title:       fmt.Sprintf("Add as %s.Add(…) to %s", s.fParam(c.Target), c.Target.Name),
				Kind:        &quickfix,
				Diagnostics: diags,
				Edit:        edit,
			})
		}
	}

	source := protocol.CodeActionKindSource
	for _, fn := range s.fuzzFuncs(path) {
		line := int(params.Range.Start.Line) + 1
		if line < fn.line || line > fn.endLine {
			continue
		}
		sess := s.sessionFor(filepath.Dir(path), fn.name)
		if sess == nil {
			continue
		}
		title := "Seed corpus from the current corpus"
		if createFiles {
			seeds := sess.fs.SeedCandidates()
			if len(seeds) == 0 {
				continue
			}
			edit, err := s.corpusEdit(sess.target, seeds)
			if err != nil {
				continue
			}
			actions = append(actions, &protocol.CodeAction{Title: fmt.Sprintf("%s (%d inputs)", title, len(seeds)), Kind: &source, Edit: edit})
		} else {
			arg, _ := json.Marshal(fproto.TargetArgs{URI: string(params.TextDocument.URI), Target: fn.name})
			actions = append(actions, &protocol.CodeAction{Title: title, Kind: &source,
				Command: protocol.Command{Title: title, Command: fproto.CommandSeedCorpus, Arguments: []protocol.LSPAny{arg}}})
		}
	}
	actions = append(actions, s.blockerActions(ctx, path, first, last, params.Context.Diagnostics)...)
	return append(actions, s.generateActions(ctx, params, path)...), nil
}

// corpusFile is an input as a seed corpus file as go test writes one: the
// values decoded and encoded again by fuzzrt, so lines end in "\n" (an input
// read from a file saved with "\r\n", which go test accepts, is written with
// "\n"; a value's own "\r" is always quoted), the header and the final
// newline are there, and the layout line of a target fuzzed field by field
// (which go test cannot run). An input that does not decode (none the engine reports)
// is only given the header it lacks.
func corpusFile(input string) []byte {
	if !strings.HasPrefix(input, fuzzrt.Header) {
		input = fuzzrt.Header + "\n" + strings.TrimLeft(input, "\r\n")
	}
	vals, err := fuzzrt.Unmarshal([]byte(input))
	if err != nil {
		return []byte(input)
	}
	return fuzzrt.MarshalLayout(vals, fuzzrt.LayoutOf([]byte(input)))
}

// corpusPath is where data goes in t's seed corpus.
func corpusPath(t engine.Target, data []byte) string {
	dir := t.Dir
	if dir == "" {
		dir = filepath.Dir(t.File)
	}
	return filepath.Join(dir, "testdata", "fuzz", t.Name, fuzzrt.FileName(data))
}

// corpusEdit creates a seed corpus file for each input (those already there
// are left alone).
func (s *server) corpusEdit(t engine.Target, inputs []string) (*protocol.WorkspaceEdit, error) {
	yes := true
	edit := &protocol.WorkspaceEdit{}
	for _, in := range inputs {
		data := corpusFile(in)
		p := corpusPath(t, data)
		if !s.inWorkspace(p) {
			return nil, errOutsideWorkspace(p)
		}
		if _, err := os.Stat(p); err == nil {
			continue
		}
		u := fileURI(p)
		edit.DocumentChanges = append(edit.DocumentChanges,
			&protocol.CreateFile{Kind: "create", URI: u, Options: &protocol.CreateFileOptions{IgnoreIfExists: &yes}},
			&protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}},
				Edits:        []protocol.TextDocumentEditElement{&protocol.TextEdit{NewText: string(data)}},
			})
	}
	if len(edit.DocumentChanges) == 0 {
		return nil, fmt.Errorf("already in the seed corpus")
	}
	return edit, nil
}

// addSeedEdit inserts `f.Add(<input>)` before the f.Fuzz call of the crash's
// target. The input's lines are already Go expressions of the right types
// (`string("1+")`, `int(5)`, `[]byte("x")`).
func (s *server) addSeedEdit(c *engine.Crash) (*protocol.WorkspaceEdit, error) {
	file := c.Target.File
	if !s.inWorkspace(file) {
		return nil, errOutsideWorkspace(file)
	}
	m, _, err := s.fileText(file)
	if err != nil {
		return nil, err
	}
	for _, fn := range parseFuzzFuncs(file, m.text) {
		if fn.name != c.Target.Name {
			continue
		}
		if fn.fuzzStmt < 0 {
			return nil, fmt.Errorf("%s has no %s.Fuzz call", fn.name, fn.param)
		}
		args := inputArgs(c.Input)
		if len(args) == 0 {
			return nil, fmt.Errorf("empty input")
		}
		pos := m.position(fn.fuzzStmt)
		text := fmt.Sprintf("%s%s.Add(%s)\n", fn.indent, fn.param, strings.Join(args, ", "))
		return &protocol.WorkspaceEdit{Changes: map[uri.URI][]protocol.TextEdit{
			fileURI(file): {{Range: protocol.Range{Start: pos, End: pos}, NewText: text}},
		}}, nil
	}
	return nil, fmt.Errorf("no func %s in %s", c.Target.Name, file)
}

// fParam is the name of the target's *testing.F parameter, "f" if unknown.
func (s *server) fParam(t engine.Target) string {
	for _, fn := range s.fuzzFuncs(t.File) {
		if fn.name == t.Name && fn.param != "" {
			return fn.param
		}
	}
	return "f"
}

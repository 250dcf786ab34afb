package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/daemon/gentest"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// kindGenerateFuzzTest is the code action's kind: a source action, as gopls's
// "Add test for function" (source.addTest).
const kindGenerateFuzzTest protocol.CodeActionKind = "source.generateFuzzTest"

// offerWait bounds how long a code action request waits for the first load of
// a package's types (go list builds its imports' export data, seconds on a
// cold cache); the load goes on, and a later request offers the action.
const offerWait = time.Second

// generateActions offers "Generate fuzz test FuzzXxx" on the signature of a
// function or method of a Go file (not a test's) whose parameters can all be
// built from fuzz arguments (package gentest says which). Choosing it runs
// fuzzls.generateFuzzTest, which writes the test: the search for seeds at the
// function's calls in the module is too slow to run at every move of the
// cursor, which is when clients ask for code actions.
func (s *server) generateActions(ctx context.Context, params *protocol.CodeActionParams, path string) []protocol.CommandOrCodeAction {
	s.mu.Lock()
	applyEdit := s.caps.applyEdit
	s.mu.Unlock()
	if !applyEdit || filepath.Ext(path) != ".go" || strings.HasSuffix(path, "_test.go") || !s.inWorkspace(path) || !wants(params.Context.Only, kindGenerateFuzzTest) {
		return nil
	}
	m, _, err := s.fileText(path)
	if err != nil {
		return nil
	}
	offset := m.offset(params.Range.Start)
	if !gentest.InSignature([]byte(m.text), offset) {
		return nil
	}
	files := s.openGoFiles()
	ctx, cancel := context.WithTimeout(ctx, offerWait)
	defer cancel()
	s.gentests.SetFlags(s.buildFlagArgs())
	pkg, err := s.gentests.Check(ctx, filepath.Dir(path), files)
	if err != nil {
		return nil
	}
	plan, err := gentest.FuncAt(pkg, path, offset, files)
	if plan == nil || err != nil {
		return nil
	}
	title := "Generate fuzz test " + plan.Name
	arg, _ := json.Marshal(fproto.FuncArgs{URI: string(params.TextDocument.URI), Func: plan.Func})
	kind := kindGenerateFuzzTest
	return []protocol.CommandOrCodeAction{&protocol.CodeAction{Title: title, Kind: &kind,
		Command: protocol.Command{Title: title, Command: fproto.CommandGenerateFuzzTest, Arguments: []protocol.LSPAny{arg}}}}
}

// wants reports whether a client asking for the kinds only wants kind.
func wants(only []protocol.CodeActionKind, kind protocol.CodeActionKind) bool {
	return len(only) == 0 || slices.ContainsFunc(only, func(k protocol.CodeActionKind) bool {
		return k == kind || strings.HasPrefix(string(kind), string(k)+".")
	})
}

// commandGenerateFuzzTest writes the fuzz test of a function into its
// package's test file (gentest.Generate) and has the client apply the edit. A
// client that cannot create files gets a new test file written by the daemon,
// which this explicit command allows; an existing one is always edited
// through the client, which may have unsaved changes in it.
func (s *server) commandGenerateFuzzTest(ctx context.Context, args []protocol.LSPAny) (any, error) {
	var fa fproto.FuncArgs
	if err := decodeArg(args, &fa); err != nil {
		return nil, err
	}
	path, err := filePath(uri.URI(fa.URI))
	if err != nil || fa.Func == "" || filepath.Ext(path) != ".go" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s needs the uri of a Go file and a function", fproto.CommandGenerateFuzzTest)
	}
	if !s.inWorkspace(path) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "refused: %v", errOutsideWorkspace(path))
	}
	res, err := gentest.Generate(ctx, s.buildFlagArgs(), s.openGoFiles(), path, fa.Func)
	if err != nil {
		return nil, err
	}
	if res.Note != "" {
		s.logf(protocol.MessageTypeLog, "%s: %s", res.Name, res.Note)
	}
	if !s.inWorkspace(res.Path) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "refused: %v", errOutsideWorkspace(res.Path))
	}
	result := fproto.GeneratedTest{Name: res.Name, URI: string(fileURI(res.Path))}
	s.mu.Lock()
	createFiles := s.caps.createFiles
	doc := s.docs[pathKey(res.Path)]
	s.mu.Unlock()
	u := fileURI(res.Path)
	label := "Generate fuzz test " + res.Name
	if res.Create {
		if !createFiles {
			if _, err := os.Stat(res.Path); err == nil {
				return nil, fmt.Errorf("%s appeared meanwhile: generate the test again", res.Path)
			}
			if err := writeFileAtomic(res.Path, []byte(res.New)); err != nil {
				return nil, err
			}
			s.changes.add(res.Path)
			return result, nil
		}
		edit := &protocol.WorkspaceEdit{DocumentChanges: []protocol.DocumentChange{
			&protocol.CreateFile{Kind: "create", URI: u},
			&protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}},
				Edits:        []protocol.TextDocumentEditElement{&protocol.TextEdit{NewText: res.New}},
			},
		}}
		return result, s.applyEdit(ctx, label, edit)
	}
	m := newMapper(res.Old)
	var edits []protocol.TextEdit
	for _, e := range res.Edits {
		edits = append(edits, protocol.TextEdit{Range: protocol.Range{Start: m.position(e.Start), End: m.position(e.End)}, NewText: e.Text})
	}
	edit := &protocol.WorkspaceEdit{}
	if createFiles { // documentChanges: the edit applies only to the text it was made for
		id := protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}}
		if doc != nil {
			v := doc.version
			id.Version = &v
		}
		te := &protocol.TextDocumentEdit{TextDocument: id}
		for i := range edits {
			te.Edits = append(te.Edits, &edits[i])
		}
		edit.DocumentChanges = []protocol.DocumentChange{te}
	} else {
		edit.Changes = map[uri.URI][]protocol.TextEdit{u: edits}
	}
	return result, s.applyEdit(ctx, label, edit)
}

// openGoFiles are the texts of the Go files the client has open.
func (s *server) openGoFiles() gentest.Files {
	s.mu.Lock()
	defer s.mu.Unlock()
	files := gentest.Files{}
	for _, d := range s.docs {
		if filepath.Ext(d.path) == ".go" {
			files[d.path] = []byte(d.text)
		}
	}
	return files
}

// buildFlagArgs are the settings' go build flags, for the type-checking loads.
func (s *server) buildFlagArgs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return buildFlags(s.settings).Args()
}

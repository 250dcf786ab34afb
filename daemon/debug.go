package daemon

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// Debugging a crash: its input becomes a seed of the target's corpus (through
// the client, a WorkspaceEdit, as "Add input to seed corpus"), which go test
// runs alone under Delve (`dlv test . -- -test.run=^FuzzX$/^<seed>$`), stopping
// at the failure's line. The code action and the code lens on the crash's line
// run fuzzls.debugCrash; VS Code's extension starts a debug session with its
// result, other clients get the dlv command line.

// debugTitle is the code action's title; the lens adds the target and kind.
const debugTitle = "Debug this crash"

// debugAction is the code action that runs fuzzls.debugCrash on c.
func debugAction(c *engine.Crash, diags []protocol.Diagnostic) *protocol.CodeAction {
	quickfix := protocol.CodeActionKindQuickFix
	arg, _ := json.Marshal(fproto.DebugArgs{Crash: c.ID})
	return &protocol.CodeAction{Title: debugTitle, Kind: &quickfix, Diagnostics: diags,
		Command: protocol.Command{Title: debugTitle, Command: fproto.CommandDebugCrash, Arguments: []protocol.LSPAny{arg}}}
}

// debugLenses are the lenses "⚙ Debug this crash" on the lines of path where
// a crash is placed.
func (s *server) debugLenses(path string, m *mapper) []protocol.CodeLens {
	s.mu.Lock()
	all := make([]*engine.Crash, 0, len(s.crashes))
	for _, c := range s.crashes {
		if c.Kind != fproto.KindSlow && c.Layout == "" { // go test, so Delve, cannot run a Layout's target
			all = append(all, c)
		}
	}
	s.mu.Unlock()
	var lenses []protocol.CodeLens
	for _, c := range all {
		file, line, _ := s.crashLocation(c)
		if !samePath(file, path) {
			continue
		}
		arg, _ := json.Marshal(fproto.DebugArgs{Crash: c.ID})
		lenses = append(lenses, protocol.CodeLens{Range: m.lineRange(line), Command: protocol.Command{
			Title: fmt.Sprintf("⚙ %s (%s: %s)", debugTitle, c.Target.Name, c.Kind), Command: fproto.CommandDebugCrash, Arguments: []protocol.LSPAny{arg}}})
	}
	return lenses
}

// seedOf is the name of the file of t's seed corpus that holds input: go
// test's name for it, else any file of the same contents (a seed the user
// named); "" if there is none.
func seedOf(t engine.Target, input string) string {
	data := corpusFile(input)
	p := corpusPath(t, data)
	if _, err := os.Stat(p); err == nil {
		return filepath.Base(p)
	}
	dir := filepath.Dir(p)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > 2*int64(len(data))+64 {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && bytes.Equal(corpusFile(string(b)), data) {
			return e.Name()
		}
	}
	return ""
}

// commandDebugCrash saves the crash's input as a seed unless it is one, and
// answers how to run it under Delve.
func (s *server) commandDebugCrash(ctx context.Context, args []protocol.LSPAny) (any, error) {
	c, err := s.crashArg(args) // DebugArgs's crash is CrashArgs's
	if err != nil {
		return nil, err
	}
	var da fproto.DebugArgs
	if err := decodeArg(args, &da); err != nil {
		return nil, err
	}
	if c.Layout != "" { // Delve runs the target as go test does
		cmd, why := c.ReplayCommand(fuzzrt.FileName(corpusFile(c.Input)))
		return nil, fmt.Errorf("%s: Delve cannot debug it; replay it with %s once it is a seed", why, cmd)
	}
	seed := seedOf(c.Target, c.Input)
	unsaved := ""
	if seed == "" {
		edit, err := s.corpusEdit(c.Target, []string{c.Input})
		if err != nil {
			return nil, err
		}
		if err := s.applyEdit(ctx, "Save the crash's input as a seed of "+c.Target.Name, edit); err != nil {
			return nil, err
		}
		seed = fuzzrt.FileName(corpusFile(c.Input))
		// A client may leave the edited file unsaved (the editor's buffer):
		// go test reads the disk.
		if !onDisk(ctx, c.Target, c.Input, 2*time.Second) {
			unsaved = corpusPath(c.Target, corpusFile(c.Input))
		}
	}
	file, line, _ := s.crashLocation(c)
	dir := cmp.Or(c.Target.Dir, filepath.Dir(c.Target.File))
	dlv := findDlv()
	res := fproto.DebugResult{
		Target:     fproto.TargetID{Package: c.Target.Package, Name: c.Target.Name},
		Dir:        dir,
		Seed:       seed,
		SeedURI:    string(fileURI(filepath.Join(dir, "testdata", "fuzz", c.Target.Name, seed))),
		Run:        engine.SeedRun(c.Target, seed),
		BuildFlags: append([]string{}, c.BuildFlags...),
		URI:        string(fileURI(file)),
		Line:       uint32(max(line-1, 0)),
		Dlv:        dlv,
		Args:       engine.DlvTestArgs(c, seed),
	}
	res.Command = fmt.Sprintf("%s\n(dlv) break %s:%d\n(dlv) continue", engine.ShellCommand(dir, cmp.Or(dlv, "dlv"), res.Args...), file, line)
	if !da.Launch {
		msg := fmt.Sprintf("Debug %s's crash under Delve:\n%s", c.Target.Name, res.Command)
		if unsaved != "" {
			msg = fmt.Sprintf("Save %s first (the seed is not on disk yet). %s", unsaved, msg)
		}
		if dlv == "" {
			msg += "\n(dlv is not installed: go install github.com/go-delve/delve/cmd/dlv@latest)"
		}
		s.showMessage(protocol.MessageTypeInfo, "%s", msg)
	}
	return res, nil
}

// onDisk waits up to d for the seed of input to be on disk.
func onDisk(ctx context.Context, t engine.Target, input string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if seedOf(t, input) != "" {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// findDlv is Delve's dlv on PATH, else where go install puts it (GOBIN, or
// the first GOPATH's bin); "" if neither has it.
func findDlv() string {
	if p, err := exec.LookPath("dlv"); err == nil {
		return p
	}
	bin := os.Getenv("GOBIN")
	if bin == "" {
		if paths := filepath.SplitList(build.Default.GOPATH); len(paths) > 0 {
			bin = filepath.Join(paths[0], "bin")
		}
	}
	exe := "dlv"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if p := filepath.Join(bin, exe); bin != "" {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

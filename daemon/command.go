package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// ExecuteCommand runs one of the commands listed by s.commands. Any path
// argument outside the workspace folders is refused.
func (s *server) ExecuteCommand(ctx context.Context, params *protocol.ExecuteCommandParams) (protocol.LSPAny, error) {
	var result any
	var err error
	switch params.Command {
	case fproto.CommandStart:
		err = s.commandStart(ctx, params.Arguments)
	case fproto.CommandStop:
		err = s.commandStop(params.Arguments)
	case fproto.CommandAddToCorpus:
		result, err = s.commandAddToCorpus(params.Arguments)
	case fproto.CommandAddSeed:
		err = s.commandAddSeed(ctx, params.Arguments)
	case fproto.CommandSeedCorpus:
		err = s.commandSeedCorpus(ctx, params.Arguments)
	case fproto.CommandStatus:
		result = s.status()
	case fproto.CommandShowInput:
		result, err = s.commandShowInput(params.Arguments)
	case fproto.CommandCoverage:
		result, err = s.commandCoverage(params.Arguments)
	case fproto.CommandBlockers:
		result, err = s.commandBlockers(params.Arguments)
	case fproto.CommandDebugCrash:
		result, err = s.commandDebugCrash(ctx, params.Arguments)
	case fproto.CommandGenerateFuzzTest:
		result, err = s.commandGenerateFuzzTest(ctx, params.Arguments)
	case commandTestSleep, commandTestPanic:
		if !s.opts.EnableTestCommands {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q", params.Command)
		}
		if params.Command == commandTestPanic {
			panic("fuzzls.test.panic")
		}
		result, err = s.commandTestSleep(ctx, params.Arguments)
	default:
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q", params.Command)
	}
	if err != nil {
		return nil, err
	}
	if result == nil {
		return nil, nil
	}
	return json.Marshal(result)
}

// decodeArg decodes the first argument into v; no argument leaves v zero.
func decodeArg(args []protocol.LSPAny, v any) error {
	if len(args) == 0 || len(args[0]) == 0 || string(args[0]) == "null" {
		return nil
	}
	if err := json.Unmarshal(args[0], v); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid argument: %v", err)
	}
	return nil
}

// targetArg decodes a TargetArgs and checks its URI: the file's path, or "".
func (s *server) targetArg(args []protocol.LSPAny) (fproto.TargetArgs, string, error) {
	var ta fproto.TargetArgs
	if err := decodeArg(args, &ta); err != nil {
		return ta, "", err
	}
	if ta.URI == "" {
		if ta.Target != "" {
			return ta, "", jsonrpc2.Errorf(jsonrpc2.InvalidParams, "target %q without uri", ta.Target)
		}
		return ta, "", nil
	}
	path, err := filePath(uri.URI(ta.URI))
	if err != nil {
		return ta, "", jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
	}
	if !s.inWorkspace(path) {
		return ta, "", jsonrpc2.Errorf(jsonrpc2.InvalidParams, "refused: %v", errOutsideWorkspace(path))
	}
	return ta, path, nil
}

func (s *server) commandStart(ctx context.Context, args []protocol.LSPAny) error {
	ta, path, err := s.targetArg(args)
	if err != nil {
		return err
	}
	switch {
	case path == "":
		return s.startAll(ctx)
	case ta.Target != "":
		return s.startTarget(ctx, path, ta.Target)
	default:
		var errs []error
		for _, fn := range s.fuzzFuncs(path) {
			errs = append(errs, s.startTarget(ctx, path, fn.name))
		}
		return errors.Join(errs...)
	}
}

func (s *server) commandStop(args []protocol.LSPAny) error {
	ta, path, err := s.targetArg(args)
	if err != nil {
		return err
	}
	s.stopSessions(func(t engine.Target) bool {
		switch {
		case path == "":
			return true
		case ta.Target != "":
			return t.Name == ta.Target && samePath(t.Dir, filepath.Dir(path))
		default:
			return samePath(t.File, path)
		}
	})
	return nil
}

// commandAddToCorpus writes the crash's input into its target's seed corpus
// (atomically: a temporary file renamed into place) and returns the path.
func (s *server) commandAddToCorpus(args []protocol.LSPAny) (any, error) {
	c, err := s.crashArg(args)
	if err != nil {
		return nil, err
	}
	data := corpusFile(c.Input)
	path := corpusPath(c.Target, data)
	if !s.inWorkspace(path) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "refused: %v", errOutsideWorkspace(path))
	}
	if err := writeFileAtomic(path, data); err != nil {
		return nil, err
	}
	s.changes.add(path)
	return map[string]string{"path": path, "uri": string(fileURI(path))}, nil
}

func (s *server) commandAddSeed(ctx context.Context, args []protocol.LSPAny) error {
	c, err := s.crashArg(args)
	if err != nil {
		return err
	}
	edit, err := s.addSeedEdit(c)
	if err != nil {
		return err
	}
	return s.applyEdit(ctx, "Add seed to "+c.Target.Name, edit)
}

func (s *server) commandSeedCorpus(ctx context.Context, args []protocol.LSPAny) error {
	ta, path, err := s.targetArg(args)
	if err != nil {
		return err
	}
	if ta.Target == "" {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s needs a uri and a target", fproto.CommandSeedCorpus)
	}
	sess := s.sessionFor(filepath.Dir(path), ta.Target)
	if sess == nil {
		return fmt.Errorf("%s is not running", ta.Target)
	}
	edit, err := s.corpusEdit(sess.target, sess.fs.SeedCandidates())
	if err != nil {
		return err
	}
	return s.applyEdit(ctx, "Seed corpus of "+ta.Target, edit)
}

func (s *server) commandShowInput(args []protocol.LSPAny) (any, error) {
	c, err := s.crashArg(args)
	if err != nil {
		return nil, err
	}
	return fproto.ShowInputResult{Input: string(corpusFile(c.Input))}, nil
}

// commandCoverage answers a running target's coverage of every instrumented
// file of the workspace.
func (s *server) commandCoverage(args []protocol.LSPAny) (any, error) {
	var id fproto.TargetID
	if err := decodeArg(args, &id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	sess := s.sessions[engine.Target{Package: id.Package, Name: id.Name}.ID()]
	s.mu.Unlock()
	if sess == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "no session of %s.%s", id.Package, id.Name)
	}
	return s.coverageParams(sess.target, sess.fs, true), nil
}

func (s *server) commandTestSleep(ctx context.Context, args []protocol.LSPAny) (any, error) {
	var a struct {
		MS int `json:"ms"`
	}
	if err := decodeArg(args, &a); err != nil {
		return nil, err
	}
	select {
	case <-time.After(time.Duration(a.MS) * time.Millisecond):
		return "slept", nil
	case <-ctx.Done():
		return nil, protocol.ErrRequestCancelled
	}
}

func (s *server) crashArg(args []protocol.LSPAny) (*engine.Crash, error) {
	var ca fproto.CrashArgs
	if err := decodeArg(args, &ca); err != nil {
		return nil, err
	}
	c := s.crash(ca.Crash)
	if c == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "no crash %q", ca.Crash)
	}
	return c, nil
}

// applyEdit asks the client to apply edit (workspace/applyEdit).
func (s *server) applyEdit(ctx context.Context, label string, edit *protocol.WorkspaceEdit) error {
	res, err := s.client.ApplyEdit(ctx, &protocol.ApplyWorkspaceEditParams{Label: &label, Edit: *edit})
	if err != nil {
		return err
	}
	if res != nil && !res.Applied {
		reason := "no reason given"
		if res.FailureReason != nil {
			reason = *res.FailureReason
		}
		return fmt.Errorf("the client did not apply the edit: %s", reason)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".fuzzls-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

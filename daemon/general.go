package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// clientCaps are the client capabilities the daemon acts on.
type clientCaps struct {
	workDoneProgress bool // window/workDoneProgress/create
	codeLensRefresh  bool // workspace/codeLens/refresh
	createFiles      bool // WorkspaceEdit documentChanges with create operations
	applyEdit        bool // workspace/applyEdit
	watchDynamic     bool // client/registerCapability for didChangeWatchedFiles
}

// Initialize records the workspace folders, client capabilities and settings
// (initializationOptions) and advertises what the daemon does.
func (s *server) Initialize(ctx context.Context, params *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	var folders []string
	if wf, ok := params.WorkspaceFolders.Get(); ok {
		for _, f := range wf {
			if p, err := filePath(f.URI); err == nil {
				folders = append(folders, p)
			}
		}
	}
	// Clients without workspace folders send rootUri or, older still, rootPath.
	//lint:ignore SA1019 the fallback for clients without workspace folders
	if len(folders) == 0 && params.RootURI != nil {
		//lint:ignore SA1019 as above
		if p, err := filePath(*params.RootURI); err == nil {
			folders = append(folders, p)
		}
	}
	//lint:ignore SA1019 as above
	if rp, ok := params.RootPath.Get(); len(folders) == 0 && ok && filepath.IsAbs(rp) {
		folders = append(folders, filepath.Clean(rp))
	}

	caps := clientCaps{}
	c := params.Capabilities
	if c.Window != nil && c.Window.WorkDoneProgress != nil {
		caps.workDoneProgress = *c.Window.WorkDoneProgress
	}
	if w := c.Workspace; w != nil {
		if w.CodeLens != nil && w.CodeLens.RefreshSupport != nil {
			caps.codeLensRefresh = *w.CodeLens.RefreshSupport
		}
		if w.ApplyEdit != nil {
			caps.applyEdit = *w.ApplyEdit
		}
		if e := w.WorkspaceEdit; e != nil && e.DocumentChanges != nil && *e.DocumentChanges {
			for _, k := range e.ResourceOperations {
				if k == protocol.ResourceOperationKindCreate {
					caps.createFiles = true
				}
			}
		}
		if d := w.DidChangeWatchedFiles; d != nil && d.DynamicRegistration != nil {
			caps.watchDynamic = *d.DynamicRegistration
		}
	}

	s.mu.Lock()
	if s.initialized {
		s.mu.Unlock()
		return nil, fmt.Errorf("initialize sent twice")
	}
	s.initialized = true
	s.folders = folders
	s.caps = caps
	var warn error
	if len(params.InitializationOptions) > 0 {
		warn = updateSettings(&s.settings, params.InitializationOptions)
	}
	s.mu.Unlock()
	if warn != nil {
		s.logf(protocol.MessageTypeWarning, "initializationOptions: %v", warn)
	}

	yes := true
	incremental := protocol.TextDocumentSyncKindIncremental
	result := &protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKindUTF16,
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: &yes,
				Change:    &incremental,
				Save:      &protocol.SaveOptions{},
			},
			HoverProvider: protocol.Boolean(true),
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, protocol.CodeActionKindSource, kindGenerateFuzzTest},
			},
			CodeLensProvider:       &protocol.CodeLensOptions{},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: s.commands()},
			Workspace: &protocol.WorkspaceOptions{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
					Supported:           &yes,
					ChangeNotifications: protocol.Boolean(true),
				},
			},
		},
		ServerInfo: protocol.ServerInfo{Name: "fuzzls"},
	}
	if s.opts.Version != "" {
		result.ServerInfo.Version = protocol.NewOptional(s.opts.Version)
	}
	return result, nil
}

// Initialized starts watching the workspace and, with autoStart "workspace",
// every target in it. It runs on the read loop, so all of that happens on
// other goroutines (registering a capability waits for the client's reply).
func (s *server) Initialized(ctx context.Context, params *protocol.InitializedParams) error {
	s.goSafe("watch", func() { s.watchFolders(s.workspaceFolders()) })
	s.mu.Lock()
	auto := s.settings.AutoStart
	s.mu.Unlock()
	if auto == fproto.AutoStartWorkspace {
		s.goSafe("autoStart", func() {
			if err := s.startAll(s.ctx); err != nil {
				s.logf(protocol.MessageTypeWarning, "autoStart: %v", err)
			}
		})
	}
	return nil
}

// Shutdown stops every session (killing the workers) and waits for them; the
// process exits on exit or at the end of its input.
func (s *server) Shutdown(ctx context.Context) error {
	s.stopSessions(nil)
	s.mu.Lock()
	s.shutdown = true
	s.mu.Unlock()
	return nil
}

// Exit makes Serve return.
func (s *server) Exit(ctx context.Context) error {
	s.exitOnce.Do(func() { close(s.exited) })
	return nil
}

// DidChangeWorkspaceFolders follows the client's folders: watch the new ones,
// stop the sessions in the removed ones.
func (s *server) DidChangeWorkspaceFolders(ctx context.Context, params *protocol.DidChangeWorkspaceFoldersParams) error {
	var added, removed []string
	for _, f := range params.Event.Added {
		if p, err := filePath(f.URI); err == nil {
			added = append(added, p)
		}
	}
	for _, f := range params.Event.Removed {
		if p, err := filePath(f.URI); err == nil {
			removed = append(removed, p)
		}
	}
	s.mu.Lock()
	var keep []string
	for _, f := range s.folders {
		if !contains(removed, f) {
			keep = append(keep, f)
		}
	}
	for _, f := range added {
		if !contains(keep, f) {
			keep = append(keep, f)
		}
	}
	s.folders = keep
	s.mu.Unlock()
	s.goSafe("workspaceFolders", func() {
		s.watchFolders(added)
		s.stopSessions(func(t engine.Target) bool { return !s.inWorkspace(t.File) })
	})
	return nil
}

// DidChangeConfiguration applies new settings. Engine settings (parallel,
// timeout, rssLimitMB, nice, cacheDir, syncDir, keepFuzzing, buildFlags, leaks) take effect at the next start
// once no session runs; autoStart "workspace" starts everything now.
func (s *server) DidChangeConfiguration(ctx context.Context, params *protocol.DidChangeConfigurationParams) error {
	s.mu.Lock()
	before, blockersBefore := s.settings.AutoStart, s.settings.Blockers
	err := updateSettings(&s.settings, params.Settings)
	after, blockersAfter := s.settings.AutoStart, s.settings.Blockers
	s.mu.Unlock()
	if err != nil {
		s.logf(protocol.MessageTypeWarning, "settings: %v", err)
	}
	if blockersAfter != blockersBefore {
		s.goSafe("blockers", s.publishDiagnostics)
	}
	if after == fproto.AutoStartWorkspace && before != fproto.AutoStartWorkspace {
		s.goSafe("autoStart", func() {
			if err := s.startAll(s.ctx); err != nil {
				s.logf(protocol.MessageTypeWarning, "autoStart: %v", err)
			}
		})
	}
	return nil
}

// workspaceFolders returns a copy of the folders.
func (s *server) workspaceFolders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.folders...)
}

// inWorkspace reports whether path is inside one of the workspace folders
// (symbolic links resolved where they exist).
func (s *server) inWorkspace(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	path = resolve(path)
	for _, f := range s.workspaceFolders() {
		if pathWithin(resolve(f), path) {
			return true
		}
	}
	return false
}

// resolve cleans path and resolves symbolic links in its longest existing prefix.
func resolve(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for p := path; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func errOutsideWorkspace(path string) error {
	return fmt.Errorf("%s is outside the workspace folders", path)
}

// contains reports whether list holds path (in any spelling).
func contains(list []string, path string) bool {
	for _, x := range list {
		if samePath(x, path) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// commands lists the commands advertised in executeCommandProvider.
func (s *server) commands() []string {
	cmds := []string{
		fproto.CommandStart, fproto.CommandStop, fproto.CommandAddToCorpus, fproto.CommandAddSeed,
		fproto.CommandSeedCorpus, fproto.CommandStatus, fproto.CommandShowInput, fproto.CommandCoverage, fproto.CommandBlockers,
		fproto.CommandDebugCrash,
		fproto.CommandGenerateFuzzTest,
	}
	if s.opts.EnableTestCommands {
		cmds = append(cmds, commandTestSleep, commandTestPanic)
	}
	return cmds
}

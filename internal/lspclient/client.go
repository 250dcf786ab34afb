// Package lspclient talks LSP to a real fuzzls daemon, as an editor does: a
// `fuzzls serve` process over its pipes, or daemon.Serve run in process over
// io.Pipes (the daemon's tests). It is the one LSP client of the tests and of
// the tools that drive the daemon from outside (bench/latency, bench/faults): a
// client on go.lsp.dev/protocol's client side that records what the server
// sends with its time of arrival (Client), and a raw framed connection for
// messages no well-behaved client sends (Raw).
package lspclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/proc"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// Timed is something the client received, and when.
type Timed[T any] struct {
	T time.Time
	V T
}

// DiagEvent is one textDocument/publishDiagnostics.
type DiagEvent struct {
	T     time.Time
	URI   uri.URI
	Diags []protocol.Diagnostic
}

// Client is a client talking to a server: a running `fuzzls serve` (Start) or
// one in process (Connect). What the server sent is in the exported fields;
// read them with Locked, or in the condition of Await.
type Client struct {
	protocol.UnimplementedClient

	Cmd    *exec.Cmd // nil for a server in process
	Server protocol.Server
	Conn   jsonrpc2.Conn
	Ctx    context.Context // the connection's, cancelled when it closes

	stdin  io.WriteCloser
	cancel context.CancelFunc
	waited chan struct{} // closed when Cmd.Wait has returned
	exit   error         // Cmd.Wait's result

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every update

	// AcceptEdits is the answer to workspace/applyEdit: applied or refused
	// (the default: the tools check that nothing is written into the
	// workspace unasked). Either way the edit is recorded in Applied. Set it
	// before Initialize, or under Locked.
	AcceptEdits bool

	Diags         []DiagEvent
	Status        []Timed[fproto.StatusParams]
	Coverage      []Timed[fproto.CoverageParams]
	ProgressNotes []Timed[string] // "begin:title", "report:message", "end:message"
	ShowMessages  []Timed[protocol.ShowMessageParams]
	Logs          []Timed[string] // window/logMessage texts
	Refreshes     int             // workspace/codeLens/refresh requests
	Applied       []protocol.WorkspaceEdit
	Registered    []protocol.Registration
	// NoteBytes are the sizes of fuzzls's own notifications' parameters, by
	// method, in the order they arrived.
	NoteBytes map[string][]int
}

// Start starts cmd (`fuzzls serve`, its Stderr set by the caller) with pipes on
// its stdin and stdout and connects a client to them.
func Start(cmd *exec.Cmd) (*Client, error) {
	stdin, stdout, err := startPiped(cmd)
	if err != nil {
		return nil, err
	}
	c := Connect(stdout, stdin)
	c.Cmd = cmd
	c.waited = make(chan struct{})
	go func() {
		c.exit = cmd.Wait()
		close(c.waited)
		c.update(func() {})
	}()
	return c, nil
}

// Connect connects a client to a server that writes to r and reads from w
// (daemon.Serve over io.Pipes). The server's notifications are handled on the
// connection's read loop, so the client records them in the order sent.
func Connect(r io.ReadCloser, w io.WriteCloser) *Client {
	c := &Client{changed: make(chan struct{}), stdin: w}
	c.Ctx, c.cancel = context.WithCancel(context.Background())
	c.Conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(pipes{r, w}), jsonrpc2.WithCodec(codec{}))
	h := protocol.ClientHandler(c, c.custom)
	c.Conn.Go(c.Ctx, protocol.CancelHandler(func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() {
			// jsonrpc2's CancelHandler watches the request context from a
			// goroutine; only a detached (Async) request context stays valid.
			jsonrpc2.Async(ctx)
		}
		return h(ctx, req)
	}))
	c.Server = protocol.ServerDispatcher(c.Conn)
	return c
}

// Disconnect closes the connection (both pipes) without a word to the server.
func (c *Client) Disconnect() {
	c.cancel()
	c.Conn.Close()
}

// Close shuts the server down as an editor does (shutdown, exit, stdin
// closed) and waits for it to exit; after 20 s it is killed. Close, CloseStdin,
// Kill, WaitExit, Exited and ExitCode are for a server process (Start).
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(c.Ctx, 10*time.Second)
	defer cancel()
	_ = c.Server.Shutdown(ctx)
	_ = c.Server.Exit(ctx)
	return c.CloseStdin(20 * time.Second)
}

// CloseStdin closes the server's stdin without a shutdown (a client that
// vanished) and waits up to timeout for it to exit, then kills it. The error
// says whether it had to be killed.
func (c *Client) CloseStdin(timeout time.Duration) error {
	c.stdin.Close()
	var err error
	if !c.WaitExit(timeout) {
		_ = c.Cmd.Process.Kill()
		<-c.waited
		err = fmt.Errorf("the server did not exit within %v of its stdin closing", timeout)
	}
	c.Disconnect()
	return err
}

// Kill sends SIGKILL to the server (and nothing else) and waits for it.
func (c *Client) Kill() {
	_ = c.Cmd.Process.Signal(syscall.SIGKILL)
	<-c.waited
	c.Disconnect()
}

// ExitCode is the server's exit code once it has exited (-1 if a signal ended
// it), and the error of waiting for it if that was not its exit status.
func (c *Client) ExitCode() (int, error) {
	<-c.waited
	var ee *exec.ExitError
	if errors.As(c.exit, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, c.exit
}

// WaitExit waits up to timeout for the server to exit and says whether it did.
func (c *Client) WaitExit(timeout time.Duration) bool {
	select {
	case <-c.waited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Exited says whether the server has exited, and with what.
func (c *Client) Exited() (bool, error) {
	select {
	case <-c.waited:
		return true, c.exit
	default:
		return false, nil
	}
}

// Initialize sends initialize, with the workspace folder dir and opts as
// initializationOptions (fuzzls's settings: cacheDir, parallel, …), then
// initialized. The client announces what VS Code does of what fuzzls uses:
// progress, applyEdit, code lens refresh, workspace edits that create files.
func (c *Client) Initialize(dir string, opts any) error {
	_, err := c.InitializeWith(dir, opts, nil)
	return err
}

// InitializeWith is Initialize with the client capabilities changed by edit
// (if not nil), returning the server's answer. No dir is no workspace folder;
// no opts (nil) no initializationOptions.
func (c *Client) InitializeWith(dir string, opts any, edit func(*protocol.ClientCapabilities)) (*protocol.InitializeResult, error) {
	yes := true
	params := &protocol.InitializeParams{
		Capabilities: protocol.ClientCapabilities{
			Window: &protocol.WindowClientCapabilities{WorkDoneProgress: &yes},
			Workspace: &protocol.WorkspaceClientCapabilities{
				ApplyEdit: &yes,
				CodeLens:  &protocol.CodeLensWorkspaceClientCapabilities{RefreshSupport: &yes},
				WorkspaceEdit: &protocol.WorkspaceEditClientCapabilities{
					DocumentChanges:    &yes,
					ResourceOperations: []protocol.ResourceOperationKind{protocol.ResourceOperationKindCreate},
				},
			},
		},
	}
	if edit != nil {
		edit(&params.Capabilities)
	}
	if dir != "" {
		params.WorkspaceFolders = protocol.NewNullable([]protocol.WorkspaceFolder{{URI: uri.File(dir), Name: filepath.Base(dir)}})
	}
	if opts != nil {
		raw, err := json.Marshal(opts)
		if err != nil {
			return nil, err
		}
		params.InitializationOptions = raw
	}
	res, err := c.Server.Initialize(c.Ctx, params)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.Server.Initialized(c.Ctx, &protocol.InitializedParams{}); err != nil {
		return nil, fmt.Errorf("initialized: %w", err)
	}
	return res, nil
}

// Command runs workspace/executeCommand with arg (if not nil) as its one
// argument and returns the result.
func (c *Client) Command(name string, arg any) (json.RawMessage, error) {
	return c.CommandContext(c.Ctx, name, arg)
}

// CommandContext is Command with a context of the caller's (a timeout).
func (c *Client) CommandContext(ctx context.Context, name string, arg any) (json.RawMessage, error) {
	params := &protocol.ExecuteCommandParams{Command: name}
	if arg != nil {
		raw, err := json.Marshal(arg)
		if err != nil {
			return nil, err
		}
		params.Arguments = []protocol.LSPAny{raw}
	}
	var res json.RawMessage
	if err := protocol.Call(ctx, c.Conn, protocol.MethodWorkspaceExecuteCommand, params, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// SessionStatus asks fuzzls.status.
func (c *Client) SessionStatus() (fproto.StatusParams, error) {
	var st fproto.StatusParams
	raw, err := c.Command(fproto.CommandStatus, nil)
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	return st, err
}

// StateNow is the state of the one session, asked with fuzzls.status ("" if
// there is not exactly one).
func (c *Client) StateNow() (string, error) {
	st, err := c.SessionStatus()
	if err != nil || len(st.Sessions) != 1 {
		return "", err
	}
	return st.Sessions[0].State, nil
}

// LastState is the state in the last fuzzls/status notification, if it has
// exactly one session (to be called with the client locked: in Await's
// condition or Locked).
func (c *Client) LastState() string {
	if len(c.Status) == 0 || len(c.Status[len(c.Status)-1].V.Sessions) != 1 {
		return ""
	}
	return c.Status[len(c.Status)-1].V.Sessions[0].State
}

// LastDiags is the last set of diagnostics published for u (to be called with
// the client locked).
func (c *Client) LastDiags(u uri.URI) []protocol.Diagnostic {
	for i := len(c.Diags) - 1; i >= 0; i-- {
		if c.Diags[i].URI == u {
			return c.Diags[i].Diags
		}
	}
	return nil
}

// Values is what arrived, without the times.
func Values[T any](ts []Timed[T]) []T {
	vs := make([]T, len(ts))
	for i, t := range ts {
		vs[i] = t.V
	}
	return vs
}

// Open sends textDocument/didOpen of path with text, version 1.
func (c *Client) Open(path, text string) error {
	return c.Server.DidOpen(c.Ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: uri.File(path), LanguageID: "go", Version: 1, Text: text,
	}})
}

// Change sends textDocument/didChange: the whole new text.
func (c *Client) Change(path string, version int32, text string) error {
	return c.Server.DidChange(c.Ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(path)}, Version: version},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: text}},
	})
}

// WriteFile writes text to path as editors save: into a temporary file beside
// it, renamed into place.
func WriteFile(path, text string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Save sends textDocument/didSave.
func (c *Client) Save(path string) error {
	return c.Server.DidSave(c.Ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}})
}

// CPU returns the server's CPU time (user + system, its own threads) over span.
func (c *Client) CPU(span time.Duration) (time.Duration, error) {
	before, err := proc.CPU(c.Cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	time.Sleep(span)
	after, err := proc.CPU(c.Cmd.Process.Pid)
	return after - before, err
}

// Locked runs f with the client's records locked.
func (c *Client) Locked(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

func (c *Client) update(f func()) {
	c.mu.Lock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// Await waits until cond (called with the client locked, whenever something
// arrives) holds, for at most timeout.
func (c *Client) Await(what string, timeout time.Duration, cond func() bool) error {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		ok := cond()
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// The client's side of LSP: record with the time of arrival.

func (c *Client) PublishDiagnostics(ctx context.Context, p *protocol.PublishDiagnosticsParams) error {
	t := time.Now()
	c.update(func() { c.Diags = append(c.Diags, DiagEvent{t, p.URI, p.Diagnostics}) })
	return nil
}

func (c *Client) ShowMessage(ctx context.Context, p *protocol.ShowMessageParams) error {
	t := time.Now()
	c.update(func() { c.ShowMessages = append(c.ShowMessages, Timed[protocol.ShowMessageParams]{t, *p}) })
	return nil
}

func (c *Client) LogMessage(ctx context.Context, p *protocol.LogMessageParams) error {
	t := time.Now()
	c.update(func() { c.Logs = append(c.Logs, Timed[string]{t, p.Message}) })
	return nil
}

func (c *Client) WorkDoneProgressCreate(ctx context.Context, p *protocol.WorkDoneProgressCreateParams) error {
	return nil
}

func (c *Client) CodeLensRefresh(ctx context.Context) error {
	c.update(func() { c.Refreshes++ })
	return nil
}

func (c *Client) RegisterCapability(ctx context.Context, p *protocol.RegistrationParams) error {
	c.update(func() { c.Registered = append(c.Registered, p.Registrations...) })
	return nil
}

// ApplyEdit records the edit and answers as AcceptEdits says; it writes
// nothing.
func (c *Client) ApplyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	var ok bool
	c.update(func() {
		c.Applied = append(c.Applied, p.Edit)
		ok = c.AcceptEdits
	})
	return &protocol.ApplyWorkspaceEditResult{Applied: ok}, nil
}

func (c *Client) Progress(ctx context.Context, p *protocol.ProgressParams) error {
	t := time.Now()
	var v struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(p.Value, &v)
	s := v.Kind + ":" + v.Message
	if v.Kind == "begin" {
		s = "begin:" + v.Title
	}
	c.update(func() { c.ProgressNotes = append(c.ProgressNotes, Timed[string]{t, s}) })
	return nil
}

// custom receives fuzzls's own notifications.
func (c *Client) custom(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	t := time.Now()
	c.update(func() {
		if c.NoteBytes == nil {
			c.NoteBytes = map[string][]int{}
		}
		c.NoteBytes[req.Method()] = append(c.NoteBytes[req.Method()], len(req.Params()))
	})
	switch req.Method() {
	case fproto.MethodCoverage:
		var p fproto.CoverageParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, err
		}
		c.update(func() { c.Coverage = append(c.Coverage, Timed[fproto.CoverageParams]{t, p}) })
		return nil, nil
	case fproto.MethodStatus:
		var p fproto.StatusParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, err
		}
		c.update(func() { c.Status = append(c.Status, Timed[fproto.StatusParams]{t, p}) })
		return nil, nil
	}
	return jsonrpc2.MethodNotFoundHandler(ctx, req)
}

// startPiped starts cmd with pipes on its stdin and stdout.
func startPiped(cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	return stdin, stdout, cmd.Start()
}

type pipes struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipes) Close() error { return errors.Join(p.ReadCloser.Close(), p.WriteCloser.Close()) }

// codec is go.lsp.dev/protocol's union-aware codec, raw messages passed through.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(jsonrpc2.RawMessage); ok {
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

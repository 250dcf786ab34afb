package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fuzzls.dev/fuzzls/internal/testws"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// testClient is an LSP client built on go.lsp.dev/protocol's client side. It
// records what the server sends; await waits for a condition on it.
type testClient struct {
	protocol.UnimplementedClient

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every update
	diags      map[string][]protocol.Diagnostic
	messages   []protocol.ShowMessageParams
	logs       []string
	coverage   []fproto.CoverageParams
	status     []fproto.StatusParams
	progress   []string // "begin:title", "end:message"
	refreshes  int
	applied    []protocol.WorkspaceEdit
	registered []protocol.Registration
}

func newTestClient() *testClient {
	return &testClient{changed: make(chan struct{}), diags: map[string][]protocol.Diagnostic{}}
}

func (c *testClient) update(f func()) {
	c.mu.Lock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *testClient) PublishDiagnostics(ctx context.Context, p *protocol.PublishDiagnosticsParams) error {
	c.update(func() { c.diags[string(p.URI)] = p.Diagnostics })
	return nil
}

func (c *testClient) ShowMessage(ctx context.Context, p *protocol.ShowMessageParams) error {
	c.update(func() { c.messages = append(c.messages, *p) })
	return nil
}

func (c *testClient) LogMessage(ctx context.Context, p *protocol.LogMessageParams) error {
	c.update(func() { c.logs = append(c.logs, p.Message) })
	return nil
}

func (c *testClient) WorkDoneProgressCreate(ctx context.Context, p *protocol.WorkDoneProgressCreateParams) error {
	return nil
}

func (c *testClient) Progress(ctx context.Context, p *protocol.ProgressParams) error {
	var v struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(p.Value, &v)
	c.update(func() {
		if v.Kind == "begin" {
			c.progress = append(c.progress, "begin:"+v.Title)
		} else {
			c.progress = append(c.progress, v.Kind+":"+v.Message)
		}
	})
	return nil
}

func (c *testClient) CodeLensRefresh(ctx context.Context) error {
	c.update(func() { c.refreshes++ })
	return nil
}

func (c *testClient) RegisterCapability(ctx context.Context, p *protocol.RegistrationParams) error {
	c.update(func() { c.registered = append(c.registered, p.Registrations...) })
	return nil
}

func (c *testClient) ApplyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	c.update(func() { c.applied = append(c.applied, p.Edit) })
	return &protocol.ApplyWorkspaceEditResult{Applied: true}, nil
}

// custom receives fuzzls's own notifications, which protocol.Client does not
// know.
func (c *testClient) custom(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	switch req.Method() {
	case fproto.MethodCoverage:
		var p fproto.CoverageParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, err
		}
		c.update(func() { c.coverage = append(c.coverage, p) })
		return nil, nil
	case fproto.MethodStatus:
		var p fproto.StatusParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, err
		}
		c.update(func() { c.status = append(c.status, p) })
		return nil, nil
	}
	return jsonrpc2.MethodNotFoundHandler(ctx, req)
}

// await waits until cond (called with c.mu held) holds.
func (c *testClient) await(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		ok := cond()
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// lspConn is a client connection to a server.
type lspConn struct {
	t      *testing.T
	ctx    context.Context
	conn   jsonrpc2.Conn
	server protocol.Server
	client *testClient
}

// connect builds the client side over r (from the server) and w (to it).
// Notifications run inline on the read loop so the client sees them in order.
func connect(t *testing.T, ctx context.Context, r io.ReadCloser, w io.WriteCloser) *lspConn {
	tc := newTestClient()
	conn := jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(pipeRWC{r, w}), jsonrpc2.WithCodec(lspCodec{}))
	h := protocol.ClientHandler(tc, tc.custom)
	conn.Go(ctx, protocol.CancelHandler(func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() {
			// jsonrpc2's CancelHandler watches the request context from a
			// goroutine; only a detached (Async) request context stays valid.
			jsonrpc2.Async(ctx)
		}
		return h(ctx, req)
	}))
	return &lspConn{t: t, ctx: ctx, conn: conn, server: protocol.ServerDispatcher(conn), client: tc}
}

type pipeRWC struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipeRWC) Close() error { return errors.Join(p.ReadCloser.Close(), p.WriteCloser.Close()) }

// inProcess runs Serve over io.Pipes and connects a client to it.
type inProcess struct {
	*lspConn
	toServer *io.PipeWriter
	done     chan error    // Serve's result, for the test
	finished chan struct{} // closed when Serve returned
}

func startInProcess(t *testing.T, opts Options) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		err := Serve(ctx, sr, sw, opts)
		sw.Close()
		done <- err
		close(finished)
	}()
	p := &inProcess{lspConn: connect(t, ctx, cr, cw), toServer: cw, done: done, finished: finished}
	t.Cleanup(func() {
		cancel()
		cw.Close()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return")
		}
		p.conn.Close()
	})
	return p
}

// initialize sends initialize (workspace folder dir) and initialized.
func (c *lspConn) initialize(dir string, initOpts any) *protocol.InitializeResult {
	c.t.Helper()
	return c.initializeWith(dir, initOpts, nil)
}

// initializeWith is initialize with the client capabilities changed by edit.
func (c *lspConn) initializeWith(dir string, initOpts any, edit func(*protocol.ClientCapabilities)) *protocol.InitializeResult {
	c.t.Helper()
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
	if initOpts != nil {
		raw, err := json.Marshal(initOpts)
		if err != nil {
			c.t.Fatal(err)
		}
		params.InitializationOptions = raw
	}
	res, err := c.server.Initialize(c.ctx, params)
	if err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	if err := c.server.Initialized(c.ctx, &protocol.InitializedParams{}); err != nil {
		c.t.Fatalf("initialized: %v", err)
	}
	return res
}

// command runs workspace/executeCommand with one argument (nil: none).
func (c *lspConn) command(name string, arg any) (json.RawMessage, error) {
	params := &protocol.ExecuteCommandParams{Command: name}
	if arg != nil {
		raw, err := json.Marshal(arg)
		if err != nil {
			c.t.Fatal(err)
		}
		params.Arguments = []protocol.LSPAny{raw}
	}
	var res json.RawMessage
	err := protocol.Call(c.ctx, c.conn, protocol.MethodWorkspaceExecuteCommand, params, &res)
	return res, err
}

func (c *lspConn) open(path string) {
	c.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatal(err)
	}
	c.openText(path, string(data))
}

func (c *lspConn) openText(path, text string) {
	c.t.Helper()
	err := c.server.DidOpen(c.ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: uri.File(path), LanguageID: "go", Version: 1, Text: text,
	}})
	if err != nil {
		c.t.Fatal(err)
	}
}

// status asks for fuzzls.status; it also proves the server answers.
func (c *lspConn) status() fproto.StatusParams {
	c.t.Helper()
	raw, err := c.command(fproto.CommandStatus, nil)
	if err != nil {
		c.t.Fatalf("fuzzls.status: %v", err)
	}
	var st fproto.StatusParams
	if err := json.Unmarshal(raw, &st); err != nil {
		c.t.Fatalf("fuzzls.status result %s: %v", raw, err)
	}
	return st
}

// copyDir copies the example workspace src into a scratch directory the test may write.
func copyDir(t *testing.T, src string) string { return testws.Copy(t, src) }

// lineOf returns the 1-based line of the first line of path containing s.
func lineOf(t *testing.T, path, s string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%q not in %s", s, path)
	return 0
}

func rpcCode(err error) jsonrpc2.Code {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

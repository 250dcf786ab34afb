package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// lspConn is a test's client of a server (in process, or the binary's):
// internal/lspclient's, its helpers failing the test on an error. It accepts
// the workspace edits the server asks to apply (writing nothing).
type lspConn struct {
	*lspclient.Client
	t *testing.T
}

func newConn(t *testing.T, c *lspclient.Client) *lspConn {
	c.AcceptEdits = true
	return &lspConn{Client: c, t: t}
}

// await waits until cond (called with the client locked) holds.
func (c *lspConn) await(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if err := c.Await(what, timeout, cond); err != nil {
		t.Fatal(err)
	}
}

// What the server sent, without the times of arrival (c locked: in await's
// condition or Locked).
func (c *lspConn) diags(u string) []protocol.Diagnostic   { return c.LastDiags(uri.URI(u)) }
func (c *lspConn) coverage() []fproto.CoverageParams      { return lspclient.Values(c.Coverage) }
func (c *lspConn) statuses() []fproto.StatusParams        { return lspclient.Values(c.Status) }
func (c *lspConn) progress() []string                     { return lspclient.Values(c.ProgressNotes) }
func (c *lspConn) messages() []protocol.ShowMessageParams { return lspclient.Values(c.ShowMessages) }
func (c *lspConn) logs() []string                         { return lspclient.Values(c.Logs) }

func (c *lspConn) statusCount() (n int) { c.Locked(func() { n = len(c.Status) }); return n }

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
	p := &inProcess{lspConn: newConn(t, lspclient.Connect(cr, cw)), toServer: cw, done: done, finished: finished}
	t.Cleanup(func() {
		cancel()
		cw.Close()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return")
		}
		p.Disconnect()
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
	res, err := c.InitializeWith(dir, initOpts, edit)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

func (c *lspConn) open(path string) {
	c.t.Helper()
	c.openText(path, mustRead(c.t, path))
}

func (c *lspConn) openText(path, text string) {
	c.t.Helper()
	if err := c.Open(path, text); err != nil {
		c.t.Fatal(err)
	}
}

// status asks for fuzzls.status; it also proves the server answers.
func (c *lspConn) status() fproto.StatusParams {
	c.t.Helper()
	st, err := c.SessionStatus()
	if err != nil {
		c.t.Fatalf("fuzzls.status: %v", err)
	}
	return st
}

// copyDir copies the example workspace src into a scratch directory the test may write.
func copyDir(t *testing.T, src string) string { return testws.Copy(t, src) }

// lineOf returns the 1-based line of the first line of path containing s.
func lineOf(t *testing.T, path, s string) int { return testws.Line(t, path, s) }

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

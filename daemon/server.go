package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/daemon/gentest"
	"fuzzls.dev/fuzzls/engine"
)

// Options configure Serve. The zero value is what `fuzzls serve` uses.
type Options struct {
	// Log receives the daemon's own log lines (the client also gets them as
	// window/logMessage). nil discards.
	Log io.Writer

	// Version is reported in serverInfo.
	Version string

	// EnableTestCommands adds commands that exist only for tests of the
	// transport: "fuzzls.test.sleep" ([{"ms": N}]) waits N milliseconds or until
	// cancelled, and "fuzzls.test.panic" panics in its handler.
	EnableTestCommands bool

	// BatchDelay is how long the file watcher waits for a burst of changes to
	// settle before rebuilding; 0 means 250ms (enough to merge an editor's
	// didSave with the file events of the same save).
	BatchDelay time.Duration

	// newEngine and discover replace the engine in this package's tests.
	newEngine func(engine.Options, func(engine.Event)) fuzzEngine
	discover  func(ctx context.Context, flags engine.BuildFlags, dir string, patterns ...string) ([]engine.Target, error)

	// newFSWatcher replaces fsnotify.NewWatcher in this package's tests, to
	// make watching fail as it does when the inotify limits are reached.
	newFSWatcher func() (*fsnotify.Watcher, error)

	// watchBackend replaces this OS's fsnotify backend in this package's
	// tests (backendKqueue: macOS's behaviour on Linux).
	watchBackend string

	// watchBudget replaces the number of directories the daemon may watch
	// with inotify (watchBudget's) in this package's tests.
	watchBudget int

	// started is given the server before it reads its input, so that this
	// package's tests can look at its state.
	started func(*server)
}

// Test-only command names (see Options.EnableTestCommands).
const (
	commandTestSleep = "fuzzls.test.sleep"
	commandTestPanic = "fuzzls.test.panic"
)

// exitGrace bounds how long Serve waits for the connection to wind down after
// exit or end of input; a read blocked on a terminal or pipe that Close cannot
// interrupt must not keep the process alive.
const exitGrace = 500 * time.Millisecond

// gitHoldMax bounds how long file changes wait for git to let go of its index
// lock: a checkout of thousands of files takes seconds; a lock older than
// this was left by a git that died.
const gitHoldMax = 30 * time.Second

// statusInterval is the shortest time between two fuzzls/status sent for the
// sessions' stats: the counters move smoothly at two a second, and a client's
// view redraws no more often.
const statusInterval = 500 * time.Millisecond

// Serve runs the language server over in and out until the client sends exit,
// in reaches end of file, or ctx is done. Before it returns it stops every
// session and waits until the engine's worker processes are gone.
//
// Serve returns nil after a clean shutdown (shutdown then exit, or end of input
// after shutdown), ErrNoShutdown if the client exited or went away
// without shutdown, and the transport error otherwise.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.newEngine == nil {
		opts.newEngine = newRealEngine
	}
	if opts.discover == nil {
		opts.discover = engine.Discover
	}
	if opts.BatchDelay == 0 {
		opts.BatchDelay = 250 * time.Millisecond
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	s := newServer(ctx, opts)
	if opts.started != nil {
		opts.started(s)
	}
	stream := newTolerantStream(jsonrpc2.NewHeaderStream(readWriteCloser{in, out}), s.logf, cancel)
	s.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(lspCodec{}))
	s.client = protocol.ClientDispatcher(s.conn)
	s.conn.Go(ctx, s.handler())
	s.goSafe("events", s.eventLoop)

	select {
	case <-s.exited:
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	cancel() // unblocks handlers waiting on their contexts, and interrupts the type-checking loads
	s.stopAll()
	s.gentests.Wait() // their go commands gone
	closed := make(chan struct{})
	go func() {
		_ = s.conn.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(exitGrace):
	}

	s.mu.Lock()
	shutdown := s.shutdown
	s.mu.Unlock()
	if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) && !shutdown {
		return fmt.Errorf("fuzzls serve: %w", err)
	}
	if !shutdown {
		return ErrNoShutdown
	}
	return nil
}

// ErrNoShutdown is returned by Serve when the client left without a shutdown
// request; LSP asks the server to exit with status 1 then.
var ErrNoShutdown = errors.New("fuzzls serve: client exited without shutdown")

// handler is the connection's handler chain:
//
//	$/cancelRequest  →  order (notifications inline, requests async)  →  recover  →  dispatch
//
// Notifications run on the read loop in wire order (didChange must be applied
// in order) and must not wait for the client; requests are released with
// jsonrpc2.Async so a slow one does not hold up the others. A panic or an error
// from a notification handler is logged and swallowed: jsonrpc2 would end the
// connection for either.
func (s *server) handler() jsonrpc2.Handler {
	dispatch := protocol.ServerHandler(s, jsonrpc2.MethodNotFoundHandler)
	h := func(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
		isCall := req.IsCall()
		method := strings.Clone(req.Method())
		if isCall {
			jsonrpc2.Async(ctx)
		}
		defer func() {
			// The one recovery of a request's path: a daemon must not die on one
			// bad request (the editor would lose every session with it), so a
			// handler's panic, ours or the engine's, is logged and answered with
			// an internal error.
			if r := recover(); r != nil {
				s.logf(protocol.MessageTypeError, "panic in %s handler: %v\n%s", method, r, debug.Stack())
				result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "fuzzls: %s handler panicked: %v", method, r)
			}
			if !isCall {
				if err != nil {
					s.logf(protocol.MessageTypeWarning, "%s: %v", method, err)
				}
				result, err = nil, nil
			}
		}()
		result, err = dispatch(ctx, req)
		return result, paramsError(method, err)
	}
	return protocol.CancelHandler(h)
}

// clientMethods are the methods LSP defines from client to server.
var clientMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, info := range protocol.Methods {
		if info.Direction != protocol.DirectionServerToClient {
			m[info.Method] = true
		}
	}
	return m
}()

// paramsError corrects the code of a dispatch error: go.lsp.dev/protocol answers
// params it cannot decode with a parse error, though the message itself parsed
// (the transport answers what does not). For an LSP method that is invalid
// params; any other method, whose params are decoded before it is looked up, is
// not found.
func paramsError(method string, err error) error {
	if !errors.Is(err, jsonrpc2.ErrParse) {
		return err
	}
	if clientMethods[method] {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params for %s: %v", method, err)
	}
	return jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
}

// goSafe runs f on its own goroutine, recovering and logging a panic.
func (s *server) goSafe(name string, f func()) {
	go func() {
		defer s.recoverLog(name)
		f()
	}()
}

// safe wraps f to recover and log a panic: for functions run by timers.
func (s *server) safe(name string, f func()) func() {
	return func() {
		defer s.recoverLog(name)
		f()
	}
}

func (s *server) recoverLog(name string) {
	if r := recover(); r != nil {
		s.logf(protocol.MessageTypeError, "panic in %s: %v\n%s", name, r, debug.Stack())
	}
}

// logf writes to Options.Log and sends window/logMessage.
func (s *server) logf(typ protocol.MessageType, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.opts.Log != nil {
		s.logMu.Lock()
		fmt.Fprintf(s.opts.Log, "%s fuzzls: %s\n", time.Now().Format("15:04:05.000"), msg)
		s.logMu.Unlock()
	}
	if c := s.client; c != nil {
		_ = c.LogMessage(s.ctx, &protocol.LogMessageParams{Type: typ, Message: msg})
	}
}

// showMessage sends window/showMessage.
func (s *server) showMessage(typ protocol.MessageType, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.logf(typ, "%s", msg)
	_ = s.client.ShowMessage(s.ctx, &protocol.ShowMessageParams{Type: typ, Message: msg})
}

// notify sends one of fuzzls's own notifications.
func (s *server) notify(method string, params any) {
	if err := s.conn.Notify(s.ctx, method, params); err != nil && s.ctx.Err() == nil {
		s.logf(protocol.MessageTypeWarning, "%s: %v", method, err)
	}
}

// readWriteCloser joins Serve's two streams for jsonrpc2.
type readWriteCloser struct {
	io.Reader
	io.Writer
}

func (rw readWriteCloser) Close() error {
	var errs []error
	if c, ok := rw.Reader.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if c, ok := rw.Writer.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// lspCodec marshals payloads with go.lsp.dev/protocol's union-aware codec, as
// protocol.NewServer does (its codec is unexported); raw messages pass through.
type lspCodec struct{}

func (lspCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case *jsonrpc2.RawMessage:
		if m == nil || *m == nil {
			return []byte("null"), nil
		}
		return *m, nil
	}
	return protocol.Marshal(v)
}

func (lspCodec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// server implements protocol.Server. Its fields are described in sessions.go,
// next to the code that keeps them.
type server struct {
	protocol.UnimplementedServer

	opts   Options
	ctx    context.Context // lives until Serve returns
	conn   jsonrpc2.Conn
	client protocol.Client

	exitOnce sync.Once
	exited   chan struct{}

	logMu sync.Mutex

	clientWatchOnce sync.Once // registerClientWatch

	state
}

func newServer(ctx context.Context, opts Options) *server {
	s := &server{opts: opts, ctx: ctx, exited: make(chan struct{})}
	s.state.init()
	s.gentests = gentest.NewLoader(ctx)
	s.lensRefresh = newThrottle(time.Second, s.safe("codeLens refresh", s.refreshCodeLens))
	s.statsStatus = newThrottle(statusInterval, s.safe("status", s.sendStatus))
	s.changes = newBatcher(opts.BatchDelay, 4*time.Second, func(paths []string) {
		defer s.recoverLog("rebuild")
		s.filesChanged(paths)
	})
	s.changes.hold, s.changes.maxHold = s.gitBusy, gitHoldMax
	return s
}

// Request answers every non-standard method: "method not found" for requests
// (a notification's error is dropped by the handler chain).
func (s *server) Request(ctx context.Context, method string, params any) (any, error) {
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
}

package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	fproto "fuzzls.dev/fuzzls/protocol"
)

func TestInitializeShutdownExit(t *testing.T) {
	p := startInProcess(t, Options{Version: "test"})
	res := p.initialize(t.TempDir(), map[string]any{"autoStart": "off"})
	cmds := res.Capabilities.ExecuteCommandProvider.Commands
	for _, c := range []string{fproto.CommandStart, fproto.CommandStop, fproto.CommandAddToCorpus, fproto.CommandStatus} {
		if !slices.Contains(cmds, c) {
			t.Errorf("executeCommandProvider lacks %s: %v", c, cmds)
		}
	}
	if slices.Contains(cmds, commandTestSleep) {
		t.Errorf("test commands advertised without EnableTestCommands")
	}
	if res.Capabilities.CodeLensProvider == nil || res.Capabilities.HoverProvider == nil {
		t.Errorf("capabilities lack code lens or hover: %+v", res.Capabilities)
	}
	if v, _ := res.ServerInfo.Version.Get(); res.ServerInfo.Name != "fuzzls" || v != "test" {
		t.Errorf("serverInfo = %+v", res.ServerInfo)
	}
	if err := p.Server.Shutdown(p.Ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := p.Server.Exit(p.Ctx); err != nil {
		t.Fatalf("exit: %v", err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("Serve after shutdown+exit = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after exit")
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	p := startInProcess(t, Options{})
	p.initialize(t.TempDir(), nil)
	_ = p.Server.Exit(p.Ctx)
	select {
	case err := <-p.done:
		if !errors.Is(err, ErrNoShutdown) {
			t.Fatalf("Serve = %v, want ErrNoShutdown", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after exit")
	}
}

func TestUnknownRequestAndNotification(t *testing.T) {
	p := startInProcess(t, Options{})
	p.initialize(t.TempDir(), nil)

	_, err := p.Conn.Call(p.Ctx, "fuzzls/noSuchMethod", map[string]int{"x": 1}, nil)
	if rpcCode(err) != jsonrpc2.MethodNotFound {
		t.Fatalf("unknown request: err = %v (code %d), want method not found", err, rpcCode(err))
	}
	// A standard request the daemon does not implement.
	_, err = p.Server.Completion(p.Ctx, &protocol.CompletionParams{})
	if rpcCode(err) != jsonrpc2.MethodNotFound {
		t.Fatalf("textDocument/completion: err = %v, want method not found", err)
	}
	// Unknown notifications, a standard one the daemon ignores, and one with
	// params of the wrong shape: all dropped, none ends the connection.
	for _, n := range []struct {
		method string
		params any
	}{
		{"fuzzls/noSuchNotification", map[string]int{"x": 1}},
		{"$/someExtension", nil},
		{protocol.MethodTextDocumentDidOpen, []int{1, 2, 3}},
		{protocol.MethodTextDocumentDidChange, map[string]any{"textDocument": map[string]any{"uri": "file:///nowhere.go"}}},
		{protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"autoStart": "sometimes"}}},
	} {
		if err := p.Conn.Notify(p.Ctx, n.method, n.params); err != nil {
			t.Fatalf("notify %s: %v", n.method, err)
		}
	}
	p.status() // still answering
}

func TestHandlerPanicIsRecovered(t *testing.T) {
	p := startInProcess(t, Options{EnableTestCommands: true})
	p.initialize(t.TempDir(), nil)
	_, err := p.Command(commandTestPanic, nil)
	if rpcCode(err) != jsonrpc2.InternalError {
		t.Fatalf("panicking command: err = %v, want internal error", err)
	}
	p.lspConn.await(t, "a logMessage about the panic", 5*time.Second, func() bool {
		return slices.ContainsFunc(p.lspConn.logs(), func(s string) bool { return strings.Contains(s, "panic") })
	})
	p.status()
}

func TestCancelWithClientLibrary(t *testing.T) {
	p := startInProcess(t, Options{EnableTestCommands: true})
	p.initialize(t.TempDir(), nil)
	ctx, cancel := context.WithTimeout(p.Ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := protocol.Call(ctx, p.Conn, protocol.MethodWorkspaceExecuteCommand,
		&protocol.ExecuteCommandParams{Command: commandTestSleep, Arguments: []protocol.LSPAny{protocol.LSPAny(`{"ms":30000}`)}}, nil)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled call: err = %v after %v", err, time.Since(start))
	}
	p.status()
}

func TestSlowRequestDoesNotBlockOthers(t *testing.T) {
	p := startInProcess(t, Options{EnableTestCommands: true})
	p.initialize(t.TempDir(), nil)
	slow := make(chan error, 1)
	go func() {
		_, err := p.Command(commandTestSleep, map[string]int{"ms": 3000})
		slow <- err
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	p.status()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("fuzzls.status took %v behind a slow request", d)
	}
	select {
	case err := <-slow:
		t.Fatalf("slow request finished early: %v", err)
	default:
	}
	if err := <-slow; err != nil {
		t.Fatalf("slow request: %v", err)
	}
}

func TestPathArgumentsOutsideWorkspaceRefused(t *testing.T) {
	p := startInProcess(t, Options{})
	dir := t.TempDir()
	p.initialize(dir, nil)
	for _, u := range []string{
		"file:///etc/x_test.go",
		string(uri.File(filepath.Join(dir, "..", "other", "x_test.go"))),
		"file://" + dir + "/../x_test.go",
		"http://example.com/x_test.go",
	} {
		for _, cmd := range []string{fproto.CommandStart, fproto.CommandStop, fproto.CommandSeedCorpus} {
			_, err := p.Command(cmd, fproto.TargetArgs{URI: u, Target: "FuzzX"})
			if rpcCode(err) != jsonrpc2.InvalidParams {
				t.Errorf("%s %s: err = %v, want invalid params (refused)", cmd, u, err)
			}
		}
	}
	// Inside the workspace the argument is accepted (and stopping nothing is fine).
	if _, err := p.Command(fproto.CommandStop, fproto.TargetArgs{URI: string(uri.File(filepath.Join(dir, "a_test.go"))), Target: "FuzzX"}); err != nil {
		t.Errorf("stop inside the workspace: %v", err)
	}
}

// The client goes away without shutdown while a session fuzzes: Serve returns
// ErrNoShutdown, and the worker processes it started are gone.
func TestExitWhenInputCloses(t *testing.T) {
	w := startCalc(t, Options{}, nil)
	before := proc.Descendants(os.Getpid())
	w.start(t)
	w.awaitState(t, 0, fproto.StateFuzzing)
	var workers []int
	for _, pid := range proc.Descendants(os.Getpid()) {
		if !slices.Contains(before, pid) {
			workers = append(workers, pid)
		}
	}
	if len(workers) == 0 {
		t.Fatal("no worker processes while fuzzing")
	}
	w.toServer.Close() // the client goes away
	select {
	case err := <-w.done:
		if !errors.Is(err, ErrNoShutdown) {
			t.Errorf("Serve = %v, want ErrNoShutdown", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return when its input closed")
	}
	for _, pid := range workers {
		if proc.Alive(pid) {
			t.Errorf("worker process %d still running after Serve returned", pid)
		}
	}
}

// rawWire talks to an in-process server with hand-written frames.
type rawWire struct{ *lspclient.Raw }

func startRaw(t *testing.T, opts Options) *rawWire {
	ctx, cancel := context.WithCancel(context.Background())
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, sr, sw, opts); sw.Close() }()
	rw := &rawWire{lspclient.ConnectRaw(cr, cw)}
	t.Cleanup(func() {
		cancel()
		_ = rw.Close(0)
		cr.Close()
		<-done
	})
	return rw
}

func (rw *rawWire) send(t *testing.T, body string) {
	t.Helper()
	if err := rw.Send(body); err != nil {
		t.Fatal(err)
	}
}

// response waits for the response with the given id (JSON text), skipping
// notifications and other responses.
func (rw *rawWire) response(t *testing.T, id string, timeout time.Duration) json.RawMessage {
	t.Helper()
	m, err := rw.Response(id, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func errorCode(m json.RawMessage) jsonrpc2.Code { return jsonrpc2.Code(lspclient.ErrorCode(m)) }

func TestCancelRequestNumericID(t *testing.T) {
	rw := startRaw(t, Options{EnableTestCommands: true})
	rw.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	rw.response(t, "1", 5*time.Second)
	rw.send(t, `{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	rw.send(t, `{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{"command":"fuzzls.test.sleep","arguments":[{"ms":30000}]}}`)
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	rw.send(t, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`)
	m := rw.response(t, "7", 5*time.Second)
	if code := errorCode(m); code != protocol.CodeRequestCancelled {
		t.Fatalf("cancelled request answered %s, want error %d", m, protocol.CodeRequestCancelled)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	// A string id works as well.
	rw.send(t, `{"jsonrpc":"2.0","id":"s8","method":"workspace/executeCommand","params":{"command":"fuzzls.test.sleep","arguments":[{"ms":30000}]}}`)
	time.Sleep(100 * time.Millisecond)
	rw.send(t, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"s8"}}`)
	if code := errorCode(rw.response(t, `"s8"`, 5*time.Second)); code != protocol.CodeRequestCancelled {
		t.Fatalf("string-id cancel: code %d", code)
	}
}

func TestMalformedJSONSurvives(t *testing.T) {
	rw := startRaw(t, Options{})
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{`, // truncated
		`this is not json`,
		`{"jsonrpc":"2.0","id":2,"method":"x","result":1}`, // a request and a response at once
		`[{"jsonrpc":"2.0","id":3,`,                        // broken batch
	} {
		rw.send(t, bad)
		m := rw.response(t, "null", 5*time.Second)
		if code := errorCode(m); code != jsonrpc2.ParseError && code != jsonrpc2.InvalidRequest {
			t.Errorf("%q answered %s, want a parse or invalid-request error", bad, m)
		}
	}
	rw.send(t, `{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	m := rw.response(t, "10", 5*time.Second)
	var res struct{ Result json.RawMessage }
	if json.Unmarshal(m, &res) != nil || len(res.Result) == 0 {
		t.Fatalf("initialize after malformed frames: %s", m)
	}
	rw.send(t, `{"jsonrpc":"2.0","id":11,"method":"shutdown"}`)
	rw.response(t, "11", 5*time.Second)
}

// TestErrorCodes: a well-formed message whose params do not fit its method is
// invalid params (-32602), an unknown method is method not found (-32601), with
// or without params; neither is a parse error (-32700), which means the JSON
// itself did not parse.
func TestErrorCodes(t *testing.T) {
	rw := startRaw(t, Options{})
	rw.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	rw.response(t, "1", 5*time.Second)
	rw.send(t, `{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	for i, tc := range []struct {
		msg  string
		want jsonrpc2.Code
	}{
		{`"method":"fuzzls/unknown"`, jsonrpc2.MethodNotFound},
		{`"method":"fuzzls/unknown","params":{"a":1}`, jsonrpc2.MethodNotFound},
		{`"method":"textDocument/hover","params":{"textDocument":7,"position":"x"}`, jsonrpc2.InvalidParams},
		{`"method":"workspace/executeCommand","params":{"command":["fuzzls.start"]}`, jsonrpc2.InvalidParams},
		{`"method":"textDocument/codeLens","params":[1,2]`, jsonrpc2.InvalidParams},
		{`"method":"textDocument/codeAction","params":{"range":"everything"}`, jsonrpc2.InvalidParams},
	} {
		id := strconv.Itoa(100 + i)
		rw.send(t, `{"jsonrpc":"2.0","id":`+id+`,`+tc.msg+`}`)
		if code := errorCode(rw.response(t, id, 5*time.Second)); code != tc.want {
			t.Errorf("%s: code %d, want %d", tc.msg, code, tc.want)
		}
	}
	rw.send(t, `{"jsonrpc":"2.0","id":11,"method":"shutdown"}`)
	rw.response(t, "11", 5*time.Second)
}

func TestSettings(t *testing.T) {
	def := fproto.DefaultSettings()
	with := func(change func(*fproto.Settings)) fproto.Settings {
		st := fproto.DefaultSettings()
		change(&st)
		return st
	}
	for _, tc := range []struct {
		desc, json string
		want       fproto.Settings
		timeout    time.Duration     // the engine's Timeout
		build      engine.BuildFlags // the engine's Build
		wantErr    bool
	}{
		{"empty", `{}`, def, 0, engine.BuildFlags{}, false},
		{"flat", `{"autoStart":"workspace","parallel":3,"keepFuzzing":false,"timeout":2.5,"rssLimitMB":512,"nice":0,"cacheDir":"/tmp/c","leaks":true}`,
			fproto.Settings{AutoStart: "workspace", Parallel: 3, KeepFuzzing: false, Timeout: "2.5s", RSSLimitMB: 512, Nice: 0, CacheDir: "/tmp/c", Leaks: true, BuildFlags: []string{}, Engine: fproto.EngineFuzzls},
			2500 * time.Millisecond, engine.BuildFlags{}, false},
		{"section", `{"fuzzls":{"autoStart":"openFiles","timeout":"1m","nice":19,"plateau":"5m"}}`,
			with(func(s *fproto.Settings) { s.AutoStart, s.Timeout, s.Nice, s.Plateau = "openFiles", "1m", 19, "5m" }), time.Minute, engine.BuildFlags{}, false},
		{"bad plateau", `{"plateau":"-5m","nice":3}`, with(func(s *fproto.Settings) { s.Nice = 3 }), 0, engine.BuildFlags{}, true},
		{"bad values keep the good ones", `{"autoStart":"always","parallel":-1,"rssLimitMB":100,"nice":20,"cacheDir":"rel"}`,
			with(func(s *fproto.Settings) { s.RSSLimitMB = 100 }), 0, engine.BuildFlags{}, true},
		{"engine", `{"engine":"gotest"}`, with(func(s *fproto.Settings) { s.Engine = fproto.EngineGoTest }), 0, engine.BuildFlags{}, false},
		{"bad engine", `{"engine":"afl","parallel":2}`, with(func(s *fproto.Settings) { s.Parallel = 2 }), 0, engine.BuildFlags{}, true},
		{"bad timeouts", `{"timeout":-1}`, def, 0, engine.BuildFlags{}, true},
		{"bad timeout string", `{"timeout":"soon","parallel":2}`, with(func(s *fproto.Settings) { s.Parallel = 2 }), 0, engine.BuildFlags{}, true},
		{"buildFlags", `{"fuzzls":{"buildFlags":["-tags","integration e2e","-race","-ldflags=-X main.v=1"]}}`,
			with(func(s *fproto.Settings) {
				s.BuildFlags = []string{"-tags", "integration e2e", "-race", "-ldflags=-X main.v=1"}
			}),
			0, engine.BuildFlags{Tags: "e2e,integration", Race: true, LDFlags: "-X main.v=1"}, false},
		{"buildFlags unsupported keep the others", `{"buildFlags":["-mod=vendor","-race"]}`,
			with(func(s *fproto.Settings) { s.BuildFlags = []string{"-mod=vendor", "-race"} }), 0, engine.BuildFlags{Race: true}, true},
	} {
		st := fproto.DefaultSettings()
		err := updateSettings(&st, []byte(tc.json))
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(st, tc.want) {
			t.Errorf("%s: got %+v, %v; want %+v, error %v", tc.desc, st, err, tc.want, tc.wantErr)
		}
		if o := engineOptions(st, nil); o.Nice != st.Nice || o.RSSLimitMB != st.RSSLimitMB || o.Parallel != st.Parallel || o.Build != tc.build || o.Leaks != st.Leaks ||
			o.Timeout != tc.timeout || o.KeepFuzzing != st.KeepFuzzing || o.CacheDir != st.CacheDir || o.Engine != st.Engine || o.Plateau != mustDuration(t, cmp.Or(st.Plateau, "0")) {
			t.Errorf("%s: engine options %+v do not follow the settings %+v", tc.desc, o, st)
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSettingsUpdates: a change applies the members it has and keeps the others,
// and the zeros that mean "none" reach the engine as such.
func TestSettingsUpdates(t *testing.T) {
	st := fproto.DefaultSettings()
	for _, u := range []string{`{"parallel":3,"timeout":"10s","buildFlags":["-race"]}`, `{"fuzzls":{"nice":5,"buildFlags":["-tags=x"]}}`, `{"timeout":"","parallel":null}`, `{"rssLimitMB":0}`} {
		if err := updateSettings(&st, []byte(u)); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	want := fproto.DefaultSettings()
	want.Parallel, want.Nice, want.BuildFlags, want.RSSLimitMB = 3, 5, []string{"-tags=x"}, 0
	if !reflect.DeepEqual(st, want) {
		t.Errorf("after the updates: %+v, want %+v", st, want)
	}
	if o := engineOptions(st, nil); o.Timeout != 0 || o.RSSLimitMB >= 0 || o.Build != (engine.BuildFlags{Tags: "x"}) {
		t.Errorf("engine options %+v: want the adaptive timeout, no memory limit, -tags=x", o)
	}
	if err := updateSettings(&st, []byte(`{"parallel":"many","nice":1}`)); err == nil || !reflect.DeepEqual(st, want) {
		t.Errorf("settings that do not decode: %v, and they became %+v", err, st)
	}
}

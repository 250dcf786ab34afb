//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/lspclient"
	"fuzzls.dev/fuzzls/internal/proc"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// Timeouts of the cases' awaits: generous for a loaded machine; a case that
// goes well takes seconds.
const (
	buildWait = 90 * time.Second // a first build, seeds and a worker
	findWait  = 90 * time.Second // a crash found by fuzzing, from "boo"
	shortWait = 30 * time.Second
)

var cases = []tcase{
	crashCase("os.Exit in the target", "FuzzExit", "exit", "exit", nil),
	crashCase("log.Fatal in the target", "FuzzLogFatal", "exit", "logfatal", nil),
	crashCase("panic in a goroutine", "FuzzGoroutinePanic", "goroutine-panic", "goroutine-panic", nil),
	crashCase("stack overflow", "FuzzFatal", "fatal", "fatal", nil),
	crashCase("concurrent map writes", "FuzzMapWrites", "fatal", "concurrent-map-writes", nil),
	crashCase("hang", "FuzzHang", "hang", "hang", nil),
	crashCase("out of memory", "FuzzAlloc", "oom", "oom", map[string]any{"rssLimitMB": 300}),
	{name: "broken save while fuzzing, then fixed", ws: "calc", body: brokenSave},
	{name: "malformed seed corpus file", ws: "crashers", setup: malformedSeed, body: malformedSeedBody},
	{name: "malformed file in the cache's corpus", ws: "crashers", setup: malformedCacheEntry, body: malformedCacheBody},
	{name: "worker killed with SIGKILL", ws: "crashers", body: workerKilled},
	{name: "daemon killed while fuzzing, restarted", ws: "calc", body: daemonKilledFuzzing},
	{name: "daemon killed during a build, restarted", ws: "calc", body: daemonKilledBuilding},
	{name: "corpus deleted while fuzzing", ws: "calc", body: corpusDeleted},
	{name: "whole cache deleted while fuzzing", ws: "calc", body: cacheDeleted},
	{name: "source file deleted and restored", ws: "calc", body: func(c *run) error { return deletedRestored(c, "calc.go") }},
	{name: "test file deleted and restored", ws: "calc", body: func(c *run) error { return deletedRestored(c, "calc_test.go") }},
	{name: "100 saves in 10 s", ws: "calc", body: saveBurst},
	{name: "malformed and unknown LSP messages", ws: "calc", body: malformedLSP},
	{name: "client vanishes without shutdown", ws: "crashers", body: clientVanishes},
	{name: "disk full from the start", ws: "crashers", body: diskFullFromStart},
	{name: "disk full while fuzzing", ws: "crashers", body: diskFullMidRun},
	{name: "paths outside the workspace", ws: "calc", setup: outsideSetup, body: pathsOutside},
	{name: "two daemons on one cache", ws: "calc", body: twoDaemons},
	{name: "fuzz CLI: os.Exit located", ws: "crashers", body: cliExit},
	{name: "fuzz CLI killed with SIGKILL, run again", ws: "crashers", body: cliKilled},
}

// crashCase: the target's bug kills its worker (or is caught by a watchdog);
// the daemon publishes a diagnostic of the kind at the marked line, and lives.
func crashCase(name, target, kind, mark string, opts map[string]any) tcase {
	return tcase{name: name, ws: "crashers", body: func(c *run) error {
		d, err := c.serve(opts)
		if err != nil {
			return err
		}
		if err := d.start(c.test, target); err != nil {
			return err
		}
		file := filepath.Join(c.ws, "crashers.go")
		line, hi := markLine(file, mark), 0
		hi = line
		if kind == "hang" || kind == "oom" {
			hi = line + 3 // located by the frames common to stack samples
		}
		if err := d.awaitDiag(file, kind, line, hi, findWait); err != nil {
			return err
		}
		_, err = d.session(target)
		return err
	}}
}

// calcEdit is calc.go's text with the division's line replaced by repl.
func calcEdit(text, repl string) (string, int) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.Contains(l, "v /= w") {
			lines[i] = repl
			return strings.Join(lines, "\n"), i + 1
		}
	}
	fatalf("calc.go has no division")
	return "", 0
}

// saveText saves text as an editor does: didChange, the file written through a
// temporary file renamed into place, didSave.
func (d *daemon) saveText(path string, version int32, text string) error {
	if err := d.Change(path, version, text); err != nil {
		return err
	}
	if err := lspclient.WriteFile(path, text); err != nil {
		return err
	}
	return d.Save(path)
}

// fuzzing starts a daemon on the case's workspace and cache and the target in
// it, and waits for the target to fuzz.
func (c *run) fuzzing(target string) (*daemon, error) {
	d, err := c.serve(nil)
	if err != nil {
		return nil, err
	}
	if err := d.start(c.test, target); err != nil {
		return nil, err
	}
	_, err = d.awaitFuzzing(target, buildWait)
	return d, err
}

// fuzzingCalcOpen fuzzes FuzzEval with calc.go open in the editor.
func fuzzingCalcOpen(c *run) (d *daemon, calcGo, text string, err error) {
	if d, err = c.fuzzing("FuzzEval"); err != nil {
		return nil, "", "", err
	}
	calcGo = filepath.Join(c.ws, "calc.go")
	text = mustRead(calcGo)
	return d, calcGo, text, d.Open(calcGo, text)
}

func brokenSave(c *run) error {
	d, calcGo, text, err := fuzzingCalcOpen(c)
	if err != nil {
		return err
	}
	broken, line := calcEdit(text, "\t\t\tv /= w +")
	if err := d.saveText(calcGo, 2, broken); err != nil {
		return err
	}
	if err := d.awaitDiag(calcGo, "build", line, line+1, shortWait); err != nil {
		return err
	}
	if err := d.saveText(calcGo, 3, text); err != nil {
		return err
	}
	if err := d.Await("the build error cleared", shortWait, func() bool {
		for _, dg := range d.diagsOf(calcGo) {
			if fmt.Sprint(dg.Code) == "build" {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	_, err = d.awaitFuzzing("FuzzEval", shortWait)
	return err
}

func writeSeed(c *run, target, name, text string) error {
	dir := filepath.Join(c.ws, "testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
}

func malformedSeed(c *run) error {
	return writeSeed(c, "FuzzNoBug", "broken", "go test fuzz v1\nstring(\"unterminated\n")
}

// malformedSeedBody: a seed file that does not parse is the user's error, said
// at the file (go test refuses it too); the daemon lives.
func malformedSeedBody(c *run) error {
	d, err := c.serve(nil)
	if err != nil {
		return err
	}
	if err := d.start(c.test, "FuzzNoBug"); err != nil {
		return err
	}
	seed := filepath.Join(c.ws, "testdata", "fuzz", "FuzzNoBug", "broken")
	s, err := d.awaitSession("FuzzNoBug", "the malformed seed reported", buildWait, func(s fproto.SessionStatus) bool {
		return s.State == fproto.StateError || s.State == fproto.StateFuzzing
	})
	if err != nil {
		return err
	}
	var said bool
	d.Locked(func() {
		said = len(d.diagsOf(seed)) > 0
		for _, ev := range d.Diags {
			for _, dg := range ev.Diags {
				said = said || strings.Contains(fmt.Sprint(dg.Message), "FuzzNoBug/broken")
			}
		}
	})
	if !said {
		return fmt.Errorf("no diagnostic names the malformed seed file (state %s, %q)", s.State, s.Message)
	}
	return nil
}

func corpusDirOf(c *run, pkg, target string) string {
	return filepath.Join(c.cache, "corpus", pkg, target)
}

func malformedCacheEntry(c *run) error {
	dir := corpusDirOf(c, "example.com/crashers", "FuzzNoBug")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "garbage"), []byte("\x00\x01 not a corpus file"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "good"), []byte("go test fuzz v1\nstring(\"boom!\")\n"), 0o644)
}

// malformedCacheBody: a malformed file in the generated corpus is skipped and
// logged; the good one is used and kept.
func malformedCacheBody(c *run) error {
	d, err := c.fuzzing("FuzzNoBug")
	if err != nil {
		return err
	}
	if !strings.Contains(d.logText(), "garbage") {
		return errors.New("the malformed corpus file was not named in the log")
	}
	return nil
}

func workerKilled(c *run) error {
	d, err := c.fuzzing("FuzzNoBug")
	if err != nil {
		return err
	}
	w, err := d.awaitWorker(shortWait)
	if err != nil {
		return err
	}
	if err := syscall.Kill(w, syscall.SIGKILL); err != nil {
		return err
	}
	if _, err := d.awaitWorker(shortWait, w); err != nil {
		return fmt.Errorf("not replaced: %v", err)
	}
	if _, err := d.awaitFuzzing("FuzzNoBug", shortWait); err != nil {
		return err
	}
	var n int
	d.Locked(func() { n = d.failures() })
	if n > 0 {
		return fmt.Errorf("a worker killed from outside was reported as %d failure(s) of the target", n)
	}
	return nil
}

// cacheCorpus counts the cache's corpus entries of FuzzEval.
func cacheCorpus(c *run) int { return countFiles(corpusDirOf(c, "example.com/calc", "FuzzEval")) }

func daemonKilledFuzzing(c *run) error {
	d, err := c.fuzzing("FuzzEval")
	if err != nil {
		return err
	}
	if _, err := d.awaitSession("FuzzEval", "a corpus of 10 entries", shortWait, func(s fproto.SessionStatus) bool { return s.Corpus >= 10 }); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	n := cacheCorpus(c)
	if err := c.killDaemon(d); err != nil {
		return err
	}
	return restartResumes(c, n)
}

// restartResumes starts a new daemon on the same cache: it fuzzes, and its
// corpus holds what was saved before (n files).
func restartResumes(c *run, n int) error {
	if m := cacheCorpus(c); m < n {
		return fmt.Errorf("the corpus lost files when the daemon was killed: %d, then %d", n, m)
	}
	d, err := c.fuzzing("FuzzEval")
	if err != nil {
		return fmt.Errorf("after the restart: %v", err)
	}
	s, err := d.session("FuzzEval")
	if err != nil {
		return err
	}
	if s.Corpus < n {
		return fmt.Errorf("the new daemon's corpus has %d entries, the cache had %d", s.Corpus, n)
	}
	if m := cacheCorpus(c); m < n {
		return fmt.Errorf("the corpus lost files on the restart: %d, then %d", n, m)
	}
	c.note("%d corpus files in the cache at the restart, %d entries loaded", n, s.Corpus)
	return nil
}

func daemonKilledBuilding(c *run) error {
	d, err := c.serve(nil)
	if err != nil {
		return err
	}
	if err := d.start(c.test, "FuzzEval"); err != nil {
		return err
	}
	// Kill it when the build runs the compiler (or the go command for 3 s,
	// should everything be cached).
	var seen string
	var goSince time.Time
	for deadline := time.Now().Add(buildWait); seen == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("no build process seen")
		}
		names := procDescendantsNamed(d.Cmd.Process.Pid, "go", "compile")
		switch {
		case slices.Contains(names, "compile"):
			seen = "compile"
		case !slices.Contains(names, "go"):
		case goSince.IsZero():
			goSince = time.Now()
		case time.Since(goSince) > 3*time.Second:
			seen = "go"
		}
	}
	c.note("killed while %s ran", seen)
	if err := c.killDaemon(d); err != nil {
		return err
	}
	return restartResumes(c, 0)
}

func corpusDeleted(c *run) error {
	d, err := c.fuzzing("FuzzEval")
	if err != nil {
		return err
	}
	if err := removeAll(filepath.Join(c.cache, "corpus")); err != nil {
		return err
	}
	c.corpusFloor = 0 // the user's deletion
	if _, err := d.awaitFuzzing("FuzzEval", shortWait); err != nil {
		return err
	}
	calcGo := filepath.Join(c.ws, "calc.go")
	if err := d.saveText(calcGo, 2, mustRead(calcGo)); err != nil {
		return err
	}
	_, err = d.awaitFuzzing("FuzzEval", shortWait)
	return err
}

// cacheDeleted: rm -rf of the whole cache: a worker killed afterwards is
// replaced and a save builds again.
func cacheDeleted(c *run) error {
	d, err := c.fuzzing("FuzzEval")
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(c.cache)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := removeAll(filepath.Join(c.cache, e.Name())); err != nil {
			return err
		}
	}
	c.corpusFloor = 0
	w, err := d.awaitWorker(shortWait)
	if err == nil {
		_ = syscall.Kill(w, syscall.SIGKILL)
		if _, err := d.awaitWorker(shortWait, w); err != nil {
			return fmt.Errorf("a worker killed after the cache was cleared: %v", err)
		}
	}
	if _, err := d.awaitFuzzing("FuzzEval", buildWait); err != nil {
		return err
	}
	calcGo := filepath.Join(c.ws, "calc.go")
	if err := d.saveText(calcGo, 2, mustRead(calcGo)); err != nil {
		return err
	}
	time.Sleep(time.Second)
	_, err = d.awaitFuzzing("FuzzEval", buildWait)
	return err
}

// deletedRestored: a file of the package deleted (git stash, a branch switch)
// puts the session in error; restored, it fuzzes again.
func deletedRestored(c *run, name string) error {
	d, err := c.fuzzing("FuzzEval")
	if err != nil {
		return err
	}
	path := filepath.Join(c.ws, name)
	text := mustRead(path)
	if err := os.Remove(path); err != nil {
		return err
	}
	s, err := d.awaitSession("FuzzEval", "the session to see the file gone", shortWait, func(s fproto.SessionStatus) bool {
		return s.State == fproto.StateError || s.State == fproto.StateStopped
	})
	if err != nil {
		return err
	}
	c.note("deleted: %s %q", s.State, s.Message)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	_, err = d.awaitSession("FuzzEval", "fuzzing on the restored file", buildWait, func(s fproto.SessionStatus) bool {
		return s.State == fproto.StateFuzzing && s.Execs > 0
	})
	if err != nil {
		// A stopped session is started again by the user.
		if s, _ := d.session("FuzzEval"); s.State == fproto.StateStopped {
			return fmt.Errorf("stopped by the deletion and not resumed by the restore: %v", err)
		}
	}
	return err
}

func saveBurst(c *run) error {
	d, calcGo, text, err := fuzzingCalcOpen(c)
	if err != nil {
		return err
	}
	var nProg int
	d.Locked(func() { nProg = len(d.ProgressNotes) })
	start := time.Now()
	for i := 1; i <= 100; i++ {
		t := fmt.Sprintf("// save %d\n%s", i, text)
		if i == 100 {
			t = text
		}
		if err := d.saveText(calcGo, int32(i+1), t); err != nil {
			return err
		}
		time.Sleep(time.Until(start.Add(time.Duration(i) * 100 * time.Millisecond)))
	}
	if err := d.Await("the last save built", buildWait, func() bool {
		for _, p := range d.ProgressNotes[nProg:] {
			if p.T.After(start.Add(10*time.Second)) && strings.HasPrefix(p.V, "end:built") {
				return true
			}
		}
		return false
	}); err != nil {
		return err
	}
	if _, err := d.awaitFuzzing("FuzzEval", shortWait); err != nil {
		return err
	}
	builds := 0
	d.Locked(func() {
		for _, p := range d.ProgressNotes[nProg:] {
			if strings.HasPrefix(p.V, "begin:") {
				builds++
			}
		}
	})
	c.note("%d builds for 100 saves", builds)
	return nil
}

// malformedLSP: JSON that does not parse gets -32700; an unknown method
// -32601; params of the wrong types -32602; an unknown notification nothing;
// and the daemon answers the next request.
func malformedLSP(c *run) error {
	log, err := os.Create(filepath.Join(c.dir, "daemon.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(c.s.bin, "serve")
	cmd.Stderr = log
	r, err := lspclient.StartRaw(cmd)
	if err != nil {
		return err
	}
	defer r.Close(grace)
	ws := string(uri.File(c.ws))
	if err := r.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"` + ws + `","capabilities":{},"initializationOptions":{"cacheDir":"` + c.cache + `"}}}`); err != nil {
		return err
	}
	if _, err := r.Response("1", shortWait); err != nil {
		return err
	}
	if err := r.Send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`); err != nil {
		return err
	}
	var errs []string
	for _, tc := range []struct {
		id, msg string
		want    int
	}{
		{"null", `{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{`, -32700},
		{"null", `{"jsonrpc":"2.0","id":3,"method`, -32700},
		{"4", `{"jsonrpc":"2.0","id":4,"method":"fuzzls/unknown"}`, -32601},
		{"5", `{"jsonrpc":"2.0","id":5,"method":"textDocument/unknown","params":{"a":[1]}}`, -32601},
		{"6", `{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":7,"position":"x"}}`, -32602},
		{"7", `{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{"command":["fuzzls.start"]}}`, -32602},
		{"8", `{"jsonrpc":"2.0","id":8,"method":"textDocument/codeLens","params":[1,2]}`, -32602},
		{"9", `{"jsonrpc":"2.0","id":9,"method":"textDocument/codeAction","params":{"range":"everything"}}`, -32602},
		{"10", `{"jsonrpc":"2.0","id":10,"method":"workspace/executeCommand","params":{"command":"fuzzls.start","arguments":[{"uri":5}]}}`, -32602},
		{"11", `{"jsonrpc":"2.0","id":11,"method":"workspace/executeCommand","params":{"command":"fuzzls.nothing"}}`, -32602},
		{"", `{"jsonrpc":"2.0","method":"fuzzls/unknownNotification","params":{"x":1}}`, 0},
		{"", `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":"x"}}`, 0},
		{"", `[]`, 0},
	} {
		if err := r.Send(tc.msg); err != nil {
			return fmt.Errorf("sending %s: %v", tc.msg, err)
		}
		if tc.id == "" {
			continue
		}
		resp, err := r.Response(tc.id, 5*time.Second)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", tc.msg, err))
			continue
		}
		if got := lspclient.ErrorCode(resp); got != tc.want {
			errs = append(errs, fmt.Sprintf("%s: code %d, want %d", tc.msg, got, tc.want))
		}
	}
	if err := r.Send(`{"jsonrpc":"2.0","id":20,"method":"workspace/executeCommand","params":{"command":"fuzzls.status"}}`); err != nil {
		return err
	}
	resp, err := r.Response("20", 5*time.Second)
	if err != nil || lspclient.ErrorCode(resp) != 0 {
		errs = append(errs, fmt.Sprintf("fuzzls.status after the malformed messages: %v %s", err, resp))
	}
	_ = r.Send(`{"jsonrpc":"2.0","id":21,"method":"shutdown"}`)
	if _, err := r.Response("21", 5*time.Second); err != nil {
		errs = append(errs, "shutdown: "+err.Error())
	}
	_ = r.Send(`{"jsonrpc":"2.0","method":"exit"}`)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// clientVanishes: stdin closed while fuzzing, without shutdown: the daemon
// exits and takes its workers with it.
func clientVanishes(c *run) error {
	d, err := c.fuzzing("FuzzNoBug")
	if err != nil {
		return err
	}
	if err := d.CloseStdin(10 * time.Second); err != nil {
		return err
	}
	return c.allGone("the daemon's exit", grace)
}

// diskFullFromStart: the cache on a full tmpfs: said, no loop of workers, and
// fuzzing once room is made and the target started again.
func diskFullFromStart(c *run) error {
	filler, err := c.cacheOnTmpfs(64, true)
	if err != nil {
		return err
	}
	d, err := c.serve(nil)
	if err != nil {
		return err
	}
	if err := d.start(c.test, "FuzzNoBug"); err != nil {
		c.note("start refused: %v", err)
	}
	s, err := d.awaitSession("FuzzNoBug", "word of the full disk", buildWait, func(s fproto.SessionStatus) bool {
		return s.State == fproto.StateError || s.State == fproto.StateStopped || (s.State == fproto.StateFuzzing && strings.Contains(d.logText(), "full"))
	})
	if err != nil {
		return err
	}
	c.note("full: %s %q", s.State, s.Message)
	if n := d.distinctWorkers(3 * time.Second); n > 2 {
		return fmt.Errorf("%d worker processes in 3 s on a full disk", n)
	}
	if err := os.Remove(filler); err != nil {
		return err
	}
	if err := d.start(c.test, "FuzzNoBug"); err != nil {
		return fmt.Errorf("start with room made: %v", err)
	}
	_, err = d.awaitSession("FuzzNoBug", "fuzzing with room made", buildWait, func(s fproto.SessionStatus) bool {
		return s.State == fproto.StateFuzzing && s.Execs > 0
	})
	return err
}

// diskFullMidRun: the cache's file system fills up while fuzzing and a worker
// dies: said once, no restart loop, fuzzing again once room is made.
func diskFullMidRun(c *run) error {
	filler, err := c.cacheOnTmpfs(64, false)
	if err != nil {
		return err
	}
	d, err := c.fuzzing("FuzzNoBug")
	if err != nil {
		return err
	}
	n := countFiles(filepath.Join(c.cache, "corpus"))
	w, err := d.awaitWorker(shortWait)
	if err != nil {
		return err
	}
	// Whatever the dead worker frees is taken again at once, as by another
	// program writing: the replacement cannot get its shared memory.
	if err := fillUp(filler); err != nil {
		return err
	}
	stop := make(chan bool)
	go func() {
		for {
			select {
			case <-stop:
				stop <- true
				return
			case <-time.After(5 * time.Millisecond):
				_ = fillUp(filler)
			}
		}
	}()
	_ = syscall.Kill(w, syscall.SIGKILL)
	workers := d.distinctWorkers(5 * time.Second)
	_, err = d.session("FuzzNoBug")
	stop <- true
	<-stop
	if err != nil {
		return fmt.Errorf("on a full disk: %v", err)
	}
	said := strings.Count(d.logText(), "is full")
	if err := os.Remove(filler); err != nil {
		return err
	}
	if _, err := d.awaitFuzzing("FuzzNoBug", shortWait); err != nil {
		return fmt.Errorf("with room made again: %v", err)
	}
	if _, err := d.awaitWorker(shortWait, w); err != nil {
		return fmt.Errorf("with room made again: %v", err)
	}
	if m := countFiles(filepath.Join(c.cache, "corpus")); m < n {
		return fmt.Errorf("corpus %d files before the disk filled, %d after", n, m)
	}
	var failures int
	d.Locked(func() { failures = d.failures() })
	if failures > 0 {
		return fmt.Errorf("the worker killed on a full disk became %d failure(s) of the target", failures)
	}
	c.note("full disk said %d time(s), %d test-binary processes in 5 s", said, workers)
	if said > 1 || workers > 4 {
		return fmt.Errorf("a restart loop: the full disk said %d times, %d test-binary processes in 5 s", said, workers)
	}
	return nil
}

func outsideSetup(c *run) error {
	// A module outside the workspace, and a link to it inside.
	out, err := filepath.Abs(filepath.Join(c.dir, "outside"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"go.mod", "calc.go", "calc_test.go"} {
		if err := os.WriteFile(filepath.Join(out, f), []byte(mustRead(filepath.Join(c.ws, f))), 0o644); err != nil {
			return err
		}
	}
	return os.Symlink(out, filepath.Join(c.ws, "link"))
}

// pathsOutside: every command naming a path outside the workspace folder is
// refused (invalid params), and nothing is written there.
func pathsOutside(c *run) error {
	d, err := c.serve(nil)
	if err != nil {
		return err
	}
	outside := filepath.Join(c.dir, "outside")
	before := treeFiles(outside)
	var errs []string
	for _, u := range []string{
		string(uri.File(filepath.Join(outside, "calc_test.go"))),
		"file://" + c.ws + "/../outside/calc_test.go",
		"file://" + c.ws + "/%2e%2e/outside/calc_test.go",
		string(uri.File(filepath.Join(c.ws, "link", "calc_test.go"))),
		"file:///etc/passwd",
		"file:///",
		"file://" + c.ws + "/../../../../../../tmp/x_test.go",
		"http://example.com/calc_test.go",
		"calc_test.go",
	} {
		for _, cmd := range []string{fproto.CommandStart, fproto.CommandStop, fproto.CommandSeedCorpus} {
			_, err := d.command(cmd, fproto.TargetArgs{URI: u, Target: "FuzzEval"})
			if cmd == fproto.CommandStop && err == nil && !strings.Contains(u, "outside") && !strings.Contains(u, "link") {
				continue
			}
			if err == nil {
				errs = append(errs, fmt.Sprintf("%s %s accepted", cmd, u))
			} else if !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "invalid") && !strings.Contains(err.Error(), "not") {
				c.note("%s %s: %v", cmd, u, err)
			}
		}
	}
	for _, id := range []string{"../../../../etc/passwd", "/etc/passwd", "", strings.Repeat("a", 10000)} {
		for _, cmd := range []string{fproto.CommandAddToCorpus, fproto.CommandAddSeed, fproto.CommandShowInput} {
			if _, err := d.command(cmd, fproto.CrashArgs{Crash: id}); err == nil {
				errs = append(errs, fmt.Sprintf("%s %.40q accepted", cmd, id))
			}
		}
	}
	time.Sleep(time.Second)
	if s, err := d.session("FuzzEval"); err == nil {
		errs = append(errs, "a session was started: "+s.URI)
	}
	if diff := diffTree(before, treeFiles(outside)); diff != "" {
		errs = append(errs, "written outside the workspace: "+diff)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// twoDaemons: two daemons fuzz the same target on one cache; both fuzz, every
// corpus file they leave parses, and a third daemon starts on that cache.
func twoDaemons(c *run) error {
	var ds []*daemon
	for range 2 {
		d, err := c.serve(nil)
		if err != nil {
			return err
		}
		if err := d.start(c.test, "FuzzEval"); err != nil {
			return err
		}
		ds = append(ds, d)
	}
	for i, d := range ds {
		if _, err := d.awaitFuzzing("FuzzEval", buildWait); err != nil {
			return fmt.Errorf("daemon %d: %v", i+1, err)
		}
	}
	time.Sleep(3 * time.Second)
	for i, d := range ds {
		if _, err := d.awaitFuzzing("FuzzEval", shortWait); err != nil {
			return fmt.Errorf("daemon %d: %v", i+1, err)
		}
		d.close()
	}
	if err := c.allGone("both daemons' exit", grace); err != nil {
		return err
	}
	var bad []string
	dir := corpusDirOf(c, "example.com/calc", "FuzzEval")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || !strings.HasPrefix(string(data), "go test fuzz v1\n") {
			bad = append(bad, e.Name())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("corpus files that do not parse: %s", strings.Join(bad, " "))
	}
	return restartResumes(c, cacheCorpus(c))
}

// cliExit: `fuzzls fuzz` on a target that calls os.Exit: exit status 1, the
// failure at the call.
func cliExit(c *run) error {
	p, err := c.fuzz("-json", "-minimizetime", "5s", "-run", "^FuzzExit$")
	if err != nil {
		return err
	}
	code, err := p.wait(2 * findWait)
	if err != nil {
		return err
	}
	if code != 1 {
		return fmt.Errorf("exit status %d, want 1 (a failure found)", code)
	}
	line := markLine(filepath.Join(c.ws, "crashers.go"), "exit")
	for _, ev := range p.events("crash") {
		if ev["kind"] == "exit" && ev["file"] == filepath.Join(c.ws, "crashers.go") && ev["line"] == float64(line) {
			return nil
		}
	}
	return fmt.Errorf("no exit failure at crashers.go:%d in the -json events", line)
}

// cliKilled: `fuzzls fuzz` killed with SIGKILL while fuzzing leaves no
// process; run again on the same cache, it keeps the corpus.
func cliKilled(c *run) error {
	p, err := c.fuzz("-run", "^FuzzNoBug$")
	if err != nil {
		return err
	}
	deadline := time.Now().Add(buildWait)
	for len(testBinaries(p.cmd.Process.Pid, c.cache)) == 0 {
		if time.Now().After(deadline) {
			return errors.New("no worker of fuzzls fuzz")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	p.stop()
	if err := c.allGone("fuzzls fuzz killed with SIGKILL", killGrace); err != nil {
		return err
	}
	n := countFiles(filepath.Join(c.cache, "corpus"))
	q, err := c.fuzz("-run", "^FuzzNoBug$", "-fuzztime", "3s")
	if err != nil {
		return err
	}
	if code, err := q.wait(buildWait); err != nil || code != 0 {
		return fmt.Errorf("run again: status %d, %v", code, err)
	}
	if m := countFiles(filepath.Join(c.cache, "corpus")); m < n {
		return fmt.Errorf("corpus %d files after the kill, %d after the second run", n, m)
	}
	c.note("corpus %d files", n)
	return nil
}

// procDescendantsNamed lists the names of the descendants of pid that have
// one of the names.
func procDescendantsNamed(pid int, names ...string) []string {
	var out []string
	for _, p := range proc.Descendants(pid) {
		if n := proc.Name(p); slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	return out
}

// removeAll is rm -rf of a directory the daemon writes into meanwhile: tried
// again while new entries keep it from going.
func removeAll(dir string) error {
	var err error
	for range 20 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

func mustRead(path string) string {
	data, err := os.ReadFile(path)
	check(err)
	return string(data)
}

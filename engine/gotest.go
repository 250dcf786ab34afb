package engine

// go test's native engine behind a session (Options.Engine = protocol.EngineGoTest):
// the session builds and runs the seeds as for its own workers, then runs
// `go test -fuzz` in the package directory instead of fuzzing. Its progress
// lines become the stats, its failure a Crash (classified by engine/failure,
// the input read from the file go test wrote, then verified and minimized on
// fuzzls's build as any other), and its corpus, replayed on fuzzls's build when
// it grows, the coverage.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/protocol"
)

var (
	// "fuzz: elapsed: 3s, execs: 1234 (411/sec), new interesting: 5 (total: 10)"
	goTestProgressRE = regexp.MustCompile(`^fuzz: elapsed: \S+, execs: (\d+) \((\d+)/sec\)`)
	// "Failing input written to testdata/fuzz/FuzzX/<hash>"
	goTestWrittenRE = regexp.MustCompile(`^\s*Failing input written to (\S+)`)
	// "failure while testing seed corpus entry: FuzzX/seed#0"
	goTestSeedRE = regexp.MustCompile(`failure while testing seed corpus entry: [^/\s]+/(\S+)`)
)

// goTestRun is what one go test -fuzz said: its executions so far, and the
// failure it ended with.
type goTestRun struct {
	name     string // the target's
	execs    int64
	failing  []string // the lines of its failure, from its first "--- FAIL"
	inFail   bool
	written  string // the failing input's file, relative to the package
	seedName string // a seed that failed before fuzzing began
}

func (g *goTestRun) executions() int64 { return g.execs }

// line takes one line of go test's output and reports whether it was a
// progress line (execs is new).
func (g *goTestRun) line(line string) (progress bool) {
	if m := goTestProgressRE.FindStringSubmatch(line); m != nil {
		g.execs, _ = strconv.ParseInt(m[1], 10, 64)
		return true
	}
	if m := goTestWrittenRE.FindStringSubmatch(line); m != nil {
		g.written = filepath.FromSlash(m[1])
		g.inFail = false
		return false
	}
	if m := goTestSeedRE.FindStringSubmatch(line); m != nil {
		g.seedName = m[1]
	}
	if strings.HasPrefix(strings.TrimSpace(line), "--- FAIL: "+g.name) {
		g.inFail = true
	}
	if g.inFail {
		if t := strings.TrimSpace(line); t == "FAIL" || strings.HasPrefix(t, "To re-run:") {
			g.inFail = false
			return false
		}
		g.failing = append(g.failing, line)
	}
	return false
}

// failure is go test's failure classified, nil when it printed none.
func (g *goTestRun) failure(u failure.UserFrames, pkgDir string) *failure.Failure {
	if len(g.failing) == 0 {
		return nil
	}
	return failure.ClassifyOutput(strings.Join(g.failing, "\n"), u, pkgDir)
}

// goTestCommand is go test -fuzz for the target with the user's build flags,
// with parallel workers.
func goTestCommand(ctx context.Context, t Target, flags BuildFlags, parallel int) *exec.Cmd {
	anchored := "^" + regexp.QuoteMeta(t.Name) + "$"
	args := append([]string{"test", "-run=" + anchored, "-fuzz=" + anchored, "-parallel=" + strconv.Itoa(parallel)}, flags.Args()...)
	cmd := exec.CommandContext(ctx, "go", append(args, ".")...)
	cmd.Dir = t.Dir
	return cmd
}

// goCacheDir is go test's corpus directory of t: $(go env GOCACHE)/fuzz/<importpath>/FuzzX.
func goCacheDir(t Target) string {
	cmd := exec.Command("go", "env", "GOCACHE")
	cmd.Dir = t.Dir
	out, err := cmd.Output()
	if dir := strings.TrimSpace(string(out)); err == nil && dir != "" && dir != "off" {
		return filepath.Join(dir, "fuzz", filepath.FromSlash(t.Package), t.Name)
	}
	return nativeCacheDir(t)
}

// fuzzGoTest is fuzz with go test's engine (external.go): its workers are
// fixed when it starts, so it runs with the session's allotment of slots then.
func (s *Session) fuzzGoTest() outcome {
	return s.fuzzExternal(externalEngine{
		command: func(ctx context.Context, n int) *exec.Cmd {
			return goTestCommand(ctx, s.target, s.e.opts.Build, n)
		},
		newRun: func() externalRun { return &goTestRun{name: s.target.Name} },
		ended: func(run externalRun, err error, tail []string) {
			s.goTestEnded(run.(*goTestRun), err, tail)
		},
		corpus: goCacheDir(s.target),
		read:   readCorpusDir,
	})
}

// goTestEnded reports how go test -fuzz ended: its failure as a Crash, or,
// when it failed without one (it did not build, a flag it refused), the
// session's error.
func (s *Session) goTestEnded(run *goTestRun, err error, out []string) {
	f := run.failure(s.userFrames(), s.target.Dir)
	if f == nil {
		if err != nil {
			s.engineFailed(fmt.Errorf("go test -fuzz: %v: %s", err, strings.Join(out, "\n")))
		}
		return
	}
	input, rerr := s.goTestInput(run)
	if rerr != nil {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: go test's failing input: %v\n", s.target.Name, rerr)
	}
	if f.File == "" && input != "" {
		// go test says no more of a worker that died or hung than "fuzzing
		// process hung or terminated unexpectedly": the input's run on
		// fuzzls's build tells the kind and the place (an exit, a fatal
		// error, a hang, out of memory).
		if g := s.replayFailure(input); g != nil {
			f = g
		}
	}
	s.onFailure(f, input)
}

// goTestInput is the input go test failed on: the file it wrote into the
// package's testdata/fuzz/FuzzX, or the seed that failed.
func (s *Session) goTestInput(run *goTestRun) (string, error) {
	if run.written != "" {
		fmt.Fprintf(s.e.opts.Log, "fuzzls: %s: go test wrote its failing input to %s (in %s), as it does\n", s.target.Name, run.written, s.target.Dir)
		data, err := os.ReadFile(filepath.Join(s.target.Dir, run.written))
		return string(data), err
	}
	if run.seedName != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, name := range s.seeds.names {
			if name == run.seedName {
				return s.seeds.inputs[i], nil
			}
		}
		return "", fmt.Errorf("no seed %s", run.seedName)
	}
	return "", fmt.Errorf("go test named no input")
}

// engineName is Options.Engine's value, the default filled in.
func engineName(o Options) string {
	if o.Engine == "" {
		return protocol.EngineFuzzls
	}
	return o.Engine
}

// Engines are Options.Engine's values, the default first.
var Engines = []string{protocol.EngineFuzzls, protocol.EngineGoTest, protocol.EngineLibFuzzer}

// CheckEngine says what is wrong with name as Options.Engine, nil when nothing.
func CheckEngine(name string) error {
	for _, e := range Engines {
		if name == e {
			return nil
		}
	}
	return fmt.Errorf("engine %q is not one of %s", name, strings.Join(Engines, ", "))
}

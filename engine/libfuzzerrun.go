package engine

// libFuzzer behind a session (Options.Engine = protocol.EngineLibFuzzer): the
// target is built as OSS-Fuzz's and ClusterFuzzLite's compile_native_go_fuzzer_v2
// build it (go-118-fuzz-build, clang -fsanitize=fuzzer) into the cache, and run
// as one libFuzzer process (external.go) on a corpus directory of the cache that
// holds the target's corpus in the harness's byte layout (engine/gofuzzheaders).
// Its status lines are the stats; its crash file, decoded into the target's
// arguments, is checked on fuzzls's build, which says the kind and the line.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/gofuzzheaders"
	"fuzzls.dev/fuzzls/protocol"
)

// Go118FuzzBuild is the go-118-fuzz-build that compile_native_go_fuzzer_v2 runs
// (the newest the module proxy serves).
const Go118FuzzBuild = "github.com/AdamKorcz/go-118-fuzz-build@v0.0.0-20250520111509-a70c2aa677fa"

// ErrNoClang: clang with libFuzzer is missing; its text says what to install.
var ErrNoClang = errors.New("clang with libFuzzer is not installed (apt-get install clang; scripts/test.sh does)")

// libFuzzerDir is where the libFuzzer build of t and its corpus live.
func libFuzzerDir(cacheDir string, t Target) string {
	return filepath.Join(cacheDir, "libfuzzer", filepath.FromSlash(t.Package), t.Name)
}

// BuildLibFuzzer builds t as compile_native_go_fuzzer_v2 does and returns the
// fuzzer's path: go-118-fuzz-build (installed into the cache) makes a
// c-archive of a copy of the module at moduleDir (it rewrites the package's
// files and adds its testing package to go.mod), which clang links with
// libFuzzer. Everything is written under cacheDir; tags are added to gofuzz.
func BuildLibFuzzer(ctx context.Context, t Target, moduleDir, cacheDir, tags string, log io.Writer) (string, error) {
	if err := CheckLibFuzzer(ctx, filepath.Join(cacheDir, "libfuzzer")); err != nil {
		return "", err
	}
	run := func(dir string, env []string, name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return nil
	}
	gobin := filepath.Join(cacheDir, "libfuzzer", "bin")
	tool := filepath.Join(gobin, "go-118-fuzz-build")
	if _, err := os.Stat(tool); err != nil {
		if err := run(cacheDir, []string{"GOBIN=" + gobin}, "go", "install", Go118FuzzBuild); err != nil {
			return "", err
		}
	}
	work := libFuzzerDir(cacheDir, t)
	src := filepath.Join(work, "src")
	rel, err := filepath.Rel(moduleDir, t.Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not in the module at %s", t.Dir, moduleDir)
	}
	if err := os.RemoveAll(src); err != nil {
		return "", err
	}
	if err := copyModule(moduleDir, src); err != nil {
		return "", err
	}
	if err := run(src, []string{"GOFLAGS=-mod=mod"}, "go", "get", strings.Replace(Go118FuzzBuild, "@", "/testing@", 1)); err != nil {
		return "", err
	}
	pkg := filepath.Join(src, rel)
	archive := filepath.Join(work, t.Name+".a")
	if tags != "" {
		tags = "," + tags
	}
	fmt.Fprintf(log, "fuzzls: %s: go-118-fuzz-build and clang -fsanitize=fuzzer (in %s)\n", t.Name, work)
	if err := run(pkg, []string{"GOFLAGS=-mod=mod"}, tool, "-tags", "gofuzz"+tags, "-o", archive, "-func", t.Name, pkg); err != nil {
		return "", err
	}
	bin := filepath.Join(work, t.Name+".libfuzzer")
	if err := run(work, nil, "clang", "-fsanitize=fuzzer", archive, "-o", bin); err != nil {
		return "", err
	}
	return bin, nil
}

// CheckLibFuzzer links an empty fuzzer with clang -fsanitize=fuzzer in dir:
// an error wrapping ErrNoClang when that fails.
func CheckLibFuzzer(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	probe := filepath.Join(dir, "probe.c")
	err := os.WriteFile(probe, []byte("#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n"), 0o644)
	if err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "clang", "-fsanitize=fuzzer", probe, "-o", probe+".bin").CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %v %s", ErrNoClang, err, out)
	}
	return nil
}

// copyModule copies the files of the directory from into to, leaving out
// hidden directories (.git) and node_modules.
func copyModule(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
}

var (
	// "#1234	NEW    cov: 56 ft: 78 corp: 9/120b lim: 4 exec/s: 4000 rss: 30Mb", "#8192	pulse ..."
	libFuzzerStatusRE = regexp.MustCompile(`^#(\d+)\s+(?:[A-Z]+|pulse)\b`)
	// "==1234== ERROR: libFuzzer: deadly signal"
	libFuzzerErrorRE = regexp.MustCompile(`^==\d+== ERROR: libFuzzer: (.*)`)
	// "artifact_prefix='/x/'; Test unit written to /x/crash-<sha1>"
	libFuzzerWrittenRE = regexp.MustCompile(`Test unit written to (\S+)`)
)

// libFuzzerRun is what one libFuzzer process said: its executions so far, and
// the failure it ended with.
type libFuzzerRun struct {
	execs    int64
	err      string   // what libFuzzer's ERROR line says: "deadly signal", "timeout after 10 seconds"
	failing  []string // the Go runtime's report, from its first "panic: " or "fatal error: "
	artifact string   // the failing input's file
}

func (l *libFuzzerRun) executions() int64 { return l.execs }

func (l *libFuzzerRun) line(line string) (progress bool) {
	if m := libFuzzerStatusRE.FindStringSubmatch(line); m != nil {
		l.execs, _ = strconv.ParseInt(m[1], 10, 64)
		return true
	}
	if m := libFuzzerWrittenRE.FindStringSubmatch(line); m != nil {
		l.artifact = m[1]
		return false
	}
	if m := libFuzzerErrorRE.FindStringSubmatch(line); m != nil {
		if l.err == "" {
			l.err = m[1]
		}
		return false
	}
	if l.failing == nil && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
		l.failing = []string{}
	}
	if l.failing != nil && l.err == "" && len(l.failing) < 1000 {
		l.failing = append(l.failing, line)
	}
	return false
}

// failure is libFuzzer's failure as its output tells it, nil when it printed
// none. go-118-fuzz-build builds with -trimpath: its frames name no file of the
// user's, so a replay on fuzzls's build places it.
func (l *libFuzzerRun) failure(u failure.UserFrames, fuzzFn string) *failure.Failure {
	if l.err == "" {
		return nil
	}
	f := failure.ClassifyDeath(failure.Death{Stderr: strings.Join(l.failing, "\n"), ExitCode: -1}, u, fuzzFn)
	if f.Kind == protocol.KindGoroutinePanic {
		// The harness calls the fuzz function on the thread libFuzzer runs,
		// and panics again with what it recovered there.
		f.Kind = protocol.KindPanic
		f.Message = strings.TrimSuffix(f.Message, " [recovered]")
	}
	if f.Message == "" {
		f.Message = "libFuzzer: " + l.err
	}
	return f
}

// fuzzLibFuzzer is fuzz with libFuzzer: the fuzzer is built, then runs as
// one process, whatever the session's allotment.
func (s *Session) fuzzLibFuzzer() outcome {
	o := s.e.opts
	ctx, cancel := s.stopContext(context.WithCancel(context.Background()))
	bin, err := BuildLibFuzzer(ctx, s.target, s.moduleDir(), o.CacheDir, o.Build.Tags, o.Log)
	stopped := ctx.Err() != nil
	cancel()
	if stopped {
		return outStopped
	}
	if err != nil {
		s.engineFailed(err)
		return outFinished
	}
	dir := libFuzzerDir(o.CacheDir, s.target)
	corpus, artifacts := filepath.Join(dir, "corpus"), filepath.Join(dir, "artifacts")
	return s.fuzzExternal(externalEngine{
		command: func(ctx context.Context, n int) *exec.Cmd {
			s.writeLibFuzzerCorpus(corpus)
			os.MkdirAll(artifacts, 0o755)
			args := []string{"-artifact_prefix=" + artifacts + string(filepath.Separator), "-rss_limit_mb=" + strconv.Itoa(o.RSSLimitMB)}
			if o.Timeout > 0 {
				args = append(args, "-timeout="+strconv.Itoa(max(1, int(o.Timeout.Seconds()+0.999))))
			}
			cmd := exec.CommandContext(ctx, bin, append(args, corpus)...)
			cmd.Dir = dir
			return cmd
		},
		newRun: func() externalRun { return &libFuzzerRun{} },
		ended: func(run externalRun, err error, tail []string) {
			s.libFuzzerEnded(run.(*libFuzzerRun), err, tail)
		},
		corpus: corpus,
		read:   readLibFuzzerCorpus,
	})
}

// writeLibFuzzerCorpus writes the session's corpus into dir in the harness's
// layout, each file named as libFuzzer names them.
func (s *Session) writeLibFuzzerCorpus(dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	for _, en := range s.corpus.list() {
		if name, data, err := gofuzzheaders.File(en.input); err == nil {
			WriteFileAtomic(filepath.Join(dir, name), string(data))
		}
	}
}

// readLibFuzzerCorpus reads libFuzzer's corpus directory as inputs of types;
// a file the harness would not decode is left out.
func readLibFuzzerCorpus(dir string, types []string, _ io.Writer) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if in, err := gofuzzheaders.Input(data, types); err == nil {
			out = append(out, in)
		}
	}
	return out
}

// libFuzzerEnded reports how libFuzzer ended: its crash file, decoded, as a
// Crash placed by its run on fuzzls's build (or, when that passes, as
// libFuzzer's output says), or, when it failed without one, the session's
// error.
func (s *Session) libFuzzerEnded(run *libFuzzerRun, err error, tail []string) {
	if run.artifact == "" {
		if err != nil {
			s.engineFailed(fmt.Errorf("libFuzzer: %v: %s", err, strings.Join(tail, "\n")))
		}
		return
	}
	s.mu.Lock()
	types := s.types
	s.mu.Unlock()
	data, rerr := os.ReadFile(run.artifact)
	var input string
	if rerr == nil {
		input, rerr = gofuzzheaders.Input(data, types)
	}
	if rerr != nil {
		s.engineFailed(fmt.Errorf("libFuzzer's failing input %s: %v", run.artifact, rerr))
		return
	}
	f := s.replayFailure(input)
	if f == nil {
		if f = run.failure(s.userFrames(), s.target.Name); f == nil {
			s.engineFailed(fmt.Errorf("libFuzzer wrote %s and said no failure: %s", run.artifact, strings.Join(tail, "\n")))
			return
		}
	}
	s.onFailure(f, input)

}

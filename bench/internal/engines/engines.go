// Package engines runs fuzzls and `go test -fuzz` for the benchmarks and reads
// their output: fuzzls's JSON events, go test's status lines, and the coverage
// profile of a neutral `go test -coverprofile` replay of a corpus.
package engines

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"fuzzls.dev/fuzzls/internal/jsonevents"
)

// Run is one engine's run on one target in one trial.
type Run struct {
	Engine  string  `json:"engine"`
	Target  string  `json:"target"`
	Trial   int     `json:"trial"`
	Found   bool    `json:"found"`             // the planted failure
	TTC     float64 `json:"ttc,omitempty"`     // seconds from fuzzing start to the failure
	Other   string  `json:"other,omitempty"`   // a failure that is not the planted one
	Failure string  `json:"failure,omitempty"` // first line of the failure found
	Where   string  `json:"where,omitempty"`   // fuzzls: file:line of the failure
	Flaky   bool    `json:"flaky,omitempty"`   // fuzzls: the failure did not repeat on replay
	Flake   string  `json:"flake,omitempty"`   // an engine's spurious failure, not counted
	Execs   int64   `json:"execs"`
	Fuzzed  float64 `json:"fuzzed"` // seconds of fuzzing (start to end)
	Startup float64 `json:"startup"`
	Wall    float64 `json:"wall"`
	// Coverage targets: statements (and blocks) of CoverPkg the corpus reaches.
	Corpus      int    `json:"corpus,omitempty"`
	Stmts       int    `json:"stmts,omitempty"`
	TotalStmts  int    `json:"totalStmts,omitempty"`
	Blocks      int    `json:"blocks,omitempty"`
	TotalBlocks int    `json:"totalBlocks,omitempty"`
	OwnCover    string `json:"ownCover,omitempty"` // the engine's own coverage figure
	// Warnings are fuzzls's about its build (comparison hooks left out of a
	// package): a figure measured without them is not the engine's.
	Warnings []string `json:"warnings,omitempty"`
	Err      string   `json:"err,omitempty"`
	Log      string   `json:"log"`
}

// ParseFuzzls reads fuzzls's JSON events (package jsonevents); it returns the
// text a planted failure's pattern is matched against ("kind: message"), or "".
func ParseFuzzls(lines <-chan Line, log io.Writer, start time.Time, r *Run) string {
	var fuzzStart, end time.Time
	var first, last *jsonevents.Crash
	for l := range lines {
		fmt.Fprintf(log, "%7.3f %s\n", l.T.Sub(start).Seconds(), l.S)
		var ev struct{ Event string }
		if json.Unmarshal([]byte(l.S), &ev) != nil {
			continue
		}
		switch ev.Event {
		case jsonevents.EventBuild:
			var b jsonevents.Build
			json.Unmarshal([]byte(l.S), &b)
			if b.Error != "" {
				r.Err = "build: " + FirstLine(b.Error)
			}
			if len(b.Warnings) > 0 && r.Warnings == nil {
				r.Warnings = b.Warnings
			}
			if fuzzStart.IsZero() {
				fuzzStart = l.T
			}
		case jsonevents.EventStats:
			var st jsonevents.Stats
			json.Unmarshal([]byte(l.S), &st)
			r.Execs = st.Execs
			r.OwnCover = fmt.Sprintf("%d/%d blocks (fuzzls's instrumentation), corpus %d", st.Covered, st.Blocks, st.Corpus)
		case jsonevents.EventCrash:
			c := new(jsonevents.Crash)
			json.Unmarshal([]byte(l.S), c)
			if first == nil {
				first = c
				r.TTC = l.T.Sub(fuzzStart).Seconds()
			}
			last = c
		case jsonevents.EventDone:
			var d jsonevents.Done
			json.Unmarshal([]byte(l.S), &d)
			end = l.T
			if d.Execs > r.Execs {
				r.Execs = d.Execs
			}
			if d.Error != "" && r.Err == "" {
				r.Err = FirstLine(d.Error)
			}
		}
	}
	if end.IsZero() {
		end = time.Now()
	}
	if !fuzzStart.IsZero() {
		r.Startup = fuzzStart.Sub(start).Seconds()
		r.Fuzzed = end.Sub(fuzzStart).Seconds()
	}
	if first == nil {
		return ""
	}
	r.Flaky = last.Flaky
	r.Failure = last.Kind + ": " + FirstLine(last.Message)
	if last.File != "" {
		r.Where = fmt.Sprintf("%s:%d", filepath.Base(last.File), last.Line)
	}
	return last.Kind + ": " + last.Message
}

var (
	nativeElapsed = regexp.MustCompile(`^fuzz: elapsed: \d+s`)
	nativeExecs   = regexp.MustCompile(`^fuzz: elapsed: \d+s, execs: (\d+) .*\(total: (\d+)\)`)
	nativeMin     = regexp.MustCompile(`^fuzz: minimizing \d+-byte failing input`)
	nativeFail    = regexp.MustCompile(`^--- FAIL: `)
	nativeFrom    = regexp.MustCompile(`^testing\.go:\d+: `)
)

const DeadlineFlake = "go test reported \"context deadline exceeded\" at the end of -fuzztime (go.dev/issue/75804)"

// ParseNative reads go test -fuzz's output; it returns the failure's text, or "".
func ParseNative(lines <-chan Line, log io.Writer, start time.Time, r *Run) string {
	var fuzzStart, found, end time.Time
	var fail []string
	inFail := false
	for l := range lines {
		fmt.Fprintf(log, "%7.3f %s\n", l.T.Sub(start).Seconds(), l.S)
		end = l.T
		switch {
		case nativeElapsed.MatchString(l.S):
			if fuzzStart.IsZero() {
				fuzzStart = l.T
			}
			if m := nativeExecs.FindStringSubmatch(l.S); m != nil {
				r.Execs, _ = strconv.ParseInt(m[1], 10, 64)
				r.OwnCover = "corpus " + m[2] + " (go test's count)"
			}
		case nativeMin.MatchString(l.S):
			if found.IsZero() {
				found = l.T
			}
		case nativeFail.MatchString(l.S):
			if found.IsZero() {
				found = l.T
			}
			inFail = true
		case inFail && (l.S == "FAIL" || strings.HasPrefix(l.S, "exit status")):
			inFail = false
		case inFail:
			if s := strings.TrimSpace(l.S); s != "" && !strings.HasPrefix(s, "--- FAIL") {
				fail = append(fail, s)
			}
		}
	}
	if fuzzStart.IsZero() {
		fuzzStart = start
		if !found.IsZero() {
			fuzzStart = found // failed on a seed, before fuzzing
		}
	}
	r.Startup = fuzzStart.Sub(start).Seconds()
	r.Fuzzed = end.Sub(fuzzStart).Seconds()
	if found.IsZero() {
		return ""
	}
	if len(fail) == 1 && fail[0] == "context deadline exceeded" {
		// go test's own race at the end of -fuzztime (go.dev/issue/75804, not fixed
		// in Go 1.26): no input failed, the budget ran out.
		r.Flake = DeadlineFlake
		return ""
	}
	r.TTC = found.Sub(fuzzStart).Seconds()
	if len(fail) == 0 {
		fail = []string{"(no message)"}
	}
	r.Failure = fail[0]
	for _, s := range fail {
		// "planted_test.go:60: round trip mismatch…" or "testing.go:1927: panic: planted: …"
		if strings.Contains(s, "panic: ") || strings.Contains(s, "_test.go:") || strings.Contains(s, "fuzzing process") {
			r.Failure = s
			break
		}
	}
	r.Failure = strings.TrimPrefix(r.Failure, nativeFrom.FindString(r.Failure))
	return strings.Join(fail, "\n")
}

// CountProfile returns covered statements, statements, covered blocks, blocks.
func CountProfile(path string) ([4]int, error) {
	var res [4]int
	data, err := os.ReadFile(path)
	if err != nil {
		return res, err
	}
	type blk struct {
		stmts int
		hit   bool
	}
	blocks := map[string]*blk{}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || strings.HasPrefix(l, "mode:") {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		cnt, _ := strconv.Atoi(f[2])
		b := blocks[f[0]]
		if b == nil {
			b = &blk{stmts: n}
			blocks[f[0]] = b
		}
		b.hit = b.hit || cnt > 0
	}
	for _, b := range blocks {
		res[1] += b.stmts
		res[3]++
		if b.hit {
			res[0] += b.stmts
			res[2]++
		}
	}
	if res[3] == 0 {
		return res, errors.New("empty coverage profile")
	}
	return res, nil
}

// Line is a line of a command's output and the time it was read.
type Line struct {
	T time.Time
	S string
}

// StartLines starts cmd with stdout and stderr merged and delivers its lines with
// the time each was read. wait waits for the command after the lines are drained.
func StartLines(cmd *exec.Cmd) (<-chan Line, func() error, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, nil, err
	}
	pw.Close()
	ch := make(chan Line, 1024)
	go func() {
		defer close(ch)
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			ch <- Line{time.Now(), sc.Text()}
		}
	}()
	return ch, cmd.Wait, nil
}

// Command is a command in dir, in a process group of its own: when ctx ends, the
// group is interrupted (both engines then stop their workers), and killed 30 s later.
func Command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	ownGroup(cmd)
	cmd.Cancel = func() error {
		signalGroup(cmd.Process, os.Interrupt)
		go func(p *os.Process) {
			time.Sleep(30 * time.Second)
			signalGroup(p, os.Kill)
		}(cmd.Process)
		return nil
	}
	cmd.WaitDelay = 40 * time.Second
	return cmd
}

func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Replay runs the fuzz target's seeds and its testdata/fuzz/<target> corpus once,
// neutrally, with `go test -coverprofile=profile -coverpkg=coverPkg` in dir (env
// added to the environment), and counts the profile: covered statements,
// statements, covered blocks, blocks. Its output goes to log. An entry that fails
// (a real bug) still leaves a profile.
func Replay(ctx context.Context, dir string, env []string, pkg, target, coverPkg, profile string, log io.Writer) ([4]int, error) {
	cmd := WithEnv(Command(ctx, dir, "go", "test", "-count=1", "-run=^"+target+"$", "-timeout=10m", "-coverprofile="+profile, "-coverpkg="+coverPkg, pkg), env)
	out, err := cmd.CombinedOutput()
	fmt.Fprintf(log, "\n$ %s\n%s", strings.Join(cmd.Args, " "), out)
	if err != nil {
		fmt.Fprintf(log, "coverage replay: %v\n", err)
	}
	return CountProfile(profile)
}

// WithEnv adds env to cmd's environment. When env sets PATH, the program is looked
// up again in it (a standard library target runs with a GOROOT copy's bin/go
// first in PATH, and the go found before would be another).
func WithEnv(cmd *exec.Cmd, env []string) *exec.Cmd {
	cmd.Env = append(cmd.Environ(), env...)
	name := cmd.Args[0]
	if strings.ContainsRune(name, filepath.Separator) {
		return cmd
	}
	for _, kv := range env {
		path, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, dir := range filepath.SplitList(path) {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				cmd.Path = p
				break
			}
		}
	}
	return cmd
}

// Fuzzls is the fuzzls binary to run: bin if set, else ./cmd/fuzzls built into
// dir (from the repository root); and its version line, with the git tree.
func Fuzzls(ctx context.Context, bin, dir string) (path, version string, err error) {
	if bin != "" {
		path, err = filepath.Abs(bin)
		if err != nil {
			return "", "", err
		}
	} else {
		path = filepath.Join(dir, "fuzzls")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", path, "./cmd/fuzzls").CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build ./cmd/fuzzls: %v\n%s", err, out)
		}
	}
	if out, err := exec.Command(path, "version").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		version += ", tree " + strings.TrimSpace(string(out))
	}
	return path, version, nil
}

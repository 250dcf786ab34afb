package engines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// Choose returns the entries of suite whose id matches the regular expression
// pattern; none is an error.
func Choose[T any](suite []T, pattern string, id func(T) string) ([]T, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	var chosen []T
	for _, t := range suite {
		if re.MatchString(id(t)) {
			chosen = append(chosen, t)
		}
	}
	if len(chosen) == 0 {
		return nil, fmt.Errorf("no target matches %q", pattern)
	}
	return chosen, nil
}

// Bench is what a benchmark command that runs both engines (compare, compat)
// sets up before it runs them.
type Bench struct {
	Ctx     context.Context // cancelled on an interrupt
	Tmp     string          // scratch, removed by Close
	Logs    string          // <out>/<name>-<stamp>-logs, absolute
	Fuzzls  string          // the fuzzls binary
	Version string          // its version and the tree's

	name, out, stamp string
	stop             context.CancelFunc
}

// Setup checks that the command runs from the repository root (`go run
// ./bench/<name>`), and sets up a run: a context cancelled on an interrupt, the
// output directory out, the scratch and log directories, and the fuzzls binary
// (bin, or built from ./cmd/fuzzls into the scratch directory, said through logf).
func Setup(name, out, bin string, logf func(format string, args ...any)) (*Bench, error) {
	if _, err := os.Stat(filepath.Join("cmd", "fuzzls")); err != nil {
		return nil, errors.New("run from the repository root: go run ./bench/" + name)
	}
	b := &Bench{name: name, out: out, stamp: time.Now().Format("20060102-150405")}
	b.Ctx, b.stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if err := b.setup(bin, logf); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Bench) setup(bin string, logf func(format string, args ...any)) error {
	if err := os.MkdirAll(b.out, 0o755); err != nil {
		return err
	}
	outAbs, err := filepath.Abs(b.out) // runs in other directories write the logs
	if err != nil {
		return err
	}
	if b.Tmp, err = os.MkdirTemp("", "fuzzls-"+b.name+"-"); err != nil {
		return err
	}
	b.Logs = filepath.Join(outAbs, b.name+"-"+b.stamp+"-logs")
	if err := os.MkdirAll(b.Logs, 0o755); err != nil {
		return err
	}
	if bin == "" {
		logf("building fuzzls")
	}
	b.Fuzzls, b.Version, err = Fuzzls(b.Ctx, bin, b.Tmp)
	return err
}

// Close stops listening for interrupts and removes the scratch directory.
func (b *Bench) Close() {
	b.stop()
	if b.Tmp != "" {
		os.RemoveAll(b.Tmp)
	}
}

// Write prints the markdown report md and writes it to <out>/<name>-<stamp>.md,
// the raw results beside it as JSON; it returns the report's path.
func (b *Bench) Write(md string, results any) (string, error) {
	fmt.Print("\n" + md)
	mdPath := filepath.Join(b.out, b.name+"-"+b.stamp+".md")
	if err := os.WriteFile(mdPath, []byte(md), 0o644); err != nil {
		return "", err
	}
	data, _ := json.MarshalIndent(results, "", "  ")
	return mdPath, os.WriteFile(filepath.Join(b.out, b.name+"-"+b.stamp+".json"), data, 0o644)
}

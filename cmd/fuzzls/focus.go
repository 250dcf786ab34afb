package main

import (
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"fuzzls.dev/fuzzls/engine"
)

// focusFlag is fuzz's -focus REF: fuzz the code changed since a git revision first
// (the lines `git diff -U0 REF` reports as added or changed, engine.Options.Focus).
type focusFlag struct{ ref string }

func addFocusFlag(fs *flag.FlagSet) *focusFlag {
	f := &focusFlag{}
	fs.StringVar(&f.ref, "focus", "", "direct fuzzing first toward the code changed since this git revision (e.g. origin/main)")
	return f
}

// options sets opts.Focus from the diff; no -focus leaves it unset.
func (f *focusFlag) options(opts *engine.Options) error {
	if f.ref == "" {
		return nil
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("-focus: not in a git work tree: %v", err)
	}
	top := filepath.Clean(strings.TrimSpace(string(out)))
	// At the top: a pathspec is relative to git's working directory, and the
	// changes of the whole repository count (a dependency in another directory).
	diff := exec.Command("git", "diff", "-U0", "--no-color", "--no-ext-diff", f.ref, "--", "*.go")
	diff.Dir = top
	if out, err = diff.Output(); err != nil {
		return fmt.Errorf("-focus: git diff %s: %v", f.ref, err)
	}
	opts.Focus = &engine.ChangedLines{Files: diffLines(top, string(out))}
	return nil
}

// describe says what the focus is, for the log: "-focus origin/main: 12 changed
// lines in 2 Go files".
func (f *focusFlag) describe(c *engine.ChangedLines) string {
	lines := 0
	for _, rs := range c.Files {
		for _, r := range rs {
			lines += r.End - r.Start + 1
		}
	}
	if len(c.Files) == 0 {
		return fmt.Sprintf("-focus %s: no Go file changed; fuzzing is not directed", f.ref)
	}
	files := "files"
	if len(c.Files) == 1 {
		files = "file"
	}
	return fmt.Sprintf("-focus %s: %d changed lines in %d Go %s", f.ref, lines, len(c.Files), files)
}

// diffLines reads the new side's line ranges of each hunk of a `git diff -U0`
// (absolute paths under top). A hunk that only deletes marks the lines around
// the deletion: the block that held the deleted lines changed.
func diffLines(top, diff string) map[string][]engine.LineRange {
	lines := map[string][]engine.LineRange{}
	file := ""
	for l := range strings.SplitSeq(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			file = ""
			if p, ok := strings.CutPrefix(l, "+++ b/"); ok {
				file = filepath.Join(top, filepath.FromSlash(p))
			}
		case strings.HasPrefix(l, "@@ ") && file != "":
			// @@ -a[,b] +c[,d] @@
			f := strings.Fields(l)
			if len(f) < 3 || !strings.HasPrefix(f[2], "+") {
				continue
			}
			start, count, _ := strings.Cut(f[2][1:], ",")
			c, err := strconv.Atoi(start)
			if err != nil {
				continue
			}
			d := 1
			if count != "" {
				d, _ = strconv.Atoi(count)
			}
			r := engine.LineRange{Start: c, End: c + d - 1}
			if d == 0 {
				r = engine.LineRange{Start: max(c, 1), End: c + 1}
			}
			lines[file] = append(lines[file], r)
		}
	}
	return lines
}

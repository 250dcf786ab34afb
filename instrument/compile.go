package instrument

import (
	"context"
	"errors"
	"fmt"
	"go/scanner"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// compile runs go test -c on pkg with the overlay file ovlPath, building next
// to the binary's final name in dir and renaming it into place, so that
// workers running the old binary keep it; it returns the binary's path. A
// package that does not compile is a *BuildError naming the user's files
// (compileError); a cancelled ctx is ctx's error.
//
// The go command writes to a name of its own (pkg.test.out), which no worker
// runs: when nothing changed since the last build there it skips the link, the
// longest step of a big package's warm build (go-ethereum's trie: most of its
// seconds), and the binary is copied into place. The binary has no DWARF
// (-ldflags=-w, after the user's): stack traces read the symbol table, which
// stays, and the link is faster without it.
func compile(ctx context.Context, pkg *Package, flags BuildFlags, dir, ovlPath string, overlay map[string]string) (string, error) {
	path := filepath.Join(dir, pkg.Name+".test")
	out := path + ".out"
	tmp := fmt.Sprintf("%s.%d.tmp", path, time.Now().UnixNano())
	flags.LDFlags = strings.TrimSpace(flags.LDFlags + " -w")
	args := append([]string{"test", "-c", "-o", out, "-overlay", ovlPath, "-vet=off"}, flags.Args()...)
	cmd := exec.CommandContext(ctx, "go", append(args, ".")...)
	cmd.Dir = pkg.Dir
	pkg.goCommand(cmd, dir)
	unguard := Guard(cmd)
	msgs, err := cmd.CombinedOutput()
	unguard()
	if err == nil {
		if err := copyFile(out, tmp); err != nil {
			os.Remove(tmp)
			return "", err // a full disk's syscall.ENOSPC stays in it
		}
	}
	if err != nil {
		os.Remove(tmp)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if diskFullText(string(msgs)) {
			// No room to write the binary (or the go command's own files): no
			// fault of the user's code, and no build without hooks would fit.
			return "", fmt.Errorf("no room to write the test binary in %s: %s: %w", dir, strings.TrimSpace(string(msgs)), syscall.ENOSPC)
		}
		return "", compileError(pkg, string(msgs), overlay)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}

// add appends err, a parse error (a scanner.ErrorList: one diagnostic a
// message) or any other, to e.
func (e *BuildError) add(err error) {
	var list scanner.ErrorList
	if errors.As(err, &list) {
		for _, se := range list {
			e.Diagnostics = append(e.Diagnostics, Diagnostic{File: se.Pos.Filename, Line: se.Pos.Line, Col: se.Pos.Column, Message: se.Msg})
			e.Output += se.Error() + "\n"
		}
		return
	}
	e.Diagnostics = append(e.Diagnostics, Diagnostic{Message: err.Error()})
	e.Output += err.Error() + "\n"
}

// loadError is the BuildError of a package whose load found errors.
func loadError(pkg *Package) error {
	e := &BuildError{Package: pkg.ImportPath}
	for _, err := range pkg.Errors {
		e.add(err)
		// Errors made by findTargets start with "file:line: ".
		if d := &e.Diagnostics[len(e.Diagnostics)-1]; d.File == "" {
			if m := diagRE.FindStringSubmatch(d.Message); m != nil {
				d.File = m[1]
				d.Line, _ = strconv.Atoi(m[2])
				d.Col, _ = strconv.Atoi(m[3])
				d.Message = m[4]
			}
		}
	}
	return e
}

// posPath matches a file path in a positioned message (as diagRE's does): spaces
// allowed (a module cache under C:\Users\John Smith), and colons not followed by
// a space (a drive letter), so that "go: downloading …" or "vet: x.go:1: …" is
// no path; no brackets, which enclose the physical position.
const posPath = `((?:[^:\[\]]|:[^ ])+?)`

// diagRE matches "file.go:12:5: message" and "file.go:12: message".
var diagRE = regexp.MustCompile(`^((?:[^:]|:[^ ])+?\.go):(\d+):(?:(\d+):)? ?(.*)$`)

// compilerPosRE matches the compiler's positioned messages, whose position may be
// followed by the physical one in brackets when a //line directive moved it:
// "zz_fuzzls_instrumentation.go:1[/dir/x.go:582:5]: message".
var compilerPosRE = regexp.MustCompile(`^` + posPath + `:(\d+)(?::(\d+))?(?:\[` + posPath + `:(\d+)(?::(\d+))?\])?: (.*)$`)

// copyFile copies src to a new file dst, executable.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, in); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// unbacked replaces the overlay's backing files in the go command's output
// with the user's files they stand for. The go command shortens paths in its
// output as strings: the package's directory becomes "." and its parent "..",
// even inside a longer name (a cache directory /w/proj-cache next to a module
// /w/proj prints as "..-cache/…"). So a backing file is found by its tail
// under the cache (the build directory's name, unique by its hash, and below),
// whatever came before it.
func unbacked(out string, overlay map[string]string) string {
	for orig, b := range overlay {
		parts := strings.Split(filepath.ToSlash(b), "/")
		tail := filepath.Join(parts[max(0, len(parts)-3):]...)
		re := regexp.MustCompile(`(?:[A-Za-z]:)?[^\s:\[\]]*` + regexp.QuoteMeta(tail) + `\b`)
		out = re.ReplaceAllLiteralString(out, orig)
	}
	return out
}

// generatedPrefix starts the name of every file and directory fuzzls generates
// (the harness, the runtime, bridges, the //line name of added declarations).
const generatedPrefix = "zz_fuzzls_"

// IsGenerated reports whether path names code fuzzls generated, not the user's:
// such a file exists only in a build's overlay, and a stack frame in it is no
// place to show a user.
func IsGenerated(path string) bool {
	return strings.HasPrefix(filepath.Base(path), generatedPrefix) || strings.Contains(filepath.ToSlash(path), "/"+generatedPrefix)
}

// compileError maps the compiler's output back to the user's files (overlay backing
// files keep the user's line numbers) and parses its positioned messages. A
// message about code fuzzls generated is never placed in a user's file: it has no
// position and says whose code it is about.
func compileError(pkg *Package, out string, overlay map[string]string) error {
	out = unbacked(out, overlay)
	e := &BuildError{Package: pkg.ImportPath, Output: out}
	for _, line := range strings.Split(out, "\n") {
		m := compilerPosRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		file, ln, col := m[1], m[2], m[3]
		if IsGenerated(file) || IsGenerated(m[4]) {
			e.Diagnostics = append(e.Diagnostics, Diagnostic{Message: "fuzzls's generated code does not compile (a fuzzls bug): " + m[7]})
			continue
		}
		if !strings.HasSuffix(file, ".go") {
			if m[4] == "" {
				continue
			}
			file, ln, col = m[4], m[5], m[6] // a //line name that is no Go file: the physical position
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(pkg.Dir, file)
		}
		d := Diagnostic{File: file, Message: m[7]}
		d.Line, _ = strconv.Atoi(ln)
		d.Col, _ = strconv.Atoi(col)
		e.Diagnostics = append(e.Diagnostics, d)
	}
	return e
}

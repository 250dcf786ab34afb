package instrument

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxVarRetries bounds the builds retried without the two-operand hooks on the
// lines the compiler rejected (it reports ten errors at most per package).
const maxVarRetries = 3

// varHooks follows the comparison hooks of two typed operands
// (cmpOptions.Vars) over Build's attempts, and remembers between builds the
// lines the compiler rejected, by their text, so that the next save of the
// package builds once rather than failing on them again. Files are named as
// the compiler names them: the user's file, or a dependency's copy.
type varHooks struct {
	path  string                     // where skip is kept
	lines map[string]hookedLines     // the last attempt's hooked lines
	skip  map[string]map[string]bool // texts of the lines to leave alone
	// dir is the build directory; shared, kept at sharedPath beside all build
	// directories, holds skip for every package's builds, by sharedKey: a
	// dependency's rejected line (go-ethereum's hexutil, which 49 targets
	// link) then fails one build, not the first build of each target.
	dir        string
	sharedPath string
	shared     map[string]map[string]bool
	// hookedPkgs are the import paths the last attempt gave hooks to, each
	// with its module@version if it comes from the module cache.
	hookedPkgs map[string]string
	// plain holds the packages to build without any hooks, each with the
	// compiler's complaint: their hooked build failed in a way leaving out
	// lines does not mend (a language version the module's go line denies).
	// Kept for one Build only: the next save tries the hooks again, since the
	// user may have mended the cause...
	plain map[string]string
	// ...except in a package of the module cache, whose files never change:
	// plainPath keeps those ("importpath module@version" → complaint), so
	// that each save does not pay for a failing build first.
	plainPath   string
	plainCached map[string]string
}

// hookedLines are the lines of one file that got two-operand hooks, and the
// file's source, for the text of a line the compiler rejects.
type hookedLines struct {
	nums map[int]bool
	src  []byte
}

// loadVarHooks reads what earlier builds in dir learned; nothing if unreadable.
func loadVarHooks(dir string) *varHooks {
	vh := &varHooks{path: filepath.Join(dir, "varskip.json"), skip: map[string]map[string]bool{}, plain: map[string]string{},
		plainPath: filepath.Join(dir, "plain.json"), plainCached: map[string]string{},
		dir: dir, sharedPath: filepath.Join(filepath.Dir(dir), "varskip.json"), shared: map[string]map[string]bool{}}
	if data, err := os.ReadFile(vh.path); err == nil {
		json.Unmarshal(data, &vh.skip)
	}
	if data, err := os.ReadFile(vh.sharedPath); err == nil {
		json.Unmarshal(data, &vh.shared)
	}
	if data, err := os.ReadFile(vh.plainPath); err == nil {
		json.Unmarshal(data, &vh.plainCached)
	}
	return vh
}

// save keeps skip and plainCached for later builds (best effort: losing them
// costs a retry).
func (vh *varHooks) save() {
	if os.MkdirAll(filepath.Dir(vh.path), 0o755) != nil {
		return
	}
	data, _ := json.Marshal(vh.skip)
	writeIfChanged(vh.path, data)
	// Other builds may have added to the shared file since it was read.
	shared := map[string]map[string]bool{}
	if data, err := os.ReadFile(vh.sharedPath); err == nil {
		json.Unmarshal(data, &shared)
	}
	for key, texts := range vh.shared {
		if shared[key] == nil {
			shared[key] = map[string]bool{}
		}
		for text := range texts {
			shared[key][text] = true
		}
	}
	data, _ = json.Marshal(shared)
	writeIfChanged(vh.sharedPath, data)
	data, _ = json.Marshal(vh.plainCached)
	writeIfChanged(vh.plainPath, data)
}

// knownPlain marks plain a package of the module cache (modVersion set) that an
// earlier build found could not take hooks.
func (vh *varHooks) knownPlain(importPath, modVersion string) {
	// Only module-cache packages are ever stored, keyed with their version.
	if why, ok := vh.plainCached[importPath+" "+modVersion]; ok && vh.plain[importPath] == "" {
		vh.plain[importPath] = why
	}
}

// sharedKey names file the same in every build directory: a dependency's
// copy by its path under the build directory (mods/<module@version>/…), a
// user's file by its own.
func (vh *varHooks) sharedKey(file string) string {
	if rel, err := filepath.Rel(vh.dir, file); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return file
}

// skipTexts returns the texts of file's lines to leave alone: this package's
// builds' and every build's.
func (vh *varHooks) skipTexts(file string) map[string]bool {
	own, all := vh.skip[file], vh.shared[vh.sharedKey(file)]
	if len(all) == 0 {
		return own
	}
	texts := maps.Clone(all)
	maps.Copy(texts, own)
	return texts
}

// skipped returns the lines of file (source src) to leave alone.
func (vh *varHooks) skipped(file string, src []byte) map[int]bool {
	texts := vh.skipTexts(file)
	if len(texts) == 0 {
		return nil
	}
	lines := map[int]bool{}
	for i, l := range bytes.Split(src, []byte("\n")) {
		if texts[string(bytes.TrimSpace(l))] {
			lines[i+1] = true
		}
	}
	return lines
}

// hooked records the lines of file (source src) that got two-operand hooks.
func (vh *varHooks) hooked(file string, src []byte, lines map[int]bool) {
	vh.lines[file] = hookedLines{lines, src}
}

// lineText returns line n (1-based) of src without surrounding blanks.
func lineText(src []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return string(bytes.TrimSpace(src))
}

// blame adds the hooked lines that the compiler rejected to skip, and reports
// whether there were any. Only messages about a helper's call count (a type
// argument not inferred, a constant overflowing it): the user's own errors
// on such a line are not retried.
func (vh *varHooks) blame(be *BuildError) bool {
	blamed := false
	for _, d := range be.Diagnostics {
		h := vh.lines[d.File]
		if !h.nums[d.Line] || !strings.Contains(d.Message, "Fuzzls") {
			continue
		}
		text := lineText(h.src, d.Line)
		if vh.skipTexts(d.File)[text] {
			continue
		}
		if vh.skip[d.File] == nil {
			vh.skip[d.File] = map[string]bool{}
		}
		vh.skip[d.File][text] = true
		key := vh.sharedKey(d.File)
		if vh.shared[key] == nil {
			vh.shared[key] = map[string]bool{}
		}
		vh.shared[key][text] = true
		blamed = true
	}
	return blamed
}

// blamePackages marks plain the hooked packages whose compiler messages (under
// the "# importpath" headers of the go command's output) are about the hooks:
// they name a helper or the hooks' declarations, or a language feature the
// module's go line denies. It reports whether there were any. A user's own
// errors are not retried: each retry is a build more before the user sees them.
func (vh *varHooks) blamePackages(be *BuildError) bool {
	blamed := false
	pkg := ""
	for line := range strings.Lines(be.Output) {
		line = strings.TrimRight(line, "\n")
		if p, ok := strings.CutPrefix(line, "# "); ok {
			pkg, _, _ = strings.Cut(p, " ")
			continue
		}
		modVersion, hooked := vh.hookedPkgs[pkg]
		if !hooked || vh.plain[pkg] != "" {
			continue
		}
		if strings.Contains(line, "Fuzzls") || strings.Contains(line, "zz_fuzzls_instrumentation.go") ||
			strings.Contains(line, "-lang was set to") {
			vh.plain[pkg] = baseNamed(strings.TrimSpace(line))
			if modVersion != "" {
				vh.plainCached[pkg+" "+modVersion] = vh.plain[pkg]
			}
			blamed = true
		}
	}
	return blamed
}

// warnings says which packages were built without hooks, and why.
func (vh *varHooks) warnings() []string {
	var out []string
	for pkg, why := range vh.plain {
		out = append(out, fmt.Sprintf("comparison hooks left out of %s: the build with them failed: %s", pkg, why))
	}
	sort.Strings(out)
	return out
}

// baseNamed shortens a compiler message's file to its base name: the file is in
// an instrumented copy under the cache directory, a path that means nothing to
// the user, while the package is named beside it.
func baseNamed(msg string) string {
	file, rest, ok := strings.Cut(msg, ".go:")
	if !ok || strings.ContainsAny(file, " \t") {
		return msg
	}
	return filepath.Base(file) + ".go:" + rest
}

package instrument

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// maxVarRetries bounds the builds retried without the two-operand hooks on the
// lines the compiler rejected (it reports ten errors at most per package).
const maxVarRetries = 3

// varHooks follows the comparison hooks of two typed operands
// (CmpOptions.Vars) over Build's attempts, and remembers between builds the
// lines the compiler rejected, by their text, so that the next save of the
// package builds once rather than failing on them again. Files are named as
// the compiler names them: the user's file, or a dependency's copy.
type varHooks struct {
	path  string                     // where skip is kept
	lines map[string]map[int]string  // the last attempt's hooked lines: number → text
	skip  map[string]map[string]bool // texts of the lines to leave alone
}

// loadVarHooks reads what earlier builds in dir learned; nothing if unreadable.
func loadVarHooks(dir string) *varHooks {
	vh := &varHooks{path: filepath.Join(dir, "varskip.json"), skip: map[string]map[string]bool{}}
	if data, err := os.ReadFile(vh.path); err == nil {
		json.Unmarshal(data, &vh.skip)
	}
	return vh
}

// save keeps skip for later builds (best effort: losing it costs a retry).
func (vh *varHooks) save() {
	data, _ := json.Marshal(vh.skip)
	if os.MkdirAll(filepath.Dir(vh.path), 0o755) == nil {
		writeIfChanged(vh.path, data)
	}
}

// skipped returns the lines of file (source src) to leave alone.
func (vh *varHooks) skipped(file string, src []byte) map[int]bool {
	texts := vh.skip[file]
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
	m := map[int]string{}
	vh.lines[file] = m
	for i, l := range bytes.Split(src, []byte("\n")) {
		if lines[i+1] {
			m[i+1] = string(bytes.TrimSpace(l))
		}
	}
}

// blame adds the hooked lines that the compiler rejected to skip, and reports
// whether there were any. Only messages about a helper's call count (a type
// argument not inferred, a constant overflowing it): the user's own errors
// on such a line are not retried.
func (vh *varHooks) blame(be *BuildError) bool {
	blamed := false
	for _, d := range be.Diagnostics {
		text, ok := vh.lines[d.File][d.Line]
		if !ok || vh.skip[d.File][text] || !strings.Contains(d.Message, "Fuzzls") {
			continue
		}
		if vh.skip[d.File] == nil {
			vh.skip[d.File] = map[string]bool{}
		}
		vh.skip[d.File][text] = true
		blamed = true
	}
	return blamed
}

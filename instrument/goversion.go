package instrument

import (
	"bytes"
	"go/build/constraint"
	"strings"
)

// runtimeGoVersion is the language version the runtime's sources are written in.
// They are compiled as a package of the user's module, whose go.mod may name an
// older one (go 1.20, say): a //go:build line with a go version sets the file's
// own, as it may from Go 1.21 on.
const runtimeGoVersion = "go1.26"

// withGoVersion gives Go source src the language version version (such as
// "go1.26") through its build constraint: added as a line of its own if src has
// none, and-ed with the one it has otherwise.
func withGoVersion(src []byte, version string) []byte {
	lines := bytes.SplitAfter(src, []byte("\n"))
	for i, line := range lines {
		text := strings.TrimSpace(string(line))
		if strings.HasPrefix(text, "package ") {
			break
		}
		if !constraint.IsGoBuild(text) {
			continue
		}
		expr, err := constraint.Parse(text)
		if err != nil {
			return src // the build reports it
		}
		and := &constraint.AndExpr{X: expr, Y: &constraint.TagExpr{Tag: version}}
		lines[i] = []byte("//go:build " + and.String() + "\n")
		return bytes.Join(lines, nil)
	}
	return append([]byte("//go:build "+version+"\n\n"), src...)
}

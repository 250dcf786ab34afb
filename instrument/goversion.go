package instrument

import (
	"bytes"
	"go/build/constraint"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Language versions. The runtime's sources and the comparison hooks (generic
// helpers) are compiled as part of the user's module, whose go.mod may name an
// older language version than they are written in. A //go:build line with a go
// version sets a file's own version, as it may from Go 1.21 on.

// runtimeGoVersion is the language version the runtime's sources are written in.
const runtimeGoVersion = "go1.26"

// hooksGoVersion is the version given to instrumented files of a module whose go
// line is older: the hooks' helpers are generic (go1.18), and their comparable
// constraint is satisfied by interface types (an error, a reflect.Type) only from
// go1.20. It is the oldest a //go:build line can set, and one that changes the
// meaning of no code valid in the older versions (per-iteration loop variables
// came with go1.22).
const hooksGoVersion = "go1.21"

// predatesHooks reports whether a module with go line version (as go.mod has it:
// "1.16", "1.21.0") is older than hooksGoVersion.
func predatesHooks(version string) bool {
	major, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	return major == "1" && err == nil && n < 21
}

// moduleGoVersion is the go line of a module's go.mod: a go.mod without one
// means go 1.16 to the toolchain (gopkg.in/yaml.v3's, for one).
func moduleGoVersion(m *packages.Module) string {
	if m.Replace != nil {
		m = m.Replace
	}
	if m.GoVersion == "" {
		return "1.16"
	}
	return m.GoVersion
}

// withGoVersion gives Go source src the language version version (such as
// "go1.26") through its build constraint: and-ed with the //go:build line src has,
// in place; else a //go:build line of its own is added at the top, and-ed with the
// old-style // +build lines if there are any (a //go:build line makes the toolchain
// ignore those). If lineName is not empty, an added line is followed by a //line
// directive so that the original lines keep their numbers under that file name.
func withGoVersion(src []byte, version, lineName string) []byte {
	lines := bytes.SplitAfter(src, []byte("\n"))
	var plus []constraint.Expr
	for i, line := range lines {
		text := strings.TrimSpace(string(line))
		if strings.HasPrefix(text, "package ") {
			break
		}
		switch {
		case constraint.IsGoBuild(text):
			expr, err := constraint.Parse(text)
			if err != nil {
				return src // the build reports it
			}
			expr = &constraint.AndExpr{X: expr, Y: &constraint.TagExpr{Tag: version}}
			lines[i] = []byte("//go:build " + expr.String() + "\n")
			return bytes.Join(lines, nil)
		case constraint.IsPlusBuild(text):
			if expr, err := constraint.Parse(text); err == nil {
				plus = append(plus, expr)
			}
		}
	}
	var expr constraint.Expr = &constraint.TagExpr{Tag: version}
	for i := len(plus) - 1; i >= 0; i-- {
		expr = &constraint.AndExpr{X: plus[i], Y: expr}
	}
	head := "//go:build " + expr.String() + "\n\n"
	if lineName != "" {
		head += "//line " + lineName + ":1\n"
	}
	return append([]byte(head), src...)
}

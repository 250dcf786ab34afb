package engine

// How to replay a crash outside fuzzls's workers, once its input is a seed:
// the command line, Delve's arguments, shell quoting. The CLI's report, its
// SARIF and the daemon's hover and "Debug this crash" all print these.

import (
	"fmt"
	"regexp"
	"strings"
)

// ReplayCommand is the command, run in the target's directory, that replays c
// once its input is the seed named seed (testdata/fuzz/FuzzXxx/<seed>): go test
// -run, or, for a kind go test does not check (KindInfo.GoTestMisses), fuzzls
// fuzz -run with the flag that turns the check on (Options.ReplaySeeds), and
// why then says why not go test.
func (c *Crash) ReplayCommand(seed string) (cmd, why string) {
	if c.Layout != "" {
		return fmt.Sprintf("fuzzls fuzz%s -run=%s/%s .", c.ReplayFlags(), c.Target.Name, seed), GoTestCannot(c.Target.Name, c.Layout)
	}
	if k := LookupKind(c.Kind); k.GoTestMisses != "" {
		return fmt.Sprintf("fuzzls fuzz %s%s -run=%s/%s .", k.Flag, c.ReplayFlags(), c.Target.Name, seed),
			k.GoTestMisses + ", so go test -run passes on this input"
	}
	return fmt.Sprintf("go test%s -run=%s/%s", c.ReplayFlags(), c.Target.Name, seed), ""
}

// GoTestCannot says why go test cannot run target, which takes arguments it
// refuses and fuzzls fuzzes field by field (layout, as fuzzrt.Layout spells
// it): "go test cannot run FuzzX: argument config.Config is a struct; fuzzls
// fuzzes it field by field".
func GoTestCannot(target, layout string) string {
	var structs, texts, binaries []string
	depth, start := 0, 0
	for i := 0; i <= len(layout); i++ {
		if i < len(layout) {
			switch layout[i] {
			case '{':
				depth++
				continue
			case '}':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		arg := strings.TrimSpace(layout[start:i])
		start = i + 1
		switch {
		case strings.HasSuffix(arg, "}"):
			structs = append(structs, arg[:strings.IndexByte(arg, '{')])
		case strings.HasSuffix(arg, "(text)"):
			texts = append(texts, strings.TrimSuffix(arg, "(text)"))
		case strings.HasSuffix(arg, "(bytes)"):
			binaries = append(binaries, strings.TrimSuffix(arg, "(bytes)"))
		}
	}
	var parts []string
	say := func(names []string, one, many string) {
		switch len(names) {
		case 0:
		case 1:
			parts = append(parts, "argument "+names[0]+" is "+one)
		default:
			parts = append(parts, "arguments "+strings.Join(names, ", ")+" are "+many)
		}
	}
	say(structs, "a struct", "structs")
	say(texts, "an encoding.TextUnmarshaler", "encoding.TextUnmarshalers")
	say(binaries, "an encoding.BinaryUnmarshaler", "encoding.BinaryUnmarshalers")
	it, its := "it", "its"
	if len(structs)+len(texts)+len(binaries) > 1 {
		it, its = "them", "their"
	}
	how := "field by field"
	switch {
	case len(structs) > 0:
	case len(binaries) == 0:
		how = "through " + its + " text"
	case len(texts) == 0:
		how = "through " + its + " bytes"
	default:
		how = "through their text and bytes"
	}
	return fmt.Sprintf("go test cannot run %s: %s; fuzzls fuzzes %s %s", target, strings.Join(parts, ", "), it, how)
}

// SeedRun is go test's -run pattern that runs the seed named seed of t's
// corpus (testdata/fuzz/<t.Name>/<seed>) alone.
func SeedRun(t Target, seed string) string {
	return "^" + regexp.QuoteMeta(t.Name) + "$/^" + regexp.QuoteMeta(seed) + "$"
}

// DlvTestArgs are the arguments of Delve's dlv that build c's target's test
// binary, with the build flags of the build that found c, and run the seed
// named seed alone under the debugger; dlv runs in the target's package
// directory.
func DlvTestArgs(c *Crash, seed string) []string {
	args := []string{"test"}
	if len(c.BuildFlags) > 0 {
		args = append(args, "--build-flags="+strings.TrimSpace(c.ReplayFlags()))
	}
	return append(args, ".", "--", "-test.run="+SeedRun(c.Target, seed))
}

// ShellJoin quotes each argument for a POSIX shell, separated by spaces.
func ShellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// ShellCommand is a command line for a POSIX shell that runs name with args in dir.
func ShellCommand(dir, name string, args ...string) string {
	return fmt.Sprintf("cd %s && %s %s", ShellQuote(dir), ShellQuote(name), ShellJoin(args))
}

// ReplayFlags are the crash's BuildFlags for a shell command line, each after a
// space: "" or " -race -tags=integration".
func (c *Crash) ReplayFlags() string {
	var b strings.Builder
	for _, a := range c.BuildFlags {
		b.WriteString(" " + ShellQuote(a))
	}
	return b.String()
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package instrument

import (
	"context"
	"errors"
	"os/exec"
	"sort"
	"strings"
)

// BuildFlags are the go test flags that mean something for fuzzing, parsed once:
// the package load (go list) and the build (go test -c) both get them, so a file
// behind `//go:build integration` is loaded, instrumented and built alike.
// The zero value is a plain build. BuildFlags is comparable.
type BuildFlags struct {
	Tags    string // -tags: comma-separated, sorted, without duplicates
	Race    bool   // -race: the race detector
	LDFlags string // -ldflags, as given (the go command splits it)
	GCFlags string // -gcflags, as given
}

// ParseBuildFlags reads go command flags as vscode-go's go.buildFlags lists them:
// "-tags=a,b", "-tags", "a b", "-race", "-ldflags=-X main.v=1", "-gcflags=all=-N -l"
// ("--flag" as "-flag"). Flags other than these are refused (the error names
// them); the ones understood are returned all the same.
func ParseBuildFlags(args []string) (BuildFlags, error) {
	var f BuildFlags
	var bad, errs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") {
			bad = append(bad, a)
			continue
		}
		switch name {
		case "race":
			switch value {
			case "", "true":
				f.Race = true
			case "false":
				f.Race = false
			default:
				bad = append(bad, a)
			}
			continue
		case "tags", "ldflags", "gcflags":
		default:
			bad = append(bad, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				errs = append(errs, a+" needs a value")
				continue
			}
			i++
			value = args[i]
		}
		switch name {
		case "tags":
			f.Tags = value
		case "ldflags":
			f.LDFlags = value
		case "gcflags":
			f.GCFlags = value
		}
	}
	f.Tags = normalTags(f.Tags)
	if len(bad) > 0 {
		errs = append(errs, "unsupported build flags "+strings.Join(bad, " ")+" (fuzzls takes -tags, -race, -ldflags and -gcflags)")
	}
	if len(errs) > 0 {
		return f, errors.New(strings.Join(errs, "; "))
	}
	return f, nil
}

// normalTags is a -tags value as a sorted comma-separated list (the go command
// also accepts the older space-separated form).
func normalTags(s string) string {
	seen := map[string]bool{}
	var tags []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if !seen[t] {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	sort.Strings(tags)
	return strings.Join(tags, ",")
}

// Args are the flags as the go command takes them, in a fixed order.
func (f BuildFlags) Args() []string {
	var args []string
	if t := normalTags(f.Tags); t != "" {
		args = append(args, "-tags="+t)
	}
	if f.Race {
		args = append(args, "-race")
	}
	if f.LDFlags != "" {
		args = append(args, "-ldflags="+f.LDFlags)
	}
	if f.GCFlags != "" {
		args = append(args, "-gcflags="+f.GCFlags)
	}
	return args
}

// key tells builds with different flags apart in the cache: "" for none, so a
// plain build keeps the directory it always had.
func (f BuildFlags) key() string {
	args := f.Args()
	if len(args) == 0 {
		return ""
	}
	return "\x00" + strings.Join(args, "\x00")
}

// checkRace says in one sentence why a -race build cannot work here, before the
// go command says "-race requires cgo; enable cgo by setting CGO_ENABLED=1",
// which is misleading when the cause is a missing C compiler (the go command
// turns cgo off when it finds none).
func (f BuildFlags) checkRace(ctx context.Context, dir string) error {
	if !f.Race {
		return nil
	}
	cmd := exec.CommandContext(ctx, "go", "env", "CGO_ENABLED", "CC")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil // the build will say what is wrong
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil
	}
	cgo, cc := strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
	ccName, _, _ := strings.Cut(cc, " ")
	_, lookErr := exec.LookPath(ccName)
	switch {
	case cgo == "1" && lookErr == nil:
		return nil
	case lookErr != nil:
		return errors.New("-race needs cgo, and cgo needs a C compiler: " + ccName + " is not found on PATH; install one (e.g. apt-get install gcc) or set CC")
	default:
		return errors.New("-race needs cgo, which is off here (CGO_ENABLED=" + cgo + "); set CGO_ENABLED=1")
	}
}

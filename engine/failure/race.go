package failure

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"fuzzls.dev/fuzzls/protocol"
)

// A race (protocol.KindRace) is a data race the race detector reported (a -race
// build). The worker runs with GORACE=halt_on_error=1 (RaceEnv), so the first
// report ends it with the input in shared memory, and is read from its stderr:
//
//	==================
//	WARNING: DATA RACE
//	Write at 0x00c000012345 by goroutine 8:
//	  example.com/m.Count.func1()
//	      /src/m/m.go:13 +0x44
//
//	Previous write at 0x00c000012345 by goroutine 7:
//	  example.com/m.Count()
//	      /src/m/m.go:15 +0x100
//
//	Goroutine 8 (running) created at:
//	  ...
//	==================
//
// Either access may come first on another run, so the failure is placed at the
// one whose place in the user's code sorts first, and the other is part of its
// signature: the same race is the same failure whichever goroutine won.

// raceReport starts the race detector's report.
const raceReport = "WARNING: DATA RACE"

// RaceEnv is the GORACE setting of a race build's worker: stop at the first
// report, and do not wait a second at exit for other goroutines' reports. The
// user's own GORACE options (history_size...) are kept.
func RaceEnv() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" halt_on_error=1 atexit_sleep_ms=0")
}

// raceAccessRE matches the heading of an access section of a race report.
var raceAccessRE = regexp.MustCompile(`^((?:Previous )?(?:[Rr]ead|[Ww]rite)) at \S+ by (goroutine \d+|main goroutine):$`)

// raceSection is one part of a race report: a heading and its frames.
type raceSection struct {
	heading string
	access  string // "Write", "Previous read"...; "" for a goroutine's creation site
	by      string // "goroutine 8"
	frames  []Frame
	user    *Frame // the first frame in the user's code
}

// classifyRace reads the first race report in text.
func classifyRace(text string, u UserFrames) *Failure {
	i := strings.Index(text, raceReport)
	report := text[i+len(raceReport):]
	if j := strings.Index(report, "=================="); j >= 0 {
		report = report[:j]
	}
	var sections []*raceSection
	var lines []string
	flush := func() {
		if len(lines) == 0 {
			return
		}
		sec := &raceSection{heading: strings.TrimSpace(lines[0]), frames: u.frames(lines)}
		if m := raceAccessRE.FindStringSubmatch(sec.heading); m != nil {
			sec.access, sec.by = m[1], m[2]
		}
		for k := range sec.frames {
			if u.is(sec.frames[k].File) {
				sec.user = &sec.frames[k]
				break
			}
		}
		sections = append(sections, sec)
		lines = nil
	}
	for _, l := range strings.Split(report, "\n") {
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		lines = append(lines, l)
	}
	flush()
	var accesses []*raceSection
	for _, sec := range sections {
		if sec.access != "" && len(accesses) < 2 {
			accesses = append(accesses, sec)
		}
	}
	f := &Failure{Kind: protocol.KindRace, Output: strings.TrimSpace(raceReport + report)}
	// The access placed first: the one in the user's code that sorts first.
	if len(accesses) == 2 && accesses[1].user != nil && (accesses[0].user == nil || raceLess(*accesses[1].user, *accesses[0].user)) {
		accesses[0], accesses[1] = accesses[1], accesses[0]
	}
	var parts []string
	for _, a := range accesses {
		at := ""
		if a.user != nil {
			at = fmt.Sprintf(" at %s:%d", filepath.Base(a.user.File), a.user.Line)
		}
		parts = append(parts, fmt.Sprintf("%s by %s%s", strings.ToLower(a.access), a.by, at))
	}
	f.Message = "data race: " + strings.Join(parts, ", ")
	// Frames: both accesses' stacks, then where their goroutines were created,
	// so that the diagnostic sits on the first and points at the rest.
	ordered := append([]*raceSection(nil), accesses...)
	for _, sec := range sections {
		if sec.access == "" {
			ordered = append(ordered, sec)
		}
	}
	for _, sec := range ordered {
		f.Frames = append(f.Frames, sec.frames...)
	}
	if len(accesses) > 0 && accesses[0].user != nil {
		f.File, f.Line, f.Func = accesses[0].user.File, accesses[0].user.Line, accesses[0].user.Function
	}
	if len(accesses) == 2 && accesses[1].user != nil {
		f.peer = fmt.Sprintf("%s:%d", filepath.Base(accesses[1].user.File), accesses[1].user.Line)
	}
	return f
}

// raceLess orders two places in the user's code.
func raceLess(a, b Frame) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Line < b.Line
}

package daemon

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/engine/fuzzrt"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// diagnosticSource is the source of every diagnostic the daemon publishes.
const diagnosticSource = "fuzzls"

// publishDiagnostics recomputes the diagnostics of every file from the known
// crashes and build errors and sends those that changed (an empty list clears a
// file). Calls are serialized so the client sees them in order.
func (s *server) publishDiagnostics() {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()

	want := map[string]fileDiagnostics{} // by pathKey
	add := func(path string, d protocol.Diagnostic) {
		k := pathKey(path)
		fd := want[k]
		if fd.path == "" {
			fd.path = path
		}
		fd.diags = append(fd.diags, d)
		want[k] = fd
	}
	s.mu.Lock()
	crashes := make([]*engine.Crash, 0, len(s.crashes))
	for _, c := range s.crashes {
		crashes = append(crashes, c)
	}
	builds := make([]*engine.BuildError, 0, len(s.buildErrs))
	for _, be := range s.buildErrs {
		builds = append(builds, be)
	}
	s.mu.Unlock()
	sort.Slice(crashes, func(i, j int) bool { return crashes[i].ID < crashes[j].ID })

	for _, c := range crashes {
		path, d, ok := s.crashDiagnostic(c)
		if ok {
			add(path, d)
		}
	}
	for _, be := range builds {
		for _, bd := range be.Diagnostics {
			m, _, err := s.fileText(bd.File)
			if err != nil {
				continue
			}
			r := m.lineRange(bd.Line)
			r.Start = m.enginePosition(bd.Line, bd.Col)
			add(bd.File, protocol.Diagnostic{
				Range:    r,
				Severity: protocol.DiagnosticSeverityError,
				Code:     protocol.String("build"),
				Source:   protocol.NewOptional(diagnosticSource),
				Message:  protocol.String(bd.Message),
			})
		}
	}

	s.blockerDiagnostics(add)

	s.mu.Lock()
	var send []fileDiagnostics
	for k, fd := range want {
		if old, ok := s.published[k]; !ok || !reflect.DeepEqual(old.diags, fd.diags) {
			if ok {
				fd.path = old.path // the spelling the client has them under
			}
			s.published[k] = fd
			send = append(send, fd)
		}
	}
	for k, old := range s.published {
		if _, ok := want[k]; !ok {
			delete(s.published, k)
			send = append(send, fileDiagnostics{path: old.path})
		}
	}
	s.mu.Unlock()

	sort.Slice(send, func(i, j int) bool { return send[i].path < send[j].path })
	for _, fd := range send {
		ds := fd.diags
		if ds == nil {
			ds = []protocol.Diagnostic{}
		}
		err := s.client.PublishDiagnostics(s.ctx, &protocol.PublishDiagnosticsParams{URI: fileURI(fd.path), Diagnostics: ds})
		if err != nil && s.ctx.Err() == nil {
			s.logf(protocol.MessageTypeWarning, "publishDiagnostics: %v", err)
		}
	}
}

// fileDiagnostics are the diagnostics of one file, under the spelling of its
// path they are published with.
type fileDiagnostics struct {
	path  string
	diags []protocol.Diagnostic
}

// crashLocation is where a crash's diagnostic goes: the engine's location when
// it is inside the workspace (the first frame in the user's code, or for a
// stack overflow the call that recursed), else the first frame of the stack
// inside the workspace, else the target; and the other in-workspace frames.
func (s *server) crashLocation(c *engine.Crash) (file string, line int, others []failure.Frame) {
	if c.File != "" && c.Line > 0 && s.inWorkspace(c.File) {
		file, line = c.File, c.Line
	}
	chosen := false // the frame at the engine's location is not among the others
	for _, f := range c.Frames {
		if f.File == "" || f.Line <= 0 || !s.inWorkspace(f.File) {
			continue
		}
		switch {
		case file == "":
			file, line, chosen = f.File, f.Line, true
		case !chosen && samePath(f.File, file) && f.Line == line:
			chosen = true
		default:
			others = append(others, f)
		}
	}
	if file == "" {
		file, line = c.Target.File, c.Target.Line
	}
	return file, line, others
}

// crashDiagnostic builds the diagnostic of c.
func (s *server) crashDiagnostic(c *engine.Crash) (string, protocol.Diagnostic, bool) {
	file, line, others := s.crashLocation(c)
	if file == "" {
		return "", protocol.Diagnostic{}, false
	}
	m, _, err := s.fileText(file)
	if err != nil {
		return "", protocol.Diagnostic{}, false
	}
	var related []protocol.DiagnosticRelatedInformation
	for _, f := range others {
		if fm, _, err := s.fileText(f.File); err == nil {
			related = append(related, protocol.DiagnosticRelatedInformation{
				Location: protocol.Location{URI: fileURI(f.File), Range: fm.lineRange(f.Line)},
				Message:  "called from " + shortFunc(f.Function),
			})
		}
	}
	if tm, _, err := s.fileText(c.Target.File); err == nil && c.Target.Line > 0 {
		related = append(related, protocol.DiagnosticRelatedInformation{
			Location: protocol.Location{URI: fileURI(c.Target.File), Range: tm.lineRange(c.Target.Line)},
			Message:  "fuzz target " + c.Target.Name,
		})
	}
	data, _ := json.Marshal(fproto.CrashData{
		Crash:     c.ID,
		Target:    fproto.TargetID{Package: c.Target.Package, Name: c.Target.Name},
		Kind:      string(c.Kind),
		Input:     carried(c.Input),
		Minimized: c.Minimized,
	})
	severity := protocol.DiagnosticSeverityError
	if c.Kind == fproto.KindSlow { // not a failure
		severity = protocol.DiagnosticSeverityWarning
	}
	return file, protocol.Diagnostic{
		Range:              m.lineRange(line),
		Severity:           severity,
		Code:               protocol.String(c.Kind),
		Source:             protocol.NewOptional(diagnosticSource),
		Message:            protocol.String(crashMessage(c)),
		RelatedInformation: related,
		Data:               data,
	}, true
}

// maxCarriedInput bounds the input a diagnostic's data and a code action's edit
// carry: the client gets a file's diagnostics again on every change to them and
// asks for code actions at each move of the cursor, so a failing seed of
// megabytes would travel every time. A longer input goes only where the user
// asks for it: fuzzls.showInput returns it, fuzzls.addToCorpus writes it.
const maxCarriedInput = 64 << 10

// carried is the input a diagnostic's data carries: the input, or "" past
// maxCarriedInput.
func carried(input string) string {
	if len(input) > maxCarriedInput {
		return ""
	}
	return input
}

// crashMessage is the failure's message, then the target called with the
// input in short form, and whether minimization is still running:
//
//	runtime error: integer divide by zero
//	FuzzEval("0/0") · minimizing…
func crashMessage(c *engine.Crash) string {
	msg := strings.TrimSpace(c.Message)
	if msg == "" {
		msg = string(c.Kind)
	}
	if lines := strings.SplitN(msg, "\n", 4); len(lines) > 3 {
		msg = strings.Join(lines[:3], "\n") + "\n…"
	}
	call := fmt.Sprintf("%s(%s)", c.Target.Name, shortInput(c.Input, 80))
	if c.Minimized {
		return msg + "\n" + call
	}
	return msg + "\n" + call + " · minimizing…"
}

// inputArgs returns the Go expressions of an input in the `go test fuzz v1`
// format, one per argument of the fuzz function: the lines of its corpus file
// after the header and, for a target fuzzed field by field, its layout line.
func inputArgs(input string) []string {
	lines := strings.Split(strings.TrimSuffix(string(corpusFile(input)), "\n"), "\n")
	if len(lines) > 1 && strings.HasPrefix(lines[1], fuzzrt.LayoutPrefix) {
		return lines[2:]
	}
	return lines[1:]
}

// shortInput shows the arguments with string(…) conversions dropped, cut to
// max runes.
func shortInput(input string, max int) string {
	args := inputArgs(input)
	for i, a := range args {
		if inner, ok := strings.CutPrefix(a, "string("); ok && strings.HasSuffix(inner, ")") && strings.HasPrefix(inner, `"`) {
			args[i] = strings.TrimSuffix(inner, ")")
		}
	}
	s := strings.Join(args, ", ")
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return s
}

// shortFunc drops the import path from a function name:
// "example.com/calc.(*parser).term" → "calc.(*parser).term".
func shortFunc(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// crashesAt returns the known crashes whose diagnostic is on line (the
// engine's, 1-based) of path.
func (s *server) crashesAt(path string, line int) []*engine.Crash {
	s.mu.Lock()
	all := make([]*engine.Crash, 0, len(s.crashes))
	for _, c := range s.crashes {
		all = append(all, c)
	}
	s.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	var out []*engine.Crash
	for _, c := range all {
		if f, l, _ := s.crashLocation(c); samePath(f, path) && l == line {
			out = append(out, c)
		}
	}
	return out
}

// crash returns the known crash id.
func (s *server) crash(id string) *engine.Crash {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.crashes[id]
}

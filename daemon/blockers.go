package daemon

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// Blockers in the editor: the hover on an uncovered block behind a reached
// comparison says what fuzzing fed the comparison, and (setting blockers) an
// Information diagnostic at the comparison says it too. The engine computes
// them (engine/blockers.go); the daemon asks for them on a session's stats, at
// most every blockersEvery, and for the hover when it is asked.

// blockersEvery bounds how often a session's blockers are recomputed for the
// diagnostics: each time parses the files of the comparisons recorded.
const blockersEvery = 3 * time.Second

// blockersOf are a session's blockers as last computed.
type blockersOf struct {
	at   time.Time
	list []engine.Blocker
}

// updateBlockers recomputes t's blockers if they are due and the setting shows
// them, and republishes the diagnostics when they changed.
func (s *server) updateBlockers(t engine.Target) {
	s.mu.Lock()
	show := s.settings.Blockers
	s.mu.Unlock()
	if show {
		s.currentBlockers(t.ID())
	}
}

// currentBlockers returns the blockers of the session id, recomputed if they
// are older than blockersEvery, and republishes the diagnostics when they
// changed (nil: no such session).
func (s *server) currentBlockers(id string) []engine.Blocker {
	s.mu.Lock()
	sess := s.sessions[id]
	prev := s.blockers[id]
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	if time.Since(prev.at) < blockersEvery {
		return prev.list
	}
	list := sess.fs.Blockers()
	s.mu.Lock()
	s.blockers[id] = blockersOf{at: time.Now(), list: list}
	s.mu.Unlock()
	if !reflect.DeepEqual(prev.list, list) {
		s.publishDiagnostics()
	}
	return list
}

// commandBlockers answers fuzzls.blockers: the target's top blockers, for the
// Fuzzing view.
func (s *server) commandBlockers(args []protocol.LSPAny) (any, error) {
	var id fproto.TargetID
	if err := decodeArg(args, &id); err != nil {
		return nil, err
	}
	tid := engine.Target{Package: id.Package, Name: id.Name}.ID()
	res := fproto.BlockersResult{Blockers: []fproto.Blocker{}}
	list := s.currentBlockers(tid)
	for _, b := range list[:min(len(list), engine.TopBlockers)] {
		m, _, err := s.fileText(b.File)
		if err != nil {
			continue
		}
		r := m.lineRange(b.Line)
		res.Blockers = append(res.Blockers, fproto.Blocker{
			URI:   string(fileURI(b.File)),
			Range: fproto.Range{Start: toFProto(r.Start), End: toFProto(r.End)},
			Expr:  b.Expr, Want: b.Want, Nearest: b.Nearest, Frequent: b.Frequent, FrequentCount: b.FrequentCount,
			Count: b.Count, Behind: b.Behind, Message: b.Message(),
		})
	}
	return res, nil
}

// blockerDiagnostics are the Information diagnostics of the running sessions'
// blockers, by file (none when the setting is off).
func (s *server) blockerDiagnostics(add func(path string, d protocol.Diagnostic)) {
	s.mu.Lock()
	var list []engine.Blocker
	if s.settings.Blockers {
		for id, b := range s.blockers {
			if s.sessions[id] != nil {
				list = append(list, b.list...)
			}
		}
	}
	s.mu.Unlock()
	for _, b := range list {
		m, _, err := s.fileText(b.File)
		if err != nil {
			continue
		}
		r := m.lineRange(b.Line)
		add(b.File, protocol.Diagnostic{
			Range:    r,
			Severity: protocol.DiagnosticSeverityInformation,
			Code:     protocol.String("blocker"),
			Source:   protocol.NewOptional(diagnosticSource),
			Message:  protocol.String(fmt.Sprintf("not covered past here: %s; %d blocks behind", b.Message(), b.Behind)),
		})
	}
}

// sessionBlocker is a blocker with the session it is of.
type sessionBlocker struct {
	sess *session
	engine.Blocker
}

// blockersIn returns the blockers, asked of the running sessions now, whose
// comparison is on the lines first to last of path or whose uncovered block
// holds one of them.
func (s *server) blockersIn(path string, first, last int) []sessionBlocker {
	var out []sessionBlocker
	for _, id := range s.sessionIDs(func(sess *session) bool { return sess.fs.DependsOn(path) }) {
		s.mu.Lock()
		sess := s.sessions[id]
		s.mu.Unlock()
		if sess == nil {
			continue
		}
		for _, b := range sess.fs.Blockers() {
			if samePath(b.File, path) && (first <= b.Line && b.Line <= last || b.Block.StartLine <= last && first <= b.Block.EndLine) {
				out = append(out, sessionBlocker{sess, b})
			}
		}
	}
	return out
}

// solveTimeout bounds the search for an input that takes a blocker's branch
// in a code action request.
const solveTimeout = 10 * time.Second

// blockerActions offers, at each blocker of the lines first to last of path
// whose branch the engine finds an input for (Session.SolveBlocker), "Add as
// seed": the input put in the target's seed corpus by a WorkspaceEdit.
func (s *server) blockerActions(ctx context.Context, path string, first, last int, diags []protocol.Diagnostic) []protocol.CommandOrCodeAction {
	s.mu.Lock()
	createFiles := s.caps.createFiles
	s.mu.Unlock()
	if !createFiles {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, solveTimeout)
	defer cancel()
	quickfix := protocol.CodeActionKindQuickFix
	var actions []protocol.CommandOrCodeAction
	for _, b := range s.blockersIn(path, first, last) {
		input, err := b.sess.fs.SolveBlocker(ctx, b.Blocker)
		if err != nil || input == "" {
			continue
		}
		edit, err := s.corpusEdit(b.sess.target, []string{input})
		if err != nil {
			continue
		}
		var ds []protocol.Diagnostic
		for _, d := range diags {
			if code, ok := d.Code.(protocol.String); ok && code == "blocker" && int(d.Range.Start.Line)+1 == b.Line {
				ds = append(ds, d)
			}
		}
		actions = append(actions, &protocol.CodeAction{
			Title:       fmt.Sprintf("Add as seed of %s: an input that takes this branch (`%s`)", b.sess.target.Name, b.Expr),
			Kind:        &quickfix,
			Diagnostics: ds,
			Edit:        edit,
		})
	}
	return actions
}

func blockerMarkdown(b engine.Blocker) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "**Not covered: fuzzing has not taken this branch** (%d uncovered blocks of the function behind it)\n\n", b.Behind)
	fmt.Fprintf(&sb, "Compared `%s` (line %d), %d times in comparison rounds:\n\n", b.Expr, b.Line, b.Count)
	fmt.Fprintf(&sb, "- nearest: `%s`\n", b.Nearest)
	fmt.Fprintf(&sb, "- most frequent: `%s` (%d of %d)\n", b.Frequent, b.FrequentCount, b.Count)
	if b.Want != "" {
		fmt.Fprintf(&sb, "- wanted: `%s`\n", b.Want)
	}
	return sb.String()
}

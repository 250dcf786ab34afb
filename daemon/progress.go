package daemon

import (
	"fmt"
	"sync"
	"sync/atomic"

	"go.lsp.dev/protocol"
)

var progressTokens atomic.Int64

// A progressTask is one $/progress work-done report (begin … end) for a
// build. Its messages go out in order from one goroutine; end may come before
// the client has even answered window/workDoneProgress/create. All methods
// accept a nil task.
type progressTask struct {
	done    chan string
	reports chan string // the latest report not yet sent (at most one waits)
	once    sync.Once
}

// beginProgress starts a work-done report titled title. The caller may hold
// s.mu: nothing here waits.
func (s *server) beginProgress(title, detail string) *progressTask {
	p := &progressTask{done: make(chan string, 1), reports: make(chan string, 1)}
	supported := s.caps.workDoneProgress
	token := protocol.String(fmt.Sprintf("fuzzls-build-%d", progressTokens.Add(1)))
	s.goSafe("progress", func() {
		if !supported {
			<-p.done
			return
		}
		if err := s.client.WorkDoneProgressCreate(s.ctx, &protocol.WorkDoneProgressCreateParams{Token: token}); err != nil {
			s.logf(protocol.MessageTypeLog, "window/workDoneProgress/create: %v", err)
			<-p.done
			return
		}
		s.sendProgress(token, &protocol.WorkDoneProgressBegin{Kind: "begin", Title: title, Message: &detail})
		var msg string
	wait:
		for {
			select {
			case r := <-p.reports:
				s.sendProgress(token, &protocol.WorkDoneProgressReport{Kind: "report", Message: &r})
			case msg = <-p.done:
				break wait
			case <-s.ctx.Done():
				break wait
			}
		}
		end := &protocol.WorkDoneProgressEnd{Kind: "end"}
		if msg != "" {
			end.Message = &msg
		}
		s.sendProgress(token, end)
	})
	return p
}

func (s *server) sendProgress(token protocol.ProgressToken, value any) {
	raw, err := protocol.Marshal(value)
	if err != nil {
		return
	}
	if err := s.client.Progress(s.ctx, &protocol.ProgressParams{Token: token, Value: raw}); err != nil && s.ctx.Err() == nil {
		s.logf(protocol.MessageTypeLog, "$/progress: %v", err)
	}
}

// end finishes the report with an optional message; later calls do nothing.
func (p *progressTask) end(msg string) {
	if p == nil {
		return
	}
	p.once.Do(func() { p.done <- msg })
}

// report updates the work-done report's message; a report not yet sent when the
// next comes is replaced by it.
func (p *progressTask) report(msg string) {
	if p == nil {
		return
	}
	for {
		select {
		case p.reports <- msg:
			return
		default:
		}
		select {
		case <-p.reports:
		default:
		}
	}
}

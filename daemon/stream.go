package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// tolerantStream wraps the LSP header stream so that one bad frame does not end
// the session. jsonrpc2 v1.0.1 ends its read loop on a frame it cannot decode
// (malformed JSON, a mixed request/response object, a broken batch); here such a
// frame is answered with a JSON-RPC error with a null id, logged, and skipped.
// A frame whose header is broken still ends the connection: after a bad
// Content-Length there is no way to find the next frame.
//
// It also reports the end of input (onEOF), so Serve can cancel the handlers
// still running and exit instead of waiting for them.
type tolerantStream struct {
	jsonrpc2.Stream
	rf interface {
		ReadFrame(ctx context.Context) ([]byte, int64, error)
		WriteFrame(ctx context.Context, data []byte) (int64, error)
	}
	logf    func(protocol.MessageType, string, ...any)
	onEOF   func()
	eofOnce sync.Once
}

func newTolerantStream(st jsonrpc2.Stream, logf func(protocol.MessageType, string, ...any), onEOF func()) *tolerantStream {
	ts := &tolerantStream{Stream: st, logf: logf, onEOF: onEOF}
	ts.rf, _ = st.(interface {
		ReadFrame(ctx context.Context) ([]byte, int64, error)
		WriteFrame(ctx context.Context, data []byte) (int64, error)
	})
	return ts
}

// ReadFrame returns the next frame that jsonrpc2 can decode.
func (ts *tolerantStream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		frame, n, err := ts.rf.ReadFrame(ctx)
		if err != nil {
			ts.eofOnce.Do(ts.onEOF)
			return nil, n, err
		}
		if perr := checkFrame(frame); perr != nil {
			ts.logf(protocol.MessageTypeError, "dropped a malformed message (%v): %.200q", perr, frame)
			ts.replyError(ctx, perr)
			continue
		}
		return frame, n, nil
	}
}

// WriteFrame implements jsonrpc2's frame stream.
func (ts *tolerantStream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	return ts.rf.WriteFrame(ctx, data)
}

// Read is jsonrpc2.Stream's decoding read, for completeness; the connection
// uses ReadFrame.
func (ts *tolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		frame, n, err := ts.ReadFrame(ctx)
		if err != nil {
			return nil, n, err
		}
		msg, err := jsonrpc2.DecodeMessage(frame)
		if err != nil {
			continue // checkFrame has already let it through; unreachable in practice
		}
		return msg, n, nil
	}
}

// checkFrame reports why jsonrpc2 would fail on frame, or nil.
func checkFrame(frame []byte) *jsonrpc2.Error {
	if !json.Valid(frame) {
		return jsonrpc2.NewError(jsonrpc2.ParseError, "parse error: invalid JSON")
	}
	if t := bytes.TrimLeft(frame, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if _, err := jsonrpc2.ParseRequests(frame); err != nil {
			return toRPCError(err)
		}
		return nil
	}
	if _, err := jsonrpc2.DecodeMessage(frame); err != nil {
		return toRPCError(err)
	}
	return nil
}

func toRPCError(err error) *jsonrpc2.Error {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e
	}
	return jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
}

// replyError writes an error response with a null id, as JSON-RPC prescribes
// when the request's id cannot be known.
func (ts *tolerantStream) replyError(ctx context.Context, e *jsonrpc2.Error) {
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      *int            `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
	}{"2.0", nil, e})
	if err != nil {
		return
	}
	_, _ = ts.rf.WriteFrame(ctx, body)
}

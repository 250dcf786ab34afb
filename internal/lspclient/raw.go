package lspclient

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Raw is a server (a `fuzzls serve` process, or one in process) spoken to in
// framed bytes, for messages no well-behaved client sends (JSON that does not
// parse, unknown methods, params of the wrong types) and for reading the
// server's answers to them as they are.
type Raw struct {
	Cmd   *exec.Cmd // nil for a server in process
	stdin io.WriteCloser
	msgs  chan json.RawMessage // every message the server sent, in order
}

// StartRaw starts cmd (`fuzzls serve`, its Stderr set by the caller) with pipes
// on its stdin and stdout.
func StartRaw(cmd *exec.Cmd) (*Raw, error) {
	stdin, stdout, err := startPiped(cmd)
	if err != nil {
		return nil, err
	}
	r := ConnectRaw(stdout, stdin)
	r.Cmd = cmd
	return r, nil
}

// ConnectRaw speaks to a server that writes to r and reads from w.
func ConnectRaw(r io.Reader, w io.WriteCloser) *Raw {
	raw := &Raw{stdin: w, msgs: make(chan json.RawMessage, 1024)}
	go raw.read(bufio.NewReader(r))
	return raw
}

// read splits the server's output into messages by their Content-Length headers.
func (r *Raw) read(br *bufio.Reader) {
	defer close(r.msgs)
	tp := textproto.NewReader(br)
	for {
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		n, err := strconv.Atoi(h.Get("Content-Length"))
		if err != nil {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		r.msgs <- body
	}
}

// Send writes body framed with its Content-Length header.
func (r *Raw) Send(body string) error {
	_, err := fmt.Fprintf(r.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

// Response waits up to timeout for the response with the given id (its JSON
// text: `1`, `"a"`, `null`), skipping the server's notifications and requests.
func (r *Raw) Response(id string, timeout time.Duration) (json.RawMessage, error) {
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-r.msgs:
			if !ok {
				return nil, fmt.Errorf("the server closed its output before answering %s", id)
			}
			// A map keeps an "id": null, which a pointer field would not tell
			// from no id.
			var v map[string]json.RawMessage
			if json.Unmarshal(m, &v) != nil {
				continue
			}
			if got, ok := v["id"]; ok && v["method"] == nil && strings.TrimSpace(string(got)) == id {
				return m, nil
			}
		case <-deadline:
			return nil, fmt.Errorf("no response to %s within %v", id, timeout)
		}
	}
}

// ErrorCode is the error code of a response, 0 if it has none.
func ErrorCode(resp json.RawMessage) int {
	var v struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(resp, &v) != nil || v.Error == nil {
		return 0
	}
	return v.Error.Code
}

// Close closes the server's stdin and waits up to timeout for it to exit, then
// kills it. A server in process is only left without input.
func (r *Raw) Close(timeout time.Duration) error {
	r.stdin.Close()
	if r.Cmd == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- r.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		_ = r.Cmd.Process.Kill()
		<-done
		return fmt.Errorf("the server did not exit within %v of its stdin closing", timeout)
	}
}

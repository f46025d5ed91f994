package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// sideIDPrefix starts the JSON-RPC ids of the requests sideCalls sends itself. The ACP
// SDK numbers its own requests, so a string id with this prefix is never one of its.
const sideIDPrefix = "talaria-side-"

// sideCalls sends the ACP requests the SDK (github.com/coder/acp-go-sdk v0.13.0) has
// no method for, on the same stdio as the SDK's connection: today only session/delete
// (stable since June 2026, https://agentclientprotocol.com/protocol/v1/session-delete).
// The SDK's generic SendRequest needs its unexported connection and its CallExtension
// takes only "_"-prefixed methods, so the request is written here, between the SDK's
// own messages (serialWriter), and its response is taken out of the agent's output
// before the SDK sees it (the divert writer, given whole lines by checkLines).
//
// It also notes what the SDK's InitializeResponse drops: whether the agent advertises
// agentCapabilities.sessionCapabilities.delete.
type sideCalls struct {
	w *serialWriter

	mu        sync.Mutex
	next      int
	pending   map[string]chan sideReply
	sawInit   bool
	canDelete bool
}

type sideReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// serialWriter lets one message at a time through to the agent's stdin: the SDK writes
// each message in one Write call, as does sideCalls.
type serialWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *serialWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func newSideCalls(toAgent io.Writer) *sideCalls {
	return &sideCalls{w: &serialWriter{w: toAgent}, pending: map[string]chan sideReply{}}
}

// deletes reports whether the agent advertised sessionCapabilities.delete in its
// initialize response.
func (s *sideCalls) deletes() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canDelete
}

// divert returns a writer for checkLines' output: lines that answer a sideCalls request
// are delivered to it, all others go on to next (the SDK's reader). It reads the
// first initialize response going through for the delete capability.
func (s *sideCalls) divert(next io.Writer) io.Writer {
	return writerFunc(func(line []byte) (int, error) {
		if s.take(line) {
			return len(line), nil
		}
		return next.Write(line)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// take handles one line from the agent; it reports whether the line was a sideCalls
// response (then it is not passed on).
func (s *sideCalls) take(line []byte) bool {
	s.mu.Lock()
	sawInit := s.sawInit
	s.mu.Unlock()
	if !sawInit && bytes.Contains(line, []byte(`"agentCapabilities"`)) {
		var init struct {
			Result *struct {
				AgentCapabilities struct {
					SessionCapabilities struct {
						Delete json.RawMessage `json:"delete"`
					} `json:"sessionCapabilities"`
				} `json:"agentCapabilities"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &init) == nil && init.Result != nil {
			d := bytes.TrimSpace(init.Result.AgentCapabilities.SessionCapabilities.Delete)
			s.mu.Lock()
			s.sawInit = true
			// Supplying {} means the agent supports it; omitted or null means it does not.
			s.canDelete = len(d) > 0 && d[0] == '{'
			s.mu.Unlock()
		}
	}
	if !bytes.Contains(line, []byte(`"`+sideIDPrefix)) {
		return false
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		sideReply
	}
	if json.Unmarshal(line, &env) != nil || env.Method != "" {
		return false
	}
	var id string
	if json.Unmarshal(env.ID, &id) != nil || !strings.HasPrefix(id, sideIDPrefix) {
		return false
	}
	s.mu.Lock()
	ch := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if ch != nil {
		ch <- env.sideReply
	}
	return true
}

// call sends one request and waits for its response, ctx's end or dead's closing.
// Errors: the agent's error (its message), ctx.Err(), or that the agent stopped.
func (s *sideCalls) call(ctx context.Context, dead <-chan struct{}, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	s.next++
	id := sideIDPrefix + strconv.Itoa(s.next)
	ch := make(chan sideReply, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, err
	}
	if _, err := s.w.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("writing %s to the agent: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("%s (code %d)", r.Error.Message, r.Error.Code)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-dead:
		return nil, fmt.Errorf("the agent stopped before answering %s", method)
	}
}

// deleteSessionRequest is session/delete's params.
type deleteSessionRequest struct {
	SessionID string `json:"sessionId"`
}

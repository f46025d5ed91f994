package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// The control API lets a test in another process (the window tests in frontend/e2e,
// driving `wails dev` through a browser) script the provider the way a Go test does with
// Enqueue and Requests. Every path is under {Addr}/_control/ and speaks JSON:
//
//	POST /_control/reset     empty both queues, forget the requests and model metadata, release every gate
//	POST /_control/enqueue   body: [Turn, ...] (LoadScript's format), appended to the queue
//	POST /_control/aux       body: [Turn, ...] appended to the auxiliary queue (see SplitAux)
//	POST /_control/release   body: {"gate": "name"}: chunks waiting on that gate go on
//	POST /_control/models    body: ["id", ...]: what GET /v1/models lists
//	POST /_control/meta      body: {"model": ModelMeta}: model metadata (meta.go)
//	GET  /_control/requests  every chat request so far: [{model, stream, messages, body, ...}]
//	GET  /_control/state     {"pending": n, "pending_aux": n, "served": n}
//
// A chunk of a script can wait on a named gate ({"gate": "g1"}): the stream is flushed
// and held there until /_control/release names the gate (or the client goes away). A
// gate released before a chunk reaches it does not hold it.

// gates are named channels that chunks of scripted turns can wait on.
type gates struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (g *gates) get(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]chan struct{}{}
	}
	ch, ok := g.m[name]
	if !ok {
		ch = make(chan struct{})
		g.m[name] = ch
	}
	return ch
}

func (g *gates) release(name string) {
	ch := g.get(name)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (g *gates) releaseAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range g.m {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
	g.m = nil
}

// Release opens the named gate: chunks of scripted turns whose Gate is name go on.
func (s *Server) Release(name string) { s.gates.release(name) }

// SplitAux puts non-streaming requests (the host's title calls, aux.complete) on a queue
// of their own (EnqueueAux): they never consume the turns queued for the chat streams,
// and with an empty auxiliary queue they get the echo answer. Off by default, when
// every request consumes the one queue in arrival order.
func (s *Server) SplitAux(on bool) {
	s.mu.Lock()
	s.splitAux = on
	s.mu.Unlock()
}

// EnqueueAux appends turns to the auxiliary queue (see SplitAux).
func (s *Server) EnqueueAux(turns ...Turn) {
	s.mu.Lock()
	s.auxQueue = append(s.auxQueue, turns...)
	s.mu.Unlock()
}

// Reset empties both queues, forgets the recorded requests and releases every gate
// (a held stream goes on). The model list is kept.
func (s *Server) Reset() {
	s.mu.Lock()
	s.queue = nil
	s.auxQueue = nil
	s.requests = nil
	s.meta = nil
	s.resets++
	s.noteLocked()
	s.mu.Unlock()
	s.gates.releaseAll()
}

// controlRequest is a recorded request as /_control/requests lists it.
type controlRequest struct {
	Model         string          `json:"model"`
	Stream        bool            `json:"stream"`
	Messages      []controlMsg    `json:"messages"`
	Tools         []string        `json:"tools"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Authorization string          `json:"authorization"`
	Body          json.RawMessage `json:"body"`
	Abandoned     bool            `json:"abandoned"`
	Ended         bool            `json:"ended"`
}

type controlMsg struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

func (s *Server) routeControl(mux *http.ServeMux) {
	mux.HandleFunc("POST /_control/reset", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		writeJSON(w, http.StatusOK, `{"ok":true}`)
	})
	mux.HandleFunc("POST /_control/enqueue", func(w http.ResponseWriter, r *http.Request) {
		turns, err := LoadScript(r.Body)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody(err.Error()))
			return
		}
		s.Enqueue(turns...)
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"ok":true,"pending":%d}`, s.Pending()))
	})
	mux.HandleFunc("POST /_control/aux", func(w http.ResponseWriter, r *http.Request) {
		turns, err := LoadScript(r.Body)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody(err.Error()))
			return
		}
		s.EnqueueAux(turns...)
		writeJSON(w, http.StatusOK, `{"ok":true}`)
	})
	mux.HandleFunc("POST /_control/release", func(w http.ResponseWriter, r *http.Request) {
		var v struct {
			Gate string `json:"gate"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&v); err != nil || v.Gate == "" {
			writeJSON(w, http.StatusBadRequest, errorBody(`want {"gate":"name"}`))
			return
		}
		s.Release(v.Gate)
		writeJSON(w, http.StatusOK, `{"ok":true}`)
	})
	mux.HandleFunc("POST /_control/models", func(w http.ResponseWriter, r *http.Request) {
		var ids []string
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&ids); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody(`want ["model id", ...]`))
			return
		}
		s.SetModels(ids...)
		writeJSON(w, http.StatusOK, `{"ok":true}`)
	})
	mux.HandleFunc("GET /_control/requests", func(w http.ResponseWriter, r *http.Request) {
		reqs := s.Requests()
		out := make([]controlRequest, 0, len(reqs))
		for _, q := range reqs {
			c := controlRequest{Model: q.Model, Stream: q.Stream, Tools: q.ToolNames(), MaxTokens: q.MaxTokens,
				Authorization: q.Authorization, Body: q.Body, Abandoned: q.Abandoned, Ended: q.Ended,
				Messages: []controlMsg{}}
			if c.Tools == nil {
				c.Tools = []string{}
			}
			if !json.Valid(c.Body) {
				c.Body = mustJSON(string(q.Body))
			}
			for _, m := range q.Messages {
				c.Messages = append(c.Messages, controlMsg{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID})
			}
			out = append(out, c)
		}
		writeJSON(w, http.StatusOK, mustJSON(out))
	})
	mux.HandleFunc("GET /_control/state", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		state := map[string]int{"pending": len(s.queue), "pending_aux": len(s.auxQueue), "served": s.served}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, mustJSON(state))
	})
}

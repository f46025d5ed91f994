package providertest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"talaria/internal/testwait"
)

func control(t *testing.T, s *Server, method, path, body string) string {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.Addr()+"/_control/"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return string(b)
}

func TestControlEnqueueRequestsAndReset(t *testing.T) {
	s := Start()
	defer s.Close()
	control(t, s, "POST", "enqueue", `[{"chunks":[{"text":"Scripted "},{"text":"answer","delay_ms":1}]},{"status":429,"retry_after":"3"}]`)
	if s.Pending() != 2 {
		t.Fatalf("pending %d", s.Pending())
	}
	resp := post(t, context.Background(), s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil)
	lines := dataLines(t, resp.Body)
	if !strings.Contains(strings.Join(lines, "\n"), `"Scripted "`) {
		t.Fatalf("stream %v", lines)
	}
	resp = post(t, context.Background(), s, `{"model":"m","stream":true,"messages":[]}`, nil)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("second answer %d %v", resp.StatusCode, resp.Header)
	}
	var reqs []controlRequest
	if err := json.Unmarshal([]byte(control(t, s, "GET", "requests", "")), &reqs); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Messages[0].Content != "hi" || !reqs[0].Stream {
		t.Fatalf("requests %+v", reqs)
	}
	control(t, s, "POST", "reset", "")
	if len(s.Requests()) != 0 || s.Pending() != 0 {
		t.Fatal("reset kept state")
	}
}

func TestControlSplitAuxKeepsTitlesOffTheQueue(t *testing.T) {
	s := Start()
	defer s.Close()
	s.SplitAux(true)
	control(t, s, "POST", "enqueue", `[{"chunks":[{"text":"for the stream"}]}]`)
	control(t, s, "POST", "aux", `[{"chunks":[{"text":"A title"}]}]`)
	resp := post(t, context.Background(), s, `{"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}`, nil)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "A title") {
		t.Fatalf("aux answer %s", b)
	}
	resp = post(t, context.Background(), s, `{"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}`, nil)
	b, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "You said: x") {
		t.Fatalf("empty aux queue answer %s", b)
	}
	if s.Pending() != 1 {
		t.Fatalf("a non-streaming request consumed the stream's turn")
	}
}

func TestControlGateHoldsTheStream(t *testing.T) {
	s := Start()
	defer s.Close()
	control(t, s, "POST", "enqueue", `[{"chunks":[{"text":"before "},{"text":"after","gate":"g1"}]}]`)
	resp := post(t, context.Background(), s, `{"model":"m","stream":true,"messages":[]}`, nil)
	got := make(chan []string, 1)
	go func() { got <- dataLines(t, resp.Body) }()
	// A negative over time: a slow machine can only make it pass.
	select {
	case l := <-got:
		t.Fatalf("stream ended before the gate opened: %v", l)
	case <-time.After(100 * time.Millisecond):
	}
	control(t, s, "POST", "release", `{"gate":"g1"}`)
	if l := testwait.Recv(t, got, "the stream's end after the release"); !strings.Contains(strings.Join(l, "\n"), `"after"`) {
		t.Fatalf("stream %v", l)
	}
}

// A reset while a stream is held at a gate releases it, and the stream ending after the
// reset (whose request was forgotten) leaves the server answering: before, marking it
// ended indexed the emptied request list and panicked with the lock held, so every later
// control call hung.
func TestResetWhileAStreamIsHeld(t *testing.T) {
	s := Start()
	defer s.Close()
	control(t, s, "POST", "enqueue", `[{"chunks":[{"text":"before "},{"text":"after","gate":"g"}]}]`)
	resp := post(t, context.Background(), s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, nil)
	done := make(chan string, 1)
	go func() { b, _ := io.ReadAll(resp.Body); done <- string(b) }()
	testwait.For(t, "the request", func() bool { return len(s.Requests()) > 0 })
	control(t, s, "POST", "reset", "")
	testwait.Done(t, done, "the held stream's release by reset")
	finished := make(chan struct{})
	go func() { control(t, s, "POST", "reset", ""); control(t, s, "GET", "requests", ""); close(finished) }()
	testwait.Done(t, finished, "control calls after a reset during a stream")
}

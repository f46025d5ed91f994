package backend_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestTruncatedAnswerIsMarkedSavedAndContinued: an answer the model cut at its output
// limit (finish_reason "length") reaches the window as a truncated frame and a done
// with truncated set, is saved with a truncated marker row after it, and "Continue"
// sends the cut answer (never the marker) back to the model.
func TestTruncatedAnswerIsMarkedSavedAndContinued(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "The first "}, {Text: "half"}}, FinishReason: "length"})
	s1 := h.Start(sid, "write a long essay")
	f1 := h.WaitEnd(s1)
	h.CheckFrames(s1, f1, protocol.EvDone)
	if d := backendtest.DataOf(t, f1, protocol.EvTruncated); d["reason"] != protocol.TruncatedLength || !strings.Contains(d["message"].(string), "output limit") {
		t.Fatalf("truncated frame %v", d)
	}
	if d := backendtest.DataOf(t, f1, protocol.EvDone); d["truncated"] != protocol.TruncatedLength || d["terminal_state"] != protocol.StatusCompleted {
		t.Fatalf("done %v", d)
	}
	msgs := h.Messages(sid)
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Kind+":"+m.Content)
	}
	if strings.Join(got, "|") != "user::write a long essay|assistant::The first half|assistant:truncated:length" {
		t.Fatalf("transcript %q", got)
	}

	h.Provider.Enqueue(providertest.TextTurn(" and the second half."))
	h.WaitEnd(h.Start(sid, "Continue"))
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	if len(reqs) != 2 {
		t.Fatalf("%d stream requests", len(reqs))
	}
	var sent []string
	for _, m := range reqs[1].Messages {
		if m.Role != "system" {
			sent = append(sent, m.Role+":"+m.Content)
		}
	}
	if strings.Join(sent, "|") != "user:write a long essay|assistant:The first half|user:Continue" {
		t.Fatalf("sent after Continue %q", sent)
	}
}

// TestTitleIsMadeAfterStreamEnd: the model's title call of a first exchange is held
// by the provider until the test lets it go; stream_end comes meanwhile (it does not
// wait for the title call) and the tray is idle while it waits; the title lands
// afterwards.
func TestTitleIsMadeAfterStreamEnd(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	hold := make(chan struct{})
	var holdOnce sync.Once
	release := func() { holdOnce.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h.Provider.Enqueue(providertest.TextTurn("Hello."))
	h.Provider.EnqueueAux(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Greeting Exchange", Wait: hold}}})
	start := time.Now()
	h.WaitEnd(h.Start(sid, "hi there")) // fails after 30 s if stream_end waited for the held title call
	t.Logf("stream_end after %s", time.Since(start))
	if a := h.Svc.About().Activity(ctx); a.State != backend.ActivityIdle || len(a.Running) != 0 {
		t.Errorf("activity after stream_end %+v", a)
	}
	if s, _ := h.Svc.Store.GetSession(ctx, sid); s.Title != "hi there" || s.ActiveStreamID != "" {
		t.Errorf("session right after stream_end %+v", s)
	}
	release()
	var sess store.Session = h.WaitTitle(sid, "Greeting Exchange")
	if sess.TitleManual {
		t.Errorf("automatic title saved as manual")
	}
}

// TestStreamIdleTimeoutSetting: the setting (Settings, chat section) reaches the
// built-in runtime: a provider that goes silent mid-answer is given up after it, with
// what streamed kept and an error that says so (not "could not reach the provider").
func TestStreamIdleTimeoutSetting(t *testing.T) {
	t.Parallel() // it waits 5 s on the runtime's clock; nothing else is shared
	h := backendtest.New(t, "")
	ctx := context.Background()
	prefs, err := h.Svc.Settings().GetChatPreferences(ctx)
	if err != nil || prefs.StreamIdleTimeoutS != protocol.DefaultStreamIdleTimeoutS {
		t.Fatalf("default %+v, %v", prefs, err)
	}
	prefs.StreamIdleTimeoutS = 2
	var bad *backend.SaveSettingsError
	if _, err := h.Svc.Settings().SaveChatPreferences(ctx, prefs); !errors.As(err, &bad) || bad.Field != "stream_idle_timeout_s" {
		t.Fatalf("2 s accepted: %v", err)
	}
	prefs.StreamIdleTimeoutS = 5
	if got, err := h.Svc.Settings().SaveChatPreferences(ctx, prefs); err != nil || got.StreamIdleTimeoutS != 5 {
		t.Fatalf("saved %+v, %v", got, err)
	}
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Half an answer"}}, HangAfter: true})
	start := time.Now()
	frames := h.WaitEnd(h.Start(sid, "hello"))
	// The 5 s are the runtime's clock; that it used the setting is what the message
	// says (below). A slow machine only makes the wait longer: the bound is a floor.
	if took := time.Since(start); took < 4*time.Second {
		t.Errorf("gave up after %s, want about 5 s", took)
	}
	d := backendtest.DataOf(t, frames, protocol.EvAppError)
	if d["label"] == "Network error" || !strings.Contains(d["message"].(string), "nothing arrived for 5 s") {
		t.Fatalf("apperror %v", d)
	}
	msgs := h.Messages(sid)
	if len(msgs) < 2 || msgs[1].Content != "Half an answer" {
		t.Fatalf("partial answer not kept: %+v", msgs)
	}
	if n := len(backendtest.StreamRequests(h.Provider.Requests())); n != 1 {
		t.Errorf("%d requests: the silent call was retried", n)
	}
}

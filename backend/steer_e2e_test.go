package backend_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend/backendtest"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// waitIdle waits until the session has no live stream and no turn of it is running.
func waitIdle(h *backendtest.Harness, sid string) {
	h.T.Helper()
	if !testwait.Until(func() bool {
		s, err := h.Svc.Store.GetSession(context.Background(), sid)
		return err == nil && s.ActiveStreamID == "" && !h.Svc.Runner.Busy(sid)
	}) {
		h.T.Fatalf("session %s never went idle", sid)
	}
}

func TestSteerIsReadAtTheNextModelCall(t *testing.T) {
	h := backendtest.New(t, "")
	ws := h.WithWorkspace()
	ctx := context.Background()
	// The first model call runs a command that ends once the steer was queued (the test
	// then creates the file it waits for: a fixed sleep can end first on a loaded
	// machine, and the steer would become a follow-up turn); the steer is read at the
	// second call.
	gate := filepath.Join(ws, "steered")
	h.Provider.Enqueue(
		providertest.CallTurn("Let me look.", providertest.Call("c1", "terminal", map[string]any{
			"command": "until test -e " + gate + "; do sleep 0.05; done; echo done"})),
		providertest.TextTurn("Switching to ", "Python as asked."),
		providertest.TextTurn("Language switch"))
	sid := h.NewSession()
	s := h.Start(sid, "write it in Go")
	h.WaitEvent(s, protocol.EvTool)
	// A steer over the message limit is refused as a message is, and nothing is queued.
	var tooLong *turn.MessageTooLongError
	if _, err := h.Svc.Turns().Steer(ctx, sid, strings.Repeat("x", turn.MaxMessageBytes+1)); !errors.As(err, &tooLong) {
		t.Fatalf("a steer over 1 MiB: %v", err)
	}
	out, err := h.Svc.Turns().Steer(ctx, sid, "actually use Python")
	if err != nil || out.Delivery != "queued" || out.StreamID != s {
		t.Fatalf("Steer = %+v, %v", out, err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	consumed := backendtest.FramesOf(frames, protocol.EvSteerConsumed)
	if len(consumed) != 1 || consumed[0]["id"] != out.SteerID || consumed[0]["text"] != "actually use Python" {
		t.Fatalf("steer_consumed = %v", consumed)
	}
	// The consumed frame comes before the text the agent wrote after reading it.
	iConsumed, iAfter := -1, -1
	for i, f := range frames {
		if f.Event == protocol.EvSteerConsumed {
			iConsumed = i
		}
		if f.Event == protocol.EvToken && strings.Contains(string(f.Data), "Switching") {
			iAfter = i
		}
	}
	if iConsumed < 0 || iAfter < iConsumed {
		t.Fatalf("steer_consumed at %d, the answer to it at %d", iConsumed, iAfter)
	}
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "user" || last.Content != "actually use Python" {
		t.Fatalf("second model call ended with %+v", last)
	}
	var roles []string
	for _, m := range h.Messages(sid) {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "user assistant tool user assistant" {
		t.Fatalf("transcript roles = %s", got)
	}
	if got := h.UserRows(sid); strings.Join(got, "|") != "write it in Go|actually use Python" {
		t.Fatalf("user rows = %q", got)
	}
}

func TestSteerAfterTheTurnBecomesOneFollowUp(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.TextTurn("short answer"), providertest.TextTurn("title"))
	s := h.Start(sid, "first")
	h.WaitEnd(s)
	// No turn runs: a steer starts one.
	out, err := h.Svc.Turns().Steer(ctx, sid, "and another thing")
	if err != nil || out.Delivery != "turn" {
		t.Fatalf("Steer with no turn = %+v, %v", out, err)
	}
	h.CheckFrames(out.StreamID, h.WaitEnd(out.StreamID), protocol.EvDone)
	if got := h.UserRows(sid); strings.Join(got, "|") != "first|and another thing" {
		t.Fatalf("user rows = %q", got)
	}
}

// TestSteerRacesTheEndOfTheTurn sends steers at moments spread around the end of a
// turn. Each steer must reach the transcript exactly once: read inside the turn, or
// sent as (part of) one follow-up turn.
func TestSteerRacesTheEndOfTheTurn(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	for i := 0; i < 12; i++ {
		sid := h.NewSession()
		h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "a"}, {Text: "b", Delay: 30 * time.Millisecond}}})
		s := h.Start(sid, fmt.Sprintf("q%d", i))
		time.Sleep(time.Duration(i*5) * time.Millisecond) // from mid-stream to after the end
		text := fmt.Sprintf("steer %d", i)
		if _, err := h.Svc.Turns().Steer(ctx, sid, text); err != nil {
			t.Fatalf("steer %d: %v", i, err)
		}
		h.WaitEnd(s)
		waitIdle(h, sid)
		n := 0
		for _, u := range h.UserRows(sid) {
			n += strings.Count(u, text)
		}
		if n != 1 {
			t.Fatalf("round %d: %q appears %d times in %q", i, text, n, h.UserRows(sid))
		}
	}
}

// TestWithdrawRacesConsumption withdraws a steer while the agent may be taking it:
// either the withdraw wins (the text comes back and never reaches the transcript) or
// the agent wins (ErrSteerTaken and the text is in the transcript once). Never both,
// never neither.
func TestWithdrawRacesConsumption(t *testing.T) {
	h := backendtest.New(t, "")
	h.WithWorkspace()
	ctx := context.Background()
	outcomes := map[string]int{}
	for i := 0; i < 10; i++ {
		sid := h.NewSession()
		h.Provider.Enqueue(
			providertest.CallTurn("", providertest.Call("c", "terminal", map[string]any{"command": "sleep 0.2"})),
			providertest.TextTurn("done"))
		s := h.Start(sid, "go")
		h.WaitEvent(s, protocol.EvTool)
		text := fmt.Sprintf("maybe %d", i)
		out, err := h.Svc.Turns().Steer(ctx, sid, text)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(150+i*10) * time.Millisecond) // around the tool's end
		back, werr := h.Svc.Turns().WithdrawSteer(ctx, sid, out.SteerID)
		h.WaitEnd(s)
		waitIdle(h, sid)
		n := 0
		for _, u := range h.UserRows(sid) {
			n += strings.Count(u, text)
		}
		switch {
		case werr == nil && back == text && n == 0:
			outcomes["withdrawn"]++
		case errors.Is(werr, turn.ErrSteerTaken) && n == 1:
			outcomes["taken"]++
		default:
			t.Fatalf("round %d: withdraw = %q, %v; transcript has it %d times", i, back, werr, n)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// TestTwoWindowsSteerTheSameTurn steers from two goroutines at once (two windows);
// every text arrives exactly once.
func TestTwoWindowsSteerTheSameTurn(t *testing.T) {
	h := backendtest.New(t, "")
	h.WithWorkspace()
	ctx := context.Background()
	sid := h.NewSession()
	h.Provider.Enqueue(
		providertest.CallTurn("", providertest.Call("c", "terminal", map[string]any{"command": "sleep 0.5"})),
		providertest.TextTurn("read them all"))
	s := h.Start(sid, "start")
	h.WaitEvent(s, protocol.EvTool)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				if _, err := h.Svc.Turns().Steer(ctx, sid, fmt.Sprintf("w%d-%d", w, k)); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	h.WaitEnd(s)
	waitIdle(h, sid)
	all := strings.Join(h.UserRows(sid), "\n")
	for w := 0; w < 2; w++ {
		for k := 0; k < 3; k++ {
			if n := strings.Count(all, fmt.Sprintf("w%d-%d", w, k)); n != 1 {
				t.Fatalf("w%d-%d appears %d times in %q", w, k, n, all)
			}
		}
	}
}

func TestStopKeepsUnsentSteersAndStartsNothing(t *testing.T) {
	h := backendtest.New(t, "")
	h.WithWorkspace()
	ctx := context.Background()
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.CallTurn("", providertest.Call("c", "terminal", map[string]any{"command": "sleep 5"})))
	s := h.Start(sid, "long job")
	h.WaitEvent(s, protocol.EvTool)
	if _, err := h.Svc.Turns().Steer(ctx, sid, "one more thing"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_ = h.Svc.Turns().Cancel(s)
	frames := h.WaitEnd(s)
	t.Logf("stop during a tool took %s", time.Since(began))
	h.CheckFrames(s, frames, protocol.EvCancel)
	c := backendtest.DataOf(t, frames, protocol.EvCancel)
	if u, _ := c["unsent_steers"].([]any); len(u) != 1 || u[0] != "one more thing" {
		t.Fatalf("cancel = %v", c)
	}
	// A follow-up turn for the unsent steer would be counted by Busy in the step that
	// removes the run, before stream_end: seen now, it was never scheduled.
	sess, _ := h.Svc.Store.GetSession(ctx, sid)
	if sess.ActiveStreamID != "" || h.Svc.Runner.Busy(sid) {
		t.Fatalf("a turn started after the user's stop (active stream %q, busy %v)", sess.ActiveStreamID, h.Svc.Runner.Busy(sid))
	}
	msgs := h.Messages(sid)
	if msgs[len(msgs)-1].Kind != store.KindCancelled {
		t.Fatalf("last row %+v", msgs[len(msgs)-1])
	}
}

func TestStopHoldIsSetByStopAndLiftedByTheNextMessage(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "x"}}, HangAfter: true})
	s := h.Start(sid, "go")
	h.WaitEvent(s, protocol.EvToken)
	_ = h.Svc.Turns().Cancel(s)
	h.WaitEnd(s)
	if held, _ := h.Svc.Store.StopHold(ctx, sid); !held {
		t.Fatal("Stop did not hold the session")
	}
	// Stop after the end and twice are no-ops.
	_ = h.Svc.Turns().Cancel(s)
	_ = h.Svc.Turns().Cancel(s)
	h.Provider.Enqueue(providertest.TextTurn("ok"))
	s2 := h.Start(sid, "next")
	h.WaitEnd(s2)
	if held, _ := h.Svc.Store.StopHold(ctx, sid); held {
		t.Fatal("the user's next message did not lift the hold")
	}
}

func TestStopRightAfterAdmission(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	// The answer is held at the provider until the test ends: whenever the stop lands,
	// no text can come before it.
	gate := make(chan struct{})
	t.Cleanup(func() { close(gate) })
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "late", Wait: gate}}})
	s := h.Start(sid, "go")
	_ = h.Svc.Turns().Cancel(s) // before the sidecar even got the request, or just after
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvCancel)
	msgs := h.Messages(sid)
	if len(msgs) != 2 || msgs[1].Kind != store.KindCancelled {
		t.Fatalf("transcript = %+v", msgs)
	}
}

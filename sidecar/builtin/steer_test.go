package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// askTurn is a model step that asks one question: the turn then waits in its tool
// batch until the test answers, a deterministic "tools are running" phase.
func askTurn(id string) providertest.Turn {
	return providertest.CallTurn("Let me ask.", providertest.Call(id, "clarify", map[string]any{"questions": []any{map[string]any{"question": "Which one?"}}}))
}

// answerClarify answers the n-th clarify of a run.
func answerClarify(t *testing.T, rt *Runtime, run *chatRun, session string, n int) {
	t.Helper()
	var cl protocol.ClarifyData
	run.waitFor(protocol.EvClarify, n, &cl)
	if ok, err := rt.ClarifyRespond(protocol.ClarifyRespondParams{SessionID: session, ClarifyID: cl.ClarifyID, Response: json.RawMessage(`"the first"`)}); err != nil || !ok.OK {
		t.Fatalf("clarify.respond: %+v %v", ok, err)
	}
}

func steer(t *testing.T, rt *Runtime, stream, id, text string) protocol.SteerResult {
	t.Helper()
	res, err := rt.Steer(protocol.SteerParams{StreamID: stream, SteerID: id, Text: text})
	if err != nil {
		t.Fatalf("chat.steer %s: %v", id, err)
	}
	return res
}

// steerFrames decodes the run's steer_pending frames.
func steerFrames(t *testing.T, run *chatRun) []protocol.SteerPendingData {
	t.Helper()
	var out []protocol.SteerPendingData
	for _, d := range run.of(protocol.EvSteerPending) {
		var x protocol.SteerPendingData
		if err := json.Unmarshal(d, &x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

func ids(items []protocol.SteerItem) string {
	var out []string
	for _, it := range items {
		out = append(out, it.SteerID)
	}
	return strings.Join(out, ",")
}

// rowsOf renders result rows as "role:content" ("+calls" for tool calls, "~" for a
// partial row).
func rowsOf(rows []protocol.ChatMessage) string {
	var out []string
	for _, m := range rows {
		s := m.Role + ":" + m.Content
		if m.Role == "tool" {
			s = "tool"
		}
		if len(m.ToolCalls) > 0 {
			s += "+calls"
		}
		if m.Partial {
			s += "~"
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}

// frameIndex is the index in the run's frames of the first frame of event whose data
// contains sub, or -1.
func frameIndex(run *chatRun, event, sub string) int {
	for i, f := range run.list() {
		if f.event == event && strings.Contains(string(f.data), sub) {
			return i
		}
	}
	return -1
}

// TestSteerTakenAtTheNextCall: steers sent while tools run (here a clarify waits) stay
// queued (chat.steer_now too), then the next model call takes them all, in order, one
// user message each, reported by steer_pending{taken} before any frame of that call.
func TestSteerTakenAtTheNextCall(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})
	p.Enqueue(askTurn("c1"), providertest.TextTurn("Switching", " to Python."))
	params := toolParams(p, "s1", t.TempDir())
	run := startChat(t, rt, params)
	run.waitFor(protocol.EvClarify, 1, nil)

	if r := steer(t, rt, params.StreamID, "a", "use Python"); !r.Accepted || r.CanRedirect {
		t.Fatalf("steer during tools = %+v", r)
	}
	if r := steer(t, rt, params.StreamID, "b", "and be brief"); !r.Accepted {
		t.Fatalf("second steer = %+v", r)
	}
	if r := steer(t, rt, params.StreamID, "a", "use Python"); !r.Accepted {
		t.Fatalf("a repeated steer id = %+v", r)
	}
	now, err := rt.SteerNow(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "a"})
	if err != nil || now != (protocol.SteerNowResult{Withdrawn: true, Delivery: "steer", Requeued: true}) {
		t.Fatalf("steer_now during tools = %+v %v", now, err)
	}
	answerClarify(t, rt, run, "s1", 1)
	res := run.mustResult()

	if got := rowsOf(res.Messages); got != "assistant:Let me ask.+calls | tool | user:use Python | user:and be brief | assistant:Switching to Python." {
		t.Fatalf("rows: %s", got)
	}
	if res.PendingSteer != nil || res.FinalResponse != "Switching to Python." {
		t.Fatalf("result %+v", res)
	}
	frames := steerFrames(t, run)
	if len(frames) != 3 || ids(frames[0].Pending) != "a" || ids(frames[1].Pending) != "a,b" ||
		ids(frames[2].Pending) != "" || ids(frames[2].Taken) != "a,b" || frames[2].Pending == nil {
		t.Fatalf("steer_pending frames %+v", frames)
	}
	// The take comes after the tool batch and before the call's first token.
	taken := frameIndex(run, protocol.EvSteerPending, `"taken"`)
	if done, tok := frameIndex(run, protocol.EvToolComplete, ""), frameIndex(run, protocol.EvToken, "Switching"); !(done < taken && taken < tok) {
		t.Fatalf("tool_complete at %d, take at %d, token at %d: %s", done, taken, tok, run.summary())
	}
	reqs := p.Requests()
	msgs := reqs[1].Messages
	if n := len(msgs); n < 2 || msgs[n-2].Role != "user" || msgs[n-2].Content != "use Python" || msgs[n-1].Content != "and be brief" || msgs[n-3].Role != "tool" {
		t.Fatalf("second call's messages %+v", msgs)
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Content, "Python") {
			t.Fatal("a steer reached the first call")
		}
	}
	// The turn is over: steering it is refused, withdraw and steer_now find nothing.
	if r := steer(t, rt, params.StreamID, "c", "too late"); r.Accepted {
		t.Fatalf("steer after the end = %+v", r)
	}
	if w, _ := rt.SteerWithdraw(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "a"}); w.Withdrawn {
		t.Fatal("withdrew a taken steer")
	}
	if n, _ := rt.SteerNow(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "a"}); n.Withdrawn {
		t.Fatal("steer_now on an ended turn")
	}
}

// TestSteerWithdraw: a withdrawn steer leaves the queue (steer_pending without it) and
// is never read; a steer the loop took cannot be withdrawn.
func TestSteerWithdraw(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})
	p.Enqueue(askTurn("c1"), askTurn("c2"), providertest.TextTurn("ok"))
	params := toolParams(p, "s1", t.TempDir())
	run := startChat(t, rt, params)
	run.waitFor(protocol.EvClarify, 1, nil)
	steer(t, rt, params.StreamID, "a", "first")
	steer(t, rt, params.StreamID, "b", "second")
	if w, err := rt.SteerWithdraw(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "a"}); err != nil || !w.Withdrawn {
		t.Fatalf("withdraw = %+v %v", w, err)
	}
	if w, _ := rt.SteerWithdraw(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "a"}); w.Withdrawn {
		t.Fatal("withdrawn twice")
	}
	if w, _ := rt.SteerWithdraw(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "nope"}); w.Withdrawn {
		t.Fatal("withdrew an unknown steer")
	}
	answerClarify(t, rt, run, "s1", 1)
	run.waitFor(protocol.EvClarify, 2, nil)
	if w, _ := rt.SteerWithdraw(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "b"}); w.Withdrawn {
		t.Fatal("withdrew a taken steer")
	}
	answerClarify(t, rt, run, "s1", 2)
	res := run.mustResult()
	if got := rowsOf(res.Messages); got != "assistant:Let me ask.+calls | tool | user:second | assistant:Let me ask.+calls | tool | assistant:ok" {
		t.Fatalf("rows: %s", got)
	}
	frames := steerFrames(t, run)
	if len(frames) != 4 || ids(frames[2].Pending) != "b" || ids(frames[3].Taken) != "b" {
		t.Fatalf("frames %+v", frames)
	}
	for _, r := range p.Requests() {
		for _, m := range r.Messages {
			if m.Content == "first" {
				t.Fatal("a withdrawn steer reached the model")
			}
		}
	}
}

// TestSteerNowRestartsTheModelCall: chat.steer_now during a model call that has only
// streamed text abandons the HTTP request (the provider sees it go), keeps the text as
// a partial assistant row, and calls again at once with the steer last.
func TestSteerNowRestartsTheModelCall(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})
	gate := make(chan struct{}) // never opened: the first answer would go on forever
	defer close(gate)
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "long story"}, {Text: "Once upon"}, {Text: " a time", Wait: gate}}},
		providertest.TextTurn("Short: ", "they lived."))
	params := chatParams(p.BaseURL())
	run := startChat(t, rt, params)
	run.waitFor(protocol.EvToken, 1, nil)

	r := steer(t, rt, params.StreamID, "s1", "be brief")
	if !r.Accepted || !r.CanRedirect {
		t.Fatalf("steer mid-call = %+v", r)
	}
	now, err := rt.SteerNow(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "s1"})
	if err != nil || now != (protocol.SteerNowResult{Withdrawn: true, Redirected: true, Delivery: "restart"}) {
		t.Fatalf("steer_now = %+v %v", now, err)
	}
	if w, _ := rt.SteerWithdraw(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "s1"}); w.Withdrawn {
		t.Fatal("a steer claimed by steer_now was withdrawn")
	}
	res := run.mustResult()
	if got := rowsOf(res.Messages); got != "assistant:Once upon~ | user:be brief | assistant:Short: they lived." {
		t.Fatalf("rows: %s", got)
	}
	if res.Messages[0].Reasoning != "long story" || res.FinalResponse != "Short: they lived." || res.PendingSteer != nil {
		t.Fatalf("result %+v", res)
	}
	if !p.AwaitRequests(2, true, testwait.Timeout) {
		t.Fatal("the provider did not see both requests end")
	}
	reqs := p.Requests()
	if len(reqs) != 2 || !reqs[0].Abandoned || reqs[1].Abandoned {
		t.Fatalf("requests: %d, abandoned %v", len(reqs), []bool{reqs[0].Abandoned, reqs[1].Abandoned})
	}
	msgs := reqs[1].Messages
	n := len(msgs)
	if msgs[n-1].Role != "user" || msgs[n-1].Content != "be brief" || msgs[n-2].Role != "assistant" || msgs[n-2].Content != "Once upon" ||
		msgs[n-3].Content != params.UserMessage || strings.Contains(string(msgs[n-2].Raw), "partial") {
		t.Fatalf("restarted call's messages %+v", msgs)
	}
	taken := frameIndex(run, protocol.EvSteerPending, `"taken"`)
	if first := frameIndex(run, protocol.EvToken, "Short"); !(frameIndex(run, protocol.EvToken, "Once") < taken && taken < first) {
		t.Fatalf("take at %d, restarted call's first token at %d", taken, first)
	}
	if frameIndex(run, protocol.EvToken, "a time") >= 0 {
		t.Fatalf("text after the gate streamed: %s", run.summary())
	}
}

// TestSteerNowAfterToolCallsBegan: once the call streams a tool call it is not
// restarted; the steer stays queued and is read at the call after the tools.
func TestSteerNowAfterToolCallsBegan(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})
	gate := make(chan struct{})
	call := providertest.CallTurn("", providertest.Call("c1", "todo", map[string]any{"todos": []any{map[string]any{"id": "1", "content": "x"}}}))
	call.Chunks = slices.Insert(call.Chunks, 1, providertest.Chunk{Wait: gate})
	p.Enqueue(call, providertest.TextTurn("done"))
	params := toolParams(p, "s1", t.TempDir())
	run := startChat(t, rt, params)
	// Wait until the sidecar has read the first tool-call delta (no frame says so).
	testwait.For(t, "the tool call delta to be read", func() bool {
		// The request arrived, so the call began (phaseModel); phaseOther now means the
		// tool-call delta was read.
		tt := rt.streamTurn(params.StreamID)
		if tt == nil || !p.AwaitRequests(1, false, 0) {
			return false
		}
		tt.steer.mu.Lock()
		defer tt.steer.mu.Unlock()
		return tt.steer.phase == phaseOther
	})
	if r := steer(t, rt, params.StreamID, "s1", "also y"); !r.Accepted || r.CanRedirect {
		t.Fatalf("steer = %+v", r)
	}
	if now, _ := rt.SteerNow(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "s1"}); now.Delivery != "steer" || !now.Requeued || now.Redirected {
		t.Fatalf("steer_now = %+v", now)
	}
	close(gate)
	res := run.mustResult()
	if got := rowsOf(res.Messages); got != "assistant:+calls | tool | user:also y | assistant:done" {
		t.Fatalf("rows: %s", got)
	}
	if reqs := p.Requests(); len(reqs) != 2 || reqs[0].Abandoned {
		t.Fatal("the call with a tool call was restarted")
	}
}

// TestSteerNowBeforeTheAnswerStarts: a restart before any text keeps no assistant row.
func TestSteerNowBeforeTheAnswerStarts(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})
	p.Enqueue(providertest.Turn{HeaderDelay: time.Minute}, providertest.TextTurn("fresh"))
	params := chatParams(p.BaseURL())
	run := startChat(t, rt, params)
	if !p.AwaitRequests(1, false, testwait.Timeout) {
		t.Fatal("no request")
	}
	steer(t, rt, params.StreamID, "s1", "hurry")
	if now, _ := rt.SteerNow(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "s1"}); now.Delivery != "restart" {
		t.Fatalf("steer_now = %+v", now)
	}
	res := run.mustResult()
	if got := rowsOf(res.Messages); got != "user:hurry | assistant:fresh" {
		t.Fatalf("rows: %s", got)
	}
}

// TestPendingSteer: steers the loop never took are in pending_steer: when the turn
// completes (a steer sent during its last call), is cancelled, or fails.
func TestPendingSteer(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})

	t.Run("completed", func(t *testing.T) {
		gate := make(chan struct{})
		p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "The answer"}, {Text: " is 42.", Wait: gate}}})
		params := chatParams(p.BaseURL())
		run := startChat(t, rt, params)
		run.waitFor(protocol.EvToken, 1, nil)
		steer(t, rt, params.StreamID, "late", "one more thing")
		close(gate)
		res := run.mustResult()
		if res.Status != protocol.StatusCompleted || ids(res.PendingSteer) != "late" || res.PendingSteer[0].Text != "one more thing" ||
			rowsOf(res.Messages) != "assistant:The answer is 42." {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		p.Enqueue(askTurn("c1"))
		params := toolParams(p, "s2", t.TempDir())
		run := startChat(t, rt, params)
		run.waitFor(protocol.EvClarify, 1, nil)
		steer(t, rt, params.StreamID, "x", "first")
		steer(t, rt, params.StreamID, "y", "second")
		run.cancel()
		res := run.mustResult()
		if res.Status != protocol.StatusCancelled || ids(res.PendingSteer) != "x,y" {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("error", func(t *testing.T) {
		gate := make(chan struct{})
		p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Half"}, {Wait: gate}, providertest.ErrorChunk(400, "bad request")}})
		params := chatParams(p.BaseURL())
		run := startChat(t, rt, params)
		run.waitFor(protocol.EvToken, 1, nil)
		steer(t, rt, params.StreamID, "z", "never read")
		close(gate)
		_, err := run.result()
		var rpcErr *protocol.Error
		if !errors.As(err, &rpcErr) || rpcErr.Data.Partial != "Half" || ids(rpcErr.Data.PendingSteer) != "z" || rpcErr.Data.PendingSteer[0].Text != "never read" {
			t.Fatalf("error %v %+v", err, rpcErr)
		}
	})
	t.Run("unknown stream and bad params", func(t *testing.T) {
		if r := steer(t, rt, "no-such-stream", "a", "x"); r.Accepted {
			t.Fatal("accepted for no stream")
		}
		for _, bad := range []protocol.SteerParams{{SteerID: "a", Text: "x"}, {StreamID: "s", Text: "x"}, {StreamID: "s", SteerID: "a", Text: "  "}} {
			if _, err := rt.Steer(bad); err == nil || err.(*protocol.Error).Code != protocol.CodeInvalidParams {
				t.Fatalf("Steer(%+v) = %v", bad, err)
			}
		}
		if _, err := rt.SteerNow(protocol.SteerRefParams{StreamID: "s"}); err == nil {
			t.Fatal("steer_now without an id")
		}
		if _, err := rt.SteerWithdraw(protocol.SteerRefParams{SteerID: "a"}); err == nil {
			t.Fatal("withdraw without a stream")
		}
	})
}

// raceTurn is a turn with no provider, for driving the steer queue directly.
func raceTurn(rt *Runtime, streamID string, emit func(string, any) error) *turn {
	t := &turn{r: rt, p: protocol.ChatStartParams{StreamID: streamID}, emit: emit, log: rt.log}
	rt.register(t)
	return t
}

// TestSteerWithdrawTakeRace: many goroutines withdraw (and steer_now) queued steers
// while the loop takes the queue. Every steer ends exactly one way, withdrawn or taken;
// steer_now never lets a claimed steer be withdrawn; the steer_pending frames agree.
func TestSteerWithdrawTakeRace(t *testing.T) {
	const rounds, n = 400, 12
	rt := New(Options{Log: testLogger(t)})
	outcomes := map[string]int{}
	for round := 0; round < rounds; round++ {
		rec := newRecorder()
		tt := raceTurn(rt, fmt.Sprintf("race-%d", round), rec.emit)
		_, cancel := context.WithCancelCause(context.Background())
		tt.beginCall(cancel) // a model call is in flight: steer_now may restart it
		for i := 0; i < n; i++ {
			if r := tt.acceptSteer(protocol.SteerItem{SteerID: fmt.Sprint(i), Text: fmt.Sprint("text ", i)}); !r.Accepted {
				t.Fatal("not accepted")
			}
		}
		withdrawn := make([]bool, n)
		claimed := make([]bool, n)
		var taken []protocol.SteerItem
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				id := fmt.Sprint(i)
				if i%3 == 0 {
					claimed[i] = tt.steerNow(id).Delivery == "restart"
				}
				withdrawn[i] = tt.withdrawSteer(id)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			tt.endCall()
			_, cancel := context.WithCancelCause(context.Background())
			taken = tt.beginCall(cancel)
		}()
		close(start)
		wg.Wait()
		left := tt.sealSteers()
		if len(left) != 0 {
			t.Fatalf("round %d: steers neither withdrawn nor taken: %+v", round, left)
		}
		inTaken := map[string]bool{}
		for _, it := range taken {
			inTaken[it.SteerID] = true
		}
		for i := 0; i < n; i++ {
			id := fmt.Sprint(i)
			switch {
			case withdrawn[i] == inTaken[id]:
				t.Fatalf("round %d: steer %s withdrawn=%v taken=%v", round, id, withdrawn[i], inTaken[id])
			case claimed[i] && withdrawn[i]:
				t.Fatalf("round %d: steer %s claimed by steer_now and withdrawn", round, id)
			case withdrawn[i]:
				outcomes["withdrawn"]++
			default:
				outcomes["taken"]++
			}
		}
		// Frames: the last one reports the take; taken items are in queue order.
		var last protocol.SteerPendingData
		var lastFrame string
		for _, f := range rec.list() {
			lastFrame = f
		}
		if len(taken) > 0 {
			if err := json.Unmarshal([]byte(strings.TrimPrefix(lastFrame, protocol.EvSteerPending+" ")), &last); err != nil || ids(last.Taken) != ids(taken) || len(last.Pending) != 0 {
				t.Fatalf("round %d: last frame %s, taken %s", round, lastFrame, ids(taken))
			}
			if !slices.IsSortedFunc(taken, func(a, b protocol.SteerItem) int {
				x, _ := strconv.Atoi(a.SteerID)
				y, _ := strconv.Atoi(b.SteerID)
				return x - y
			}) {
				t.Fatalf("round %d: taken out of order: %s", round, ids(taken))
			}
		}
	}
	t.Logf("outcomes over %d steers: %v", rounds*n, outcomes)
	if outcomes["withdrawn"] == 0 || outcomes["taken"] == 0 {
		t.Logf("only one outcome was seen; the race was not exercised both ways")
	}
}

// TestSteerWithdrawRacesTheNextCall: end to end, a withdraw races the loop taking the
// queue after a tool batch. The steer is withdrawn (never read) or taken (read once).
func TestSteerWithdrawRacesTheNextCall(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})
	outcomes := map[string]int{}
	for i := 0; i < 40; i++ {
		p.Enqueue(askTurn("c"), providertest.TextTurn("ok"))
		params := toolParams(p, fmt.Sprint("race", i), t.TempDir())
		run := startChat(t, rt, params)
		run.waitFor(protocol.EvClarify, 1, nil)
		steer(t, rt, params.StreamID, "s", "maybe")
		done := make(chan bool)
		go func() {
			time.Sleep(time.Duration(i%8) * 100 * time.Microsecond)
			w, _ := rt.SteerWithdraw(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "s"})
			done <- w.Withdrawn
		}()
		answerClarify(t, rt, run, params.SessionID, 1)
		withdrawn := <-done
		res := run.mustResult()
		reqs := p.Requests()
		read := 0
		for _, m := range reqs[len(reqs)-1].Messages {
			if m.Content == "maybe" {
				read++
			}
		}
		inRows := strings.Count(rowsOf(res.Messages), "user:maybe")
		switch {
		case withdrawn && read == 0 && inRows == 0:
			outcomes["withdrawn"]++
		case !withdrawn && read == 1 && inRows == 1:
			outcomes["taken"]++
		default:
			t.Fatalf("round %d: withdrawn=%v, read %d times, %d rows", i, withdrawn, read, inRows)
		}
		if res.PendingSteer != nil {
			t.Fatalf("round %d: pending %+v", i, res.PendingSteer)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

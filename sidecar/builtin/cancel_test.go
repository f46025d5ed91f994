package builtin

import (
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// stopWithin cancels a run and returns its cancelled result. Every wait the cases
// stop lasts an hour (hourWaits), far beyond the tests' deadline, so a result that
// comes at all was ended by the stop; how long it took is logged, never judged (a
// loaded machine decides that, not the code).
func stopWithin(t *testing.T, run *chatRun) protocol.ChatResult {
	t.Helper()
	begin := time.Now()
	run.cancel()
	res := run.mustResult()
	t.Logf("stop took %v", time.Since(begin))
	if res.Status != protocol.StatusCancelled || !res.Partial {
		t.Fatalf("result %+v", res)
	}
	return res
}

// hourWaits makes every wait of a turn an hour long: the model call's idle timeout,
// the longest retry wait, and (in params) the approval and clarify timeouts.
func hourWaits(o Options, params protocol.ChatStartParams) (Options, protocol.ChatStartParams) {
	o.StreamIdleTimeout, o.MaxRetryWait = time.Hour, time.Hour
	params.ApprovalTimeoutS, params.ClarifyTimeoutS = 3600, 3600
	return o, params
}

// TestStopInEveryWait: a stop during a model call, a retry wait, an approval wait and
// a clarify wait returns the cancelled result at once, with the streamed text and the
// finished tool calls in messages. (A stop while a command runs: TestStopDuringTerminal;
// before the response headers: TestChatCancelBeforeHeaders.)
func TestStopInEveryWait(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	opts, _ := hourWaits(Options{Log: testLogger(t)}, protocol.ChatStartParams{})
	rt := New(opts)
	params := func(session, dir string) protocol.ChatStartParams {
		_, cp := hourWaits(opts, toolParams(p, session, dir))
		return cp
	}

	// A first step whose todo call finishes, so every case has a finished tool call.
	todoStep := func() providertest.Turn {
		return providertest.CallTurn("Planning.", providertest.Call("t1", "todo", map[string]any{"todos": []any{map[string]any{"id": "1", "content": "x"}}}))
	}
	const done = "assistant:Planning.+calls | tool"

	t.Run("model call", func(t *testing.T) {
		p.Enqueue(todoStep(), providertest.Turn{Chunks: []providertest.Chunk{{Text: "half an "}, {Text: "answer"}}, HangAfter: true})
		run := startChat(t, rt, params("m", t.TempDir()))
		run.waitFor(protocol.EvToken, 3, nil)
		res := stopWithin(t, run)
		if got := rowsOf(res.Messages); got != done+" | assistant:half an answer~" || res.FinalResponse != "half an answer" {
			t.Fatalf("rows %s", got)
		}
	})
	t.Run("retry wait", func(t *testing.T) {
		p.Enqueue(todoStep(), rateLimited(nil, "3600"))
		run := startChat(t, rt, params("r", t.TempDir()))
		run.waitFor(protocol.EvRateLimitWait, 1, nil)
		res := stopWithin(t, run)
		if got := rowsOf(res.Messages); got != done || res.FinalResponse != "Planning." {
			t.Fatalf("rows %s", got)
		}
	})
	t.Run("approval wait", func(t *testing.T) {
		p.Enqueue(todoStep(), providertest.CallTurn("", providertest.Call("c1", "terminal", map[string]any{"command": "rm -rf build"})))
		dir := workspace(t, map[string]string{"build/x": "x"})
		run := startChat(t, rt, params("a", dir))
		run.waitFor(protocol.EvApproval, 1, nil)
		res := stopWithin(t, run)
		if got := rowsOf(res.Messages); got != done+" | assistant:+calls | tool" || !strings.Contains(res.Messages[3].Content, "interrupted") {
			t.Fatalf("rows %s %+v", got, res.Messages)
		}
	})
	t.Run("clarify wait", func(t *testing.T) {
		p.Enqueue(todoStep(), askTurn("c1"))
		run := startChat(t, rt, params("c", t.TempDir()))
		run.waitFor(protocol.EvClarify, 1, nil)
		res := stopWithin(t, run)
		if got := rowsOf(res.Messages); got != done+" | assistant:Let me ask.+calls | tool" || !strings.Contains(res.Messages[3].Content, "interrupted") ||
			res.FinalResponse != "Let me ask." {
			t.Fatalf("rows %s %+v", got, res.Messages)
		}
	})
	if rt.pendingCount() != 0 {
		t.Fatal("a parked question outlived its turn")
	}
}

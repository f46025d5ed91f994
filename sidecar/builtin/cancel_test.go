package builtin

import (
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// stopWithin cancels a run and returns its result, failing when the result took longer
// than half a second to come.
func stopWithin(t *testing.T, run *chatRun) protocol.ChatResult {
	t.Helper()
	begin := time.Now()
	run.cancel()
	res := run.mustResult()
	took := time.Since(begin)
	t.Logf("stop took %v", took)
	if took > 500*time.Millisecond {
		t.Fatalf("stop took %v", took)
	}
	if res.Status != protocol.StatusCancelled || !res.Partial {
		t.Fatalf("result %+v", res)
	}
	return res
}

// TestStopInEveryWait: a stop during a model call, a retry wait, an approval wait and
// a clarify wait returns the cancelled result at once, with the streamed text and the
// finished tool calls in messages. (A stop while a command runs: TestStopDuringTerminal;
// before the response headers: TestChatCancelBeforeHeaders.)
func TestStopInEveryWait(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)}) // default back-off: the retry wait is seconds long

	// A first step whose todo call finishes, so every case has a finished tool call.
	todoStep := func() providertest.Turn {
		return providertest.CallTurn("Planning.", providertest.Call("t1", "todo", map[string]any{"todos": []any{map[string]any{"id": "1", "content": "x"}}}))
	}
	const done = "assistant:Planning.+calls | tool"

	t.Run("model call", func(t *testing.T) {
		p.Enqueue(todoStep(), providertest.Turn{Chunks: []providertest.Chunk{{Text: "half an "}, {Text: "answer"}}, HangAfter: true})
		run := startChat(t, rt, toolParams(p, "m", t.TempDir()))
		run.waitFor(protocol.EvToken, 3, nil)
		res := stopWithin(t, run)
		if got := rowsOf(res.Messages); got != done+" | assistant:half an answer~" || res.FinalResponse != "half an answer" {
			t.Fatalf("rows %s", got)
		}
	})
	t.Run("retry wait", func(t *testing.T) {
		p.Enqueue(todoStep(), rateLimited(nil, "30"))
		run := startChat(t, rt, toolParams(p, "r", t.TempDir()))
		run.waitFor(protocol.EvRateLimitWait, 1, nil)
		res := stopWithin(t, run)
		if got := rowsOf(res.Messages); got != done || res.FinalResponse != "Planning." {
			t.Fatalf("rows %s", got)
		}
	})
	t.Run("approval wait", func(t *testing.T) {
		p.Enqueue(todoStep(), providertest.CallTurn("", providertest.Call("c1", "terminal", map[string]any{"command": "rm -rf build"})))
		dir := workspace(t, map[string]string{"build/x": "x"})
		run := startChat(t, rt, toolParams(p, "a", dir))
		run.waitFor(protocol.EvApproval, 1, nil)
		res := stopWithin(t, run)
		if got := rowsOf(res.Messages); got != done+" | assistant:+calls | tool" || !strings.Contains(res.Messages[3].Content, "interrupted") {
			t.Fatalf("rows %s %+v", got, res.Messages)
		}
	})
	t.Run("clarify wait", func(t *testing.T) {
		p.Enqueue(todoStep(), askTurn("c1"))
		run := startChat(t, rt, toolParams(p, "c", t.TempDir()))
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

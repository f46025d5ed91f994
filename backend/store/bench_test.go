package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"talaria/sidecar/protocol"
)

func openBench(b *testing.B) *Store {
	b.Helper()
	s, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "bench.db"), Options{AppVersion: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// One op is one batch of 32 token frames, the size the turn runner flushes.
func BenchmarkAppendJournalBatch(b *testing.B) {
	s := openBench(b)
	sess, err := s.CreateSession(b.Context(), NewSession{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	data := json.RawMessage(`{"text":"a token or two of streamed text"}`)
	batch := make([]JournalFrame, 32)
	seq := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		for i := range batch {
			seq++
			batch[i] = JournalFrame{StreamID: "st", SessionID: sess.ID, Seq: seq, Event: "token", Data: data}
		}
		if err := s.AppendJournalBatch(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// One op settles a turn of three rows; the admission before it is not timed.
func BenchmarkSettleTurn(b *testing.B) {
	s := openBench(b)
	sess, err := s.CreateSession(b.Context(), NewSession{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	rows := []Message{
		{Role: "assistant", Content: "let me look", ToolCalls: []protocol.ToolCall{{ID: "c1", Type: "function",
			Function: protocol.ToolFunction{Name: "sh", Arguments: `{"cmd":"ls"}`}}}},
		{Role: "tool", Content: "a.go\nb.go", ToolCallID: "c1", Name: "sh"},
		{Role: "assistant", Content: "two files"},
	}
	usage := protocol.Usage{InputTokens: 1200, OutputTokens: 80, EstimatedCost: 0.002}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		stream := fmt.Sprintf("st%d", i)
		b.StopTimer()
		if _, err := s.AdmitTurn(b.Context(), sess.ID, stream, Message{Content: "list files"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.SettleTurn(b.Context(), sess.ID, stream, rows, usage, TerminalDone); err != nil {
			b.Fatal(err)
		}
	}
}

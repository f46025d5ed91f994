package backend_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"talaria/backend/bus"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

const benchTokens = 100_000

// BenchmarkStream100kTokens streams 100,000 token frames from the real sidecar process
// (fed by the scripted provider over HTTP/SSE) through the host: client decode, the
// turn runner's coalescing, the journal in SQLite and the event bus. Beside it, in the
// same run, it measures the same NDJSON $/frame lines through a plain OS pipe (write,
// read line by line), so the host's cost is reported as a ratio to the raw pipe.
func BenchmarkStream100kTokens(b *testing.B) {
	h := newBenchHarness(b)
	var pipeRate, hostRate float64
	for i := 0; i < b.N; i++ {
		pipeRate = rawPipeRate(b, benchTokens)

		sid := h.newSession()
		h.provider.Enqueue(providertest.BigTurn(benchTokens, "tok "))
		var events int
		var bytes int
		done := make(chan struct{})
		unsub := h.svc.Bus.Subscribe(func(ev bus.Event) {
			if f, ok := ev.Payload.(turn.Frame); ok && f.SessionID == sid {
				events++
				if f.Event == protocol.EvToken {
					var td protocol.TextData
					_ = json.Unmarshal(f.Data, &td)
					bytes += len(td.Text)
				}
				if f.Event == protocol.EvStreamEnd {
					close(done)
				}
			}
		})
		began := time.Now()
		if _, err := h.svc.StartTurn(context.Background(), sid, "go"); err != nil {
			b.Fatal(err)
		}
		<-done
		elapsed := time.Since(began)
		unsub()
		if bytes != benchTokens*len("tok ") {
			b.Fatalf("window got %d bytes of text, want %d", bytes, benchTokens*4)
		}
		hostRate = benchTokens / elapsed.Seconds()
		b.ReportMetric(float64(events), "window-events")
		fmt.Fprintf(os.Stderr, "\nstream of %d token frames: host %.0f frames/s (%.2f s, %d window events, journal+bus)\n"+
			"raw pipe of the same NDJSON lines: %.0f lines/s\nratio host/raw pipe: %.3f\n",
			benchTokens, hostRate, elapsed.Seconds(), events, pipeRate, hostRate/pipeRate)
	}
	b.ReportMetric(hostRate, "frames/s")
	b.ReportMetric(pipeRate, "pipe-lines/s")
	b.ReportMetric(hostRate/pipeRate, "ratio")
}

// rawPipeRate writes n $/frame lines, as the sidecar writes them, into an OS pipe and
// reads them back line by line; it returns lines per second.
func rawPipeRate(b *testing.B, n int) float64 {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	lines := make([][]byte, 0, n)
	for i := 1; i <= n; i++ {
		lines = append(lines, []byte(`{"jsonrpc":"2.0","method":"$/frame","params":{"id":2,"seq":`+strconv.Itoa(i)+`,"event":"token","data":{"text":"tok "}}}`+"\n"))
	}
	began := time.Now()
	go func() {
		bw := bufio.NewWriter(w)
		for _, l := range lines {
			bw.Write(l)
		}
		bw.Flush()
		w.Close()
	}()
	br := bufio.NewReaderSize(r, 64<<10)
	got := 0
	for {
		if _, err := br.ReadSlice('\n'); err != nil {
			break
		}
		got++
	}
	r.Close()
	if got != n {
		b.Fatalf("pipe read %d lines", got)
	}
	return float64(n) / time.Since(began).Seconds()
}

//go:build linux

package backend_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/backend/backendtest"
	"talaria/backend/store"
	"talaria/sidecar/providertest"
)

// historyRows is the long chat of BenchmarkTurnCostByHistory: 50,000 rows (issue 24,
// item 4), summarised up to its last exchange as a long chat is once its turns outgrew
// the model's context.
const historyRows = 50_000

// BenchmarkTurnCostByHistory measures the CPU one short turn costs the host (this
// process: the service, the store, the bus, and the scripted provider answering) and
// the sidecar process, in a chat of 2 rows and in one of 50,000 rows that was
// summarised (a summary row standing for all but its last exchange; the model's context
// is 131,072 tokens). Turns alternate between the two chats in blocks; it reports the
// means per turn and their ratio (goal: at most 1.5, issue 24). CPU is read from
// getrusage (this process) and /proc/<pid>/stat (the sidecar), in seconds.
func BenchmarkTurnCostByHistory(b *testing.B) {
	h := backendtest.New(b, "")
	ctx := context.Background()
	setProvider(h, "ollama")
	h.Provider.SetModelMeta("scripted-model", providertest.ModelMeta{ContextLength: 131072})
	h.Provider.SplitAux(true)

	row := func(i int) store.Message {
		text := fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum dolor sit amet ", 8))
		if i%2 == 0 {
			return store.Message{Role: "user", Content: text}
		}
		return store.Message{Role: "assistant", Content: text}
	}
	small, _, err := h.Svc.Store.ImportChat(ctx, store.ImportedChat{Source: "bench:small", Title: "small",
		Messages: []store.Message{row(0), row(1)}})
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]store.Message, 0, historyRows+1)
	for i := range historyRows {
		rows = append(rows, row(i))
	}
	began := time.Now()
	big, _, err := h.Svc.Store.ImportChat(ctx, store.ImportedChat{Source: "bench:big", Title: "big", Messages: rows})
	if err != nil {
		b.Fatal(err)
	}
	// Summarised as "Summarise and continue" leaves it: a summary row at the end.
	if _, err := h.Svc.Store.AppendMessages(ctx, big.ID, big.Revision, []store.Message{{Role: "system",
		Kind: store.KindSummary, Content: "SUMMARY of the long chat", SummaryCovers: historyRows - 2}}); err != nil {
		b.Fatal(err)
	}
	rows = append(rows, store.Message{})
	fmt.Fprintf(os.Stderr, "imported a chat of %d rows in %.1f s\n", len(rows), time.Since(began).Seconds())

	turn := func(sid string) (host, sidecar float64) {
		pid := h.Svc.About().Diagnostics(ctx).PID
		h0, s0 := selfCPU(), procCPU(pid)
		h.Provider.Enqueue(providertest.TextTurn("a short answer"))
		h.WaitEnd(send(h, sid, "a short question"))
		return selfCPU() - h0, procCPU(pid) - s0
	}
	// One turn each first: the sidecar has started and the caches are warm.
	turn(small.ID)
	turn(big.ID)
	const blocks, perBlock = 6, 10
	var hostSmall, hostBig, carSmall, carBig []float64
	for i := 0; i < b.N*blocks; i++ {
		for range perBlock {
			hs, ss := turn(small.ID)
			hostSmall, carSmall = append(hostSmall, hs), append(carSmall, ss)
		}
		for range perBlock {
			hb, sb := turn(big.ID)
			hostBig, carBig = append(hostBig, hb), append(carBig, sb)
		}
	}
	// Means, not medians: the sidecar's CPU is read in ticks of 10 ms, longer than a
	// short turn costs it, so only a sum over many turns measures it.
	hs, hb, ss, sb := meanOf(hostSmall), meanOf(hostBig), meanOf(carSmall), meanOf(carBig)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(os.Stderr, "per-turn CPU, means of %d turns each (load %s):\n"+
		"  2-row chat:      host %.1f ms, sidecar %.1f ms, together %.1f ms\n"+
		"  %d-row chat: host %.1f ms, sidecar %.1f ms, together %.1f ms\n"+
		"ratio %d rows / 2 rows: %.2f (goal <= 1.5)\n",
		len(hostSmall), strings.TrimSpace(string(load)), hs*1e3, ss*1e3, (hs+ss)*1e3,
		len(rows), hb*1e3, sb*1e3, (hb+sb)*1e3, len(rows), (hb+sb)/(hs+ss))
	b.ReportMetric((hs+ss)*1e3, "ms-cpu/turn-2-rows")
	b.ReportMetric((hb+sb)*1e3, "ms-cpu/turn-50k-rows")
	b.ReportMetric((hb+sb)/(hs+ss), "ratio")
}

func meanOf(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(max(len(v), 1))
}

// selfCPU is this process's user and system CPU time so far, in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// procCPU is process pid's user and system CPU time so far, in seconds (Linux
// /proc/<pid>/stat, fields 14 and 15 in clock ticks of 1/100 s); 0 when it cannot be read.
func procCPU(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil || pid <= 0 {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

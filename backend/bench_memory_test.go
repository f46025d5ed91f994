//go:build linux

package backend_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"talaria/backend/backendtest"
	"talaria/internal/testwait"
	"talaria/sidecar/providertest"
)

// BenchmarkMemoryPerTurn runs short streamed turns (500 by default,
// TALARIA_BENCH_MEMORY_TURNS to change it) in one chat through the real host and the real
// sidecar process, with no forced collection, and reports the memory each process keeps
// per turn (issue 24, item 5: goal under 50 KiB a turn, levelling off): the resident
// memory (VmRSS) of the host (this process, which also runs the scripted provider) and of
// the sidecar, and the host's Go heap in use, sampled every 25 turns; the slope (least
// squares, bytes per turn) over the first half of the turns and over the second. Memory
// that levels off has a second slope near 0; a leak keeps it near the first.
//
// With TALARIA_BENCH_HEAPPROFILE=dir it also writes heap profiles (after a full
// collection, so only there is a collection forced) of the host and of the sidecar at a
// fifth of the turns and at the end, for `go tool pprof -diff_base`:
// dir/host-1.pprof, dir/host-2.pprof, dir/sidecar-1.pprof, dir/sidecar-2.pprof.
func BenchmarkMemoryPerTurn(b *testing.B) {
	turns := 500
	if v := os.Getenv("TALARIA_BENCH_MEMORY_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 50 {
			b.Fatalf("TALARIA_BENCH_MEMORY_TURNS=%q: set it to a number of turns, at least 50", v)
		}
		turns = n
	}
	profDir := os.Getenv("TALARIA_BENCH_HEAPPROFILE")
	if profDir != "" {
		if err := os.MkdirAll(profDir, 0o755); err != nil {
			b.Fatal(err)
		}
		b.Setenv(backendtest.SidecarHeapEnv, filepath.Join(profDir, "sidecar"))
		runtime.MemProfileRate = 4096 // as the sidecar's (heapProfileOnSignal)
	}
	h := backendtest.New(b, "")
	ctx := context.Background()
	sid := h.NewSession()
	turn := func(i int) {
		h.Provider.Enqueue(providertest.TextTurn("Here is ", "a short ", "answer with some **markdown** and `code`: ", fmt.Sprintf("turn %d", i)))
		st := send(h, sid, "Turn "+strconv.Itoa(i))
		h.WaitEnd(st)
		// What the test keeps of the turn is forgotten: the harness's frames and the
		// scripted provider's record of the request (the whole chat each time).
		h.Forget(st)
		h.Provider.Reset()
	}
	// Warm up: the sidecar has started, the store's statements are prepared, the
	// session's title was asked for.
	for i := range 10 {
		turn(i)
	}
	pid := h.Svc.About().Diagnostics(ctx).PID
	profiles := 0
	var liveHeap []float64 // the host's live Go heap after a full collection, at each profile
	profile := func() {
		if profDir == "" {
			return
		}
		profiles++
		runtime.GC()
		f, err := os.Create(filepath.Join(profDir, fmt.Sprintf("host-%d.pprof", profiles)))
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		f.Close()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		liveHeap = append(liveHeap, float64(ms.HeapAlloc))
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(profDir, fmt.Sprintf("sidecar-%d.pprof", profiles))
		testwait.For(b, "the sidecar's heap profile "+path, func() bool { _, err := os.Stat(path); return err == nil })
	}
	const every = 25
	var xs, hostRSS, carRSS, hostHeap []float64
	sample := func(i int) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		xs = append(xs, float64(i))
		hostRSS = append(hostRSS, float64(rssBytes(os.Getpid())))
		carRSS = append(carRSS, float64(rssBytes(pid)))
		hostHeap = append(hostHeap, float64(ms.HeapInuse))
	}
	b.ResetTimer()
	sample(0)
	for i := 1; i <= turns; i++ {
		turn(10 + i)
		if i%every == 0 {
			sample(i)
		}
		if i == turns/5 {
			profile()
		}
	}
	profile()
	b.StopTimer()
	half := len(xs) / 2
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(os.Stderr, "memory kept per turn over %d turns, no forced collection (load %s), first half / second half:\n", turns, strings.TrimSpace(string(load)))
	for _, m := range []struct {
		name string
		ys   []float64
	}{{"host resident", hostRSS}, {"host Go heap in use", hostHeap}, {"sidecar resident", carRSS}} {
		first, second := slope(xs[:half+1], m.ys[:half+1]), slope(xs[half:], m.ys[half:])
		fmt.Fprintf(os.Stderr, "  %-20s %+7.1f KiB/turn, then %+7.1f KiB/turn (%.1f -> %.1f MiB)\n", m.name, first/1024, second/1024, m.ys[0]/(1<<20), m.ys[len(m.ys)-1]/(1<<20))
		key := strings.ReplaceAll(m.name, " ", "-")
		b.ReportMetric(first/1024, key+"-KiB/turn-first-half")
		b.ReportMetric(second/1024, key+"-KiB/turn-second-half")
	}
	if len(liveHeap) == 2 {
		kept := (liveHeap[1] - liveHeap[0]) / float64(turns-turns/5)
		fmt.Fprintf(os.Stderr, "  host live Go heap after a full collection: %+.2f KiB/turn over the last %d turns (%.1f -> %.1f MiB)\n", kept/1024, turns-turns/5, liveHeap[0]/(1<<20), liveHeap[1]/(1<<20))
		b.ReportMetric(kept/1024, "host-live-heap-KiB/turn")
	}
	all := slope(xs, sum(hostRSS, carRSS))
	fmt.Fprintf(os.Stderr, "  host and sidecar resident together: %+.1f KiB/turn over all %d turns (goal < 50, levelling off)\n", all/1024, turns)
	b.ReportMetric(all/1024, "KiB/turn-host+sidecar")
}

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func sum(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

// rssBytes is process pid's resident set size (VmRSS of /proc/<pid>/status) in bytes; 0
// when it cannot be read.
func rssBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

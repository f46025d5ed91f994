package backend

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The journal's pruning runs at start-up, then once per period, and stops with its
// context (in a synctest bubble: the fake clock moves only when every goroutine waits).
func TestPruneSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		var mu sync.Mutex
		var ran []time.Duration
		runs := func() []time.Duration { mu.Lock(); defer mu.Unlock(); return append([]time.Duration(nil), ran...) }
		done := make(chan struct{})
		go func() {
			defer close(done)
			every(ctx, JournalPruneEvery, func(context.Context) { mu.Lock(); ran = append(ran, time.Since(start)); mu.Unlock() })
		}()
		synctest.Wait()
		if r := runs(); len(r) != 1 || r[0] != 0 {
			t.Fatalf("at start-up: runs %v, want one at once", r)
		}
		time.Sleep(3*JournalPruneEvery - time.Second)
		synctest.Wait()
		if r := runs(); len(r) != 3 || r[1] != JournalPruneEvery || r[2] != 2*JournalPruneEvery {
			t.Fatalf("after almost three periods: runs %v", r)
		}
		cancel()
		<-done
		time.Sleep(2 * JournalPruneEvery)
		if r := runs(); len(r) != 3 {
			t.Fatalf("it ran after its context ended: %v", r)
		}
	})
}

package hermes

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"
)

// TestCurrentNeverHandsOutAnExitedGateway: between a gateway's exit (done closed) and
// the moment watch notices it (and starts the restart), the runtime must not give that
// gateway to a turn: a chat.start sent at once after a turn that failed with the crash
// would write its prompt to a dead process and fail, where it should wait for the
// restart like one sent a moment later. synctest decides the order: current is
// called, everything else in the bubble settles (current waits, or has returned), and
// only then does the watch's work happen.
func TestCurrentNeverHandsOutAnExitedGateway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		close(started)
		up := make(chan struct{})
		close(up)
		r := &Runtime{opts: Options{StartTimeout: time.Hour}, log: slog.New(slog.DiscardHandler), started: started, gwUp: up,
			sessions: map[string]*hsession{}, streams: map[string]*turn{}}
		dead := &gateway{done: make(chan struct{}), retired: make(chan struct{})}
		close(dead.done) // exited; watch has not run yet
		r.gw, r.d, r.gen = dead, &dialect{name: "A"}, 1

		type got struct {
			gw  *gateway
			gen int
			err error
		}
		res := make(chan got, 1)
		go func() {
			gw, _, gen, err := r.current(context.Background())
			res <- got{gw, gen, err}
		}()
		synctest.Wait()
		select {
		case g := <-res:
			t.Fatalf("current returned before the exited gateway was replaced: %+v (the dead one: %v)", g, g.gw == dead)
		default:
		}

		// What watch does: the gateway is forgotten and the restart begins...
		r.mu.Lock()
		r.gw = nil
		next := make(chan struct{})
		r.gwUp = next
		r.mu.Unlock()
		close(dead.retired)
		synctest.Wait()
		select {
		case g := <-res:
			t.Fatalf("current returned during the restart: %+v", g)
		default:
		}
		// ... and the restarted gateway is ready.
		fresh := &gateway{done: make(chan struct{}), retired: make(chan struct{})}
		r.mu.Lock()
		r.gw, r.gen = fresh, 2
		r.mu.Unlock()
		close(next)
		if g := <-res; g.err != nil || g.gw != fresh || g.gen != 2 {
			t.Fatalf("current = %+v, want the restarted gateway", g)
		}
	})
}

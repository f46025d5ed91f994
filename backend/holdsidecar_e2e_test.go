package backend_test

import (
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/supervisor"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The desktop app holds the real sidecar's launch until its window has painted
// (Options.HoldSidecar, Service.WindowShown; issue 16): no process before, a ready one
// after. A turn started during the hold does not wait for the window: it launches the
// sidecar itself.
func TestSidecarLaunchHeldUntilTheWindowIsShown(t *testing.T) {
	t.Run("window shown", func(t *testing.T) {
		h := backendtest.NewWith(t, "", func(o *backend.Options) { o.HoldSidecar = time.Hour })
		// A negative over time (nothing announces "still held"): a slow machine can
		// only make it pass.
		time.Sleep(300 * time.Millisecond)
		if st := h.Svc.Sidecar.Status(); st.State != supervisor.StateStarting || st.PID != 0 {
			t.Fatalf("before the window is shown: %+v, want starting without a process", st)
		}
		h.Svc.WindowShown()
		h.Svc.WindowShown() // a second call does nothing
		if !testwait.Until(func() bool { return h.Svc.Sidecar.Status().State == supervisor.StateReady }) {
			t.Fatalf("the sidecar did not start after WindowShown: %+v", h.Svc.Sidecar.Status())
		}
	})
	t.Run("a turn during the hold", func(t *testing.T) {
		h := backendtest.NewWith(t, "", func(o *backend.Options) { o.HoldSidecar = time.Hour })
		sid := h.NewSession()
		h.Provider.Enqueue(providertest.TextTurn("Here ", "already."))
		h.Provider.EnqueueAux(providertest.TextTurn("\"Held\""))
		st := h.Start(sid, "hello")
		frames := h.WaitEnd(st)
		h.CheckFrames(st, frames, protocol.EvDone)
		if got := backendtest.TextOf(frames, protocol.EvToken); got != "Here already." {
			t.Fatalf("streamed %q", got)
		}
	})
}

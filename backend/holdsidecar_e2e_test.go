package backend_test

import (
	"testing"
	"time"

	"talaria/backend"
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
		h := newHarnessWith(t, "", func(o *backend.Options) { o.HoldSidecar = time.Hour })
		// A negative over time (nothing announces "still held"): a slow machine can
		// only make it pass.
		time.Sleep(300 * time.Millisecond)
		if st := h.svc.Sidecar.Status(); st.State != supervisor.StateStarting || st.PID != 0 {
			t.Fatalf("before the window is shown: %+v, want starting without a process", st)
		}
		h.svc.WindowShown()
		h.svc.WindowShown() // a second call does nothing
		if !testwait.Until(func() bool { return h.svc.Sidecar.Status().State == supervisor.StateReady }) {
			t.Fatalf("the sidecar did not start after WindowShown: %+v", h.svc.Sidecar.Status())
		}
	})
	t.Run("a turn during the hold", func(t *testing.T) {
		h := newHarnessWith(t, "", func(o *backend.Options) { o.HoldSidecar = time.Hour })
		sid := h.newSession()
		h.provider.Enqueue(providertest.TextTurn("Here ", "already."))
		h.provider.EnqueueAux(providertest.TextTurn("\"Held\""))
		st := h.start(sid, "hello")
		frames := h.waitEnd(st)
		h.checkFrames(st, frames, protocol.EvDone)
		if got := textOf(frames, protocol.EvToken); got != "Here already." {
			t.Fatalf("streamed %q", got)
		}
	})
}

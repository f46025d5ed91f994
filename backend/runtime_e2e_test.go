package backend_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// twinKind is a runtime kind whose runtimes are more built-in sidecars under other ids
// ("twin:a", "twin:b"): real sidecar processes of their own, so the host's routing,
// pooling and shutdown are tested on real processes. Env changes restart a twin.
type twinKind struct {
	mu  sync.Mutex
	env map[string]string // per twin id, an extra environment entry
}

func (k *twinKind) Kind() string { return "twin" }

func (k *twinKind) Runtimes(ctx context.Context) ([]core.RuntimeOption, error) {
	return []core.RuntimeOption{{ID: "twin:a", Label: "Twin A", Available: true}, {ID: "twin:missing", Label: "Missing",
		Problem: "not installed", Hint: "install it"}}, nil
}

func (k *twinKind) Spec(ctx context.Context, id string) (core.RuntimeSpec, error) {
	if id == "twin:missing" {
		return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id, Message: "Twin is not installed.", Hint: "Install it."}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return core.RuntimeSpec{ID: id, Kind: protocol.RuntimeBuiltin, Label: id, Env: []string{"TWIN_MARK=" + k.env[id]}}, nil
}

func (k *twinKind) setEnv(id, v string) {
	k.mu.Lock()
	k.env[id] = v
	k.mu.Unlock()
}

func statusOf(svc *backend.Service, id string) (supervisor.Status, bool) {
	for _, st := range svc.Agents().RuntimeStatuses() {
		if st.RuntimeID == id {
			return st, true
		}
	}
	return supervisor.Status{}, false
}

func waitReady(t *testing.T, svc *backend.Service, id string, notPID int) supervisor.Status {
	t.Helper()
	var st supervisor.Status
	if !testwait.Until(func() bool {
		var ok bool
		st, ok = statusOf(svc, id)
		return ok && st.State == supervisor.StateReady && st.PID != notPID
	}) {
		t.Fatalf("runtime %s not ready: %+v", id, st)
	}
	return st
}

func TestChatsRunOnTheirOwnRuntimesSidecar(t *testing.T) {
	kind := &twinKind{env: map[string]string{}}
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = testwait.Timeout })
	h.Svc.Agents().RegisterRuntimeKind(kind)
	ws := h.WithWorkspace()
	ctx := context.Background()

	all, err := h.Svc.Agents().ListRuntimes(ctx)
	var opts []core.RuntimeOption // the built-in runtime and the twins (Hermes is always registered too)
	for _, o := range all {
		if o.Kind != protocol.RuntimeHermes {
			opts = append(opts, o)
		}
	}
	if err != nil || len(opts) != 3 || opts[0].ID != store.RuntimeBuiltin || !opts[0].Default || opts[1].ID != "twin:a" ||
		opts[1].Kind != "twin" || opts[2].Available {
		t.Fatalf("ListRuntimes = %+v, %v", opts, err)
	}

	// A chat moved to twin:a runs on a second sidecar process; the built-in one is not
	// asked. The approval of its dangerous command is answered through the process
	// that asked (the built-in sidecar would answer "not waiting").
	sid := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, sid, "twin:a"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("cleaned"))
	s := h.Start(sid, "clean up")
	h.WaitEvent(s, protocol.EvApproval)
	twin := waitReady(t, h.Svc, "twin:a", 0)
	builtin := h.Svc.Sidecar.Status()
	if twin.PID == 0 || twin.PID == builtin.PID {
		t.Fatalf("twin pid %d, built-in pid %d", twin.PID, builtin.PID)
	}
	ap := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), "once"); err != nil {
		t.Fatalf("answer routed to the wrong sidecar: %v", err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	if _, err := os.Stat(filepath.Join(ws, "build")); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v", err)
	}

	// A background task of the chat runs on the chat's runtime.
	if sess, _ := h.Svc.Store.GetSession(ctx, sid); sess.Runtime != "twin:a" {
		t.Fatalf("session runtime %q", sess.Runtime)
	}

	// New chats use the default runtime.
	if err := h.Svc.Agents().SetDefaultRuntime(ctx, "twin:a"); err != nil {
		t.Fatal(err)
	}
	if s2, err := h.Svc.Chats().NewSession(ctx); err != nil || s2.Runtime != "twin:a" {
		t.Fatalf("new session = %+v, %v", s2, err)
	}
	if err := h.Svc.Agents().SetDefaultRuntime(ctx, "twin:missing"); err == nil {
		t.Fatal("an unavailable runtime became the default")
	}

	// A changed spec restarts the twin: a new process on the next turn.
	kind.setEnv("twin:a", "2")
	h.Provider.Enqueue(providertest.TextTurn("after the restart"))
	s = h.Start(sid, "again")
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	if st := waitReady(t, h.Svc, "twin:a", twin.PID); st.PID == twin.PID {
		t.Fatal("the twin was not restarted after its spec changed")
	}
	if backendtest.ProcessAlive(twin.PID) {
		waitPIDGone(t, twin.PID)
	}

	// A chat on a runtime that cannot run is refused before anything is saved.
	bad := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, bad, "twin:missing"); err == nil {
		t.Fatal("moved a chat to a runtime that cannot run")
	}
	if err := h.Svc.Store.SetSessionRuntime(ctx, bad, "nosuch:thing"); err != nil {
		t.Fatal(err)
	}
	var ru *core.RuntimeUnavailableError
	if _, err := h.Svc.Turns().StartTurn(ctx, bad, "hello"); !errors.As(err, &ru) || ru.Hint == "" {
		t.Fatalf("turn on an unknown runtime = %v", err)
	}
	if rows := h.Messages(bad); len(rows) != 0 {
		t.Fatalf("a refused turn saved rows: %+v", rows)
	}

	// Closing the app stops every runtime's sidecar.
	current, _ := statusOf(h.Svc, "twin:a")
	cctx, cancel := context.WithTimeout(ctx, testwait.Timeout)
	defer cancel()
	if err := h.Svc.Close(cctx); err != nil {
		t.Fatal(err)
	}
	waitPIDGone(t, current.PID)
	waitPIDGone(t, builtin.PID)
}

func waitPIDGone(t *testing.T, pid int) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("sidecar %d to end", pid), func() bool { return !backendtest.ProcessAlive(pid) })
}

//go:build linux

package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/backend"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// dirOutsideTmp is a fresh folder outside /tmp (which a sandboxed command sees as its
// own empty tmpfs), so hiding it is really tested.
func dirOutsideTmp(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(base, 0o755)
	d, err := os.MkdirTemp(base, "talaria-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestAgentCannotTouchTheDataFolder: the attack of issue #10. The data folder is beside
// the workspace (not under /tmp); whatever the policy, commands and file tools neither
// read nor change the app's database, and the settings stay as they were.
func TestAgentCannotTouchTheDataFolder(t *testing.T) {
	root := dirOutsideTmp(t)
	data := filepath.Join(root, "data")
	h := newHarnessWith(t, "", func(o *backend.Options) { o.DataDir = data })
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	ctx := context.Background()
	if _, err := h.svc.SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: h.provider.BaseURL(), Model: "scripted-model", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(data, "talaria.db")
	before, _ := os.ReadFile(db)
	attack := "cat " + db + " | head -c 200; sqlite3 " + db + " \"update settings set value='1'\"; echo x >> " + db + "; rm -f " + db + "-wal; ls -la " + data
	for _, mode := range []string{protocol.SandboxWorkspaceWrite, protocol.SandboxFullAccess} {
		sid := h.newSession()
		if err := h.svc.SetSessionSandbox(ctx, sid, backend.SessionSandbox{Mode: mode}); err != nil {
			t.Fatal(err)
		}
		if got, _ := h.svc.GetSessionSandbox(ctx, sid); got.Mode != mode || (mode == protocol.SandboxFullAccess) != got.Network {
			t.Fatalf("policy round trip: %+v", got)
		}
		h.provider.Enqueue(
			toolTurn("c1", "terminal", map[string]any{"command": attack}),
			toolTurn("c2", "read_file", map[string]any{"path": db}),
			toolTurn("c3", "write_file", map[string]any{"path": db, "content": "x"}),
			providertest.TextTurn("done"), providertest.TextTurn("Title"))
		s := h.start(sid, "attack")
		frames := h.waitEnd(s)
		h.checkFrames(s, frames, protocol.EvDone)
		done := framesOf(frames, protocol.EvToolComplete)
		if len(done) != 3 {
			t.Fatalf("%s: %d tool results:\n%s", mode, len(done), h.describe(s))
		}
		if out := done[0]["preview"].(string); strings.Contains(out, "SQLite format") || strings.Contains(out, " talaria.db\n") || strings.Contains(out, "talaria.lock") {
			t.Fatalf("%s: the command saw the data folder:\n%s", mode, out)
		}
		for _, d := range done[1:] {
			if d["is_error"] != true {
				t.Fatalf("%s: a file tool reached the data folder: %v", mode, d)
			}
		}
	}
	after, _ := os.ReadFile(db)
	if len(after) < len(before) || strings.Contains(string(after), "x\n") && !strings.Contains(string(before), "x\n") {
		t.Fatalf("the database was changed from the sandbox")
	}
	if st, err := h.svc.GetSettings(ctx); err != nil || st.BaseURL != h.provider.BaseURL() {
		t.Fatalf("settings after the attack: %+v %v", st, err)
	}
	// The chat.start the sidecar got carried the policy and the data folder.
	reqs := h.provider.Requests()
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "sandbox (workspace-write, no network)") {
		t.Fatalf("system prompt: %s", sys)
	}
	// Full access cannot be the default for new chats; an unknown mode is refused.
	var se *backend.SandboxError
	if err := h.svc.SetDefaultSandbox(ctx, backend.SessionSandbox{Mode: protocol.SandboxFullAccess}); !errors.As(err, &se) {
		t.Fatalf("full access as the default: %v", err)
	}
	if err := h.svc.SetSessionSandbox(ctx, h.newSession(), backend.SessionSandbox{Mode: "yolo"}); !errors.As(err, &se) {
		t.Fatalf("unknown mode: %v", err)
	}
	if err := h.svc.SetDefaultSandbox(ctx, backend.SessionSandbox{Mode: protocol.SandboxReadOnly, Network: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.svc.GetSessionSandbox(ctx, h.newSession()); got.Mode != protocol.SandboxReadOnly || !got.Network {
		t.Fatalf("a new chat's policy: %+v", got)
	}
}

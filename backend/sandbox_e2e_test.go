//go:build linux

package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"talaria/internal/testdir"
	"testing"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/store"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// dirOutsideTmp is a fresh folder outside /tmp (which a sandboxed command sees as its
// own empty tmpfs), so hiding it is really tested.
func dirOutsideTmp(t *testing.T) string { return testdir.OutsideTmp(t, "talaria-e2e-") }

// TestAgentCannotTouchTheDataFolder: the attack of issue #10. The data folder is beside
// the workspace (not under /tmp); whatever the policy, commands and file tools neither
// read nor change the app's database, and the settings stay as they were.
func TestAgentCannotTouchTheDataFolder(t *testing.T) {
	root := dirOutsideTmp(t)
	data := filepath.Join(root, "data")
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.DataDir = data })
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	ctx := context.Background()
	if _, err := h.Svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: h.Provider.BaseURL(), Model: "scripted-model", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(data, "talaria.db")
	before, _ := os.ReadFile(db)
	attack := "cat " + db + " | head -c 200; sqlite3 " + db + " \"update settings set value='1'\"; echo x >> " + db + "; rm -f " + db + "-wal; ls -la " + data
	for _, mode := range []string{protocol.SandboxWorkspaceWrite, protocol.SandboxFullAccess} {
		sid := h.NewSession()
		if err := h.Svc.Agents().SetSessionSandbox(ctx, sid, backend.SessionSandbox{Mode: mode}); err != nil {
			t.Fatal(err)
		}
		if got, _ := h.Svc.Agents().GetSessionSandbox(ctx, sid); got.Mode != mode || (mode == protocol.SandboxFullAccess) != got.Network {
			t.Fatalf("policy round trip: %+v", got)
		}
		h.Provider.Enqueue(
			backendtest.ToolTurn("c1", "terminal", map[string]any{"command": attack}),
			backendtest.ToolTurn("c2", "read_file", map[string]any{"path": db}),
			backendtest.ToolTurn("c3", "write_file", map[string]any{"path": db, "content": "x"}),
			providertest.TextTurn("done"))
		h.Provider.EnqueueAux(providertest.TextTurn("Title"))
		s := h.Start(sid, "attack")
		frames := h.WaitEnd(s)
		h.CheckFrames(s, frames, protocol.EvDone)
		done := backendtest.FramesOf(frames, protocol.EvToolComplete)
		if len(done) != 3 {
			t.Fatalf("%s: %d tool results:\n%s", mode, len(done), h.Describe(s))
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
	if st, err := h.Svc.Settings().GetSettings(ctx); err != nil || st.BaseURL != h.Provider.BaseURL() {
		t.Fatalf("settings after the attack: %+v %v", st, err)
	}
	// The chat.start the sidecar got carried the policy and the data folder.
	reqs := h.Provider.Requests()
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "sandbox (workspace-write, no network)") {
		t.Fatalf("system prompt: %s", sys)
	}
	// Full access cannot be the default for new chats; an unknown mode is refused.
	var se *backend.SandboxError
	if err := h.Svc.Agents().SetDefaultSandbox(ctx, backend.SessionSandbox{Mode: protocol.SandboxFullAccess}); !errors.As(err, &se) {
		t.Fatalf("full access as the default: %v", err)
	}
	if err := h.Svc.Agents().SetSessionSandbox(ctx, h.NewSession(), backend.SessionSandbox{Mode: "yolo"}); !errors.As(err, &se) {
		t.Fatalf("unknown mode: %v", err)
	}
	if err := h.Svc.Agents().SetDefaultSandbox(ctx, backend.SessionSandbox{Mode: protocol.SandboxReadOnly, Network: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Svc.Agents().GetSessionSandbox(ctx, h.NewSession()); got.Mode != protocol.SandboxReadOnly || !got.Network {
		t.Fatalf("a new chat's policy: %+v", got)
	}
}

// TestApprovalAuditLog: every decision reaches the audit log (asked and denied,
// allowed once, always, YOLO without a card, a hardline refusal), with the chat's
// policy; the rows outlive the chat; CSV export guards formulas; a stale answer leaves
// no allowlist entry.
func TestApprovalAuditLog(t *testing.T) {
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = testwait.Timeout })
	ws := h.WithWorkspace()
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	ctx := context.Background()
	sid := h.NewSession()
	h.Provider.Enqueue(
		backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}),
		backendtest.ToolTurn("c2", "terminal", map[string]any{"command": "=cmd|' /C calc'!A0; git push --force"}),
		backendtest.ToolTurn("c3", "terminal", map[string]any{"command": "rm -rf /"}),
		providertest.TextTurn("done"))
	h.Provider.EnqueueAux(providertest.TextTurn("Title"))
	s := h.Start(sid, "go")
	h.WaitEvent(s, protocol.EvApproval)
	ap := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), "deny"); err != nil {
		t.Fatal(err)
	}
	if !testwait.Until(func() bool { return len(backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)) >= 2 }) {
		t.Fatalf("no second approval:\n%s", h.Describe(s))
	}
	ap2 := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[1]
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap2["approval_id"].(string), "always"); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(s)
	// A second turn with YOLO: the dangerous command runs without a card.
	if err := h.Svc.Approvals().SetYolo(ctx, sid, true, ""); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(backendtest.ToolTurn("c4", "terminal", map[string]any{"command": "git reset --hard"}), providertest.TextTurn("ok"))
	s2 := h.Start(sid, "again")
	h.WaitEnd(s2)
	if n := len(backendtest.FramesOf(h.Snapshot(s2), protocol.EvApproval)); n != 0 {
		t.Fatalf("%d approval cards under YOLO", n)
	}
	entries, err := h.Svc.Approvals().ListAudit(ctx, store.AuditFilter{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Pattern+"="+e.Decision+"/"+e.DecidedBy)
		if e.Policy == "" || e.SessionID != sid || e.StreamID == "" || e.Subject == "" {
			t.Errorf("entry lacks context: %+v", e)
		}
	}
	want := "git_reset_hard=yolo/yolo,delete_root=refused/hardline,git_force_push=always/user,recursive_delete=deny/user"
	if strings.Join(got, ",") != want {
		t.Fatalf("audit = %v\nwant %s", got, want)
	}
	// The chat goes; its rows stay. CSV has a header and guards formulas.
	if err := h.Svc.Chats().DeleteSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	csvText, err := h.Svc.Approvals().AuditCSV(ctx, store.AuditFilter{})
	if err != nil || !strings.HasPrefix(csvText, "time,decision,decided_by,kind") || strings.Count(csvText, "\n") != 5 ||
		!strings.Contains(csvText, `'=cmd|`) {
		t.Fatalf("csv (%v):\n%s", err, csvText)
	}
	if n, err := h.Svc.Approvals().ClearAudit(ctx); err != nil || n != 4 {
		t.Fatalf("clear = %d, %v", n, err)
	}
	// A stale "always" leaves no allowlist entry.
	rules, _ := h.Svc.Approvals().GetAllowlist(ctx)
	before := len(rules)
	if err := h.Svc.Approvals().RespondApproval(ctx, h.NewSession(), "ap_gone", "always"); err == nil {
		t.Fatal("a stale answer was accepted")
	}
	if rules, _ := h.Svc.Approvals().GetAllowlist(ctx); len(rules) != before {
		t.Fatalf("a stale answer changed the allowlist: %+v", rules)
	}
}

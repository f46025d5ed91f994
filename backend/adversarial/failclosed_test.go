//go:build linux

package adversarial

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
	"talaria/sidecar/sandbox"
)

// TestNoSandboxFailsClosed: with no sandbox (the real sidecar started with
// TALARIA_SANDBOX=off, as on a system without bubblewrap) the app says so in its status,
// and every command asks, even a harmless one, with once or deny only; a denied command
// does not run, an allowed one runs once, and the next asks again.
func TestNoSandboxFailsClosed(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	data, ws := t.TempDir(), t.TempDir()
	exe, _ := os.Executable()
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: data, DefaultWorkspace: ws, Version: "test",
		SidecarCommand: exe, SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real", sandbox.EnvOff + "=off"}, Keyring: vault.NewMemoryKeyring(),
		Supervisor: func(c *supervisor.Config) { c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	answers := []string{protocol.ChoiceDeny, protocol.ChoiceOnce, protocol.ChoiceDeny}
	cards := make(chan protocol.ApprovalData, 8)
	ended := make(chan string, 8)
	unsub := svc.Bus.Subscribe(func(ev bus.Event) {
		f, ok := ev.Payload.(turn.Frame)
		if !ok {
			return
		}
		switch f.Event {
		case protocol.EvApproval:
			var ad protocol.ApprovalData
			json.Unmarshal(f.Data, &ad)
			cards <- ad
			choice := protocol.ChoiceDeny
			if len(answers) > 0 {
				choice, answers = answers[0], answers[1:]
			}
			go svc.Approvals().RespondApproval(context.Background(), f.SessionID, ad.ApprovalID, choice)
		case protocol.EvStreamEnd:
			ended <- f.StreamID
		}
	})
	defer unsub()
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer svc.Close(testwait.Context(t))
	ctx := context.Background()
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the sidecar ready", func() bool { return svc.Agents().GetStatus(ctx).Sidecar.State == supervisor.StateReady })
	st := svc.Agents().GetStatus(ctx).Sidecar.Sandbox
	if st == nil || st.Available || !strings.Contains(st.Reason, "turned off") || st.Hint == "" {
		t.Fatalf("the status must say there is no sandbox, why and what to do: %+v", st)
	}
	sess, _ := svc.Chats().NewSession(ctx)
	svc.Chats().RenameSession(ctx, sess.ID, "no sandbox")
	cmd := func(id, name string) providertest.Turn {
		return providertest.CallTurn("", providertest.Call(id, "terminal", map[string]any{"command": "echo hi > " + name}))
	}
	p.Enqueue(cmd("a", "one.txt"), cmd("b", "two.txt"), cmd("c", "three.txt"), providertest.TextTurn("done"))
	if _, err := svc.Turns().StartTurn(ctx, sess.ID, "write three files"); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, ended, "the end of the turn")
	close(cards)
	n := 0
	for ad := range cards {
		n++
		if ad.Pattern != protocol.PatternUnsandboxed || strings.Join(ad.Choices, ",") != "once,deny" || ad.Sandbox != "outside the sandbox" {
			t.Errorf("card %d: %+v", n, ad)
		}
	}
	if n != 3 {
		t.Fatalf("%d approval cards for three harmless commands, want 3 (every command asks)", n)
	}
	for name, want := range map[string]bool{"one.txt": false, "two.txt": true, "three.txt": false} {
		_, err := os.Stat(filepath.Join(ws, name))
		if (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
}

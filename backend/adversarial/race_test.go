//go:build linux

package adversarial

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestFileToolRaces is the time-of-check attack on the file tools, through the real
// backend and sidecar: while the scripted model reads, writes and patches paths in the
// workspace, a process swaps those paths, as fast as it can, between an ordinary
// file or folder of the workspace and a link to a secret outside (~/.ssh/id_rsa, the
// folder ~/.ssh, a project outside), each swap one atomic rename. Whatever the timing,
// no call may return a planted secret, and nothing outside the workspace may change.
func TestFileToolRaces(t *testing.T) {
	w := newWorld(t)
	p := providertest.Start()
	defer p.Close()
	exe, _ := os.Executable()
	svc, err := backend.Open(context.Background(), backend.Options{
		DataDir: w.data, DefaultWorkspace: w.ws, Version: "test", SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real", "HOME=" + w.home},
		Keyring:    vault.NewMemoryKeyring(),
		Supervisor: func(c *supervisor.Config) { c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, svc: svc, provider: p, frames: map[string][]turn.Frame{}, ended: map[string]chan struct{}{}, denied: map[string]bool{}}
	unsub := svc.Bus.Subscribe(r.onEvent)
	defer unsub()
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer svc.Close(testwait.Context(t))
	ctx := context.Background()
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model"}); err != nil {
		t.Fatal(err)
	}
	sess, err := svc.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc.Chats().RenameSession(ctx, sess.ID, "races")
	r.session = sess.ID
	before := w.snapshot()

	// The swapper: race (a file) and racedir (a folder) flip between their own
	// content and links out, by rename, until stopped.
	inside := "inside the workspace\n"
	if err := os.MkdirAll(filepath.Join(w.ws, "racedir.real"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.ws, "racedir.real", "important.txt"), []byte(inside), 0o644)
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		race, racedir := filepath.Join(w.ws, "race"), filepath.Join(w.ws, "racedir")
		for i := 0; !stop.Load(); i++ {
			tmp := filepath.Join(w.ws, fmt.Sprintf(".swap%d", i%2))
			os.Remove(tmp)
			if i%2 == 0 {
				os.WriteFile(tmp, []byte(inside), 0o644)
			} else {
				os.Symlink(filepath.Join(w.home, ".ssh", "id_rsa"), tmp)
			}
			os.Rename(tmp, race)
			dtmp := filepath.Join(w.ws, fmt.Sprintf(".dswap%d", i%3))
			os.Remove(dtmp)
			switch i % 3 {
			case 0:
				os.Symlink("racedir.real", dtmp)
			case 1:
				os.Symlink(filepath.Join(w.home, ".ssh"), dtmp)
			default:
				os.Symlink(w.out, dtmp)
			}
			os.Rename(dtmp, racedir)
			swaps.Add(1)
		}
	}()

	var calls []providertest.ToolCall
	for i := 0; i < 20; i++ {
		calls = append(calls,
			providertest.Call(fmt.Sprintf("r%d", i), "read_file", map[string]any{"path": "race"}),
			providertest.Call(fmt.Sprintf("d%d", i), "read_file", map[string]any{"path": "racedir/id_rsa"}),
			providertest.Call(fmt.Sprintf("w%d", i), "write_file", map[string]any{"path": "racedir/important.txt", "content": "pwned\n"}),
			providertest.Call(fmt.Sprintf("a%d", i), "write_file", map[string]any{"path": "racedir/authorized_keys", "content": "ssh-ed25519 AAAA attacker\n"}),
			providertest.Call(fmt.Sprintf("p%d", i), "patch", map[string]any{"path": "race", "old_string": "inside", "new_string": "pwned"}),
			providertest.Call(fmt.Sprintf("s%d", i), "search_files", map[string]any{"pattern": "CANARY", "path": "racedir"}))
	}
	var frames []turn.Frame
	for round := 0; round < 3; round++ {
		frames = append(frames, r.play(fmt.Sprintf("race %d", round), providertest.CallTurn("", calls...), providertest.TextTurn("done"))...)
	}
	stop.Store(true)
	wg.Wait()

	results, ok, refused := 0, 0, 0
	for _, f := range frames {
		if f.Event != protocol.EvToolComplete {
			continue
		}
		results++
		var tc map[string]any
		json.Unmarshal(f.Data, &tc)
		if tc["is_error"] == true {
			refused++
		} else {
			ok++
		}
	}
	for _, f := range frames {
		if leaks(fixtureLeaks, f.Data) {
			t.Errorf("a planted secret reached a %s frame: %s", f.Event, f.Data)
		}
	}
	os.RemoveAll(filepath.Join(w.ws)) // the workspace is the agent's; the rest must be as it was
	os.MkdirAll(w.ws, 0o755)
	if d := diff(before, w.snapshot()); len(d) > 0 {
		t.Errorf("the race changed files outside the workspace:\n  %s", strings.Join(d, "\n  "))
	}
	t.Logf("%d swaps; %d file-tool calls: %d done inside the workspace, %d refused", swaps.Load(), results, ok, refused)
	if results != 3*len(calls) {
		t.Fatalf("%d tool results, want %d", results, 3*len(calls))
	}
}

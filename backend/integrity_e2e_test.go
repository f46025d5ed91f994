package backend_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/vault"
	"talaria/internal/testwait"
)

// openDataDir opens (and starts) a Service on dir with the background database check
// 50 ms after Start, and records its database events.
func openDataDir(t *testing.T, dir string) (*backend.Service, func() []backend.DatabaseEvent) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := backend.Open(context.Background(), backend.Options{
		DataDir: dir, Version: "test", SidecarCommand: exe, SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"},
		Keyring: vault.NewMemoryKeyring(), IntegrityCheckDelay: 50 * time.Millisecond,
		Supervisor: backendtest.SupervisorConfig,
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []backend.DatabaseEvent
	svc.Bus.Subscribe(func(ev bus.Event) {
		if e, ok := ev.Payload.(backend.DatabaseEvent); ok && ev.Name == backend.EventDatabase {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
	})
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc, func() []backend.DatabaseEvent {
		mu.Lock()
		defer mu.Unlock()
		return append([]backend.DatabaseEvent(nil), events...)
	}
}

func checkedAt(t *testing.T, svc *backend.Service) int64 {
	t.Helper()
	at, err := svc.Store.IntegrityCheckedAt(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, what, cond)
}

// The window opens before any whole-file check: the check runs after Start, when it is
// due (never checked, an unclean shutdown, or an old check), and not otherwise.
func TestIntegrityCheckRunsAfterStartOnlyWhenDue(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "talaria.running")

	// A fresh folder has never been checked: the check runs after Start.
	svc, _ := openDataDir(t, dir)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("no running marker while open: %v", err)
	}
	waitFor(t, "the first background check", func() bool { return checkedAt(t, svc) > 0 })
	first := checkedAt(t, svc)
	backendtest.Close(t, svc)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the running marker outlived a clean shutdown: %v", err)
	}

	// After a clean shutdown, with a recent check: none.
	svc, _ = openDataDir(t, dir)
	// A negative over time (a check not due starts nothing that could announce it):
	// eight times the check's delay; a slow machine can only make it pass.
	time.Sleep(400 * time.Millisecond)
	if got := checkedAt(t, svc); got != first {
		t.Fatalf("a check ran after a clean shutdown: %d -> %d", first, got)
	}
	backendtest.Close(t, svc)

	// After an unclean one (the marker is still there): the check runs again.
	if err := os.WriteFile(marker, []byte("left by a killed run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc, _ = openDataDir(t, dir)
	waitFor(t, "the check after an unclean shutdown", func() bool { return checkedAt(t, svc) > first })
	backendtest.Close(t, svc)
}

// Damage the background check finds is recovered under the running app, and the
// window is told (recovering, then recovered with the report); the app keeps working.
func TestIntegrityCheckRecoversDamageFoundAfterStart(t *testing.T) {
	dir := t.TempDir()
	svc, _ := openDataDir(t, dir)
	waitFor(t, "the first check", func() bool { return checkedAt(t, svc) > 0 })
	ctx := context.Background()
	for i := range 6 {
		sess, err := svc.Store.CreateSession(ctx, store.NewSession{Title: "chat"})
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]store.Message, 200)
		for j := range rows {
			rows[j] = store.Message{Role: []string{"user", "assistant"}[j%2], Content: strings.Repeat("words of the conversation ", 6+i)}
		}
		if _, err := svc.Store.AppendMessages(ctx, sess.ID, sess.Revision, rows); err != nil {
			t.Fatal(err)
		}
	}
	backendtest.Close(t, svc)

	// A disk error in the middle of the file, and the app died with it open.
	path := filepath.Join(dir, "talaria.db")
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	rng := rand.New(rand.NewPCG(3, 4))
	for p := len(file)/page/2 - 2; p < len(file)/page/2+2; p++ {
		for i := p * page; i < (p+1)*page; i++ {
			file[i] = byte(rng.Uint32())
		}
	}
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "talaria.running"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	svc, events := openDataDir(t, dir)
	defer backendtest.Close(t, svc)
	waitFor(t, "the recovery", func() bool {
		ev := events()
		return len(ev) > 0 && ev[len(ev)-1].State != "recovering"
	})
	ev := events()
	if len(ev) != 2 || ev[0].State != "recovering" || ev[1].State != "recovered" || ev[1].Report == nil || !ev[1].Report.Recovered {
		t.Fatalf("database events: %+v", ev)
	}
	rep, err := svc.Chats().RecoveryReport(ctx)
	if err != nil || !rep.Recovered || rep.BackupPath != ev[1].Report.BackupPath {
		t.Fatalf("saved report %+v, %v", rep, err)
	}
	if _, err := os.Stat(rep.BackupPath); err != nil {
		t.Fatalf("the damaged copy: %v", err)
	}
	list, err := svc.Chats().ListSessionsPage(ctx, 0, 50)
	if err != nil || len(list) == 0 {
		t.Fatalf("sessions after the recovery: %d, %v", len(list), err)
	}
	if _, err := svc.Chats().NewSession(ctx); err != nil {
		t.Fatalf("a new chat after the recovery: %v", err)
	}
}

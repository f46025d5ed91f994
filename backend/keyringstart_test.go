package backend

import (
	"context"
	"testing"
	"time"

	"talaria/backend/vault"
	"talaria/internal/testwait"
)

// promptKeyring answers as kr does once open is closed: a Secret Service whose unlock
// prompt the user has not answered yet.
type promptKeyring struct {
	kr   vault.Keyring
	open chan struct{}
}

func (k promptKeyring) Get(s, u string) (string, error) { <-k.open; return k.kr.Get(s, u) }
func (k promptKeyring) Set(s, u, p string) error        { <-k.open; return k.kr.Set(s, u, p) }
func (k promptKeyring) Delete(s, u string) error        { <-k.open; return k.kr.Delete(s, u) }

// A keyring behind an unlock prompt does not hold the backend's open (the window's
// page and its first-screen picture are served after it): the fingerprint key is read
// in the background, and a secret of the last run is redacted once it has been.
func TestOpenDoesNotWaitForTheKeyring(t *testing.T) {
	dir := t.TempDir()
	mem := vault.NewMemoryKeyring()
	const secret = "sk-kept-from-the-last-run-0123456789"
	// The last run: its fingerprint key in the keyring, its secret's fingerprints in the store.
	prev, err := Open(context.Background(), Options{DataDir: dir, Version: "test", Keyring: mem, SidecarCommand: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	<-prev.Vault.Loaded()
	prev.Vault.Remember(secret)
	closeService(t, prev)

	// The prompt is never timed out here: Open can return only if it does not wait.
	k := promptKeyring{kr: mem, open: make(chan struct{})}
	opened := make(chan *Service, 1)
	go func() {
		svc, err := Open(context.Background(), Options{DataDir: dir, Version: "test", Keyring: k, KeyringTimeout: time.Hour, SidecarCommand: "/nonexistent"})
		if err != nil {
			t.Error(err)
		}
		opened <- svc
	}()
	var svc *Service
	select {
	case svc = <-opened:
	case <-time.After(testwait.Timeout):
		close(k.open)
		t.Fatal("Open waits for the keyring's unlock prompt")
	}
	if svc == nil {
		t.FailNow()
	}
	select {
	case <-svc.Vault.Loaded():
		t.Fatal("the fingerprints were loaded although the keyring has not answered")
	default:
	}
	if _, err := svc.Chats().ListSessionsPage(context.Background(), 0, 50); err != nil {
		t.Fatal(err)
	}
	close(k.open)
	<-svc.Vault.Loaded()
	if got := svc.Vault.RedactString("the key is " + secret); got != "the key is "+vault.Redacted {
		t.Fatalf("RedactString = %q: the last run's secret is not redacted", got)
	}
	closeService(t, svc)
}

func closeService(t *testing.T, s *Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

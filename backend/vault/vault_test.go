package vault

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zalando/go-keyring"

	"talaria/sidecar/protocol/redact"
)

type brokenKeyring struct{}

var errNoDBus = errors.New("The name org.freedesktop.secrets was not provided by any .service files")

func (brokenKeyring) Get(string, string) (string, error) { return "", errNoDBus }
func (brokenKeyring) Set(string, string, string) error   { return errNoDBus }
func (brokenKeyring) Delete(string, string) error        { return errNoDBus }

func TestVaultWithKeyring(t *testing.T) {
	keyring.MockInit()
	v := New(OSKeyring{})
	if err := v.Available(); err != nil {
		t.Fatalf("mock keyring unavailable: %v", err)
	}
	if _, ok, err := v.Get("provider:openai"); ok || err != nil {
		t.Fatalf("empty vault: ok=%v err=%v", ok, err)
	}
	if err := v.Set("provider:openai", "sk-1", true); err != nil {
		t.Fatal(err)
	}
	// A second vault over the same keyring sees the remembered secret.
	if s, ok, _ := New(OSKeyring{}).Get("provider:openai"); !ok || s != "sk-1" {
		t.Fatalf("remembered secret not in keyring: %q %v", s, ok)
	}
	if err := v.Set("vault:TOKEN", "t-1", false); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := New(OSKeyring{}).Get("vault:TOKEN"); ok {
		t.Fatal("a session-only secret reached the keyring")
	}
	if err := v.Delete("provider:openai"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := v.Get("provider:openai"); ok {
		t.Fatal("deleted secret still readable")
	}
}

func TestVaultWithoutKeyring(t *testing.T) {
	v := New(brokenKeyring{})
	var ue *UnavailableError
	if err := v.Available(); !errors.As(err, &ue) {
		t.Fatalf("Available() = %v, want *UnavailableError", err)
	}
	err := v.Set("provider:openai", "sk-2", true)
	if !errors.As(err, &ue) {
		t.Fatalf("Set on a broken keyring = %v, want *UnavailableError", err)
	}
	if s, ok, err := v.Get("provider:openai"); !ok || s != "sk-2" || err != nil {
		t.Fatalf("session-only fallback lost the secret: %q %v %v", s, ok, err)
	}
	if err := v.Delete("provider:openai"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := v.Get("provider:openai"); ok {
		t.Fatal("deleted session secret still readable")
	}
}

func TestRedact(t *testing.T) {
	v := New(NewMemoryKeyring())
	if err := v.Set("vault:TOKEN", `ghp_"quoted"\slash`, true); err != nil {
		t.Fatal(err)
	}
	v.Remember("abc")  // too short: never redacted
	v.Remember("ghp_") // a prefix of the first: the longer wins where both match
	cases := map[string]string{
		`token is ghp_"quoted"\slash here`:   "token is [REDACTED] here",
		`{"output":"ghp_\"quoted\"\\slash"}`: `{"output":"[REDACTED]"}`,
		"abc is fine":                        "abc is fine",
		"ghp_ alone":                         "[REDACTED] alone",
	}
	for in, want := range cases {
		if got := v.RedactString(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// stuckKeyring never answers, like a Secret Service waiting on an unlock prompt.
type stuckKeyring struct{ block chan struct{} }

func (k stuckKeyring) Get(string, string) (string, error) { <-k.block; return "", nil }
func (k stuckKeyring) Set(string, string, string) error   { <-k.block; return nil }
func (k stuckKeyring) Delete(string, string) error        { <-k.block; return nil }

// In a synctest bubble: the keyring's deadline passes on the fake clock, so how long
// the vault was held is exact (one KeyringTimeout, for the probe only) whatever the
// machine's load, and the test does not wait 3 real seconds.
func TestStuckKeyringDoesNotFreeze(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := stuckKeyring{block: make(chan struct{})}
		defer close(k.block)
		v := New(k)
		began := time.Now()
		var ue *UnavailableError
		if err := v.Available(); !errors.As(err, &ue) {
			t.Fatalf("Available() = %v, want *UnavailableError", err)
		}
		// Later calls use the cached answer instead of waiting again.
		if _, ok, err := v.Get("provider:x"); ok || err != nil {
			t.Fatalf("Get = %v %v", ok, err)
		}
		if err := v.Set("provider:x", "secret-1", true); !errors.As(err, &ue) {
			t.Fatalf("Set = %v", err)
		}
		if s, ok, _ := v.Get("provider:x"); !ok || s != "secret-1" {
			t.Fatal("session fallback lost the secret")
		}
		if d := time.Since(began); d != KeyringTimeout {
			t.Fatalf("a stuck keyring held the vault for %s, want one keyring timeout (%s)", d, KeyringTimeout)
		}
	})
}

// panickyKeyring panics in every call, as go-keyring's Secret Service client does when
// the D-Bus connection closes while an unlock prompt is open; with release set, it
// panics only after release is closed (after the vault's call has timed out).
type panickyKeyring struct{ release chan struct{} }

func (k panickyKeyring) wait() {
	if k.release != nil {
		<-k.release
	}
	var signal *struct{ Name string }
	_ = signal.Name // the nil dereference of the real bug
}
func (k panickyKeyring) Get(string, string) (string, error) { k.wait(); return "", nil }
func (k panickyKeyring) Set(string, string, string) error   { k.wait(); return nil }
func (k panickyKeyring) Delete(string, string) error        { k.wait(); return nil }

// A keyring library that panics, at once or after its call timed out, is a keyring
// that does not work: the vault falls back to the session and the process lives on.
// In a synctest bubble (fake clock): the late panic happens, on its own goroutine,
// before synctest.Wait returns, instead of within a 100 ms sleep.
func TestPanickingKeyringIsUnavailableNotACrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := New(panickyKeyring{})
		var ue *UnavailableError
		if err := v.Available(); !errors.As(err, &ue) {
			t.Fatalf("Available() = %v, want *UnavailableError", err)
		}
		if err := v.Set("provider:x", "secret-1", true); !errors.As(err, &ue) {
			t.Fatalf("Set = %v, want *UnavailableError", err)
		}
		if s, ok, _ := v.Get("provider:x"); !ok || s != "secret-1" {
			t.Fatal("session fallback lost the secret")
		}

		late := panickyKeyring{release: make(chan struct{})}
		v2 := New(late)
		if err := v2.Available(); !errors.As(err, &ue) {
			t.Fatalf("Available() = %v, want *UnavailableError", err)
		}
		close(late.release) // the timed-out call now panics on its own goroutine
		synctest.Wait()     // it has, and the process lives on
	})
}

// slowKeyring answers as kr does once open is closed, like a Secret Service whose
// unlock prompt the user has not answered yet.
type slowKeyring struct {
	kr   Keyring
	open chan struct{}
}

func (k slowKeyring) Get(s, u string) (string, error) { <-k.open; return k.kr.Get(s, u) }
func (k slowKeyring) Set(s, u, p string) error        { <-k.open; return k.kr.Set(s, u, p) }
func (k slowKeyring) Delete(s, u string) error        { <-k.open; return k.kr.Delete(s, u) }

// The fingerprint key is read in the background: the caller goes on at once, redaction
// waits until the fingerprints of earlier runs are known, and a secret remembered
// meanwhile stays known. In a synctest bubble, "waits" is exact: synctest.Wait returns
// once every goroutine is blocked, and the redaction has not returned by then.
func TestFingerprintsLoadInBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lastRun, meanwhile = "sk-from-the-last-run-0123456789", "sk-given-meanwhile-9876543210"
		mem := NewMemoryKeyring()
		stored := map[string][]redact.Fingerprint{}
		load := func(id string) ([]redact.Fingerprint, error) { return stored[id], nil }
		persist := func(id string, fps []redact.Fingerprint) { stored[id] = append(stored[id], fps...) }
		// The last run: its key in the keyring, its secret's fingerprints in the store.
		prev := New(mem)
		if err := prev.UseFingerprints(load, persist); err != nil {
			t.Fatal(err)
		}
		prev.Remember(lastRun)
		if len(stored) != 1 {
			t.Fatalf("the last run kept fingerprints under %d keys, want 1", len(stored))
		}

		k := slowKeyring{kr: mem, open: make(chan struct{})}
		v := New(k)
		var loadErr error
		doneCalled := false
		v.UseFingerprintsInBackground(load, persist, func(err error) { loadErr, doneCalled = err, true })
		v.Remember(meanwhile) // does not wait for the keyring
		text := "key " + lastRun + " and " + meanwhile
		got := make(chan string, 1)
		go func() { got <- v.RedactString(text) }()
		synctest.Wait()
		select {
		case s := <-got:
			t.Fatalf("redaction answered %q before the fingerprints were loaded", s)
		case <-v.Loaded():
			t.Fatal("Loaded is ready while the keyring has not answered")
		default:
		}
		close(k.open)
		want := "key " + Redacted + " and " + Redacted
		if s := <-got; s != want {
			t.Fatalf("RedactString = %q, want %q", s, want)
		}
		<-v.Loaded()
		synctest.Wait()
		if !doneCalled || loadErr != nil {
			t.Fatalf("done called %v with %v", doneCalled, loadErr)
		}
		if !v.RedactionPersistent() {
			t.Fatal("the key is in the keyring, yet redaction is not persistent")
		}
		// The secret given meanwhile was persisted under the key: a next run knows it.
		next := New(mem)
		if err := next.UseFingerprints(load, persist); err != nil {
			t.Fatal(err)
		}
		if s := next.RedactString(meanwhile); s != Redacted {
			t.Fatalf("the next run reads %q, want it redacted", s)
		}
	})
}

// A keyring that never answers: the background load gives up after KeyringTimeout
// (fake clock), redaction then goes on with this run's values, and Loaded is ready.
func TestFingerprintsLoadStuckKeyring(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := stuckKeyring{block: make(chan struct{})}
		defer close(k.block)
		v := New(k)
		began := time.Now()
		v.UseFingerprintsInBackground(nil, nil, nil)
		if time.Since(began) != 0 {
			t.Fatal("UseFingerprintsInBackground waited")
		}
		v.Remember("sk-this-run-only-0123456789")
		if s := v.RedactString("sk-this-run-only-0123456789"); s != Redacted {
			t.Fatalf("RedactString = %q", s)
		}
		if d := time.Since(began); d != KeyringTimeout {
			t.Fatalf("redaction waited %s, want one keyring timeout (%s)", d, KeyringTimeout)
		}
		<-v.Loaded()
		if v.RedactionPersistent() {
			t.Fatal("no keyring answered, yet redaction says it is persistent")
		}
	})
}

// countingKeyring answers every call with err (nil: kr's answer) and counts the calls.
type countingKeyring struct {
	kr    Keyring
	err   *error
	calls *int
}

func (k countingKeyring) Get(s, u string) (string, error) {
	*k.calls++
	if *k.err != nil {
		return "", *k.err
	}
	return k.kr.Get(s, u)
}
func (k countingKeyring) Set(s, u, p string) error {
	*k.calls++
	if *k.err != nil {
		return *k.err
	}
	return k.kr.Set(s, u, p)
}
func (k countingKeyring) Delete(s, u string) error { *k.calls++; return k.kr.Delete(s, u) }

// A keyring that refused (a dismissed unlock prompt) is not asked again by reads for
// reprobeAfter (each ask opens the prompt again), but saving a secret asks it at once,
// and a keyring unlocked meanwhile then keeps the secret.
func TestDismissedKeyringIsNotAskedAtEveryRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dismissed := errors.New("prompt dismissed")
		err, calls := dismissed, 0
		v := New(countingKeyring{kr: NewMemoryKeyring(), err: &err, calls: &calls})
		for range 20 {
			if _, ok, e := v.Get("provider:openai"); ok || e != nil {
				t.Fatalf("Get = %v, %v", ok, e)
			}
			time.Sleep(time.Minute)
		}
		if calls != 2 { // the first probe, and one after reprobeAfter
			t.Fatalf("20 reads over 20 minutes asked the keyring %d times, want 2", calls)
		}
		err = nil // the user unlocked it elsewhere
		if e := v.Set("provider:openai", "sk-saved-after-unlock-0123456789", true); e != nil {
			t.Fatalf("Set after the unlock: %v", e)
		}
		if s, ok, e := v.Get("provider:openai"); !ok || e != nil || s != "sk-saved-after-unlock-0123456789" {
			t.Fatalf("Get = %q %v %v", s, ok, e)
		}
	})
}

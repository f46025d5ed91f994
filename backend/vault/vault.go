// Package vault keeps secrets in the OS keyring (github.com/zalando/go-keyring: Secret
// Service on Linux, Keychain on macOS, Credential Manager on Windows) under the service
// name "talaria". When no keyring is usable (headless Linux without a Secret Service)
// it keeps secrets in memory for this run only and says so; it never writes a secret
// to a file.
package vault

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zalando/go-keyring"

	"talaria/sidecar/protocol/redact"
)

// Service is the keyring service name every Talaria secret is stored under.
const Service = "talaria"

// Keyring is the OS keyring's interface (go-keyring's functions).
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

// OSKeyring is the real keyring through go-keyring.
type OSKeyring struct{}

// Get reads a secret; keyring.ErrNotFound when there is none.
func (OSKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }

// Set writes a secret.
func (OSKeyring) Set(service, user, password string) error {
	return keyring.Set(service, user, password)
}

// Delete removes a secret; keyring.ErrNotFound when there is none.
func (OSKeyring) Delete(service, user string) error { return keyring.Delete(service, user) }

// UnavailableError says the keyring cannot be used and why.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string {
	return "the system keychain is unavailable (" + e.Err.Error() + "); secrets are kept for this session only. " +
		"On Linux, install and unlock a Secret Service such as gnome-keyring or KeePassXC to remember them."
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Vault stores secrets by account name (e.g. "provider:openai", "vault:GITHUB_TOKEN").
type Vault struct {
	kr Keyring

	mu       sync.Mutex
	probed   bool
	probedAt time.Time
	unavail  error             // non-nil when the keyring is unusable
	memory   map[string]string // session-only secrets (keyring unusable, or not remembered)

	// set is what redaction knows (values of this run, fingerprints of every run),
	// replaced whole on change.
	set atomic.Pointer[redact.Set]
	// persistMu guards persist and keyPersistent (not mu: Remember runs under mu).
	persistMu sync.Mutex
	// persist keeps the fingerprints of newly known secrets (nil: memory only).
	persist func([]redact.Fingerprint)
	// keyPersistent: the fingerprint key is in the OS keyring (else this run only).
	keyPersistent bool
	// loading, while UseFingerprintsInBackground runs, is closed when it is over:
	// redaction waits for it (fingerprints of earlier runs' secrets are known then).
	loading atomic.Pointer[chan struct{}]
}

// MinRedactLen is the shortest secret (bytes) that is redacted; shorter values would
// blank out ordinary text.
const MinRedactLen = redact.MinLen

// Redacted replaces a known secret wherever it appears.
const Redacted = redact.Redacted

// Remember registers value as a secret to redact from frames and saved rows, in all
// its encoded forms (package redact); every value read or stored through the vault is
// registered automatically. The fingerprints of its forms are handed to the persist
// function (see UseFingerprints), never the value.
func (v *Vault) Remember(value string) {
	if len(value) < MinRedactLen {
		return
	}
	for {
		old := v.set.Load()
		if old.Knows(value) {
			return
		}
		next, fresh := old.WithValues(value)
		if v.set.CompareAndSwap(old, next) {
			v.persistMu.Lock()
			persist := v.persist
			v.persistMu.Unlock()
			if persist != nil && len(fresh) > 0 {
				persist(fresh)
			}
			return
		}
	}
}

// Redact returns b with every known secret replaced by [REDACTED]; b may be JSON text
// (the JSON-escaped and the encoded forms of a secret are replaced too). It returns b
// itself when nothing matched.
// While UseFingerprintsInBackground runs it waits for it first.
func (v *Vault) Redact(b []byte) []byte { return v.known().Redact(b) }

// RedactString is Redact for a string.
func (v *Vault) RedactString(s string) string { return v.known().String(s) }

// Secrets returns what redaction knows now (immutable): for streaming redaction and
// for chat.start's redaction. While UseFingerprintsInBackground runs it waits for it
// first.
func (v *Vault) Secrets() *redact.Set { return v.known() }

// known is what redaction knows once the fingerprints being loaded, if any, are.
func (v *Vault) known() *redact.Set {
	<-v.Loaded()
	return v.set.Load()
}

// closedChan is a channel that is always ready.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Loaded is ready once no UseFingerprintsInBackground is running: at once when none was
// started, else when its keyring reads are over (each bounded by KeyringTimeout).
func (v *Vault) Loaded() <-chan struct{} {
	if ch := v.loading.Load(); ch != nil {
		return *ch
	}
	return closedChan
}

// UseFingerprintsInBackground runs UseFingerprints in its own goroutine and returns at
// once: the fingerprint key is read from the OS keyring, which may take KeyringTimeout
// when an unlock prompt is open or the Secret Service is stuck, and nothing should
// wait for it but redaction. Redact, RedactString and Secrets wait until it is over;
// Remember does not (the values it registers meanwhile are kept). done, when not nil,
// gets UseFingerprints' error in that goroutine once it is over.
func (v *Vault) UseFingerprintsInBackground(load func(keyID string) ([]redact.Fingerprint, error), persist func(keyID string, fps []redact.Fingerprint), done func(error)) {
	ch := make(chan struct{})
	v.loading.Store(&ch)
	go func() {
		err := v.UseFingerprints(load, persist)
		close(ch)
		if done != nil {
			done(err)
		}
	}()
}

// RedactionKeyAccount is the keyring account of the fingerprint key.
const RedactionKeyAccount = "redaction-key"

// UseFingerprints sets up redaction across restarts: it reads the fingerprint key from
// the OS keyring (creating it there the first time), loads the fingerprints made under
// it (load gets the key's id) and hands later ones to persist. Without a usable keyring
// the key lives in memory for this run: nothing is persisted (fingerprints without
// their key would be useless), and secrets given in this run are forgotten at exit
// (RedactionPersistent says which). Errors come only from load.
func (v *Vault) UseFingerprints(load func(keyID string) ([]redact.Fingerprint, error), persist func(keyID string, fps []redact.Fingerprint)) error {
	key, persistent := v.redactionKey()
	set := redact.New(key)
	var loadErr error
	if persistent && load != nil {
		fps, err := load(set.KeyID())
		loadErr = err
		set = set.WithFingerprints(fps...)
	}
	// Values remembered before now stay known, and their fingerprints are kept; so is
	// a value Remember registers meanwhile (the load may run beside it): the swap is a
	// compare-and-swap, and persist is set under persistMu before any Remember that
	// lands in the new set can read it.
	v.persistMu.Lock()
	var fresh []redact.Fingerprint
	for {
		old := v.set.Load()
		next := set
		fresh = nil
		if old != nil {
			next, fresh = set.WithValues(old.Values()...)
		}
		if v.set.CompareAndSwap(old, next) {
			break
		}
	}
	v.keyPersistent = persistent
	if persistent && persist != nil {
		id := set.KeyID()
		v.persist = func(fps []redact.Fingerprint) { persist(id, fps) }
	}
	p := v.persist
	v.persistMu.Unlock()
	if p != nil && len(fresh) > 0 {
		p(fresh)
	}
	return loadErr
}

// RedactionPersistent reports whether redaction outlives this run (the fingerprint key
// is in the OS keyring).
func (v *Vault) RedactionPersistent() bool {
	v.persistMu.Lock()
	defer v.persistMu.Unlock()
	return v.keyPersistent
}

// redactionKey returns the fingerprint key and whether it is kept in the keyring. It
// holds mu throughout, as Get and Set do: every keyring call of the vault is one at a
// time (it runs beside them since UseFingerprintsInBackground).
func (v *Vault) redactionKey() ([]byte, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	available := v.probeLocked() == nil
	if available {
		if s, err := v.kr.Get(Service, RedactionKeyAccount); err == nil {
			if k, err := base64.StdEncoding.DecodeString(s); err == nil && len(k) == redact.KeySize {
				return k, true
			}
		} else if !errors.Is(err, keyring.ErrNotFound) {
			available = false
		}
	}
	k := make([]byte, redact.KeySize)
	rand.Read(k) //nolint:errcheck // crypto/rand.Read never fails
	if available && v.kr.Set(Service, RedactionKeyAccount, base64.StdEncoding.EncodeToString(k)) == nil {
		return k, true
	}
	return k, false
}

// New returns a vault over kr (OSKeyring{} for the real one).
func New(kr Keyring) *Vault { return NewWithTimeout(kr, KeyringTimeout) }

// NewWithTimeout is New with every keyring call bounded by timeout instead of
// KeyringTimeout (KeyringTimeout when timeout is 0 or less).
func NewWithTimeout(kr Keyring, timeout time.Duration) *Vault {
	if timeout <= 0 {
		timeout = KeyringTimeout
	}
	v := &Vault{kr: &timeoutKeyring{kr: kr, timeout: timeout}, memory: map[string]string{}}
	v.set.Store(redact.New(nil))
	return v
}

// KeyringTimeout bounds every keyring call: a Secret Service that does not answer (an
// unlock prompt left open, a stuck daemon) must not freeze the app. 3 seconds.
const KeyringTimeout = 3 * time.Second

// reprobeAfter is how long an unusable keyring is believed unusable before a read asks
// it again: 10 minutes. Asking a locked keyring opens its unlock prompt again (GNOME's
// does), so a user who dismissed it is not asked at every turn; saving a secret asks at
// once (Set), as the user is then putting one in it.
const reprobeAfter = 10 * time.Minute

// errKeyringTimeout is what a keyring call that did not answer in time returns.
var errKeyringTimeout = errors.New("the system keychain did not answer within 3 s (is an unlock prompt open?)")

// errKeyringFailed is what a keyring call that panicked returns (wrapped with the panic).
var errKeyringFailed = errors.New("the system keychain failed (its D-Bus connection may have closed); keys are kept for this session only until it works again")

// timeoutKeyring runs each call of kr with a deadline. A call that times out is left to
// finish on its own goroutine; its result is dropped.
type timeoutKeyring struct {
	kr      Keyring
	timeout time.Duration
}

func (t *timeoutKeyring) do(fn func() (string, error)) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// A keyring library that panics (go-keyring's Secret Service prompt handling
		// dereferences a nil signal when the D-Bus connection drops while a prompt is
		// open) must not take the app down, even after this call has timed out.
		defer func() {
			if p := recover(); p != nil {
				ch <- res{"", fmt.Errorf("%w: %v", errKeyringFailed, p)}
			}
		}()
		s, err := fn()
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-time.After(t.timeout):
		return "", errKeyringTimeout
	}
}

func (t *timeoutKeyring) Get(service, user string) (string, error) {
	return t.do(func() (string, error) { return t.kr.Get(service, user) })
}

func (t *timeoutKeyring) Set(service, user, password string) error {
	_, err := t.do(func() (string, error) { return "", t.kr.Set(service, user, password) })
	return err
}

func (t *timeoutKeyring) Delete(service, user string) error {
	_, err := t.do(func() (string, error) { return "", t.kr.Delete(service, user) })
	return err
}

// probeAccount is read once to learn whether the keyring answers at all.
const probeAccount = "probe"

// Available reports whether the OS keyring is usable; when it is not, the error is an
// *UnavailableError whose message tells the user what to do. The answer is cached.
func (v *Vault) Available() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.probeLocked()
}

func (v *Vault) probeLocked() error { return v.probeAfterLocked(reprobeAfter) }

// probeAfterLocked asks the keyring whether it is usable when it has not been asked
// yet, or was found unusable longer than after ago.
func (v *Vault) probeAfterLocked(after time.Duration) error {
	if !v.probed || (v.unavail != nil && (after == 0 || time.Since(v.probedAt) > after)) {
		v.probed, v.probedAt, v.unavail = true, time.Now(), nil
		if _, err := v.kr.Get(Service, probeAccount); err != nil && !errors.Is(err, keyring.ErrNotFound) {
			v.unavail = &UnavailableError{Err: err}
		}
	}
	return v.unavail
}

// Get returns the secret of account and whether one exists. A session-only secret wins
// over the keyring. Errors come only from a keyring that is available but fails.
func (v *Vault) Get(account string) (string, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.memory[account]; ok {
		v.Remember(s)
		return s, true, nil
	}
	if v.probeLocked() != nil {
		return "", false, nil
	}
	s, err := v.kr.Get(Service, account)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s from the system keychain: %w", account, err)
	}
	v.Remember(s)
	return s, true, nil
}

// Set stores secret under account. With remember it goes to the keyring, asked again
// first if it was found unusable; when the keyring is unavailable it is kept for this
// session and the returned error is an *UnavailableError (the secret is still usable).
// Without remember it is kept for this session only.
func (v *Vault) Set(account, secret string, remember bool) error {
	v.Remember(secret)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !remember {
		v.memory[account] = secret
		return nil
	}
	// The user is saving a secret to keep: a keyring found unusable is asked again (its
	// unlock prompt, if it has one, opens now), unless it did not answer at all (a
	// prompt may still be open, or the daemon stuck: not another 3 s now).
	after := time.Duration(0)
	if errors.Is(v.unavail, errKeyringTimeout) {
		after = reprobeAfter
	}
	if err := v.probeAfterLocked(after); err != nil {
		v.memory[account] = secret
		return err
	}
	if err := v.kr.Set(Service, account, secret); err != nil {
		v.memory[account] = secret
		return &UnavailableError{Err: err}
	}
	delete(v.memory, account)
	return nil
}

// Delete forgets account's secret in memory and in the keyring.
func (v *Vault) Delete(account string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.memory, account)
	if v.probeLocked() != nil {
		return nil
	}
	if err := v.kr.Delete(Service, account); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("delete %s from the system keychain: %w", account, err)
	}
	return nil
}

// MemoryKeyring is a Keyring that keeps secrets in this process only (for the
// self-test and tests; the app itself uses OSKeyring).
type MemoryKeyring struct {
	mu sync.Mutex
	m  map[string]string
}

// NewMemoryKeyring returns an empty in-process keyring.
func NewMemoryKeyring() *MemoryKeyring { return &MemoryKeyring{m: map[string]string{}} }

// Get reads a secret; keyring.ErrNotFound when there is none.
func (k *MemoryKeyring) Get(service, user string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.m[service+"\x00"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return s, nil
}

// Set writes a secret.
func (k *MemoryKeyring) Set(service, user, password string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[service+"\x00"+user] = password
	return nil
}

// Delete removes a secret; keyring.ErrNotFound when there is none.
func (k *MemoryKeyring) Delete(service, user string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.m[service+"\x00"+user]; !ok {
		return keyring.ErrNotFound
	}
	delete(k.m, service+"\x00"+user)
	return nil
}

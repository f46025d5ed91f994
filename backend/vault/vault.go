// Package vault keeps secrets in the OS keyring (github.com/zalando/go-keyring: Secret
// Service on Linux, Keychain on macOS, Credential Manager on Windows) under the service
// name "talaria". When no keyring is usable (headless Linux without a Secret Service)
// it keeps secrets in memory for this run only and says so; it never writes a secret
// to a file.
package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zalando/go-keyring"
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

	known atomic.Pointer[[]redaction] // values to redact, replaced whole on change
}

// redaction is a known secret in its raw and JSON-escaped forms.
type redaction struct{ raw, escaped []byte }

// MinRedactLen is the shortest secret (bytes) that is redacted; shorter values would
// blank out ordinary text.
const MinRedactLen = 4

// Redacted replaces a known secret wherever it appears.
const Redacted = "[REDACTED]"

// Remember registers value as a secret to redact from frames and saved rows; every
// value read or stored through the vault is registered automatically.
func (v *Vault) Remember(value string) {
	if len(value) < MinRedactLen {
		return
	}
	esc, _ := json.Marshal(value)
	r := redaction{raw: []byte(value), escaped: esc[1 : len(esc)-1]}
	for {
		old := v.known.Load()
		var list []redaction
		if old != nil {
			for _, k := range *old {
				if bytes.Equal(k.raw, r.raw) {
					return
				}
			}
			list = append(list, *old...)
		}
		list = append(list, r)
		// Longest first, so a secret containing another is replaced whole.
		sort.Slice(list, func(i, j int) bool { return len(list[i].raw) > len(list[j].raw) })
		if v.known.CompareAndSwap(old, &list) {
			return
		}
	}
}

// Redact returns b with every known secret replaced by [REDACTED]; b may be JSON text
// (the JSON-escaped form of a secret is replaced too). It returns b itself when nothing
// matched.
func (v *Vault) Redact(b []byte) []byte {
	list := v.known.Load()
	if list == nil {
		return b
	}
	for _, k := range *list {
		for _, form := range [][]byte{k.raw, k.escaped} {
			if bytes.Contains(b, form) {
				b = bytes.ReplaceAll(b, form, []byte(Redacted))
			}
		}
	}
	return b
}

// RedactString is Redact for a string.
func (v *Vault) RedactString(s string) string {
	if v.known.Load() == nil {
		return s
	}
	return string(v.Redact([]byte(s)))
}

// New returns a vault over kr (OSKeyring{} for the real one).
func New(kr Keyring) *Vault {
	return &Vault{kr: &timeoutKeyring{kr: kr, timeout: KeyringTimeout}, memory: map[string]string{}}
}

// KeyringTimeout bounds every keyring call: a Secret Service that does not answer (an
// unlock prompt left open, a stuck daemon) must not freeze the app. 3 seconds.
const KeyringTimeout = 3 * time.Second

// reprobeAfter is how long an unusable keyring is believed unusable before it is asked
// again: 30 seconds.
const reprobeAfter = 30 * time.Second

// errKeyringTimeout is what a keyring call that did not answer in time returns.
var errKeyringTimeout = errors.New("the system keychain did not answer within 3 s (is an unlock prompt open?)")

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
	go func() { s, err := fn(); ch <- res{s, err} }()
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

func (v *Vault) probeLocked() error {
	if !v.probed || (v.unavail != nil && time.Since(v.probedAt) > reprobeAfter) {
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

// Set stores secret under account. With remember it goes to the keyring; when the
// keyring is unavailable it is kept for this session and the returned error is an
// *UnavailableError (the secret is still usable). Without remember it is kept for this
// session only.
func (v *Vault) Set(account, secret string, remember bool) error {
	v.Remember(secret)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !remember {
		v.memory[account] = secret
		return nil
	}
	if err := v.probeLocked(); err != nil {
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

package builtin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
	"talaria/sidecar/protocol/redact"
)

// The runtime's memory: what it keeps per session between turns (todo list, secrets
// given through a vault prompt, approval grants, YOLO) and the approvals and clarifies
// parked by running turns. Everything here is guarded by Runtime.mu, and lives until the
// process ends or chat.evict drops the session.

// session is one session's memory.
type session struct {
	todos   []protocol.TodoItem
	secrets map[string]string // environment variable name to value
	grants  map[string]bool   // dangerous-pattern keys allowed for the rest of the session
	yolo    bool
}

// sessionLocked returns the session's memory, creating it. r.mu must be held.
func (r *Runtime) sessionLocked(id string) *session {
	s := r.sessions[id]
	if s == nil {
		s = &session{secrets: map[string]string{}, grants: map[string]bool{}}
		r.sessions[id] = s
	}
	return s
}

// setYolo sets a session's YOLO flag and, when enabling it, releases every parked
// approval of the session (reason yolo, run once). It returns how many it released.
func (r *Runtime) setYolo(sessionID string, on bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessionLocked(sessionID).yolo = on
	if !on {
		return 0
	}
	released := 0
	for id, w := range r.pending {
		if w.sessionID == sessionID && w.kind == kindApproval && !w.mustAsk {
			delete(r.pending, id)
			w.ch <- answer{reason: protocol.ResolvedYolo, choice: protocol.ChoiceOnce}
			released++
		}
	}
	return released
}

// todos returns a copy of the session's todo list.
func (r *Runtime) todos(sessionID string) []protocol.TodoItem {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sessionLocked(sessionID).todos)
}

// updateTodos applies a todo call to the session's list atomically and returns the new
// list.
func (r *Runtime) updateTodos(sessionID string, items []tools.TodoInput, merge bool) ([]protocol.TodoItem, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessionLocked(sessionID)
	list, err := tools.ApplyTodos(s.todos, items, merge)
	if err != nil {
		return nil, err
	}
	s.todos = list
	return slices.Clone(list), nil
}

// setSecret stores a secret for the session's later terminal commands and adds it to
// the values every output is redacted of.
func (r *Runtime) setSecret(sessionID, name, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessionLocked(sessionID).secrets[name] = value
	r.rebuildRedactorLocked()
}

// secretEnv returns the session's secrets as KEY=VALUE pairs, sorted by name.
func (r *Runtime) secretEnv(sessionID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessionLocked(sessionID)
	env := make([]string, 0, len(s.secrets))
	for k, v := range s.secrets {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// redactor returns the redactor of every secret any session holds: a value given in
// one session is redacted from the output of all of them.
func (r *Runtime) redactor() *tools.Redactor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.redact
}

// rebuildRedactorLocked builds the redactor of every secret the runtime knows: the
// sessions' vault answers, the providers' API keys it was sent, and the host's
// fingerprints (secrets the host was given in this or an earlier run). r.mu must be
// held.
func (r *Runtime) rebuildRedactorLocked() {
	var values []string
	for v := range r.mcpSecrets {
		values = append(values, v)
	}
	for _, s := range r.sessions {
		for _, v := range s.secrets {
			values = append(values, v)
		}
	}
	for k := range r.apiKeys {
		values = append(values, k)
	}
	set := redact.New(r.fpKey).WithFingerprints(r.fps...)
	set, _ = set.WithValues(values...)
	r.redact = tools.RedactorOf(set)
}

// learnChatSecrets takes what a chat.start tells of secrets: the provider's API key and the
// host's redaction fingerprints (a new key replaces the fingerprints of the old one).
func (r *Runtime) learnChatSecrets(apiKey string, red *protocol.Redaction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	if apiKey != "" && !r.apiKeys[apiKey] {
		r.apiKeys[apiKey] = true
		changed = true
	}
	if red != nil && len(red.Key) == redact.KeySize {
		if !bytes.Equal(red.Key, r.fpKey) {
			r.fpKey, r.fps, r.fpSeen = append([]byte(nil), red.Key...), nil, map[string]bool{}
			changed = true
		}
		for _, fp := range red.Fingerprints {
			id := string(fp.MAC)
			if !r.fpSeen[id] {
				r.fpSeen[id] = true
				r.fps = append(r.fps, fp)
				changed = true
			}
		}
	}
	if changed {
		r.rebuildRedactorLocked()
	}
}

// evict drops a session's memory; parked questions of a live turn stay parked.
func (r *Runtime) evict(sessionID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sessions[sessionID]; !ok {
		return false
	}
	delete(r.sessions, sessionID)
	r.rebuildRedactorLocked()
	return true
}

// Parked questions.

type waiterKind int

const (
	kindApproval waiterKind = iota + 1
	kindClarify
	kindVault
)

// waiter is a parked approval, clarify or vault prompt. Whoever removes it from
// Runtime.pending (an answer, approval.yolo, or the waiting turn on timeout or cancel)
// decides its outcome; an answer is handed over on ch, which has room for one.
type waiter struct {
	id        string
	sessionID string
	kind      waiterKind
	key       string // approval: the pattern key
	onceOnly  bool   // approval: never granted for the session (session and always count as once)
	allowedBy string // approval: what let it through without asking ("yolo", "session grant", "always-list")
	serverKey string // MCP approval: the server's pattern, granted by always_server and checked beside key
	mustAsk   bool   // approval: asked whatever grants, the allowlist or YOLO say (a sampling request past the turn's budget)
	questions int    // clarify: how many questions the answer must carry
	elicit    bool   // clarify: an MCP elicitation's card, which may be declined or cancelled
	ch        chan answer
}

// answer settles a waiter.
type answer struct {
	reason   string          // protocol.ResolvedAnswered or ResolvedYolo
	choice   string          // approval: once, session, always, deny
	response json.RawMessage // clarify: the validated response (null when declined)
	action   string          // elicitation card: "decline" or "cancel" when answered without content
	value    *string         // vault: the secret, nil when declined
}

func newID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b)
}

// park registers a waiter. For an approval it first checks, under the same lock that
// approval.yolo and approval.respond take, whether the pattern became allowed in the
// meantime; then it parks nothing and reports true.
func (r *Runtime) park(w *waiter, key string, allowlist map[string]bool) (allowed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w.kind == kindApproval && !w.mustAsk {
		s := r.sessionLocked(w.sessionID)
		w.allowedBy = gate.AllowedBy(w.onceOnly, s.yolo,
			s.grants[key] || w.serverKey != "" && s.grants[w.serverKey],
			allowlist[key] || w.serverKey != "" && allowlist[w.serverKey])
		if w.allowedBy != "" {
			return true
		}
	}
	r.pending[w.id] = w
	return false
}

// withdraw removes a waiter on the waiting side (timeout, cancel). It reports false
// when an answer took it first; that answer is then on w.ch.
func (r *Runtime) withdraw(w *waiter) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending[w.id] != w {
		return false
	}
	delete(r.pending, w.id)
	return true
}

// settle answers a parked waiter of the session and kind. check validates the answer
// against the waiter before anything changes (an invalid answer leaves it parked). It
// reports false for an unknown, settled, other-session or other-kind id.
func (r *Runtime) settle(sessionID, id string, kinds []waiterKind, build func(*waiter) (answer, error)) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.pending[id]
	if w == nil || w.sessionID != sessionID || !slices.Contains(kinds, w.kind) {
		return false, nil
	}
	a, err := build(w)
	if err != nil {
		return false, err
	}
	delete(r.pending, id)
	w.ch <- a
	return true, nil
}

// pendingCount is the number of parked waiters (for tests).
func (r *Runtime) pendingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

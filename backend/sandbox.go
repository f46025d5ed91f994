package backend

import (
	"context"
	"encoding/json"
	"fmt"

	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// The sandbox policy of each chat (docs/sandbox.md): read-only, workspace-write (the
// default) or full access, with or without network. It is kept in the session's
// options object under "sandbox" (beside ChatOptions' members, which SetChatOptions
// leaves it alone as a member it does not own), sent with every chat.start together
// with the paths commands never see (the data folder), and shown in the chat header
// (full access as a red badge, also in the tray).

// optionSandbox is the member of a session's options that holds its SessionSandbox.
const optionSandbox = "sandbox"

// keySandboxDefault is the settings key of the policy new chats start with (JSON).
const keySandboxDefault = "sandbox.default"

// SessionSandbox is a chat's sandbox policy. Mode is read-only, workspace-write or
// full-access; Network lets commands reach the network (full access always has it).
type SessionSandbox struct {
	Mode    string `json:"mode" ts:"SandboxMode"`
	Network bool   `json:"network"`
}

// SandboxError is returned for a policy that cannot be set (an unknown mode, full
// access as the default for new chats).
type SandboxError struct{ Message string }

func (e *SandboxError) Error() string { return e.Message }

func validMode(m string) bool {
	return m == protocol.SandboxReadOnly || m == protocol.SandboxWorkspaceWrite || m == protocol.SandboxFullAccess
}

// DefaultSandbox returns the policy new chats start with (workspace-write without
// network unless Settings changed it).
func (area *AgentsArea) DefaultSandbox(ctx context.Context) (SessionSandbox, error) {
	s := area.s
	def := SessionSandbox{Mode: protocol.SandboxWorkspaceWrite}
	raw, ok, err := s.Store.Setting(ctx, keySandboxDefault)
	if err != nil || !ok {
		return def, err
	}
	var v SessionSandbox
	if json.Unmarshal([]byte(raw), &v) != nil || !validMode(v.Mode) || v.Mode == protocol.SandboxFullAccess {
		return def, nil
	}
	return v, nil
}

// SetDefaultSandbox sets the policy new chats start with. Full access cannot be a
// default: it is chosen per chat. Errors: *SandboxError.
func (area *AgentsArea) SetDefaultSandbox(ctx context.Context, v SessionSandbox) error {
	s := area.s
	if !validMode(v.Mode) {
		return &SandboxError{Message: fmt.Sprintf("%q is not a sandbox mode (read-only, workspace-write, full-access)", v.Mode)}
	}
	if v.Mode == protocol.SandboxFullAccess {
		return &SandboxError{Message: "full access cannot be the default: turn it on in the chat that needs it"}
	}
	b, _ := json.Marshal(v)
	return s.Store.SetSetting(ctx, keySandboxDefault, string(b))
}

// GetSessionSandbox returns a chat's policy: its own, else (a background task's or a
// side question's hidden session) its parent's, else the default. Errors:
// store.ErrNotFound for an unknown session.
func (area *AgentsArea) GetSessionSandbox(ctx context.Context, sessionID string) (SessionSandbox, error) {
	s := area.s
	return s.sessionSandbox(ctx, sessionID, 0)
}

func (s *Service) sessionSandbox(ctx context.Context, sessionID string, depth int) (SessionSandbox, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return SessionSandbox{}, err
	}
	var opts map[string]json.RawMessage
	_ = json.Unmarshal([]byte(sess.Options), &opts)
	if raw, ok := opts[optionSandbox]; ok {
		var v SessionSandbox
		if json.Unmarshal(raw, &v) == nil && validMode(v.Mode) {
			if v.Mode == protocol.SandboxFullAccess {
				v.Network = true
			}
			return v, nil
		}
	}
	if sess.ParentID != "" && depth < 3 {
		return s.sessionSandbox(ctx, sess.ParentID, depth+1)
	}
	return s.Agents().DefaultSandbox(ctx)
}

// SetSessionSandbox sets a chat's policy; it applies from the chat's next command on
// (a running turn keeps the policy it started with). Errors: *SandboxError for an
// unknown mode; store.ErrNotFound.
func (area *AgentsArea) SetSessionSandbox(ctx context.Context, sessionID string, v SessionSandbox) error {
	s := area.s
	if !validMode(v.Mode) {
		return &SandboxError{Message: fmt.Sprintf("%q is not a sandbox mode (read-only, workspace-write, full-access)", v.Mode)}
	}
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if v.Mode == protocol.SandboxFullAccess {
		v.Network = true
	}
	opts := map[string]json.RawMessage{}
	_ = json.Unmarshal([]byte(sess.Options), &opts)
	opts[optionSandbox], _ = json.Marshal(v)
	text, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	if err := s.Store.SetSessionOptions(ctx, sessionID, store.JSONObject(text)); err != nil {
		return err
	}
	s.Log.Info("sandbox policy changed", "session", sessionID, "mode", v.Mode, "network", v.Network)
	s.core.SessionsChanged()
	return nil
}

// sandboxPolicy is chat.start's sandbox for a session: its policy, and the data folder
// hidden from every command and file tool.
func (s *Service) sandboxPolicy(ctx context.Context, sessionID string) (*protocol.SandboxPolicy, error) {
	v, err := s.Agents().GetSessionSandbox(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return &protocol.SandboxPolicy{Mode: v.Mode, Network: v.Network, HiddenPaths: []string{s.Paths.DataDir}}, nil
}

// redaction is chat.start's redaction: the fingerprints of every secret the vault knows
// (nil when it knows none), so the runtime redacts them from tool output as well.
func (s *Service) redaction() *protocol.Redaction {
	set := s.Vault.Secrets()
	if set.Empty() || set.Key() == nil {
		return nil
	}
	return &protocol.Redaction{KeyID: set.KeyID(), Key: set.Key(), Fingerprints: set.Fingerprints()}
}

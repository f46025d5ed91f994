package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"talaria/backend/pending"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/sidecar/protocol"
)

// Settings keys of the approval state. The always-allowlist is one JSON array; YOLO is
// one key per session.
const (
	keyAllowlist  = "approval.allowlist"
	keyYoloPrefix = "yolo:"
)

// AllowRule is one dangerous-command pattern the user allowed always. AddedAt is epoch
// milliseconds.
type AllowRule struct {
	Pattern     string `json:"pattern"`
	Description string `json:"description"`
	AddedAt     int64  `json:"added_at"`
}

// PendingView is what a window opening a session needs: the head of each queue (the
// frame data of the approval or clarify, null when none), the queue lengths, and
// whether YOLO is on.
type PendingView struct {
	Approval      json.RawMessage `json:"approval" ts:"ApprovalData | null"`
	Clarify       json.RawMessage `json:"clarify" ts:"ClarifyData | null"`
	ApprovalCount int             `json:"approval_count"`
	ClarifyCount  int             `json:"clarify_count"`
	Yolo          bool            `json:"yolo"`
}

// VaultAnswer is the window's answer to a vault clarify: exactly one of a Value, UseSaved
// (read the keychain) or Decline.
type VaultAnswer struct {
	Value    string `json:"value"`
	UseSaved bool   `json:"use_saved"`
	Decline  bool   `json:"decline"`
}

// Where a vault answer went (VaultResult.Kept).
const (
	KeptKeychain = "keychain" // saved in the system keychain
	KeptSession  = "session"  // kept for this run only
	KeptDeclined = "declined" // the user declined to give it
)

// VaultResult says what happened to a vault answer, never the secret: Kept is
// "keychain", "session" or "declined".
type VaultResult struct {
	OK   bool   `json:"ok"`
	Kept string `json:"kept" ts:"VaultKept"`
}

// InvalidAnswerError is returned for an answer that cannot be sent as it is (a bad
// choice, an empty secret, no saved secret). Nothing was sent and the card stays.
type InvalidAnswerError struct{ Message string }

func (e *InvalidAnswerError) Error() string { return e.Message }

// sessionAllow keeps the patterns allowed "for this session" in this app run.
type sessionAllow struct {
	mu sync.Mutex
	m  map[string][]string
}

func (a *sessionAllow) add(sessionID, pattern string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string][]string{}
	}
	if !slices.Contains(a.m[sessionID], pattern) {
		a.m[sessionID] = append(a.m[sessionID], pattern)
	}
}

func (a *sessionAllow) get(sessionID string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.m[sessionID]...)
}

// GetPending returns the waiting approval and clarify of a session.
func (area *ApprovalsArea) GetPending(ctx context.Context, sessionID string) (PendingView, error) {
	s := area.s
	q := s.Runner.Pending()
	var v PendingView
	if it, n, ok := q.Head(sessionID, pending.KindApproval); ok {
		v.Approval, v.ApprovalCount = it.Data, n
	}
	if it, n, ok := q.Head(sessionID, pending.KindClarify); ok {
		v.Clarify, v.ClarifyCount = it.Data, n
	}
	yolo, err := s.yolo(ctx, sessionID)
	v.Yolo = yolo
	return v, err
}

// RespondApproval answers a waiting approval with choice once, session, always or deny.
// Errors: *InvalidAnswerError for another choice; *pending.StaleError when the approval
// is not waiting (nothing is sent); a sidecar error.
func (area *ApprovalsArea) RespondApproval(ctx context.Context, sessionID, approvalID, choice string) error {
	s := area.s
	return s.respondApproval(ctx, sessionID, approvalID, choice, "")
}

// RespondApprovalOption answers an ACP agent's permission request with one of the
// options it offered (the card's buttons): the option's choice is the answer, and the
// agent gets that very option. Errors: *InvalidAnswerError for an option the approval
// does not list; otherwise as RespondApproval.
func (area *ApprovalsArea) RespondApprovalOption(ctx context.Context, sessionID, approvalID, optionID string) error {
	s := area.s
	it, err := s.Runner.Pending().Peek(sessionID, pending.KindApproval, approvalID)
	if err != nil {
		return err
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(it.Data, &ad)
	for _, o := range ad.Options {
		if o.OptionID == optionID {
			return s.respondApproval(ctx, sessionID, approvalID, o.Choice, optionID)
		}
	}
	var names []string
	for _, o := range ad.Options {
		names = append(names, o.Name)
	}
	if len(names) == 0 {
		return &InvalidAnswerError{Message: "this approval has no options of the agent's; answer it with a choice"}
	}
	return &InvalidAnswerError{Message: fmt.Sprintf("the agent did not offer %q here; its options are %s", optionID, strings.Join(names, ", "))}
}

func (s *Service) respondApproval(ctx context.Context, sessionID, approvalID, choice, optionID string) error {
	switch choice {
	case protocol.ChoiceOnce, protocol.ChoiceSession, protocol.ChoiceAlways, protocol.ChoiceDeny, protocol.ChoiceAlwaysServer:
	default:
		return &InvalidAnswerError{Message: fmt.Sprintf("%q is not an approval choice (once, session, always, always_server, deny)", choice)}
	}
	// A choice the agent did not offer is refused before the card is taken.
	it, err := s.Runner.Pending().Peek(sessionID, pending.KindApproval, approvalID)
	if err != nil {
		return err
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(it.Data, &ad)
	if (len(ad.Choices) > 0 && !slices.Contains(ad.Choices, choice)) || (choice == protocol.ChoiceAlwaysServer && ad.Kind != protocol.ApprovalKindMCP) {
		return &InvalidAnswerError{Message: fmt.Sprintf("this approval can only be answered %s", strings.Join(ad.Choices, " or "))}
	}
	if it, err = s.Runner.Pending().Claim(sessionID, pending.KindApproval, approvalID); err != nil {
		return err
	}
	if err := s.deliver(ctx, sessionID, pending.KindApproval, approvalID, protocol.MethodApprovalRespond,
		protocol.ApprovalRespondParams{SessionID: sessionID, ApprovalID: approvalID, Choice: choice, OptionID: optionID}); err != nil {
		return err
	}
	// Only an answer the agent took leaves a trace: a stale or failed one changes nothing.
	// An ACP agent's own permission request (its options) is remembered by the agent,
	// not in Talaria's allowlist.
	if len(ad.Options) > 0 {
		return nil
	}
	pattern, description := it.Pattern, it.Description
	if ad.Kind == protocol.ApprovalKindMCP && ad.MCP != nil {
		description = "MCP tool " + ad.MCP.Tool + " of the server " + ad.MCP.Server
		if choice == protocol.ChoiceAlwaysServer {
			pattern, description = protocol.MCPServerPattern(ad.MCP.Server), "every tool of the MCP server "+ad.MCP.Server
		}
	}
	if choice == protocol.ChoiceAlways || choice == protocol.ChoiceAlwaysServer {
		if err := s.addAllowRule(ctx, pattern, description); err != nil {
			s.Log.Error("saving the always-allowlist", "err", err)
		}
	}
	if choice == protocol.ChoiceSession || choice == protocol.ChoiceAlways || choice == protocol.ChoiceAlwaysServer {
		s.allowed.add(sessionID, pattern)
	}
	return nil
}

// SetYolo turns approvals off (on true) or back on for a session; it is stored on the
// session and sent to a running turn, whose parked approvals are let through once.
// fromApprovalID is the approval card the user pressed YOLO on ("" from elsewhere):
// when it is not the head of the queue the call is refused with *pending.StaleError.
//
// The stored flag (what the window shows) never claims more safety than the turn has:
// turning YOLO off tells the running turn first and clears the flag only once the turn
// took it (a failed call leaves YOLO shown on, and returns the error); turning it on
// sets the flag first and, when the turn could not be told, clears it again only once
// the turn is told "off" (the first call may have reached it with its reply lost). A
// turn that starts meanwhile reads the flag, and is told again when it read the old
// one. Errors: *pending.StaleError, store errors, the sidecar's.
func (area *ApprovalsArea) SetYolo(ctx context.Context, sessionID string, on bool, fromApprovalID string) error {
	s := area.s
	if on && fromApprovalID != "" {
		head, _, ok := s.Runner.Pending().Head(sessionID, pending.KindApproval)
		if !ok || head.ID != fromApprovalID {
			return &pending.StaleError{Kind: pending.KindApproval, ID: fromApprovalID,
				Why: "another approval is waiting; answer the one shown first"}
		}
	}
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	tell := func(ctx context.Context, streamID string, enabled bool) error {
		if streamID == "" {
			return nil
		}
		var res protocol.ApprovalYoloResult
		return s.core.CallerForSession(ctx, sessionID).Call(ctx, protocol.MethodApprovalYolo,
			protocol.ApprovalYoloParams{SessionID: sessionID, Enabled: enabled}, nil, &res)
	}
	if !on {
		if err := tell(ctx, sess.ActiveStreamID, false); err != nil {
			return err
		}
		if err := s.Store.SetSetting(ctx, keyYoloPrefix+sessionID, ""); err != nil {
			return err
		}
		// A turn admitted between the call and the save started with YOLO on.
		if now, err := s.Store.GetSession(ctx, sessionID); err == nil && now.ActiveStreamID != sess.ActiveStreamID {
			return tell(ctx, now.ActiveStreamID, false)
		}
		return nil
	}
	if err := s.Store.SetSetting(ctx, keyYoloPrefix+sessionID, "1"); err != nil {
		return err
	}
	sess, _ = s.Store.GetSession(ctx, sessionID)
	if err := tell(ctx, sess.ActiveStreamID, true); err != nil {
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), yoloUndoWait)
		defer cancel()
		if uerr := tell(undo, sess.ActiveStreamID, false); uerr != nil {
			s.Log.Warn("YOLO stays on: the turn could not be told either way", "session", sessionID, "err", uerr)
		} else if rerr := s.Store.SetSetting(undo, keyYoloPrefix+sessionID, ""); rerr != nil {
			s.Log.Error("turning YOLO back off after the agent was not told", "session", sessionID, "err", rerr)
		}
		return err
	}
	return nil
}

// yoloUndoWait bounds the call that takes back a YOLO "on" whose delivery failed.
const yoloUndoWait = 5 * time.Second

func (s *Service) yolo(ctx context.Context, sessionID string) (bool, error) {
	v, _, err := s.Store.Setting(ctx, keyYoloPrefix+sessionID)
	return v == "1", err
}

// RespondClarify answers a waiting clarify with one answer per question (a string, or
// a list of strings for a multi-select question). Errors: *InvalidAnswerError for a
// wrong number or shape of answers; *pending.StaleError when it is not waiting.
func (area *ApprovalsArea) RespondClarify(ctx context.Context, sessionID, clarifyID string, answers []any) error {
	s := area.s
	it, err := s.Runner.Pending().Peek(sessionID, pending.KindClarify, clarifyID)
	if err != nil {
		return err
	}
	if it.ClarifyKind == protocol.ClarifyKindVault {
		return &InvalidAnswerError{Message: "this prompt asks for a secret: answer it in its secret card"}
	}
	var cd protocol.ClarifyData
	_ = json.Unmarshal(it.Data, &cd)
	if want := max(1, len(cd.Questions)); len(answers) != want {
		return &InvalidAnswerError{Message: fmt.Sprintf("expected %d answers, got %d", want, len(answers))}
	}
	for i, a := range answers {
		switch v := a.(type) {
		case string:
		case []any:
			for _, x := range v {
				if _, ok := x.(string); !ok {
					return &InvalidAnswerError{Message: fmt.Sprintf("answer %d: choices must be text", i+1)}
				}
			}
		default:
			return &InvalidAnswerError{Message: fmt.Sprintf("answer %d must be text or a list of choices", i+1)}
		}
	}
	raw, err := json.Marshal(answers)
	if err != nil {
		return &InvalidAnswerError{Message: err.Error()}
	}
	if _, err := s.Runner.Pending().Claim(sessionID, pending.KindClarify, clarifyID); err != nil {
		return err
	}
	return s.deliver(ctx, sessionID, pending.KindClarify, clarifyID, protocol.MethodClarifyRespond,
		protocol.ClarifyRespondParams{SessionID: sessionID, ClarifyID: clarifyID, Response: raw})
}

// UndeliveredAnswerError says an answer to an approval or clarify did not reach the
// agent (a dead or restarting sidecar, a cancelled or timed-out call): the card is
// still waiting and can be answered again. Err is the cause (errors.Is/As reach it).
type UndeliveredAnswerError struct {
	Kind string // pending.KindApproval or pending.KindClarify
	Err  error
}

func (e *UndeliveredAnswerError) Error() string {
	return fmt.Sprintf("the answer did not reach the agent (%v); the %s is still waiting: answer it again", e.Err, e.Kind)
}

func (e *UndeliveredAnswerError) Unwrap() error { return e.Err }

// deliver sends the answer to the claimed item id of kind to the session's sidecar and
// settles the claim: the item leaves the queue once the agent took the answer (nil) or
// said it no longer waits (*pending.StaleError); when the answer did not reach the
// agent it stays answerable (*UndeliveredAnswerError). The sidecar answers each item
// at most once, so an answer that did arrive but whose reply was lost is refused as
// stale when sent again, and the item's resolved frame removes it meanwhile.
func (s *Service) deliver(ctx context.Context, sessionID, kind, id, method string, params any) error {
	var res protocol.OKResult
	if err := s.core.CallerForSession(ctx, sessionID).Call(ctx, method, params, nil, &res); err != nil {
		s.Runner.Pending().Release(sessionID, kind, id, false)
		return &UndeliveredAnswerError{Kind: kind, Err: err}
	}
	s.Runner.Pending().Release(sessionID, kind, id, true)
	if !res.OK {
		return &pending.StaleError{Kind: kind, ID: id, Why: "the agent no longer waits for it"}
	}
	return nil
}

// RespondVault answers a vault clarify. The secret goes to the sidecar and nowhere
// else: not SQLite, not the journal, not logs, not a frame, not this reply. With
// remember it is also kept in the system keychain (account "vault:<NAME>"); without a
// usable keychain it is kept for this run only (Kept "session"). UseSaved reads the
// keychain. Errors: *InvalidAnswerError (empty value, nothing saved); StaleError.
func (area *ApprovalsArea) RespondVault(ctx context.Context, sessionID, clarifyID string, ans VaultAnswer, remember bool) (VaultResult, error) {
	s := area.s
	it, err := s.Runner.Pending().Peek(sessionID, pending.KindClarify, clarifyID)
	if err != nil {
		return VaultResult{}, err
	}
	if it.ClarifyKind != protocol.ClarifyKindVault {
		return VaultResult{}, &InvalidAnswerError{Message: "this prompt is not a secret request"}
	}
	account := "vault:" + it.Name
	var response json.RawMessage
	kept := KeptDeclined
	storeValue := ""
	switch {
	case ans.Decline:
		response = json.RawMessage("null")
	case ans.UseSaved:
		v, ok, err := s.Vault.Get(account)
		if err != nil {
			return VaultResult{}, err
		}
		if !ok {
			return VaultResult{}, &InvalidAnswerError{Message: "no secret named " + it.Name + " is saved in the keychain: type it instead"}
		}
		response, _ = json.Marshal(protocol.VaultResponse{Value: v})
		kept = KeptKeychain
	default:
		value := strings.TrimRight(ans.Value, "\r\n")
		if value == "" {
			return VaultResult{}, &InvalidAnswerError{Message: "the secret is empty: type it, use the saved one, or decline"}
		}
		kept = KeptSession
		// Known (and redacted) from now on; kept in the keychain only once the agent
		// took the answer.
		s.Vault.Remember(value)
		storeValue = value
		response, _ = json.Marshal(protocol.VaultResponse{Value: value})
	}
	if _, err := s.Runner.Pending().Claim(sessionID, pending.KindClarify, clarifyID); err != nil {
		return VaultResult{}, err
	}
	if err := s.deliver(ctx, sessionID, pending.KindClarify, clarifyID, protocol.MethodClarifyRespond,
		protocol.ClarifyRespondParams{SessionID: sessionID, ClarifyID: clarifyID, Response: response}); err != nil {
		return VaultResult{}, redactErr(s.Vault, err)
	}
	if storeValue != "" {
		if err := s.Vault.Set(account, storeValue, remember); err == nil && remember {
			kept = KeptKeychain
		} else if err != nil {
			var ue *vault.UnavailableError
			if !errors.As(err, &ue) {
				// The agent has the secret; only remembering it failed.
				s.Log.Error("saving a secret in the keychain", "name", it.Name, "err", err)
			}
		}
	}
	return VaultResult{OK: true, Kept: kept}, nil
}

func redactErr(v *vault.Vault, err error) error {
	msg := v.RedactString(err.Error())
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// GetAllowlist returns the dangerous-command patterns allowed always, by pattern.
func (area *ApprovalsArea) GetAllowlist(ctx context.Context) ([]AllowRule, error) {
	s := area.s
	raw, ok, err := s.Store.Setting(ctx, keyAllowlist)
	if err != nil || !ok || raw == "" {
		return []AllowRule{}, err
	}
	var rules []AllowRule
	if err := json.Unmarshal([]byte(raw), &rules); err != nil {
		return []AllowRule{}, fmt.Errorf("the saved allowlist is unreadable (%v); it will be rewritten on the next change", err)
	}
	return rules, nil
}

func (s *Service) addAllowRule(ctx context.Context, pattern, description string) error {
	rules, _ := s.Approvals().GetAllowlist(ctx)
	for _, r := range rules {
		if r.Pattern == pattern {
			return nil
		}
	}
	rules = append(rules, AllowRule{Pattern: pattern, Description: description, AddedAt: time.Now().UnixMilli()})
	sort.Slice(rules, func(i, j int) bool { return rules[i].Pattern < rules[j].Pattern })
	b, _ := json.Marshal(rules)
	return s.Store.SetSetting(ctx, keyAllowlist, string(b))
}

// RemoveAllowlist forgets an always-allowed pattern (no error when it was not there).
func (area *ApprovalsArea) RemoveAllowlist(ctx context.Context, pattern string) error {
	s := area.s
	rules, err := s.Approvals().GetAllowlist(ctx)
	if err != nil {
		return err
	}
	kept := rules[:0]
	for _, r := range rules {
		if r.Pattern != pattern {
			kept = append(kept, r)
		}
	}
	b, _ := json.Marshal(kept)
	return s.Store.SetSetting(ctx, keyAllowlist, string(b))
}

// approvalState is what turnConfig sends with each chat.start.
func (s *Service) approvalState(ctx context.Context, sessionID string) (yolo bool, allow []string, err error) {
	if yolo, err = s.yolo(ctx, sessionID); err != nil {
		return false, nil, err
	}
	rules, err := s.Approvals().GetAllowlist(ctx)
	if err != nil {
		s.Log.Warn("allowlist unreadable; sending none", "err", err)
	}
	for _, r := range rules {
		allow = append(allow, r.Pattern)
	}
	for _, p := range s.allowed.get(sessionID) {
		if !slices.Contains(allow, p) {
			allow = append(allow, p)
		}
	}
	return yolo, allow, nil
}

// vaultStatus tells a vault clarify whether the keychain has the secret.
func (s *Service) vaultStatus(name string) turn.VaultStatus {
	var vs turn.VaultStatus
	if err := s.Vault.Available(); err != nil {
		vs.KeyringError = err.Error()
	} else {
		vs.KeyringAvailable = true
	}
	_, vs.SavedAvailable, _ = s.Vault.Get("vault:" + name)
	return vs
}

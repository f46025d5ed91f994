package contract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"talaria/backend"
	"talaria/backend/core"
	"talaria/backend/pending"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/tasks"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/sidecar/protocol"
)

// ErrorOf gives every typed error the backend returns its stable code, and every code
// the window can receive is produced by one of them: the window's table
// (frontend/src/lib/errors.ts, checked by its own test against ERROR_CODE_VALUES)
// therefore covers everything a bound method can reject with.
func TestErrorOfGivesEveryBackendErrorItsCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("doing something: %w", err) }
	cases := []struct {
		err       error
		code      backend.ErrorCode
		field     string
		hintMatch bool
	}{
		{&store.BusyError{SessionID: "s", StreamID: "x"}, backend.CodeBusy, "", true},
		{wrap(&pending.StaleError{Kind: "approval", ID: "a", Why: "answered"}), backend.CodeStale, "", false},
		{store.ErrStreamEnded, backend.CodeStale, "", false},
		{wrap(store.ErrNotFound), backend.CodeNotFound, "", false},
		{turn.ErrSteerTaken, backend.CodeSteerGone, "", false},
		{wrap(turn.ErrNoSuchSteer), backend.CodeSteerGone, "", false},
		{turn.ErrSteerNotYetQueued, backend.CodeSteerInFlight, "", false},
		{&turn.NotConfiguredError{What: "model"}, backend.CodeNotConfigured, "", true},
		{&vault.UnavailableError{Err: errors.New("no secret service")}, backend.CodeKeyringUnavailable, "", false},
		{&core.RuntimeUnavailableError{RuntimeID: "hermes", Message: "Hermes is not installed", Hint: "Install it"}, backend.CodeAgentUnavailable, "", true},
		{supervisor.ErrUnavailable, backend.CodeAgentUnavailable, "", true},
		{wrap(&protocol.Error{Message: "gone", Data: &protocol.ErrorData{Condition: protocol.CondSidecarUnavailable}}), backend.CodeAgentUnavailable, "", true},
		{&protocol.Error{Message: "nope", Data: &protocol.ErrorData{Condition: protocol.CondProviderError}}, backend.CodeAgentError, "", false},
		{&protocol.Error{Message: "old agent", Data: &protocol.ErrorData{Condition: protocol.CondMethodNotFound}}, backend.CodeUnsupported, "", false},
		{&backend.SaveSettingsError{Field: "base_url", Message: "not a URL"}, backend.CodeInvalid, "base_url", false},
		{&backend.ChatOptionsError{Field: "model", Message: "too long"}, backend.CodeInvalid, "model", false},
		{&backend.InvalidAnswerError{Message: "the secret is empty"}, backend.CodeInvalid, "", false},
		{turn.ErrEmptyMessage, backend.CodeInvalid, "", false},
		{&turn.MessageTooLongError{Bytes: 2 << 20, Limit: 1 << 20}, backend.CodeInvalid, "", false},
		{&backend.UndeliveredAnswerError{Kind: "approval", Err: &protocol.Error{Message: "pipe closed", Data: &protocol.ErrorData{Condition: protocol.CondSidecarUnavailable}}}, backend.CodeNotDelivered, "", false},
		{wrap(store.ErrInvalid), backend.CodeInvalid, "", false},
		{&turn.ImagesRefusedError{Model: "m"}, backend.CodeUnsupported, "", false},
		{&turn.CompactUnsupportedError{}, backend.CodeUnsupported, "", false},
		{&backend.MCPAuthError{Server: "x", Message: "x runs on this computer (stdio)"}, backend.CodeUnsupported, "", false},
		{&turn.NothingToCompactError{}, backend.CodeNothingToDo, "", false},
		{&store.ConflictError{SessionID: "s", Have: 2, Want: 1}, backend.CodeConflict, "", true},
		{wrap(store.ErrDiskFull), backend.CodeStorage, "", false},
		{&store.TooNewError{Have: 9, Want: 6}, backend.CodeStorage, "", false},
		{tasks.ErrClosing, backend.CodeClosing, "", false},
		{wrap(context.DeadlineExceeded), backend.CodeTimeout, "", true},
		{context.Canceled, backend.CodeCancelled, "", false},
		{backend.NewUserError(backend.CodeFile, "could not read a.txt", ""), backend.CodeFile, "", false},
		{backend.NewUserError(backend.CodeNotReady, "the window is not ready yet", ""), backend.CodeNotReady, "", false},
		{errors.New("a defect"), backend.CodeInternal, "", true},
	}
	produced := map[backend.ErrorCode]bool{}
	for _, c := range cases {
		ue := backend.ErrorOf(c.err)
		if ue == nil || ue.Code != c.code || ue.Field != c.field {
			t.Errorf("ErrorOf(%T %v) = %+v, want code %s field %q", c.err, c.err, ue, c.code, c.field)
			continue
		}
		if ue.Message == "" || (c.hintMatch && ue.Hint == "") {
			t.Errorf("ErrorOf(%T) = %+v: missing message or hint", c.err, ue)
		}
		if _, isUE := c.err.(*backend.UserError); !isUE && !errors.Is(ue, c.err) {
			t.Errorf("ErrorOf(%T) lost the error it stands for", c.err)
		}
		produced[ue.Code] = true
	}
	if backend.ErrorOf(nil) != nil {
		t.Error("ErrorOf(nil) is not nil")
	}
	g := newGenerator()
	if _, err := g.run(); err != nil {
		t.Fatal(err)
	}
	for _, code := range g.enumVals["ErrorCode"] {
		if !produced[backend.ErrorCode(code)] {
			t.Errorf("error code %q is declared but no case here produces it: add the error that does", code)
		}
	}
	if !slices.Contains(g.enumVals["ErrorCode"], string(backend.CodeInternal)) {
		t.Error("the generated ErrorCode enum lacks internal")
	}
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SetSessionRuntime moves the session to another runtime (a runtime id, RuntimeBuiltin
// when ""). The agent-side session is forgotten with the old runtime: the new one starts
// its own, seeded with the transcript. Setting the runtime it already has changes
// nothing. Revision is bumped on a change; UpdatedAt is not.
//
// Errors: ErrNotFound; *BusyError while a turn of the session is live (a turn cannot
// change agents half-way).
func (s *Store) SetSessionRuntime(ctx context.Context, sessionID, runtime string) error {
	if runtime == "" {
		runtime = RuntimeBuiltin
	}
	return s.write(ctx, "set runtime of "+sessionID, func(tx *sql.Tx) error {
		st, err := liveSession(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if st.activeStream != "" {
			return &BusyError{SessionID: sessionID, StreamID: st.activeStream}
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET runtime = ?, agent_session_id = '', revision = revision + 1
			WHERE id = ? AND (CASE runtime WHEN '' THEN 'builtin' ELSE runtime END) IS NOT ?`, runtime, sessionID, runtime)
		return err
	})
}

// SetAgentSession records the runtime's own session id for the session, but only while
// the session is still on runtime (a report from a runtime the chat has left is
// dropped): it reports whether it was stored. Revision is not bumped (the id is the
// agent's bookkeeping, not a change the window shows).
//
// Errors: ErrNotFound when the session does not exist or was deleted.
func (s *Store) SetAgentSession(ctx context.Context, sessionID, runtime, agentSessionID string) (bool, error) {
	return s.bindAgentSession(ctx, sessionID, runtime, agentSessionID, false)
}

// SetSessionOptions replaces the session's options with options (a JSON object, at
// most 256 KiB; "" or null is "{}"). Revision is bumped; UpdatedAt is not. The
// options of a live turn were read at its admission: the change applies from the next
// turn.
//
// Errors: ErrNotFound; ErrInvalid (wrapped) when options is not a JSON object or too
// big.
func (s *Store) SetSessionOptions(ctx context.Context, sessionID string, options JSONObject) error {
	op := "set options of " + sessionID
	text, err := normOptions(options)
	if err != nil {
		return wrap(op, err)
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET options = ?, revision = revision + 1 WHERE id = ?`, text, sessionID)
		if err != nil {
			return fmt.Errorf("saving the chat's options: %w", err)
		}
		return nil
	})
}

// SetSessionModel sets the model a chat's turns use ("" follows Settings' model). It
// applies from the chat's next turn; revision moves on. ErrNotFound for a missing or
// deleted session; ErrInvalid for a model name over 256 bytes.
func (s *Store) SetSessionModel(ctx context.Context, sessionID, model string) error {
	op := "set model of " + sessionID
	if len(model) > 256 {
		return wrap(op, fmt.Errorf("a model name of %d bytes: %w", len(model), ErrInvalid))
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET model = ?, revision = revision + 1 WHERE id = ?`, model, sessionID)
		return err
	})
}

// ResetTitle sets an automatic title and clears the manual mark (the user asked for a
// new title: automatic titles apply again). ErrNotFound for a missing or deleted
// session.
func (s *Store) ResetTitle(ctx context.Context, sessionID, title string) error {
	return s.write(ctx, "reset title of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ?, title_manual = 0, revision = revision + 1 WHERE id = ?`,
			title, sessionID)
		return err
	})
}

// SessionsByAgentSession maps the agent session ids of runtime's live chats to the
// chat's id (for lists of the agent's own sessions: which are open here already).
func (s *Store) SessionsByAgentSession(ctx context.Context, runtime string) (map[string]string, error) {
	out := map[string]string{}
	rows, err := s.r.QueryContext(ctx, `SELECT id, agent_session_id FROM sessions
		WHERE deleted_at IS NULL AND agent_session_id != '' AND runtime = ?`, runtime)
	if err != nil {
		return nil, wrap("sessions by agent session", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, agent string
		if err := rows.Scan(&id, &agent); err != nil {
			return nil, wrap("sessions by agent session", err)
		}
		out[agent] = id
	}
	return out, wrap("sessions by agent session", rows.Err())
}

// AgentSessionSource is the import key SetAgentSessionFromAgent records for a chat bound
// to one of the agent's own sessions: "agent:<runtime id>:<agent session id>".
func AgentSessionSource(runtime, agentSessionID string) string {
	return "agent:" + runtime + ":" + agentSessionID
}

// SetAgentSessionFromAgent is SetAgentSession for a session the agent already had
// before Talaria (one the user made in the agent's own tool and continued here): with
// the binding it records, in the same transaction, an import record keyed
// AgentSessionSource, so ImportSource tells the chat came from the agent and deleting
// it leaves the agent's session alone. It reports whether the binding was stored
// (nothing is recorded when it was not).
//
// Errors: ErrNotFound when the session does not exist or was deleted;
// *AgentSessionBoundError when another live chat is bound to the agent's session
// already (two "Open as a chat" at once: the second would take over the import record,
// and deleting the first would then delete the agent's session).
func (s *Store) SetAgentSessionFromAgent(ctx context.Context, sessionID, runtime, agentSessionID string) (bool, error) {
	return s.bindAgentSession(ctx, sessionID, runtime, agentSessionID, true)
}

// bindAgentSession is SetAgentSession, and with fromAgent SetAgentSessionFromAgent:
// the binding, and its import record when it was stored, in one transaction.
func (s *Store) bindAgentSession(ctx context.Context, sessionID, runtime, agentSessionID string, fromAgent bool) (bool, error) {
	if runtime == "" {
		runtime = RuntimeBuiltin
	}
	var stored bool
	err := s.write(ctx, "set agent session of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if fromAgent {
			var other string
			err := tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE deleted_at IS NULL AND id != ?
				AND agent_session_id = ? AND (CASE runtime WHEN '' THEN 'builtin' ELSE runtime END) = ? LIMIT 1`,
				sessionID, agentSessionID, runtime).Scan(&other)
			if err == nil {
				return &AgentSessionBoundError{Runtime: runtime, AgentSessionID: agentSessionID, SessionID: other}
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET agent_session_id = ?
			WHERE id = ? AND (CASE runtime WHEN '' THEN 'builtin' ELSE runtime END) = ?`, agentSessionID, sessionID, runtime)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 || !fromAgent {
			stored = err == nil && n > 0
			return err
		}
		stored = true
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO imports(source, session_id, imported_at) VALUES(?, ?, ?)`,
			AgentSessionSource(runtime, agentSessionID), sessionID, s.now())
		return err
	})
	return stored, err
}

// ImportSource is the import key of the chat's import record: where it came from
// ("hermes:<runtime>:<id>" and "web:<id>" for the history import, AgentSessionSource for
// a chat continued from the agent's own session), "" for a chat made in Talaria (or a
// copy of one: a fork or duplicate is made here). A chat with one holds history that
// lives outside Talaria too; deleting it never deletes that.
//
// Errors: ErrNotFound when the session does not exist or was deleted.
func (s *Store) ImportSource(ctx context.Context, sessionID string) (string, error) {
	var src string
	err := s.read(ctx, "import source of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `SELECT source FROM imports WHERE session_id = ? ORDER BY imported_at LIMIT 1`, sessionID).Scan(&src)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return src, err
}

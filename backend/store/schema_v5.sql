-- Talaria session store, schema version 5: the approval audit log and what redaction
-- needs to recognise a secret after a restart without the secret itself.
--
-- Applied to a version 4 database inside the migration's transaction.

-- Every decision about something the agent wanted to run: asked and answered, timed
-- out, let through without asking (YOLO, a grant for the session, the always-list) or
-- refused outright. Rows are kept when their chat is deleted (no foreign key): only
-- clearing the log removes them. Times are epoch ms.
--   kind:     'command' (a shell command) or 'tool_call' (another tool, e.g. of an MCP
--             server; tool names it)
--   subject:  the command or the call's arguments, secrets redacted, capped at 16 KiB
--   decision: once, session, always, deny (the user's answer); timeout; yolo;
--             allowed (a grant or the always-list let it through: decided_by says
--             which); refused (never run); interrupted (the turn ended first)
--   policy:   the chat's sandbox policy then (e.g. 'workspace-write, no network') and,
--             for a command, how it would run ('outside the sandbox')
CREATE TABLE approval_audit (
    id            INTEGER PRIMARY KEY,
    created_at    INTEGER NOT NULL,
    session_id    TEXT    NOT NULL DEFAULT '',
    session_title TEXT    NOT NULL DEFAULT '',
    stream_id     TEXT    NOT NULL DEFAULT '',
    runtime       TEXT    NOT NULL DEFAULT '',
    kind          TEXT    NOT NULL,
    tool          TEXT    NOT NULL DEFAULT '',
    subject       TEXT    NOT NULL,
    pattern       TEXT    NOT NULL DEFAULT '',
    description   TEXT    NOT NULL DEFAULT '',
    decision      TEXT    NOT NULL,
    decided_by    TEXT    NOT NULL DEFAULT '',
    policy        TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX approval_audit_time ON approval_audit(created_at);
CREATE INDEX approval_audit_session ON approval_audit(session_id, created_at);

-- Keyed fingerprints of known secrets and of their encoded forms (base64, base64url,
-- hex, URL-encoding), so output that carries one is redacted also after the app
-- restarted and forgot the value. No secret is stored: roll is a keyed rolling hash of
-- the form (to find candidates in a scan) and mac its HMAC-SHA256 (to confirm one),
-- both under a key kept in the OS keyring; key_id names that key, so rows of a lost
-- key are ignored. Someone with this file but not the keyring learns how many secrets
-- there are, the lengths of their forms and when they were added, and cannot test a
-- guess.
CREATE TABLE redactions (
    mac        BLOB    PRIMARY KEY,
    key_id     TEXT    NOT NULL,
    length     INTEGER NOT NULL,
    roll       INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;

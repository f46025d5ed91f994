-- Talaria session store, schema version 1.
--
-- Conventions: times are INTEGER milliseconds since the Unix epoch; booleans are
-- INTEGER 0/1; token counters are INTEGER tokens; estimated_cost is REAL US dollars.
-- Enumerations (messages.kind, streams.terminal) are checked in Go, not with CHECK
-- constraints, so that adding a value never needs a table rebuild.
--
-- Room for full-text search (a later migration): messages keep an INTEGER rowid (id,
-- AUTOINCREMENT so purged ids are never reused) and sessions keep their implicit
-- rowid, so external-content FTS5 tables (content='messages', content_rowid='id';
-- content='sessions') plus triggers can be added without touching these tables.

-- Key/value facts about the file itself: schema_version (mirrors PRAGMA user_version,
-- which is authoritative), app_version (the Talaria that last opened it for writing),
-- created_at.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,              -- uuid
    title              TEXT    NOT NULL DEFAULT '',
    title_manual       INTEGER NOT NULL DEFAULT 0,    -- 1: set by the user, automatic titles are ignored
    model              TEXT    NOT NULL DEFAULT '',
    workspace          TEXT    NOT NULL DEFAULT '',
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,              -- last turn activity; orders the list
    active_stream_id   TEXT,                          -- NULL when idle
    revision           INTEGER NOT NULL DEFAULT 1,    -- bumped by every change
    message_count      INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost     REAL    NOT NULL DEFAULT 0,
    deleted_at         INTEGER,                       -- tombstone; NULL while the session exists
    stop_hold          INTEGER NOT NULL DEFAULT 0     -- reserved for the turn runner (no API yet)
);

-- The sidebar list: live sessions, newest activity first (scanned backwards).
CREATE INDEX sessions_by_updated ON sessions(updated_at) WHERE deleted_at IS NULL;

CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL CHECK (position >= 0),   -- 0-based order in the session
    role         TEXT    NOT NULL,                         -- system, user, assistant, tool
    content      TEXT    NOT NULL DEFAULT '',
    reasoning    TEXT    NOT NULL DEFAULT '',
    tool_calls   TEXT,                                     -- JSON array of protocol.ToolCall, NULL when none
    tool_call_id TEXT    NOT NULL DEFAULT '',
    name         TEXT    NOT NULL DEFAULT '',
    kind         TEXT    NOT NULL DEFAULT '',              -- '', cancelled, error, interrupted
    stream_id    TEXT    NOT NULL DEFAULT '',              -- the turn that wrote the row
    created_at   INTEGER NOT NULL,
    UNIQUE (session_id, position)
);

-- One row per admitted turn; ended_at IS NULL means live (or live when the app died).
CREATE TABLE streams (
    stream_id  TEXT PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER,
    terminal   TEXT    NOT NULL DEFAULT ''                 -- '', done, apperror, cancel, interrupted
);

CREATE INDEX streams_by_session ON streams(session_id);
CREATE INDEX streams_live ON streams(started_at) WHERE ended_at IS NULL;

-- The run journal: every normalised frame of a stream, for catch-up after a reload.
-- No foreign key: frames are checked against the session in Go and purged with it.
CREATE TABLE journal (
    stream_id  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    session_id TEXT    NOT NULL,
    event      TEXT    NOT NULL,
    data       TEXT,                                       -- JSON text, NULL when the frame has none
    created_at INTEGER NOT NULL,
    PRIMARY KEY (stream_id, seq)
) WITHOUT ROWID;

CREATE INDEX journal_by_session ON journal(session_id);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Talaria session store, schema version 3: hidden sessions and background tasks.
--
-- Applied to a version 2 database inside the migration's transaction. Existing rows are
-- kept: every existing session stays visible.

-- A hidden session runs a background task or answers a side question. It is never
-- listed or searched, but GetSession and Messages read it. parent_id is the session it
-- works for ('' for an ordinary session).
ALTER TABLE sessions ADD COLUMN hidden    INTEGER NOT NULL DEFAULT 0; -- 1: not listed, not searched
ALTER TABLE sessions ADD COLUMN parent_id TEXT    NOT NULL DEFAULT ''; -- the session a hidden one works for

-- The sidebar indexes leave hidden sessions out, so the lists scan only what they show.
DROP INDEX sessions_list;
DROP INDEX sessions_archived;
CREATE INDEX sessions_list ON sessions(pinned, updated_at)
    WHERE deleted_at IS NULL AND archived_at IS NULL AND hidden = 0;
CREATE INDEX sessions_archived ON sessions(updated_at)
    WHERE deleted_at IS NULL AND archived_at IS NOT NULL AND hidden = 0;
-- The few live hidden sessions, by the session they work for (search skips them; the
-- start-up clean-up finds copies no task owns).
CREATE INDEX sessions_hidden ON sessions(parent_id)
    WHERE hidden = 1 AND deleted_at IS NULL;

-- Background tasks: a prompt run as a turn in its own hidden session (session_id) for a
-- parent session. The parent keeps the record, so every window and a restart see it.
-- status: queued, running, completed, failed, stopped (checked in Go). result is the
-- final assistant text, error the failure's label and message. Times are epoch ms;
-- started_at and ended_at are NULL until then. dismissed: 1 once the user hid it.
CREATE TABLE tasks (
    id                TEXT PRIMARY KEY,                 -- uuid
    parent_session_id TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    session_id        TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    prompt            TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    stream_id         TEXT    NOT NULL DEFAULT '',      -- the task's turn, '' while queued
    result            TEXT    NOT NULL DEFAULT '',
    error             TEXT    NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    started_at        INTEGER,
    ended_at          INTEGER,
    dismissed         INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX tasks_by_parent ON tasks(parent_session_id, created_at);
CREATE INDEX tasks_by_session ON tasks(session_id);
CREATE INDEX tasks_open ON tasks(created_at) WHERE status IN ('queued', 'running');

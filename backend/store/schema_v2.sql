-- Talaria session store, schema version 2: session actions and full-text search.
--
-- Applied to a version 1 database inside the migration's transaction. Existing rows are
-- kept; the search indexes are built from them at the end.

-- Tombstones keep no text: their titles are blanked so the search index never holds
-- them (DeleteSession does the same from now on).
UPDATE sessions SET title = '' WHERE deleted_at IS NOT NULL;

ALTER TABLE sessions ADD COLUMN pinned        INTEGER NOT NULL DEFAULT 0; -- 1: listed first
ALTER TABLE sessions ADD COLUMN archived_at   INTEGER;                    -- epoch ms; NULL while not archived
ALTER TABLE sessions ADD COLUMN forked_from   TEXT NOT NULL DEFAULT '';   -- source session of a fork or duplicate
ALTER TABLE sessions ADD COLUMN fork_position INTEGER;                    -- last source position copied (-1: all)
ALTER TABLE sessions ADD COLUMN fork_key      TEXT;                       -- idempotency key of the fork request

-- The sidebar: live, unarchived sessions, pinned first, newest activity first (scanned
-- backwards; rowid, the tie-break, is the index's last column).
DROP INDEX sessions_by_updated;
CREATE INDEX sessions_list ON sessions(pinned, updated_at)
    WHERE deleted_at IS NULL AND archived_at IS NULL;
CREATE INDEX sessions_archived ON sessions(updated_at)
    WHERE deleted_at IS NULL AND archived_at IS NOT NULL;
CREATE UNIQUE INDEX sessions_by_fork_key ON sessions(fork_key) WHERE fork_key IS NOT NULL;

-- The composer's unsent text, one per session. Saving a draft does not change the
-- session's revision or its place in the list.
CREATE TABLE drafts (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    text       TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Full-text search over message text: an external-content FTS5 index on
-- messages.content keyed by messages.id (an INTEGER PRIMARY KEY, so VACUUM keeps it).
-- Every row is indexed, empty ones too, so 'rebuild' and the triggers agree and
-- 'integrity-check' holds.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;

-- Titles: a small FTS5 table with its own copy of each title, keyed by session id
-- (sessions has no INTEGER PRIMARY KEY, and VACUUM may renumber its implicit rowids, so
-- an external-content index on it could point at the wrong session).
CREATE VIRTUAL TABLE sessions_fts USING fts5(
    title,
    session_id UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER sessions_fts_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts(title, session_id) VALUES (new.title, new.id);
END;
CREATE TRIGGER sessions_fts_delete AFTER DELETE ON sessions BEGIN
    DELETE FROM sessions_fts WHERE session_id = old.id;
END;
CREATE TRIGGER sessions_fts_update AFTER UPDATE OF title ON sessions WHEN new.title IS NOT old.title BEGIN
    UPDATE sessions_fts SET title = new.title WHERE session_id = old.id;
END;

INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
INSERT INTO sessions_fts(title, session_id) SELECT title, id FROM sessions;

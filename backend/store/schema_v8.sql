-- Talaria session store, schema version 8: where an imported chat came from.
--
-- Applied to a version 7 database inside the migration's transaction. Nothing existing
-- changes: chats made before version 8 have no import record.

-- One row per chat brought over from another history (backend/history): source is the
-- stable key of what was imported ("hermes:<runtime id>:<Hermes session id>",
-- "web:<Talaria web session id>"), so a second import of the same thing adds nothing
-- while that chat is live. A chat deleted by the user frees its key (the next import
-- brings it back and replaces the record).
CREATE TABLE imports (
    source      TEXT    PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    imported_at INTEGER NOT NULL                    -- epoch ms
);
CREATE INDEX imports_by_session ON imports(session_id);

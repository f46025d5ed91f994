-- Talaria session store, schema version 6: attachments, summaries of older turns, and
-- each turn's own figures (model, tokens, cost, context fill).
--
-- Applied to a version 5 database inside the migration's transaction. Existing rows
-- have no attachments, no summaries and no per-turn figures (zeros, cost unknown).

-- Files the user attached: staged in a chat's composer (message_id NULL) or sent with
-- a user message. The bytes live outside the database, content-addressed:
-- <data dir>/attachments/<sha256[0:2]>/<sha256>; a file is removed once no row names
-- its digest. Rows go with their message (ON DELETE CASCADE: a deleted chat, an edit
-- or a retry that replaces the message) and with their session.
--   kind:       'image' (sent as an image part) or 'text' (inlined into the message's
--               text)
--   size:       bytes of the file
--   sent_bytes: for a text file, how many of its first bytes the model gets (size when
--               whole; fixed when the message is sent, so a later turn sends the same
--               text); for an image, size
CREATE TABLE attachments (
    id         TEXT PRIMARY KEY,                                     -- uuid
    session_id TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,   -- NULL while staged
    ord        INTEGER NOT NULL DEFAULT 0,                          -- order within the message
    sha256     TEXT    NOT NULL,                                    -- lowercase hex
    name       TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    size       INTEGER NOT NULL,
    sent_bytes INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX attachments_by_session ON attachments(session_id, message_id, ord);
CREATE INDEX attachments_by_message ON attachments(message_id) WHERE message_id IS NOT NULL;
CREATE INDEX attachments_by_blob ON attachments(sha256);

-- A summary row (kind 'summary', written when older turns were summarised to fit the
-- model's context) stands for the rows at positions 0 .. summary_covers-1 in what is
-- sent to the model; those rows stay in the transcript. 0 for every other row.
ALTER TABLE messages ADD COLUMN summary_covers INTEGER NOT NULL DEFAULT 0;

-- Each turn's own figures, written when it settles:
--   model:          the model that answered ('' when unknown)
--   *_tokens:       the turn's token counters (summed over its model calls)
--   estimated_cost: US dollars; cost_source says where it came from: 'provider' (the
--                   provider reported it), 'price' (a price the user set), '' (unknown)
--   context_tokens: the prompt tokens of the turn's last model call plus its answer,
--                   i.e. how full the model's context is after the turn (0: unknown)
ALTER TABLE streams ADD COLUMN model              TEXT    NOT NULL DEFAULT '';
ALTER TABLE streams ADD COLUMN input_tokens       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN output_tokens      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN cache_read_tokens  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN estimated_cost     REAL    NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN cost_source        TEXT    NOT NULL DEFAULT '';
ALTER TABLE streams ADD COLUMN context_tokens     INTEGER NOT NULL DEFAULT 0;

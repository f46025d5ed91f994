-- Talaria session store, schema version 9: the latest summary of a chat found by index.
--
-- Applied to a version 8 database inside the migration's transaction. Nothing existing
-- changes. A turn of a long chat reads only the rows from its latest summary on
-- (MessagesForTurn); this index finds that summary without walking the chat's rows.
CREATE INDEX messages_summaries ON messages(session_id, position) WHERE kind = 'summary';

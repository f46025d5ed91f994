-- Talaria session store, schema version 7: the failure an error row stands for.
--
-- Applied to a version 6 database inside the migration's transaction. Existing error
-- rows keep only their text ("Label: message" in content) and get no app_error.

-- An error row (kind 'error') keeps the apperror it was written for, as JSON
-- {"type", "label", "message", "hint"} (store.RowError), so a reopened chat shows the
-- same advice as the live one. NULL for every other row.
ALTER TABLE messages ADD COLUMN app_error TEXT;

-- Talaria session store, schema version 4: the runtime a chat runs on, and its options.
--
-- Applied to a version 3 database inside the migration's transaction. Existing sessions
-- keep running on the built-in runtime ('' reads as 'builtin') with default options.

-- runtime: the host's runtime id ("builtin", "hermes", "hermes:<profile>",
-- "acp:<agent id>"); '' for rows made before version 4, read as "builtin".
ALTER TABLE sessions ADD COLUMN runtime          TEXT NOT NULL DEFAULT '';
-- agent_session_id: the runtime's own session for this chat (a Hermes or ACP session
-- id), sent back in chat.start so the agent resumes it; '' until the agent names one.
-- Cleared whenever runtime changes.
ALTER TABLE sessions ADD COLUMN agent_session_id TEXT NOT NULL DEFAULT '';
-- options: the chat's own settings, a JSON object (backend.ChatOptions); '{}' = the
-- defaults from Settings.
ALTER TABLE sessions ADD COLUMN options          TEXT NOT NULL DEFAULT '{}';

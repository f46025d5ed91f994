package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// The Talaria web session store's files (seed 004: its store.js, 1.18.0 side): one
// JSON document per session, sessions/<session_id>.json, beside the sidebar index
// sessions/_index.json (a list of rows with session_id) and the deleted-session
// tombstone sessions/_deleted_webui_sessions.json ({version: 1, ids}). Names starting
// with "_" are not sessions; <sid>.json.bak (the copy kept on a shrink) and
// <sid>.json.tmp.* (a write in progress) are not either.
const (
	webIndexFile     = "_index.json"
	webTombstoneFile = "_deleted_webui_sessions.json"
)

// webKey is the import key of a Talaria web session.
func webKey(sessionID string) string { return "web:" + sessionID }

// webFolder is the folder holding the session files: folder/sessions when it exists
// (the web product's data folder was chosen), else folder itself.
func webFolder(folder string) (string, error) {
	st, err := os.Stat(folder)
	if err != nil {
		return "", fmt.Errorf("the folder %s cannot be read (%v): choose Talaria web's data folder or its sessions folder: %w",
			folder, errors.Unwrap(err), store.ErrInvalid)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is a file: choose Talaria web's data folder or its sessions folder: %w", folder, store.ErrInvalid)
	}
	if sub := filepath.Join(folder, "sessions"); isDir(sub) {
		return sub, nil
	}
	return folder, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// webIndexRow is the part of an _index.json row the import uses: pinned and archived
// when the session's own file lacks them.
type webIndexRow struct {
	SessionID string `json:"session_id"`
	Pinned    *bool  `json:"pinned"`
	Archived  *bool  `json:"archived"`
}

func (im *Importer) runWeb(ctx context.Context, r *run, req WebRequest) {
	dir, err := webFolder(req.Folder)
	if err != nil {
		r.fail(err)
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		r.fail(fmt.Errorf("the folder %s cannot be listed (%v): check its permissions: %w", dir, err, store.ErrInvalid))
		return
	}
	var files []string
	hasIndex := false
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == webIndexFile:
			hasIndex = true
		case e.IsDir(), strings.HasPrefix(name, "_"), !strings.HasSuffix(name, ".json"):
		default:
			files = append(files, name)
		}
	}
	if len(files) == 0 && !hasIndex {
		r.fail(fmt.Errorf("%s holds no Talaria web session files (<id>.json beside _index.json): choose Talaria web's data folder or its sessions folder: %w",
			dir, store.ErrInvalid))
		return
	}
	// Files named after their session come first, so a copy under another name is
	// the one reported as a duplicate.
	sort.SliceStable(files, func(i, j int) bool {
		ci, cj := isSessionFileName(files[i]), isSessionFileName(files[j])
		if ci != cj {
			return ci
		}
		return files[i] < files[j]
	})
	index := map[string]webIndexRow{}
	if hasIndex {
		if rows, err := readWebIndex(filepath.Join(dir, webIndexFile)); err != nil {
			r.update(func(p *Progress) {
				addProblem(p, Problem{Item: webIndexFile, Outcome: "skipped", Message: err.Error() + "; the session files were read without it"})
			})
		} else {
			index = rows
		}
	}
	deleted := readWebTombstones(filepath.Join(dir, webTombstoneFile))
	var missing []string
	for sid := range index {
		if _, err := os.Stat(filepath.Join(dir, sid+".json")); err != nil && safeSessionID(sid) && !deleted[sid] {
			missing = append(missing, sid)
		}
	}
	sort.Strings(missing)
	r.total(len(files) + len(missing))
	for _, sid := range missing {
		r.skipped(sid+".json", "listed in _index.json but its file is not in the folder")
	}
	done, err := im.store.ImportedSources(ctx, "web:")
	if err != nil {
		r.fail(err)
		return
	}
	seen := map[string]string{} // session_id -> the file it was read from
	for _, name := range files {
		if ctx.Err() != nil {
			return
		}
		r.current(name)
		chat, sid, err := readWebSession(filepath.Join(dir, name), index)
		if err != nil {
			r.failed(name, err)
			continue
		}
		stem := strings.TrimSuffix(name, ".json")
		switch {
		case seen[sid] != "":
			r.skipped(name, fmt.Sprintf("a duplicate of %s (the same session_id %s)", seen[sid], sid))
			continue
		case sid != stem:
			r.failed(name, &store.ImportError{Field: "session_id", Problem: fmt.Sprintf(
				"%q does not match the file's name; Talaria web does not load such a file either (rename it to %s.json to import it)", sid, sid)})
			continue
		}
		seen[sid] = name
		if deleted[sid] {
			r.skipped(name, "deleted in Talaria web (listed in "+webTombstoneFile+")")
			continue
		}
		if done[webKey(sid)] != "" {
			r.skipped(name, "already imported")
			continue
		}
		sess, fresh, err := im.store.ImportChat(ctx, chat)
		switch {
		case cancelled(ctx, err):
			return
		case err != nil:
			r.failed(name, err)
		case !fresh:
			r.skipped(name, "already imported")
		default:
			r.imported(sess.ID)
		}
	}
}

// isSessionFileName reports whether name is <session_id>.json for a plausible id.
func isSessionFileName(name string) bool {
	return strings.HasSuffix(name, ".json") && safeSessionID(strings.TrimSuffix(name, ".json"))
}

// safeSessionID is what the import accepts as a web session id: 1 to 128 characters
// of letters, digits, '-', '_' and '.', not starting with '.' (the web product refuses
// ids that could leave its folder; its exact rule is not in the seeds).
func safeSessionID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// readWebIndex reads _index.json: a JSON list of rows, each with a session_id.
func readWebIndex(path string) (map[string]webIndexRow, error) {
	b, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	var rows []webIndexRow
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("%s is damaged (%s)", webIndexFile, jsonProblem(err))
	}
	out := map[string]webIndexRow{}
	for _, row := range rows {
		if row.SessionID != "" {
			out[row.SessionID] = row
		}
	}
	return out, nil
}

// readWebTombstones reads the deleted-session tombstone ({version: 1, ids}); a missing
// or unreadable one deletes nothing (as in the web product).
func readWebTombstones(path string) map[string]bool {
	out := map[string]bool{}
	b, err := readLimited(path)
	if err != nil {
		return out
	}
	var t struct {
		Version int      `json:"version"`
		IDs     []string `json:"ids"`
	}
	if json.Unmarshal(b, &t) != nil || t.Version != 1 {
		return out
	}
	for _, id := range t.IDs {
		out[strings.TrimSpace(id)] = true
	}
	return out
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%v)", errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, store.MaxImportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%v)", err)
	}
	if len(b) > store.MaxImportBytes {
		return nil, fmt.Errorf("is over the %d MiB limit", store.MaxImportBytes>>20)
	}
	return b, nil
}

// readWebSession reads one session file into a chat, with index's pinned and archived
// as fallbacks. It returns the chat and its session_id. Errors: *store.ImportError
// naming the field (a damaged file).
func readWebSession(path string, index map[string]webIndexRow) (store.ImportedChat, string, error) {
	bad := func(field, format string, args ...any) error {
		return &store.ImportError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	b, err := readLimited(path)
	if err != nil {
		return store.ImportedChat{}, "", bad("", "the file %v", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return store.ImportedChat{}, "", bad("", "the file is empty")
	}
	if !utf8.Valid(b) {
		return store.ImportedChat{}, "", bad("", "the file is not UTF-8 text")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil || doc == nil {
		return store.ImportedChat{}, "", bad("", "not a JSON object (%s)", jsonProblem(err))
	}
	f := fields{doc: doc}
	sid := f.str("session_id", true)
	title := f.str("title", false)
	created := f.seconds("created_at")
	updated := f.seconds("updated_at")
	pinned, hasPinned := f.boolean("pinned")
	archived, hasArchived := f.boolean("archived")
	model := f.str("model", false)
	workspace := f.str("workspace", false)
	var raws []json.RawMessage
	if m, ok := doc["messages"]; !ok || json.Unmarshal(m, &raws) != nil || raws == nil {
		f.fail("messages", "missing or not a list")
	}
	if f.err != nil {
		return store.ImportedChat{}, "", f.err
	}
	if !safeSessionID(sid) {
		return store.ImportedChat{}, "", bad("session_id", "%q is not a session id Talaria web makes", sid)
	}
	if row, ok := index[sid]; ok {
		if !hasPinned && row.Pinned != nil {
			pinned = *row.Pinned
		}
		if !hasArchived && row.Archived != nil {
			archived = *row.Archived
		}
	}
	chat := store.ImportedChat{Source: webKey(sid), Title: title, CreatedAt: created, UpdatedAt: updated, Pinned: pinned,
		Model: model, Workspace: workspace}
	for i, raw := range raws {
		m, err := webMessage(raw, fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return store.ImportedChat{}, "", err
		}
		chat.Messages = append(chat.Messages, m)
	}
	if chat.CreatedAt <= 0 {
		for _, m := range chat.Messages {
			if m.CreatedAt > 0 {
				chat.CreatedAt = m.CreatedAt
				break
			}
		}
	}
	if chat.UpdatedAt <= 0 {
		for _, m := range chat.Messages {
			chat.UpdatedAt = max(chat.UpdatedAt, m.CreatedAt)
		}
	}
	if chat.CreatedAt <= 0 {
		chat.CreatedAt = chat.UpdatedAt
	}
	if archived {
		// The seeds show no archive time: the last activity stands for it.
		chat.ArchivedAt = max(chat.UpdatedAt, chat.CreatedAt, 1)
	}
	if strings.TrimSpace(chat.Title) == "" {
		chat.Title = "Untitled"
	}
	return chat, sid, nil
}

// webMessage reads one transcript row: {role, content, reasoning?, tool_calls?,
// tool_call_id?, name?, timestamp? (Unix seconds), _error?, _terminal_state?}.
func webMessage(raw json.RawMessage, where string) (store.Message, error) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(raw, &doc) != nil || doc == nil {
		return store.Message{}, &store.ImportError{Field: where, Problem: "not an object"}
	}
	f := fields{doc: doc, prefix: where + "."}
	m := store.Message{Role: f.str("role", true), Content: f.content("content"), CreatedAt: f.seconds("timestamp")}
	m.Reasoning = f.str("reasoning", false)
	if m.Reasoning == "" {
		m.Reasoning = f.str("reasoning_content", false)
	}
	m.Name = firstNonEmpty(f.str("name", false), f.str("tool_name", false))
	m.ToolCallID = f.str("tool_call_id", false)
	m.ToolCalls = f.toolCalls("tool_calls")
	if e, _ := f.boolean("_error"); e {
		m.Kind = store.KindError
		if f.str("_terminal_state", false) == "cancelled" {
			m.Kind = store.KindCancelled
		}
	}
	if f.err != nil {
		return store.Message{}, f.err
	}
	switch m.Role {
	case "user", "assistant", "system":
	case "tool":
		if m.ToolCallID == "" {
			return store.Message{}, &store.ImportError{Field: where + ".tool_call_id", Problem: "a tool result that names no call"}
		}
	default:
		return store.Message{}, &store.ImportError{Field: where + ".role", Problem: fmt.Sprintf("unknown role %q (want user, assistant, tool or system)", m.Role)}
	}
	return m, nil
}

// fields reads typed members of a JSON object, keeping the first problem.
type fields struct {
	doc    map[string]json.RawMessage
	prefix string
	err    error
}

func (f *fields) fail(key, format string, args ...any) {
	if f.err == nil {
		f.err = &store.ImportError{Field: f.prefix + key, Problem: fmt.Sprintf(format, args...)}
	}
}

func (f *fields) present(key string) (json.RawMessage, bool) {
	v, ok := f.doc[key]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, false
	}
	return v, true
}

func (f *fields) str(key string, required bool) string {
	v, ok := f.present(key)
	if !ok {
		if required {
			f.fail(key, "missing")
		}
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		f.fail(key, "not a string")
	}
	return s
}

func (f *fields) boolean(key string) (bool, bool) {
	v, ok := f.present(key)
	if !ok {
		return false, false
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		f.fail(key, "not true or false")
	}
	return b, true
}

// seconds reads a time in Unix seconds (a number, as the web product writes them) as
// epoch milliseconds; absent is 0.
func (f *fields) seconds(key string) int64 {
	v, ok := f.present(key)
	if !ok {
		return 0
	}
	var x float64
	if json.Unmarshal(v, &x) != nil || math.IsNaN(x) || x < 0 || x > 1e11 {
		f.fail(key, "not a time in seconds")
		return 0
	}
	return int64(math.Round(x * 1000))
}

// content reads a row's content: a string, null, or a list of parts whose text parts
// are joined (other parts, e.g. an image, become "[image_url]": their bytes are not in
// the session file).
func (f *fields) content(key string) string {
	v, ok := f.present(key)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(v, &parts) != nil {
		f.fail(key, "neither text nor a list of parts")
		return ""
	}
	var out []string
	for _, p := range parts {
		var kind, text string
		json.Unmarshal(p["type"], &kind) //nolint:errcheck // "" when absent
		if json.Unmarshal(p["text"], &text) == nil && (kind == "text" || kind == "") {
			out = append(out, text)
			continue
		}
		out = append(out, "["+firstNonEmpty(kind, "part")+"]")
	}
	return strings.Join(out, "\n")
}

// toolCalls reads OpenAI-style calls: [{id, type, function: {name, arguments}}], the
// arguments a JSON text (or an object, kept as its text).
func (f *fields) toolCalls(key string) []protocol.ToolCall {
	v, ok := f.present(key)
	if !ok {
		return nil
	}
	var raw []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(v, &raw) != nil {
		f.fail(key, "not a list of tool calls")
		return nil
	}
	var out []protocol.ToolCall
	for i, c := range raw {
		if c.ID == "" || c.Function.Name == "" {
			f.fail(fmt.Sprintf("%s[%d]", key, i), "a tool call without an id or a function name")
			return nil
		}
		args := "{}"
		if a := bytes.TrimSpace(c.Function.Arguments); len(a) > 0 && string(a) != "null" {
			var s string
			if json.Unmarshal(a, &s) == nil {
				args = s
			} else {
				args = string(a)
			}
		}
		out = append(out, protocol.ToolCall{ID: c.ID, Type: firstNonEmpty(c.Type, "function"),
			Function: protocol.ToolFunction{Name: c.Function.Name, Arguments: args}})
	}
	return out
}

// jsonProblem describes a JSON decoding error briefly.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "null"
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s where %s was expected", typ.Value, typ.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends too early"
	}
	return err.Error()
}

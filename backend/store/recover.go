package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// RecoveryReport says what the start-up check (CheckAndRecover) found and did, for the
// window to show.
type RecoveryReport struct {
	// Recovered is true when the database was damaged and was replaced by a fresh one
	// holding what could be read.
	Recovered bool `json:"recovered"`
	// BackupPath is the copy of the damaged file (its write-ahead log, when it had one,
	// is beside it with the suffix -wal); "" when nothing was done.
	BackupPath string `json:"backup_path"`
	Sessions   int    `json:"sessions"` // conversations recovered
	Messages   int    `json:"messages"` // messages recovered
	// Message says what happened and what the user can do, in plain words.
	Message string `json:"message"`
	// Problems are the first lines PRAGMA quick_check reported (or the open error).
	Problems []string `json:"problems,omitempty"`
	At       int64    `json:"at"` // when the check ran, epoch milliseconds
}

// Suffixes of the files CheckAndRecover writes beside the database.
const (
	damagedSuffix    = ".damaged-"   // + UTC time: the copy of the damaged file
	recoveringSuffix = ".recovering" // the fresh database being filled
	recoveredSuffix  = ".recovered"  // the filled database, waiting to replace the damaged one
	metaRecovery     = "recovery_report"
	quickCheckLines  = 20
	salvageChunk     = 500
)

// CheckAndRecover is the start-up check; call it before Open. It runs PRAGMA
// quick_check on the database at path (read-only). When the file is healthy, absent,
// or written by a newer Talaria (Open refuses that one), it changes nothing and returns
// a report with Recovered false. When quick_check finds damage, or the file is not a
// database at all:
//
//  1. the damaged file (and its -wal) are copied beside it as
//     <name>.damaged-<UTC time>(-wal), and synced;
//  2. every session and message row that can still be read is copied into a fresh
//     database (rows on damaged pages are skipped; messages whose session row was lost
//     get a session titled "Recovered conversation"; settings and drafts are kept;
//     streams and the run journal are not, so no turn stays live);
//  3. the fresh file replaces the damaged one (a crash during this step is finished by
//     the next call), and the report is also saved in it, so the window can show it
//     until the user dismisses it (RecoveryReport, DismissRecoveryReport).
//
// Errors: the check could not run (the file cannot be read, the folder is not
// writable: see Open's errors), or the copy or the rebuild failed; the damaged file is
// then left in place.
func CheckAndRecover(ctx context.Context, path string) (RecoveryReport, error) {
	rep := RecoveryReport{At: time.Now().UnixMilli()}
	abs, err := filepath.Abs(path)
	if err != nil {
		return rep, wrap("check "+path, err)
	}
	op := "check " + abs
	if err := finishSwap(abs); err != nil {
		return rep, wrap(op, err)
	}
	st, err := os.Stat(abs)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, wrap(op, err)
	}
	var problems []string
	if st.Size() > 0 {
		v, err := headerUserVersion(abs)
		if err != nil {
			return rep, wrap(op, err)
		}
		if v > latestVersion() {
			return rep, nil // Open refuses it without touching it
		}
		if v < 0 {
			problems = []string{"the file does not start with the SQLite header"}
		} else if problems, err = quickCheck(ctx, abs); err != nil {
			return rep, wrap(op, err)
		}
	}
	if len(problems) == 0 {
		return rep, nil
	}
	slog.Warn("store: database damaged, recovering", "path", abs, "problems", problems)
	return recoverDatabase(ctx, abs, problems, rep.At)
}

// quickCheck returns quick_check's complaints (none when the file is healthy). An error
// that says the file is damaged is a complaint too; any other error is returned.
func quickCheck(ctx context.Context, path string) ([]string, error) {
	db, err := openReadOnly(path, int(DefaultBusyTimeout/time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA quick_check(%d)", quickCheckLines))
	if err != nil {
		if errors.Is(classify(err), ErrCorrupt) {
			return []string{err.Error()}, nil
		}
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		if line != "ok" {
			out = append(out, line)
		}
	}
	if err := rows.Err(); err != nil {
		if errors.Is(classify(err), ErrCorrupt) {
			return append(out, err.Error()), nil
		}
		return nil, err
	}
	return out, nil
}

// recoverDatabase runs steps 1 to 3 of CheckAndRecover.
func recoverDatabase(ctx context.Context, path string, problems []string, at int64) (RecoveryReport, error) {
	op := "recover " + path
	rep := RecoveryReport{At: at, Problems: problems}
	backup := path + damagedSuffix + time.UnixMilli(at).UTC().Format("20060102-150405")
	for i := 2; fileExists(backup) || fileExists(backup+"-wal"); i++ {
		backup = path + damagedSuffix + time.UnixMilli(at).UTC().Format("20060102-150405") + "-" + strconv.Itoa(i)
	}
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFileSynced(path+suffix, backup+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return rep, wrap(op, fmt.Errorf("keeping a copy of the damaged file: %w", err))
		}
	}
	rep.BackupPath = backup

	tmp := path + recoveringSuffix
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(tmp + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return rep, wrap(op, err)
		}
	}
	dst, err := OpenWith(ctx, tmp, Options{})
	if err != nil {
		return rep, wrap(op, err)
	}
	sessions, messages, err := salvage(ctx, backup, dst)
	if err == nil {
		rep.Recovered, rep.Sessions, rep.Messages = true, sessions, messages
		rep.Message = fmt.Sprintf("Talaria's database was damaged, so it was rebuilt from what could still be read: "+
			"%d conversations and %d messages were recovered; anything stored on the damaged parts of the file is missing. "+
			"The damaged file was kept as %s; you may delete it once you have checked your conversations.",
			sessions, messages, backup)
		var b []byte
		if b, err = json.Marshal(rep); err == nil {
			err = dst.write(ctx, "save recovery report", func(tx *sql.Tx) error { return setMeta(ctx, tx, metaRecovery, string(b)) })
		}
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = selfContained(ctx, tmp)
	}
	if err == nil {
		err = syncFile(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, path+recoveredSuffix) // the commit point
	}
	if err == nil {
		err = finishSwap(path)
	}
	if err != nil {
		return RecoveryReport{At: at, Problems: problems, BackupPath: backup}, wrap(op, err)
	}
	slog.Warn("store: database recovered", "path", path, "backup", backup, "sessions", sessions, "messages", messages)
	return rep, nil
}

// finishSwap puts a fully recovered database (path.recovered) in place of the damaged
// one: the damaged file's -wal and -shm go first (a stale log must never be applied to
// the new file), then the rename. It does nothing when there is none.
func finishSwap(path string) error {
	ready := path + recoveredSuffix
	if _, err := os.Stat(ready); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(ready, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// selfContained switches the closed database at path out of WAL mode, so it is one
// file that can be renamed on its own (Open switches it back).
func selfContained(ctx context.Context, path string) error {
	db, err := sql.Open(driverName, fileURI(path, "_busy_timeout=5000"))
	if err != nil {
		return err
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode); err != nil {
		return err
	}
	if mode != "delete" {
		return fmt.Errorf("journal mode is still %q", mode)
	}
	return db.Close()
}

// RecoveryReport returns the report saved by the last recovery, and whether there is
// one (the user has not dismissed it yet).
func (s *Store) RecoveryReport(ctx context.Context) (RecoveryReport, bool, error) {
	var rep RecoveryReport
	var raw string
	err := s.read(ctx, "recovery report", func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaRecovery).Scan(&raw)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return rep, false, nil
	}
	if err != nil {
		return rep, false, err
	}
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		return rep, false, wrap("recovery report", err)
	}
	return rep, true, nil
}

// DismissRecoveryReport forgets the saved recovery report (the backup file stays).
func (s *Store) DismissRecoveryReport(ctx context.Context) error {
	return s.write(ctx, "dismiss recovery report", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, metaRecovery)
		return err
	})
}

// salvage copies what can be read from the damaged database at src into dst and
// returns how many sessions and messages it copied.
func salvage(ctx context.Context, src string, dst *Store) (sessions, messages int, err error) {
	db, err := openReadOnly(src, int(DefaultBusyTimeout/time.Millisecond))
	if err != nil {
		return 0, 0, nil // nothing can be read: an empty database
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	now := dst.now()

	tx, err := dst.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	pending := 0
	commitSometimes := func() error {
		if pending++; pending < 20_000 {
			return nil
		}
		pending = 0
		if err := tx.Commit(); err != nil {
			return err
		}
		tx, err = dst.w.BeginTx(ctx, nil)
		return err
	}

	// Sessions: tombstones stay deleted; no turn is live after a recovery.
	known, dead := map[string]bool{}, map[string]bool{}
	err = salvageTable(ctx, db, "sessions", func(r row) error {
		id := r.str("id")
		if r.val("deleted_at") != nil {
			dead[id] = true
		}
		if id == "" || known[id] || dead[id] {
			return nil
		}
		created := r.int("created_at")
		if created <= 0 {
			created = now
		}
		var archived any
		if r.int("archived_at") > 0 {
			archived = r.int("archived_at")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, title_manual, model, workspace, created_at,
			updated_at, revision, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, estimated_cost,
			pinned, archived_at, forked_from, hidden, parent_id, runtime, agent_session_id, options)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, r.str("title"), r.int("title_manual") != 0, r.str("model"), r.str("workspace"), created,
			max(r.int("updated_at"), created), r.int("revision")+1,
			r.int("input_tokens"), r.int("output_tokens"), r.int("cache_read_tokens"), r.int("cache_write_tokens"),
			r.float("estimated_cost"), r.int("pinned") != 0, archived, r.str("forked_from"),
			r.int("hidden") != 0, r.str("parent_id"), r.str("runtime"), r.str("agent_session_id"),
			recoveredOptions(r.str("options"))); err != nil {
			return err
		}
		known[id] = true
		sessions++
		return commitSometimes()
	})
	if err != nil {
		return 0, 0, err
	}

	// Messages, in id order (which is position order within a session: rows are only
	// ever appended or replaced from a position to the end), renumbered without gaps.
	next := map[string]int{}
	msgIDs := map[int64]int64{} // old message id -> new, for the attachments
	err = salvageTable(ctx, db, "messages", func(r row) error {
		sid := r.str("session_id")
		if sid == "" || dead[sid] {
			return nil
		}
		if !known[sid] {
			created := r.int("created_at")
			if created <= 0 {
				created = now
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, created_at, updated_at, revision)
				VALUES(?, 'Recovered conversation', ?, ?, 1)`, sid, created, created); err != nil {
				return err
			}
			known[sid] = true
			sessions++
		}
		role := r.str("role")
		if role == "" {
			role = "assistant"
		}
		kind := r.str("kind")
		if !validKind(kind) {
			kind = KindNormal
		}
		var calls any
		if c := r.str("tool_calls"); c != "" && json.Valid([]byte(c)) {
			calls = c
		}
		created := r.int("created_at")
		if created <= 0 {
			created = now
		}
		covers := max(r.int("summary_covers"), 0) // absent before schema 5
		if kind != KindSummary {
			covers = 0
		}
		var appErr any // absent before schema 7; kept only when readable, on an error row
		if e := parseRowError(r.str("app_error")); e != nil && kind == KindError {
			appErr, _ = rowErrorJSON(e)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO messages(session_id, position, role, content, reasoning,
			tool_calls, tool_call_id, name, kind, stream_id, created_at, summary_covers, app_error)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sid, next[sid], role, r.str("content"), r.str("reasoning"), calls, r.str("tool_call_id"), r.str("name"),
			kind, r.str("stream_id"), created, covers, appErr)
		if err != nil {
			return err
		}
		if newID, err := res.LastInsertId(); err == nil && r.int("id") > 0 {
			msgIDs[r.int("id")] = newID
		}
		next[sid]++
		messages++
		return commitSometimes()
	})
	if err != nil {
		return 0, 0, err
	}
	for sid, n := range next {
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = ? WHERE id = ?`, n, sid); err != nil {
			return 0, 0, err
		}
	}

	// Attachments (schema 5): the rows of salvaged messages and of salvaged sessions'
	// composers, moved to the messages' new ids; the files themselves are outside the
	// database and untouched.
	salvageAttachment := func(r row) error {
		sid := r.str("session_id")
		if !known[sid] || dead[sid] {
			return nil
		}
		var mid any // NULL: staged
		if old := r.int("message_id"); old > 0 {
			n, ok := msgIDs[old]
			if !ok {
				return nil // its message was lost
			}
			mid = n
		}
		a := Attachment{SHA256: r.str("sha256"), Name: r.str("name"), MIMEType: r.str("mime_type"), Kind: r.str("kind"),
			Size: r.int("size"), SentBytes: r.int("sent_bytes")}
		if checkAttachment(a) != nil || r.str("id") == "" {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO attachments(id, session_id, message_id, ord, sha256, name,
			mime_type, kind, size, sent_bytes, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.str("id"), sid, mid, r.int("ord"), a.SHA256, a.Name, a.MIMEType, a.Kind, a.Size, a.SentBytes, r.int("created_at"))
		if err != nil {
			return err
		}
		return commitSometimes()
	}
	err = nil
	if hasTable(ctx, db, "attachments") {
		err = salvageTable(ctx, db, "attachments", salvageAttachment)
	}
	if err != nil {
		return 0, 0, err
	}

	// Settings, drafts and background tasks are small; keep whatever reads. (A task
	// left running becomes failed at the next start, like after any crash.)
	for _, q := range []struct{ read, write string }{
		{`SELECT key, value FROM settings`, `INSERT OR REPLACE INTO settings(key, value) VALUES(?, ?)`},
		{`SELECT session_id, text, updated_at FROM drafts`, `INSERT OR IGNORE INTO drafts(session_id, text, updated_at)
			SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1)`},
		{`SELECT id, parent_session_id, session_id, prompt, status, stream_id, result, error, created_at, started_at,
			ended_at, dismissed FROM tasks`, `INSERT OR IGNORE INTO tasks(id, parent_session_id, session_id, prompt,
			status, stream_id, result, error, created_at, started_at, ended_at, dismissed)
			SELECT ?1, ?2, ?3, COALESCE(?4, ''), COALESCE(?5, 'failed'), COALESCE(?6, ''), COALESCE(?7, ''),
				COALESCE(?8, ''), COALESCE(?9, 0), ?10, ?11, COALESCE(?12, 0)
			WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?2) AND EXISTS (SELECT 1 FROM sessions WHERE id = ?3)`},
	} {
		if err := copyReadable(ctx, db, tx, q.read, q.write); err != nil {
			return 0, 0, err
		}
	}
	// Import records (schema 8), so a recovered chat is not imported a second time.
	if hasTable(ctx, db, "imports") {
		if err := copyReadable(ctx, db, tx, `SELECT source, session_id, imported_at FROM imports`,
			`INSERT OR IGNORE INTO imports(source, session_id, imported_at) SELECT ?1, ?2, COALESCE(?3, 0)
			WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?2)`); err != nil {
			return 0, 0, err
		}
	}
	return sessions, messages, tx.Commit()
}

// hasTable reports whether the damaged database db has a table of that name that can
// be queried (an older schema has no attachments table).
func hasTable(ctx context.Context, db *sql.DB, name string) bool {
	var n int
	return db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n) == nil && n == 1
}

// copyReadable copies the rows of read that can be read into write (same columns).
func copyReadable(ctx context.Context, db *sql.DB, tx *sql.Tx, read, write string) error {
	rows, err := db.QueryContext(ctx, read)
	if err != nil {
		return nil // the table is unreadable or missing (an older schema)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if rows.Scan(ptrs...) != nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, write, vals...); err != nil {
			return err
		}
	}
	return nil
}

// row is one salvaged row by column name.
type row map[string]any

func (r row) val(col string) any { return r[col] }

func (r row) str(col string) string {
	switch v := r[col].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

func (r row) int(col string) int64 {
	switch v := r[col].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

func (r row) float(col string) float64 {
	switch v := r[col].(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

// salvageTable reads every readable row of a rowid table in rowid order and passes it
// to fn; an error from fn stops it. Reads go by chunks (rowid >= last+1); when a chunk
// hits a damaged page, the rows after it are found by probing ever further rowids
// (1, 2, 4, … past the last good one), then bisecting back to the first readable one,
// so one bad page costs only the rows on it.
func salvageTable(ctx context.Context, db *sql.DB, table string, fn func(row) error) error {
	// ">= last+1", not "> last": SQLite seeks to the first key at or after the bound, so
	// a seek past a damaged leaf does not land on it first.
	query := `SELECT rowid AS "__rowid", * FROM ` + table + ` WHERE rowid >= ? ORDER BY rowid LIMIT ?`
	var fnErr error
	// chunk reads rows after last; it returns the last rowid read and whether the
	// chunk ended cleanly (false: damaged).
	chunk := func(last int64, limit int) (int64, int, bool) {
		rows, err := db.QueryContext(ctx, query, last+1, limit)
		if err != nil {
			return last, 0, false
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return last, 0, false
		}
		n := 0
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return last, n, false
			}
			r := make(row, len(cols))
			for i, c := range cols {
				r[c] = vals[i]
			}
			id := r.int("__rowid")
			if id <= last { // a damaged page can return rows out of order
				return last, n, false
			}
			last = id
			n++
			if fnErr = fn(r); fnErr != nil {
				return last, n, false
			}
		}
		return last, n, rows.Err() == nil
	}
	// readable reports whether the first row at or after from can be read (true at the
	// end of the table too), and whether there is such a row.
	readable := func(from int64) (ok, more bool) {
		var id int64
		err := db.QueryRowContext(ctx, `SELECT rowid FROM `+table+` WHERE rowid >= ? ORDER BY rowid LIMIT 1`, from).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return true, false
		}
		if err != nil {
			return false, true
		}
		return rowReadable(ctx, db, table, id), true
	}
	var maxID int64 = 1 << 40
	_ = db.QueryRowContext(ctx, `SELECT max(rowid) FROM `+table).Scan(&maxID)

	last := int64(0)
	stuck := int64(-1)
	for ctx.Err() == nil {
		end, n, clean := chunk(last, salvageChunk)
		if fnErr != nil {
			return fnErr
		}
		last = end
		if clean {
			if n < salvageChunk {
				return nil
			}
			continue
		}
		if n == 0 && last == stuck {
			// The probe found a row the chunk cannot read: give that row up.
			last++
		}
		stuck = last
		// Damaged after last: find the next readable rowid.
		found := false
		lo := last // the probe at lo+1 is known to be bad (or unknown)
		for step := int64(1); lo < maxID && step > 0; step *= 2 {
			at := min(last+step, maxID) // the last probe is at the largest rowid
			ok, more := readable(at)
			if ok && !more {
				return nil
			}
			if !ok {
				lo = at
				continue
			}
			hi := at // readable
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if ok, _ := readable(mid); ok {
					hi = mid
				} else {
					lo = mid
				}
			}
			last, found = hi-1, true
			break
		}
		if !found {
			return nil
		}
	}
	return ctx.Err()
}

// rowReadable reads the whole row at rowid id, to tell a readable row from a damaged
// one.
func rowReadable(ctx context.Context, db *sql.DB, table string, id int64) bool {
	rows, err := db.QueryContext(ctx, `SELECT * FROM `+table+` WHERE rowid = ?`, id)
	if err != nil {
		return false
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return false
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return false
		}
	}
	return rows.Err() == nil
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func copyFileSynced(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// syncDir makes a rename in dir durable. It is best effort (not every platform can sync
// a folder), so it never fails.
func syncDir(dir string) error {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// recoveredOptions keeps a damaged row's options only when they are still a JSON object.
func recoveredOptions(v string) string {
	if o, err := normOptions(JSONObject(v)); err == nil {
		return o
	}
	return "{}"
}

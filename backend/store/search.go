package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Highlight markers in SearchHit.Snippet and SearchHit.TitleHighlight: each matched
// term is wrapped as MarkStart + term + MarkEnd. They are the control characters
// U+0002 and U+0003, not HTML: the window escapes the text first, then turns each
// pair into <mark>…</mark> (an unpaired marker is dropped). A snippet cut out of a
// longer text starts or ends with SnippetEllipsis.
const (
	MarkStart       = "\u0002"
	MarkEnd         = "\u0003"
	SnippetEllipsis = "…"
)

// Search limits.
const (
	DefaultSearchLimit = 20    // hits when Search's limit is <= 0
	MaxSearchLimit     = 200   // hits at most
	maxQueryBytes      = 512   // longer input is cut
	maxQueryWords      = 32    // more words are ignored
	snippetTokens      = 16    // tokens around a match in a snippet
	rankWindow         = 2_000 // newest matching messages ranked (see search)
	// maxCompletions bounds the words a prefix is spelled out as (see messagesMatch);
	// a prefix with more completions is left to FTS5's own prefix query.
	maxCompletions = 2048
)

// SearchHit is one session found by Search, with its best matching message.
type SearchHit struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"` // the session's title, plain
	// TitleHighlight is the title with the matched terms between MarkStart and MarkEnd
	// when the title matched; "" when it did not.
	TitleHighlight string `json:"title_highlight"`
	// MessageID and Position identify the best matching message; 0 and -1 when only
	// the title matched.
	MessageID int64  `json:"message_id"`
	Position  int    `json:"position"`
	Role      string `json:"role"` // the message's role; "" when only the title matched
	// Snippet is an excerpt of the message around the match, matched terms between
	// MarkStart and MarkEnd; when only the title matched it is TitleHighlight.
	Snippet string `json:"snippet"`
	// Rank is the FTS5 bm25 score of the hit that placed the session (its title when
	// the title matched, else its best message): lower is better.
	Rank      float64 `json:"rank"`
	UpdatedAt int64   `json:"updated_at"` // epoch milliseconds
	Archived  bool    `json:"archived"`   // archived sessions are searched too
}

// Search finds sessions whose title or message text matches query, at most limit of
// them (DefaultSearchLimit when limit <= 0, at most MaxSearchLimit), one hit per
// session: sessions whose title matches come first, ordered by the title's rank, then
// the others ordered by their best message's rank (FTS5 bm25). Messages are ranked
// among the newest 2,000 that match (a common word can match most of a million
// messages; scoring them all would make typing slow); a last word typed as a prefix
// counts each word it begins as a word of its own in that score (see messagesMatch).
// Deleted and hidden sessions are never found; archived ones are, marked Archived.
//
// query is what the user typed, taken literally: every word must occur (in any order,
// case and accents ignored); text between double quotes must occur as a phrase; the
// last word also matches as a prefix unless the query ends with a space, so the list
// can update as the user types. FTS5 syntax (AND, OR, NOT, NEAR, *, ^, column filters,
// parentheses) has no effect and can never make the query fail. A query with no letter
// or digit returns no hits and no error.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]SearchHit, error) {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	q := parseQuery(query)
	out := []SearchHit{}
	if len(q.strings) == 0 {
		return out, nil
	}
	err := s.read(ctx, "search", func(tx *sql.Tx) error {
		msgMatch, err := messagesMatch(ctx, tx, q)
		if err != nil {
			return err
		}
		out, err = search(ctx, tx, q.match(), msgMatch, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// search runs the search: match is the FTS5 query for titles, msgMatch the same query
// for messages with the last word's completions spelled out ("" when no message can
// match; see messagesMatch).
func search(ctx context.Context, tx *sql.Tx, match, msgMatch string, limit int) ([]SearchHit, error) {
	// Titles: a small index, ranked directly.
	type titleHit struct {
		id, highlight string
		rank          float64
	}
	var titles []titleHit
	rows, err := tx.QueryContext(ctx, `SELECT f.session_id, highlight(sessions_fts, 0, ?, ?), f.rank
		FROM sessions_fts f JOIN sessions s ON s.id = f.session_id
		WHERE sessions_fts MATCH ? AND s.deleted_at IS NULL AND s.hidden = 0
		ORDER BY f.rank LIMIT ?`, MarkStart, MarkEnd, match, limit)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h titleHit
		if err := rows.Scan(&h.id, &h.highlight, &h.rank); err != nil {
			rows.Close()
			return nil, err
		}
		titles = append(titles, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// Messages: the newest rankWindow matches, then the best one per session. Deleted
	// sessions have no rows left, so none of theirs can appear.
	matches, err := newestMatches(ctx, tx, msgMatch)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(matches, func(i, j int) bool { return matches[i].rank < matches[j].rank })
	// Hidden sessions (background tasks, side-question copies) are never found. They are
	// few, so their ids are read once rather than joined into the ranking query.
	hidden, err := hiddenSessions(ctx, tx)
	if err != nil {
		return nil, err
	}
	best := map[string]*msgHit{}
	var order []*msgHit // best hit of each session, best first
	for i := range matches {
		if h := &matches[i]; best[h.session] == nil && !hidden[h.session] {
			best[h.session] = h
			order = append(order, h)
		}
	}

	// Title matches first, then message-only matches, to at most limit sessions.
	hits := make([]SearchHit, 0, limit)
	seen := map[string]bool{}
	for _, t := range titles {
		h := SearchHit{SessionID: t.id, TitleHighlight: t.highlight, Position: -1, Rank: t.rank}
		if m := best[t.id]; m != nil {
			h.MessageID, h.Position, h.Role = m.id, m.position, m.role
		}
		hits = append(hits, h)
		seen[t.id] = true
	}
	for _, m := range order {
		if len(hits) >= limit {
			break
		}
		if seen[m.session] {
			continue
		}
		hits = append(hits, SearchHit{SessionID: m.session, MessageID: m.id, Position: m.position, Role: m.role, Rank: m.rank})
		seen[m.session] = true
	}
	if len(hits) == 0 {
		return hits, nil
	}

	// Snippets of the chosen messages, and the sessions' metadata.
	var ids []any
	lo, hi := int64(1<<62), int64(0)
	for _, h := range hits {
		if h.MessageID != 0 {
			ids = append(ids, h.MessageID)
			lo, hi = min(lo, h.MessageID), max(hi, h.MessageID)
		}
	}
	snippets := map[int64]string{}
	if len(ids) > 0 {
		// One pass over the matches between the lowest and highest id: "+rowid IN" is
		// not handed to FTS5 (it would run the whole query once per id), only the range.
		rows, err = tx.QueryContext(ctx, `SELECT rowid, snippet(messages_fts, 0, ?, ?, ?, ?)
			FROM messages_fts WHERE messages_fts MATCH ? AND rowid BETWEEN ? AND ?
			AND +rowid IN (`+placeholders(len(ids))+`)`,
			append([]any{MarkStart, MarkEnd, SnippetEllipsis, snippetTokens, msgMatch, lo, hi}, ids...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			var snip string
			if err := rows.Scan(&id, &snip); err != nil {
				rows.Close()
				return nil, err
			}
			snippets[id] = snip
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	sids := make([]any, len(hits))
	for i, h := range hits {
		sids[i] = h.SessionID
	}
	type meta struct {
		title    string
		updated  int64
		archived bool
	}
	metas := map[string]meta{}
	rows, err = tx.QueryContext(ctx, `SELECT id, title, updated_at, archived_at IS NOT NULL FROM sessions
		WHERE deleted_at IS NULL AND hidden = 0 AND id IN (`+placeholders(len(sids))+`)`, sids...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		var m meta
		if err := rows.Scan(&id, &m.title, &m.updated, &m.archived); err != nil {
			rows.Close()
			return nil, err
		}
		metas[id] = m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		m, ok := metas[h.SessionID]
		if !ok {
			continue
		}
		h.Title, h.UpdatedAt, h.Archived = m.title, m.updated, m.archived
		if h.MessageID != 0 {
			h.Snippet = snippets[h.MessageID]
		} else {
			h.Snippet = h.TitleHighlight
		}
		out = append(out, h)
	}
	return out, nil
}

// messagesMatch returns the FTS5 query for messages: q.match(), except that a last word
// typed as a prefix is spelled out as the words of the index it begins,
// `"a" AND ("pre" OR "prefix" OR …)`. FTS5 answers "pre"* by merging the whole
// posting list of every such word into one before it yields the first row, and again
// when it ranks (bm25 counts the phrase's rows), which is tens to hundreds of
// milliseconds for a common word among a million messages; an OR of plain words is
// walked from the newest row and stops after rankWindow. The rows found are the same;
// bm25 weighs each completion as a word of its own. The completions are read from the
// index's vocabulary (a temporary fts5vocab table of the connection), each a seek to
// the next word at or after the previous one. Only a prefix of ASCII letters and digits
// is spelled out (the tokenizer folds those by lower-casing alone); any other, and one
// with more than maxCompletions words, keeps FTS5's prefix query. It returns "" when
// no word of the index begins with the prefix (no message can match).
func messagesMatch(ctx context.Context, tx *sql.Tx, q parsedQuery) (string, error) {
	if !q.prefix || !asciiWord(q.last) {
		return q.match(), nil
	}
	if _, err := tx.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_vocab
		USING fts5vocab(main, messages_fts, instance)`); err != nil {
		return "", err
	}
	stmt, err := tx.PrepareContext(ctx, `SELECT term FROM temp.messages_vocab WHERE term >= ? LIMIT 1`)
	if err != nil {
		return "", err
	}
	defer stmt.Close()
	prefix := strings.ToLower(q.last)
	var words []string
	for from := prefix; len(words) <= maxCompletions; {
		var term string
		err := stmt.QueryRowContext(ctx, from).Scan(&term)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !strings.HasPrefix(term, prefix)) {
			break
		}
		if err != nil {
			return "", err
		}
		words = append(words, ftsString(term))
		from = term + "\x00" // the next word: terms never hold a NUL
	}
	switch {
	case len(words) == 0:
		return "", nil
	case len(words) > maxCompletions:
		return q.match(), nil
	}
	return strings.Join(append(q.strings[:len(q.strings)-1:len(q.strings)-1], "("+strings.Join(words, " OR ")+")"), " AND "), nil
}

// asciiWord reports whether w is one token of ASCII letters and digits.
func asciiWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return w != ""
}

// msgHit is a message that matched, with its bm25 rank (lower is better).
type msgHit struct {
	id       int64
	session  string
	position int
	role     string
	rank     float64
}

// newestMatches returns the newest rankWindow messages matching the FTS5 query match,
// ranked but not sorted (none when match is ""). A word found in hundreds of thousands
// of messages would have every one of them scored and sorted; instead only the newest
// rankWindow matches are scored (FTS5 walks its index backwards by rowid, which is
// message age, and stops there), and the caller sorts them.
func newestMatches(ctx context.Context, tx *sql.Tx, match string) ([]msgHit, error) {
	if match == "" {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT r.rowid, r.rank, m.session_id, m.position, m.role
		FROM (SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?) r
		JOIN messages m ON m.id = r.rowid`, match, rankWindow)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []msgHit
	for rows.Next() {
		var h msgHit
		if err := rows.Scan(&h.id, &h.rank, &h.session, &h.position, &h.role); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// hiddenSessions returns the ids of the live hidden sessions (through the
// sessions_hidden index).
func hiddenSessions(ctx context.Context, tx *sql.Tx) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM sessions INDEXED BY sessions_hidden
		WHERE hidden = 1 AND deleted_at IS NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// ftsQuery turns what the user typed into an FTS5 query that means it literally (see
// Search): each word, or each "quoted phrase", becomes an FTS5 string (in double
// quotes, inner quotes doubled), so no character of the input is FTS5 syntax; the
// strings are joined by spaces (FTS5's implicit AND). Words without a letter or digit
// are dropped (they would be empty phrases). Unless the input ends with a space or a
// closing quote, the last string gets a '*' (a prefix match). Invalid UTF-8 and
// control characters count as spaces. It returns "" when nothing searchable is left.
func ftsQuery(input string) string {
	return parseQuery(input).match()
}

// parsedQuery is what the user typed as FTS5 strings (see ftsQuery).
type parsedQuery struct {
	strings []string // each word or phrase as an FTS5 string, in double quotes
	prefix  bool     // the last string matches as a prefix
	last    string   // the last word or phrase as typed (unquoted)
}

// match is the FTS5 query: the strings joined by spaces, the last with '*' when prefix.
func (q parsedQuery) match() string {
	if len(q.strings) == 0 {
		return ""
	}
	m := strings.Join(q.strings, " ")
	if q.prefix {
		m += "*"
	}
	return m
}

func parseQuery(input string) parsedQuery {
	if len(input) > maxQueryBytes {
		cut := maxQueryBytes
		for cut > 0 && !utf8.RuneStart(input[cut]) {
			cut--
		}
		input = input[:cut]
	}
	// Invalid UTF-8 and control characters (a NUL would end the query string for
	// SQLite) become spaces.
	input = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(input, " "))
	var q parsedQuery
	rest := input
	for len(rest) > 0 && len(q.strings) < maxQueryWords {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		var w string
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 { // an unbalanced quote runs to the end
				w, rest = rest[1:], ""
			} else {
				w, rest = rest[1:1+end], rest[2+end:]
			}
		} else {
			end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
			if end < 0 {
				end = len(rest)
			}
			w, rest = rest[:end], rest[end:]
		}
		if strings.IndexFunc(w, isTokenRune) >= 0 {
			q.strings = append(q.strings, ftsString(w))
			q.last = w
		}
	}
	if len(q.strings) == 0 {
		return parsedQuery{}
	}
	last := input[len(input)-1]
	q.prefix = !unicode.IsSpace(rune(last)) && last != '"'
	return q
}

// ftsString quotes s as an FTS5 string: in double quotes, inner quotes doubled.
func ftsString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// isTokenRune reports whether r is part of a token for FTS5's unicode61 tokenizer
// (letters, numbers, private use), as opposed to a separator.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// RebuildSearchIndex rebuilds both search indexes from the sessions and messages
// tables (for instance after the file was VACUUMed by hand, or to repair them).
func (s *Store) RebuildSearchIndex(ctx context.Context) error {
	return s.write(ctx, "rebuild search index", func(tx *sql.Tx) error {
		for _, q := range []string{
			`INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`,
			`DELETE FROM sessions_fts`,
			`INSERT INTO sessions_fts(title, session_id) SELECT title, id FROM sessions`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
}

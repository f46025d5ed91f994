package store

import (
	"context"
	"database/sql"
	"encoding/json"
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
	// minPrefix is the fewest letters or digits a last word needs to match as a prefix
	// (see Search); a shorter one matches whole words only.
	minPrefix = 3
	// CommonMessages is how many messages a word must be found in to be common: it must
	// still occur, but it does not count toward the order (see Search).
	CommonMessages = 50_000
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
	// the title matched, else its best message, scored on the query's words that are
	// not common): lower is better. It is 0 for a message hit when every word of the
	// query is common (the sessions come newest match first, see Search).
	Rank      float64 `json:"rank"`
	UpdatedAt int64   `json:"updated_at"` // epoch milliseconds
	Archived  bool    `json:"archived"`   // archived sessions are searched too
}

// Search finds sessions whose title or message text matches query, at most limit of
// them (DefaultSearchLimit when limit <= 0, at most MaxSearchLimit), one hit per
// session: sessions whose title matches come first, ordered by the title's rank, then
// the others ordered by their best message.
//
// How messages are ordered (the rule the window's users see, docs/using.md):
//   - Messages are ranked by FTS5's bm25 among the newest 2,000 that match (a common
//     word can match most of a million messages; scoring them all would make typing
//     slow); each session is placed by its best message.
//   - A word found in CommonMessages (50,000) messages or more is common, like "the":
//     it must still occur, but it does not count toward the rank, which comes from the
//     query's other words alone. A quoted phrase is common when its words are found
//     together in that many messages. bm25 weighs a word by how rare it is, so it first
//     counts every message holding the word (a million-message walk for a common one,
//     once per keystroke); a common word's weight is small anyway.
//   - The word being typed (a prefix) counts each word of the index it begins as a
//     word of its own (see messagesMatch); it is common when the messages holding any
//     of them, times how many such words there are, reach CommonMessages (bm25 walks
//     each of those words' messages).
//   - When every word of the query is common, nothing is ranked: sessions come in the
//     order of their newest matching message (newest first, the message the hit points
//     at), which is what a search for a common word wants (the recent chats).
//
// Deleted and hidden sessions are never found; archived ones are, marked Archived.
//
// query is what the user typed, taken literally: every word must occur (in any order,
// case and accents ignored); text between double quotes must occur as a phrase; the
// last word also matches as a prefix unless the query ends with a space or the word has
// fewer than three letters or digits (a one- or two-letter prefix begins hundreds of
// words: "ke" finds the word "ke", "kel" finds "kelp" and "kelvin"), so the list can
// update as the user types. FTS5 syntax (AND, OR, NOT, NEAR, *, ^, column filters,
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
	common := s.opts.commonMessages
	if common <= 0 {
		common = CommonMessages
	}
	err := s.read(ctx, "search", func(tx *sql.Tx) error {
		plan, err := planMessages(ctx, tx, q, common)
		if err != nil {
			return err
		}
		out, err = search(ctx, tx, q.match(), plan, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// search runs the search: match is the FTS5 query for titles, plan how messages are
// found and ordered (see planMessages).
func search(ctx context.Context, tx *sql.Tx, match string, plan messagesPlan, limit int) ([]SearchHit, error) {
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

	// Hidden sessions (background tasks, side-question copies) are never found. They are
	// few, so their ids are read once rather than joined into the ranking query.
	hidden, err := hiddenSessions(ctx, tx)
	if err != nil {
		return nil, err
	}
	// Messages: the newest rankWindow matches ranked, or the newest first; then the best
	// one per session. Deleted sessions have no rows left, so none of theirs can appear.
	wanted := sessionsWanted{hidden: hidden, titles: map[string]bool{}, others: limit - len(titles)}
	for _, t := range titles {
		wanted.titles[t.id] = true
	}
	var matches []msgHit
	switch {
	case plan.match == "":
	case plan.rank == "":
		matches, err = newestFirst(ctx, tx, plan.match, wanted)
	default:
		wanted.waitTitles = true
		if plan.rank == plan.match {
			matches, err = newestMatches(ctx, tx, plan.match)
		} else {
			matches, err = newestMatchesRankedBy(ctx, tx, plan.match, plan.rank)
		}
		if err == nil {
			sort.SliceStable(matches, func(i, j int) bool { return matches[i].rank < matches[j].rank })
			matches, err = placeMatches(ctx, tx, matches, wanted)
		}
	}
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
			append([]any{MarkStart, MarkEnd, SnippetEllipsis, snippetTokens, plan.match, lo, hi}, ids...)...)
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

// messagesPlan is how Search finds and orders messages (see planMessages).
type messagesPlan struct {
	// match is the FTS5 query a message must match (see messagesMatch); "" when no
	// message can match.
	match string
	// rank is the FTS5 query of the parts of match that count toward the order: match
	// itself when every part does, "" when none does (the newest matches first).
	rank string
}

// matchPart is one part of a message query: a word or a phrase that must occur, or the
// words of the index a last word typed as a prefix begins, one of which must occur.
type matchPart struct {
	fts string // the part as FTS5 query text: a string, a prefix string, or strings ORed in parentheses
	// probe is the FTS5 query whose matches tell how common the part is: the part's
	// words each as a string (so a phrase counts the messages holding all its words,
	// which is what FTS5 walks to find the phrase), or the ORed completions.
	probe string
	words int // completions spelled out; 1 for a word or phrase
}

// planMessages returns how Search finds and orders the messages for q (the rules are
// Search's): the message query of messagesMatch, and the query of its parts that are
// not common. A part is common when its probe finds common/words messages or more: one
// count per part, stopped at that bound, so a plan costs at most about common index
// entries a part, where bm25 would walk every message of a common word.
func planMessages(ctx context.Context, tx *sql.Tx, q parsedQuery, common int) (messagesPlan, error) {
	parts, err := messageParts(ctx, tx, q)
	if err != nil || parts == nil {
		return messagesPlan{}, err
	}
	match := joinParts(parts)
	stmt, err := tx.PrepareContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)`)
	if err != nil {
		return messagesPlan{}, err
	}
	defer stmt.Close()
	isCommon := map[string]bool{} // by probe and bound: a word typed twice is counted once
	var rank []matchPart
	for _, p := range parts {
		bound := (common + p.words - 1) / p.words
		key := fmt.Sprint(bound, " ", p.probe)
		c, ok := isCommon[key]
		if !ok {
			var n int
			if err := stmt.QueryRowContext(ctx, p.probe, bound).Scan(&n); err != nil {
				return messagesPlan{}, err
			}
			c = n >= bound
			isCommon[key] = c
		}
		if !c {
			rank = append(rank, p)
		}
	}
	switch len(rank) {
	case len(parts):
		return messagesPlan{match: match, rank: match}, nil
	case 0:
		return messagesPlan{match: match}, nil
	}
	return messagesPlan{match: match, rank: joinParts(rank)}, nil
}

// joinParts is the FTS5 query that needs every part: their texts joined by spaces
// (FTS5's implicit AND), or by " AND " when a part is an ORed group (FTS5 wants the
// operator beside parentheses).
func joinParts(parts []matchPart) string {
	texts := make([]string, len(parts))
	sep := " "
	for i, p := range parts {
		texts[i] = p.fts
		if p.words > 1 || strings.HasPrefix(p.fts, "(") {
			sep = " AND "
		}
	}
	return strings.Join(texts, sep)
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
	parts, err := messageParts(ctx, tx, q)
	if err != nil || parts == nil {
		return "", err
	}
	return joinParts(parts), nil
}

// messageParts returns the parts of the message query for q (see messagesMatch and
// matchPart); nil when no message can match.
func messageParts(ctx context.Context, tx *sql.Tx, q parsedQuery) ([]matchPart, error) {
	parts := make([]matchPart, len(q.strings))
	for i, s := range q.strings {
		var words []string
		for _, w := range strings.FieldsFunc(q.words[i], func(r rune) bool { return !isTokenRune(r) }) {
			words = append(words, ftsString(w))
		}
		parts[i] = matchPart{fts: s, probe: strings.Join(words, " "), words: 1}
	}
	if !q.prefix {
		return parts, nil
	}
	last := &parts[len(parts)-1]
	last.fts += "*"
	last.probe += "*"
	if !asciiWord(q.last) {
		return parts, nil
	}
	if _, err := tx.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_vocab
		USING fts5vocab(main, messages_fts, instance)`); err != nil {
		return nil, err
	}
	stmt, err := tx.PrepareContext(ctx, `SELECT term FROM temp.messages_vocab WHERE term >= ? LIMIT 1`)
	if err != nil {
		return nil, err
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
			return nil, err
		}
		words = append(words, ftsString(term))
		from = term + "\x00" // the next word: terms never hold a NUL
	}
	switch {
	case len(words) == 0:
		return nil, nil
	case len(words) > maxCompletions:
		return parts, nil
	}
	group := "(" + strings.Join(words, " OR ") + ")"
	*last = matchPart{fts: group, probe: group, words: len(words)}
	return parts, nil
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

// msgHit is a message that matched, with its bm25 rank (lower is better; 0 when the
// matches are not ranked, see newestFirst).
type msgHit struct {
	id       int64
	session  string
	position int
	role     string
	rank     float64
}

// newestMatches returns the newest rankWindow messages matching the FTS5 query match,
// ranked but not sorted, their sessions not yet read (see placeMatches). A word found
// in hundreds of thousands of messages would have every one of them scored and sorted;
// instead only the newest rankWindow matches are scored (FTS5 walks its index backwards
// by rowid, which is message age, and stops there), and the caller sorts them.
func newestMatches(ctx context.Context, tx *sql.Tx, match string) ([]msgHit, error) {
	return scanRanked(tx.QueryContext(ctx, `SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ?
		ORDER BY rowid DESC LIMIT ?`, match, rankWindow))
}

// newestMatchesRankedBy returns the newest rankWindow messages matching the FTS5 query
// match, each ranked by bm25 of the FTS5 query rank instead (the parts of match that
// are not common, see planMessages), not sorted, their sessions not yet read. The
// window's ids are read first (unranked, no bm25 walk of the common words); rank is
// then run over their id range and scores only those ids.
func newestMatchesRankedBy(ctx context.Context, tx *sql.Tx, match, rank string) ([]msgHit, error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?
		ORDER BY rowid DESC LIMIT ?`, match, rankWindow)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	return scanRanked(tx.QueryContext(ctx, `SELECT rowid, rank FROM messages_fts
		WHERE messages_fts MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (SELECT value FROM json_each(?))
		ORDER BY rowid DESC`, rank, ids[len(ids)-1], ids[0], string(list)))
}

// scanRanked reads the rows of a query selecting rowid and rank.
func scanRanked(rows *sql.Rows, err error) ([]msgHit, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []msgHit
	for rows.Next() {
		var h msgHit
		if err := rows.Scan(&h.id, &h.rank); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// sessionsWanted says when a walk over matches, best first, has found enough: others
// sessions not found by title (titles), none hidden, and, when waitTitles, a message in
// each title hit's session too.
type sessionsWanted struct {
	hidden, titles map[string]bool
	others         int
	waitTitles     bool
}

// sessionTally counts the sessions a walk over matches has found (see sessionsWanted).
type sessionTally struct {
	sessionsWanted
	seen           map[string]bool
	titles, others int
}

func (w sessionsWanted) tally() *sessionTally {
	return &sessionTally{sessionsWanted: w, seen: map[string]bool{}}
}

// add counts the session of h (none when h.session is "", its message gone) and
// reports whether the walk has found what is wanted.
func (t *sessionTally) add(h msgHit) bool {
	if h.session != "" && !t.hidden[h.session] && !t.seen[h.session] {
		t.seen[h.session] = true
		if t.sessionsWanted.titles[h.session] {
			t.titles++
		} else {
			t.others++
		}
	}
	return (!t.waitTitles || t.titles == len(t.sessionsWanted.titles)) && t.others >= t.sessionsWanted.others
}

// placeMatchesBatch is how many matches placeMatches reads the sessions of at once.
const placeMatchesBatch = 100

// placeMatches reads the session, position and role of matches (sorted best first) a
// batch at a time, and returns them up to the batch that found what is wanted: the rest
// cannot change the hits (a session's best message comes first), and each read is a
// row of the messages table (a few microseconds for each of 2,000 rows otherwise). A
// match whose message is gone is dropped.
func placeMatches(ctx context.Context, tx *sql.Tx, matches []msgHit, wanted sessionsWanted) ([]msgHit, error) {
	tally := wanted.tally()
	for start := 0; start < len(matches); start += placeMatchesBatch {
		batch := matches[start:min(start+placeMatchesBatch, len(matches))]
		ids := make([]int64, len(batch))
		for i, h := range batch {
			ids[i] = h.id
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, session_id, position, role FROM messages
			WHERE id IN (SELECT value FROM json_each(?))`, string(list))
		if err != nil {
			return nil, err
		}
		type place struct {
			session, role string
			position      int
		}
		places := map[int64]place{}
		for rows.Next() {
			var id int64
			var p place
			if err := rows.Scan(&id, &p.session, &p.position, &p.role); err != nil {
				rows.Close()
				return nil, err
			}
			places[id] = p
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		done := false
		for i := range batch {
			p := places[batch[i].id]
			batch[i].session, batch[i].position, batch[i].role = p.session, p.position, p.role
			done = tally.add(batch[i]) || done
		}
		if done {
			matches = matches[:start+len(batch)]
			break
		}
	}
	out := matches[:0]
	for _, h := range matches {
		if h.session != "" {
			out = append(out, h)
		}
	}
	return out, nil
}

// newestFirst returns the messages matching the FTS5 query match, newest first and
// unranked (rank 0), until they hold what is wanted or rankWindow messages were read.
// It does not wait for the title hits' sessions (a title hit whose session it did not
// meet points at no message, as one with no match among the newest rankWindow): the
// walk would go on through all rankWindow matches whenever a title session has none
// of the newest, where others sessions are found within tens of rows.
func newestFirst(ctx context.Context, tx *sql.Tx, match string, wanted sessionsWanted) ([]msgHit, error) {
	rows, err := tx.QueryContext(ctx, `SELECT f.rowid, 0, m.session_id, m.position, m.role
		FROM messages_fts f JOIN messages m ON m.id = f.rowid
		WHERE messages_fts MATCH ? ORDER BY f.rowid DESC LIMIT ?`, match, rankWindow)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []msgHit
	tally := wanted.tally()
	for rows.Next() {
		var h msgHit
		if err := rows.Scan(&h.id, &h.rank, &h.session, &h.position, &h.role); err != nil {
			return nil, err
		}
		out = append(out, h)
		if tally.add(h) {
			break
		}
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
// closing quote, or its last token has fewer than minPrefix letters or digits, the
// last string gets a '*' (a prefix match). Invalid UTF-8 and control characters count
// as spaces. It returns "" when nothing searchable is left.
func ftsQuery(input string) string {
	return parseQuery(input).match()
}

// parsedQuery is what the user typed as FTS5 strings (see ftsQuery).
type parsedQuery struct {
	strings []string // each word or phrase as an FTS5 string, in double quotes
	words   []string // each word or phrase as typed (unquoted), beside strings
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
			q.words = append(q.words, w)
			q.last = w
		}
	}
	if len(q.strings) == 0 {
		return parsedQuery{}
	}
	last := input[len(input)-1]
	q.prefix = !unicode.IsSpace(rune(last)) && last != '"' && prefixLong(q.last)
	return q
}

// prefixLong reports whether the last token of w (after its last separator) has at
// least minPrefix letters or digits, enough to match as a prefix; or any letter of a
// script written without spaces (Han, Hiragana, Katakana, Hangul, Thai, ...): there
// unicode61 keeps a whole run of text as one token, so "日本" finds "日本語で" only
// as a prefix, and a word is often one or two characters.
func prefixLong(w string) bool {
	tokens := strings.FieldsFunc(w, func(r rune) bool { return !isTokenRune(r) })
	if len(tokens) == 0 {
		return false
	}
	last := tokens[len(tokens)-1]
	for _, r := range last {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) {
			return true
		}
	}
	return utf8.RuneCountInString(last) >= minPrefix
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

package store

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"talaria/sidecar/protocol"
)

func TestFTSQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"helm", `"helm"*`},
		{"helm ", `"helm"`},
		{"helm install", `"helm" "install"*`},
		{`"exact phrase" more`, `"exact phrase" "more"*`},
		{`"exact phrase"`, `"exact phrase"`},
		{`"unbalanced phrase`, `"unbalanced phrase"*`},
		{`say "hey`, `"say" "hey"*`},
		{`a"bcd`, `"a" "bcd"*`},
		{"NEAR(a bcd)", `"NEAR(a" "bcd)"*`},
		{"foo AND bar OR NOT baz", `"foo" "AND" "bar" "OR" "NOT" "baz"*`},
		{"- * ( ) ^ : + \"", ""},
		{"-foo", `"-foo"*`},
		{"title:secret", `"title:secret"*`},
		{"co-operate", `"co-operate"*`},
		{"déjà vue", `"déjà" "vue"*`},
		{"日本語", `"日本語"*`},
		{"x\xffyz", `"x" "yz"`},
		{"a\x00b\x02cde", `"a" "b" "cde"*`},
		// A last word of one or two letters or digits matches whole words only.
		{"ke", `"ke"`},
		{"kel", `"kel"*`},
		{"helm i", `"helm" "i"`},
		{"déjà vu", `"déjà" "vu"`},
		{"日本", `"日本"*`}, // a script without spaces: a run of it is one token
		{"東", `"東"*`},
		{"한국", `"한국"*`},
		{"co-op", `"co-op"`},    // the last token is "op"
		{"co-ops", `"co-ops"*`}, // "ops"
		{`"apply ku`, `"apply ku"`},
		{`"apply kub`, `"apply kub"*`},
		{"42", `"42"`},
		{"420", `"420"*`},
	}
	for _, tt := range tests {
		if got := ftsQuery(tt.in); got != tt.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("wörd ", 200)
	if got := ftsQuery(long); strings.Count(got, `"wörd"`) != maxQueryWords || !utf8.ValidString(got) {
		t.Errorf("a long query became %q", got)
	}
}

// searchFixture stores three conversations about different things.
func searchFixture(t *testing.T) (*Store, map[string]string) {
	s := openTest(t)
	ids := map[string]string{}
	add := func(title string, pairs ...string) {
		sess := mustSession(t, s, title)
		ids[title] = sess.ID
		for i := 0; i < len(pairs); i += 2 {
			turn(t, s, sess.ID, fmt.Sprintf("%s-%d", sess.ID, i), pairs[i], pairs[i+1])
		}
	}
	add("Deploying the cluster",
		"how do I deploy with helm?", "Run helm install with your values file; the cluster needs RBAC.",
		"and rollbacks?", "helm rollback takes the release name and a revision.")
	add("Résumé wording",
		"make my résumé sound better", "Lead with outcomes. Mention the Kubernetes cluster migration you ran.")
	add("Shopping list",
		"eggs, milk, flour", "Noted: eggs, milk and flour.")
	return s, ids
}

func TestSearchRanksHighlightsAndSnippets(t *testing.T) {
	s, ids := searchFixture(t)
	tests := []struct {
		query    string
		want     []string // titles in order
		wantMark string   // a word that must be highlighted in the first hit
	}{
		{"cluster", []string{"Deploying the cluster", "Résumé wording"}, "cluster"},
		{"helm", []string{"Deploying the cluster"}, "helm"},
		{"HELM ROLLBACK", []string{"Deploying the cluster"}, "rollback"},
		{"resume", []string{"Résumé wording"}, "Résumé"},   // accents ignored
		{"kube", []string{"Résumé wording"}, "Kubernetes"}, // prefix while typing
		{"kube ", nil, ""}, // a finished word is not a prefix
		{`"helm install"`, []string{"Deploying the cluster"}, "helm install"},
		{`"install helm"`, nil, ""}, // phrases keep their order
		{"eggs flour", []string{"Shopping list"}, "eggs"},
		{"eggs helm", nil, ""}, // every word must occur in one message
		{"nothing-like-this", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits, err := s.Search(t.Context(), tt.query, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Title)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("hits %q, want %q", got, tt.want)
			}
			if len(hits) == 0 {
				return
			}
			h := hits[0]
			if !strings.Contains(h.Snippet, MarkStart+tt.wantMark+MarkEnd) &&
				!strings.Contains(strings.ToLower(h.Snippet), strings.ToLower(MarkStart+tt.wantMark+MarkEnd)) {
				t.Errorf("snippet %q does not highlight %q", h.Snippet, tt.wantMark)
			}
			if h.SessionID != ids[h.Title] || h.UpdatedAt == 0 || h.Rank >= 0 {
				t.Errorf("hit = %+v", h)
			}
			for _, h := range hits {
				if strings.Count(h.Snippet, MarkStart) != strings.Count(h.Snippet, MarkEnd) {
					t.Errorf("unbalanced markers in %q", h.Snippet)
				}
			}
		})
	}
	// The hit points at the matching message.
	hits, _ := s.Search(t.Context(), "rollback", 10)
	ms := mustMessages(t, s, ids["Deploying the cluster"])
	if len(hits) != 1 || hits[0].MessageID != ms[hits[0].Position].ID || !strings.Contains(ms[hits[0].Position].Content, "rollback") {
		t.Errorf("rollback hit = %+v", hits)
	}
}

func TestSearchTitlesComeFirst(t *testing.T) {
	s, ids := searchFixture(t)
	hits, err := s.Search(t.Context(), "cluster", 10)
	if err != nil || len(hits) != 2 {
		t.Fatalf("hits = %+v, %v", hits, err)
	}
	first := hits[0]
	if first.SessionID != ids["Deploying the cluster"] || first.TitleHighlight != "Deploying the "+MarkStart+"cluster"+MarkEnd ||
		first.MessageID == 0 {
		t.Errorf("title hit = %+v", first)
	}
	if hits[1].TitleHighlight != "" || hits[1].MessageID == 0 {
		t.Errorf("message hit = %+v", hits[1])
	}
	// Only the title matches: the snippet is the highlighted title.
	hits, _ = s.Search(t.Context(), "shopping", 10)
	if len(hits) != 1 || hits[0].MessageID != 0 || hits[0].Position != -1 || hits[0].Snippet != MarkStart+"Shopping"+MarkEnd+" list" {
		t.Errorf("title-only hit = %+v", hits)
	}
}

func TestSearchFollowsWrites(t *testing.T) {
	s, ids := searchFixture(t)
	find := func(q string) string {
		t.Helper()
		hits, err := s.Search(t.Context(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Title)
		}
		return strings.Join(got, "|")
	}
	steps := []struct {
		name  string
		do    func() error
		query string
		want  string
	}{
		{"rename", func() error { _, err := s.RenameSession(t.Context(), ids["Shopping list"], "Groceries"); return err },
			"groceries", "Groceries"},
		{"old title gone", nil, "shopping", ""},
		{"archived are still found", func() error { _, err := s.SetArchived(t.Context(), ids["Shopping list"], true); return err },
			"flour", "Groceries"},
		{"spliced text is found", func() error {
			sess := mustGet(t, s, ids["Résumé wording"])
			_, err := s.SpliceMessages(t.Context(), sess.ID, sess.Revision, 1, []Message{{Role: "assistant", Content: "Quantify the zeppelin project."}})
			return err
		}, "zeppelin", "Résumé wording"},
		{"spliced-out text is gone", nil, "kubernetes", ""},
		{"deleted are gone", func() error { return s.DeleteSession(t.Context(), ids["Deploying the cluster"]) }, "helm", ""},
		{"settled turn text is found", func() error {
			id := ids["Résumé wording"]
			if _, err := s.AdmitTurn(t.Context(), id, "late", Message{Content: "what about xylophones"}); err != nil {
				return err
			}
			return s.SettleTurn(t.Context(), id, "late", []Message{{Role: "assistant", Content: "ok"}}, protocol.Usage{}, TerminalDone)
		}, "xylophones", "Résumé wording"},
	}
	for i, st := range steps {
		if st.do != nil {
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		if got := find(st.query); got != st.want {
			t.Errorf("%s: Search(%q) = %q, want %q", st.name, st.query, got, st.want)
		}
		if hits, _ := s.Search(t.Context(), "flour", 1); len(hits) != 1 || hits[0].Archived != (i >= 2) {
			t.Errorf("%s: flour hit %+v; archived should be %v", st.name, hits, i >= 2)
		}
	}
	checkFTS(t, s)
}

// Whatever the user types is a safe query: never an error, never FTS5 syntax.
func TestSearchAnyInputIsSafe(t *testing.T) {
	s, _ := searchFixture(t)
	inputs := []string{
		`"`, `""`, `"""`, `"helm`, `helm"`, `he"lm`, `*`, `helm*`, `*helm`, `-`, `-helm`, `helm -cluster`,
		`NEAR`, `NEAR(helm cluster)`, `NEAR(helm cluster, 2)`, `helm NEAR cluster`, `AND`, `OR`, `NOT`,
		`helm AND`, `OR helm`, `helm NOT cluster`, `(`, `)`, `((helm)`, `helm)`, `{content}: helm`,
		`content:helm`, `- content : helm`, `^helm`, `helm^`, `+`, `:`, `'`, `''`, `\`, `\"`, `%`, `_`,
		`;DROP TABLE messages;--`, "\x00", "helm\x00cluster", "\u0002", "\u0003helm", "\t\n\r", "😀",
		"helm 😀", strings.Repeat("(", 1000), strings.Repeat(`"a" `, 500), strings.Repeat("x", 10_000),
		`col:"x"`, `{a b}:c`, `a + b`, `"a" + "b"`, "NEAR/3", `helm*cluster`, `**`, `h"e"l"m`,
	}
	for _, in := range inputs {
		hits, err := s.Search(t.Context(), in, 5)
		if err != nil {
			t.Errorf("Search(%.40q) = %v", in, err)
		}
		if hits == nil {
			t.Errorf("Search(%.40q) returned nil", in)
		}
	}
	// Operators are words like any other: "helm NOT cluster" needs all three words.
	if hits, _ := s.Search(t.Context(), "helm NOT cluster", 5); len(hits) != 0 {
		t.Errorf("NOT acted as an operator: %+v", hits)
	}
	if hits, _ := s.Search(t.Context(), "helm OR eggs", 5); len(hits) != 0 {
		t.Errorf("OR acted as an operator: %+v", hits)
	}
	if hits, _ := s.Search(t.Context(), "-helm", 5); len(hits) != 1 {
		t.Errorf("-helm = %+v, want the helm session", hits)
	}
}

func TestSearchLimitsAndOneHitPerSession(t *testing.T) {
	s := openTest(t)
	for i := range 30 {
		sess := mustSession(t, s, fmt.Sprint("s", i))
		for j := range 3 {
			turn(t, s, sess.ID, fmt.Sprintf("st%d-%d", i, j), "banana bread", fmt.Sprintf("banana %d", j))
		}
	}
	tests := []struct{ limit, want int }{{0, DefaultSearchLimit}, {5, 5}, {1000, 30}}
	for _, tt := range tests {
		hits, err := s.Search(t.Context(), "banana", tt.limit)
		if err != nil || len(hits) != tt.want {
			t.Errorf("limit %d: %d hits, %v; want %d", tt.limit, len(hits), err, tt.want)
		}
		seen := map[string]bool{}
		for _, h := range hits {
			if seen[h.SessionID] {
				t.Errorf("session %s twice", h.SessionID)
			}
			seen[h.SessionID] = true
		}
	}
}

// A word in thousands of messages: the newest rankWindow matches are ranked, and every
// hit still gets its highlighted snippet.
func TestSearchManyMatches(t *testing.T) {
	s := openTest(t)
	var newest string
	for i := range 30 {
		sess := mustSession(t, s, fmt.Sprint("s", i))
		rows := make([]Message, 100)
		for j := range rows {
			rows[j] = Message{Role: "user", Content: fmt.Sprintf("banana number %d of session %d", j, i)}
		}
		if _, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, rows); err != nil {
			t.Fatal(err)
		}
		newest = sess.ID
	}
	for _, q := range []string{"banana", "banana ", "bana", "banana number"} {
		hits, err := s.Search(t.Context(), q, 20)
		if err != nil || len(hits) != 20 {
			t.Fatalf("Search(%q) = %d hits, %v", q, len(hits), err)
		}
		found := false
		for _, h := range hits {
			if !strings.Contains(h.Snippet, MarkStart+"banana"+MarkEnd) || h.MessageID == 0 {
				t.Errorf("Search(%q): hit %+v", q, h)
			}
			found = found || h.SessionID == newest
		}
		if !found {
			t.Errorf("Search(%q) misses the newest session", q)
		}
	}
}

// A last word typed as a prefix is spelled out as the words of the index it begins
// (messagesMatch): the messages it finds are exactly those FTS5's own prefix query
// finds, with words before it, folded capitals and accents, deleted text and a prefix
// with more than maxCompletions words (left to FTS5).
func TestSearchPrefixCompletions(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "words")
	var rows []Message
	for _, c := range []string{
		"kube", "apply kubectl now", "Kubernetes cluster", "the KUBELET restarted", "Kübler-Ross model",
		"kub", "cube", "apply cube", "kubernetes apply", "subkube", "k8s kube2 kube_proxy",
	} {
		rows = append(rows, Message{Role: "user", Content: c})
	}
	for i := range maxCompletions + 20 { // zzq0000 … zzq2068: more words than maxCompletions
		rows = append(rows, Message{Role: "assistant", Content: fmt.Sprintf("zzq%04d and zzq%04d", i, i+1)})
	}
	rows = append(rows, Message{Role: "user", Content: "gone kubeflow"})
	if _, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, rows); err != nil {
		t.Fatal(err)
	}
	// Deleted text leaves the index: "kubeflow" must not be a completion that matches.
	sess = mustGet(t, s, sess.ID)
	if _, err := s.SpliceMessages(t.Context(), sess.ID, sess.Revision, len(rows)-1, []Message{{Role: "user", Content: "gone"}}); err != nil {
		t.Fatal(err)
	}

	found := func(tx *sql.Tx, match string) []int64 {
		t.Helper()
		var out []int64
		if match == "" {
			return out
		}
		rows, err := tx.QueryContext(t.Context(), `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid`, match)
		if err != nil {
			t.Fatalf("MATCH %s: %v", match, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	tests := []struct {
		query     string
		spelled   bool // spelled out as completions, not FTS5's prefix query
		wantFound int
	}{
		{"kub", true, 8},  // kube, kubectl, Kubernetes, KUBELET, Kübler, kub, kubernetes, kube2 kube_proxy
		{"KUBE", true, 6}, // capitals fold
		{"apply kub", true, 2},
		{"kubef", true, 0},                  // only deleted text had it
		{"zzq01", true, 101},                // zzq0100 … zzq0199, and zzq0099's neighbour zzq0100
		{"zzq", false, maxCompletions + 20}, // more words than maxCompletions
		{"küb", false, 8},                   // not ASCII: FTS5's prefix query (ü folds to u)
		{"ku", false, 0},                    // two letters: the whole word "ku" only
		{"k8", false, 0},                    // "k8s" is no match for the two-character "k8"
		{"kube ", false, 2},                 // a finished word is no prefix
		{`"apply kub`, false, 1},            // a phrase: FTS5's prefix query
		{"nothingstartslikethis", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			err := s.read(t.Context(), "test", func(tx *sql.Tx) error {
				q := parseQuery(tt.query)
				m, err := messagesMatch(t.Context(), tx, q)
				if err != nil {
					return err
				}
				if spelled := m != q.match(); spelled != tt.spelled {
					t.Errorf("messagesMatch = %s; spelled out %v, want %v", m, spelled, tt.spelled)
				}
				got, want := found(tx, m), found(tx, q.match())
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s finds %v; %s finds %v", m, got, q.match(), want)
				}
				if len(want) != tt.wantFound {
					t.Errorf("%s finds %d messages, want %d", q.match(), len(want), tt.wantFound)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// Through Search: the hit's snippet highlights the completion that matched.
	hits, err := s.Search(t.Context(), "kubel", 10)
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Snippet, MarkStart+"KUBELET"+MarkEnd) {
		t.Errorf("Search(kubel) = %+v, %v", hits, err)
	}
}

// A word found in CommonMessages messages or more is common (see Search): it must
// still occur but does not count toward the order, and a query of common words only
// lists the sessions by their newest matching message. Here 20 messages make a word
// common.
func TestSearchCommonWords(t *testing.T) {
	s := openTest(t)
	s.opts.commonMessages = 20
	add := func(title, parent string, contents ...string) Session {
		t.Helper()
		sess, err := s.CreateSession(t.Context(), NewSession{Title: title, Model: "m", Workspace: "/w", Hidden: parent != "", ParentID: parent})
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]Message, len(contents))
		for i, c := range contents {
			rows[i] = Message{Role: "user", Content: c}
		}
		if _, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, rows); err != nil {
			t.Fatal(err)
		}
		return sess
	}
	filler := make([]string, 400) // so that a word in a few messages weighs a lot
	for i := range filler {
		filler[i] = fmt.Sprintf("filler text number %d here", i)
	}
	add("filler", "", filler...)
	// "the" is in 25 messages: common. bm25 would put "old" first for it (four times in
	// four words) and "y" first for "the zebra" (one zebra, four times the common word).
	old := add("old", "", "the the the the")
	add("x", "", "zebra the alpha beta")
	add("y", "", "zebra the the the the")
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("message %d where the word appears once among other words", i)
	}
	mid := add("mid", "", many...)
	add("newest", "", "one more message mentioning the word once, long enough to rank low")
	add("hidden", old.ID, "the hidden copy is newer still")

	search := func(query string, limit int) ([]string, []SearchHit) {
		t.Helper()
		hits, err := s.Search(t.Context(), query, limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Title)
		}
		return got, hits
	}
	// Common words only: newest match first, not ranked, the hit at that match; the
	// hidden session is not found.
	midRows := mustMessages(t, s, mid.ID)
	for _, q := range []string{"the ", "the", "THE the", `"the word"`} {
		got, hits := search(q, 10)
		want := "newest mid y x old"
		if q == `"the word"` {
			want = "newest mid"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("Search(%q) = %q, want newest match first: %s", q, got, want)
		}
		for _, h := range hits {
			if h.Rank != 0 || !strings.Contains(h.Snippet, MarkStart+"the") {
				t.Errorf("Search(%q): hit %+v, want rank 0 and the word highlighted", q, h)
			}
		}
		if len(hits) > 1 && hits[1].MessageID != midRows[len(midRows)-1].ID {
			t.Errorf("Search(%q): mid's hit is message %d, want its newest match %d", q, hits[1].MessageID, midRows[len(midRows)-1].ID)
		}
	}
	if got, _ := search("the ", 2); strings.Join(got, " ") != "newest mid" {
		t.Errorf("Search(the, 2) = %q, want newest mid", got)
	}
	// A rare word beside it: ranked by the rare word alone (x is the shorter message).
	for _, q := range []string{"the zebra ", "zebra the", "zebra "} {
		got, hits := search(q, 10)
		if strings.Join(got, " ") != "x y" || hits[0].Rank >= 0 || hits[1].Rank >= 0 {
			t.Errorf("Search(%q) = %q (%+v), want x y, ranked", q, got, hits)
		}
	}
	// The plans: which parts rank ("all": every part, the plan's match).
	for _, tt := range []struct{ query, rank string }{
		{"the ", ""},
		{"the", ""}, // the prefix: "the" is the one word of the index it begins
		{"zebr", "all"},
		{"the zebra ", `"zebra"`},
		{"the zeb", `("zebra")`},
		{`"the zebra" `, "all"}, // a phrase: its words are together in 2 messages
		{`"the word" `, ""},     // together in 21
		{"alpha the message ", `"alpha"`},
		{"wor", ""}, // word and words: 21 messages, times 2 words
		{"alp", "all"},
	} {
		err := s.read(t.Context(), "test", func(tx *sql.Tx) error {
			p, err := planMessages(t.Context(), tx, parseQuery(tt.query), 20)
			if err != nil {
				return err
			}
			want := tt.rank
			if want == "all" {
				want = p.match
			}
			if p.rank != want {
				t.Errorf("plan(%q) = %+v, want rank %q", tt.query, p, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Two letters match whole words only.
	if got, _ := search("ze", 10); len(got) != 0 {
		t.Errorf("Search(ze) = %q, want none (no word is ze)", got)
	}
	if got, _ := search("zeb", 10); strings.Join(got, " ") != "x y" {
		t.Errorf("Search(zeb) = %q, want x y", got)
	}
}

// Sessions are read for the best matches first, a batch at a time (placeMatches), and
// the reading goes on until each title hit's session has its best message too, however
// far down the ranking it is.
func TestSearchTitleHitKeepsItsMessage(t *testing.T) {
	s := openTest(t)
	titled := mustSession(t, s, "banana split")
	if _, err := s.AppendMessages(t.Context(), titled.ID, titled.Revision, []Message{
		{Role: "user", Content: "a long message that mentions banana once among many many other words here"}}); err != nil {
		t.Fatal(err)
	}
	for i := range placeMatchesBatch + 50 { // each ranks above the titled session's message
		sess := mustSession(t, s, fmt.Sprint("s", i))
		if _, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, []Message{{Role: "user", Content: "banana banana"}}); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := s.Search(t.Context(), "banana ", 5)
	if err != nil || len(hits) != 5 {
		t.Fatalf("Search = %d hits, %v", len(hits), err)
	}
	ms := mustMessages(t, s, titled.ID)
	if h := hits[0]; h.SessionID != titled.ID || h.MessageID != ms[0].ID || !strings.Contains(h.Snippet, MarkStart+"banana"+MarkEnd) {
		t.Errorf("title hit = %+v, want its message %d", h, ms[0].ID)
	}
	for _, h := range hits[1:] {
		if h.MessageID == 0 || h.Snippet != MarkStart+"banana"+MarkEnd+" "+MarkStart+"banana"+MarkEnd {
			t.Errorf("hit = %+v", h)
		}
	}
}

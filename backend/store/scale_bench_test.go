package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/sidecar/protocol"
)

// The scale benchmarks run on a generated database of scaleSessions sessions and
// scaleMessages messages, built once per test process with plain SQL in big
// transactions (through the store's own schema, so the search index is filled by its
// triggers) in a temporary folder that TestMain removes. TALARIA_BENCH_DIR keeps it in
// a folder of your choice across runs instead (bench/store.sh does).
const (
	scaleSessions = 10_000
	scaleMessages = 1_000_000
	bigRows       = 10_000 // the session appended to in "append to a 10,000-row session"
	openRows      = 5_000  // the session opened in "open a 5,000-message session"
	smallRows     = 10     // the session appended to in "append to a 10-row session"
	scaleGenTag   = "scale-v1"
	samples       = 50 // timed repetitions for the percentiles
)

var (
	scaleOnce sync.Once
	scalePath string
	scaleErr  error
	scaleTemp string // removed by TestMain
	scaleGen  time.Duration
	scaleRate float64 // rows per second while generating

	resultsMu sync.Mutex
	results   []benchRow
)

// benchRow is one line of the table BenchmarkStoreAtScale prints.
type benchRow struct{ name, value, note string }

func report(name, value, note string) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	results = append(results, benchRow{name, value, note})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if scaleTemp != "" {
		os.RemoveAll(scaleTemp)
	}
	os.Exit(code)
}

// ids of the named sessions of the generated database.
const (
	bigID   = "00000000-0000-7000-8000-000000000000"
	openID  = "00000000-0000-7000-8000-000000000001"
	smallID = "00000000-0000-7000-8000-000000000002"
)

func sessionID(i int) string { return fmt.Sprintf("00000000-0000-7000-8000-%012d", i) }

// words is a vocabulary of made-up words; message text draws from it with a Zipf law,
// so a few words are in most sessions and most words in few, as in real text.
func words(rng *rand.Rand, n int) []string {
	syl := strings.Fields("ka lo mi nu pe ra si to vu xe ba de fi go hu ja ke li mo ne pi qu re sa te un vo wi ya ze")
	out := make([]string, 0, n)
	seen := map[string]bool{}
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syl[rng.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func scaleDB(b *testing.B) string {
	b.Helper()
	scaleOnce.Do(func() {
		dir := os.Getenv("TALARIA_BENCH_DIR")
		if dir == "" {
			scaleTemp, scaleErr = os.MkdirTemp("", "talaria-bench-")
			if scaleErr != nil {
				return
			}
			dir = scaleTemp
		}
		scalePath = filepath.Join(dir, "scale.db")
		if tagged(scalePath) {
			return
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(scalePath + suffix)
		}
		start := time.Now()
		scaleErr = generate(context.Background(), scalePath)
		scaleGen = time.Since(start)
		scaleRate = float64(scaleMessages) / scaleGen.Seconds()
	})
	if scaleErr != nil {
		b.Fatal(scaleErr)
	}
	return scalePath
}

// tagged reports whether path is a complete generated database.
func tagged(path string) bool {
	db, err := sql.Open(driverName, fileURI(path, "mode=ro"))
	if err != nil {
		return false
	}
	defer db.Close()
	var tag string
	_ = db.QueryRow(`SELECT value FROM meta WHERE key = 'bench_generator'`).Scan(&tag)
	return tag == scaleGenTag
}

// generate writes the benchmark database: the store's schema (with its search
// triggers), then sessions and messages with prepared INSERTs in transactions of 50,000
// rows.
func generate(ctx context.Context, path string) error {
	s, err := OpenWith(ctx, path, Options{AppVersion: "bench"})
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	db, err := sql.Open(driverName, fileURI(path, "_journal_mode=WAL&_synchronous=OFF&_foreign_keys=1"))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `PRAGMA cache_size = -131072`); err != nil { // 128 MiB
		return err
	}
	rng := rand.New(rand.NewPCG(7, 7))
	vocab := words(rng, 20_000)
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1))
	text := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocab[zipf.Uint64()])
		}
		return b.String()
	}

	// Row counts: the three named sessions, the rest shared out evenly.
	counts := make([]int, scaleSessions)
	counts[0], counts[1], counts[2] = bigRows, openRows, smallRows
	rest := scaleMessages - bigRows - openRows - smallRows
	for i := 3; i < scaleSessions; i++ {
		counts[i] = rest / (scaleSessions - 3)
		if i-3 < rest%(scaleSessions-3) {
			counts[i]++
		}
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	sessStmt, err := tx.PrepareContext(ctx, `INSERT INTO sessions(id, title, model, workspace, created_at, updated_at,
		revision, message_count, input_tokens, output_tokens, pinned, archived_at) VALUES(?, ?, 'bench-model', '/home/u', ?, ?, 1, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	order := rng.Perm(scaleSessions) // activity order, so list order is not id order
	for i := range scaleSessions {
		var archived any
		if i%100 == 99 {
			archived = base
		}
		created := base + int64(i)*60_000
		updated := base + int64(scaleSessions+order[i])*60_000
		if _, err := sessStmt.ExecContext(ctx, sessionID(i), text(2+rng.IntN(5)), created, updated, counts[i],
			counts[i]*400, counts[i]*60, i%1000 == 5, archived); err != nil {
			return err
		}
	}
	sessStmt.Close()
	if err := tx.Commit(); err != nil {
		return err
	}

	const batch = 50_000
	var msgStmt *sql.Stmt
	pending := 0
	begin := func() error {
		var err error
		if tx, err = db.BeginTx(ctx, nil); err != nil {
			return err
		}
		msgStmt, err = tx.PrepareContext(ctx, `INSERT INTO messages(session_id, position, role, content, stream_id,
			created_at) VALUES(?, ?, ?, ?, ?, ?)`)
		return err
	}
	if err := begin(); err != nil {
		return err
	}
	// Sessions are written interleaved in rounds, as real use spreads them over time.
	next := make([]int, scaleSessions)
	for written := 0; written < scaleMessages; {
		for i := range scaleSessions {
			for k := 0; k < 10 && next[i] < counts[i]; k++ {
				p := next[i]
				role, n := "user", 5+rng.IntN(20)
				if p%2 == 1 {
					role, n = "assistant", 15+rng.IntN(60)
				}
				if _, err := msgStmt.ExecContext(ctx, sessionID(i), p, role, text(n), fmt.Sprintf("st-%d-%d", i, p/2),
					base+int64(written)); err != nil {
					return err
				}
				next[i]++
				written++
				if pending++; pending == batch {
					msgStmt.Close()
					if err := tx.Commit(); err != nil {
						return err
					}
					if err := begin(); err != nil {
						return err
					}
					pending = 0
				}
			}
		}
	}
	msgStmt.Close()
	if err := tx.Commit(); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO messages_fts(messages_fts) VALUES('optimize');
		PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;
		INSERT INTO meta(key, value) VALUES('bench_generator', '`+scaleGenTag+`')`); err != nil {
		return err
	}
	return db.Close()
}

// timeIt runs fn n times and returns the sorted durations.
func timeIt(b *testing.B, n int, fn func(i int)) []time.Duration {
	b.Helper()
	out := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		fn(i)
		out[i] = time.Since(start)
	}
	slices.Sort(out)
	return out
}

func pct(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1)+0.5)] }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func pcts(d []time.Duration) string { return "p50 " + ms(pct(d, 0.5)) + ", p95 " + ms(pct(d, 0.95)) }

func metric(b *testing.B, d []time.Duration) {
	b.ReportMetric(float64(pct(d, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(d, 0.95).Microseconds())/1000, "p95-ms")
}

// BenchmarkStoreAtScale measures the store on 10,000 sessions and 1,000,000 messages
// and prints a table of the figures. Run it with -benchtime 1x (each sub-benchmark
// takes its own samples).
func BenchmarkStoreAtScale(b *testing.B) {
	path := scaleDB(b)
	ctx := context.Background()
	if scaleGen > 0 {
		report("generate (plain SQL, FTS triggers on)", fmt.Sprintf("%.1f s", scaleGen.Seconds()),
			fmt.Sprintf("%d sessions, %d messages: %.0f rows/s", scaleSessions, scaleMessages, scaleRate))
	}
	if st, err := os.Stat(path); err == nil {
		report("database size", fmt.Sprintf("%.0f MiB", float64(st.Size())/(1<<20)), "file after checkpoint, search index included")
	}

	b.Run("StartupCheck", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			rep, err := CheckAndRecover(ctx, path)
			if err != nil || rep.Recovered {
				b.Fatalf("check = %+v, %v", rep, err)
			}
			d := time.Since(start)
			b.ReportMetric(float64(d.Milliseconds()), "ms")
			report("start-up check (quick_check)", ms(d), "whole file, before Open")
		}
	})

	s, err := OpenWith(ctx, path, Options{AppVersion: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	b.Run("SidebarFirstPage", func(b *testing.B) {
		for b.Loop() {
			d := timeIt(b, samples, func(int) {
				if l, err := s.ListSessions(ctx, 50, 0); err != nil || len(l) != 50 {
					b.Fatalf("list: %d, %v", len(l), err)
				}
			})
			metric(b, d)
			report("sidebar: first page (50 sessions)", pcts(d), fmt.Sprintf("%d runs", samples))
		}
	})

	b.Run("OpenSession5000", func(b *testing.B) {
		for b.Loop() {
			d := timeIt(b, 20, func(int) {
				if _, err := s.GetSession(ctx, openID); err != nil {
					b.Fatal(err)
				}
				if ms, err := s.Messages(ctx, openID); err != nil || len(ms) != openRows {
					b.Fatalf("messages: %d, %v", len(ms), err)
				}
			})
			metric(b, d)
			report("open a 5,000-message session", pcts(d), "GetSession + Messages, 20 runs")
		}
	})

	b.Run("Search", func(b *testing.B) {
		queries := searchQueries(b, s)
		for b.Loop() {
			hits := 0
			d := timeIt(b, len(queries), func(i int) {
				h, err := s.Search(ctx, queries[i], DefaultSearchLimit)
				if err != nil {
					b.Fatal(err)
				}
				hits += len(h)
			})
			metric(b, d)
			report("search across sessions", pcts(d),
				fmt.Sprintf("%d queries (words, pairs, prefixes), %.1f hits each", len(queries), float64(hits)/float64(len(queries))))
		}
	})

	b.Run("SearchWhileStreaming", func(b *testing.B) {
		queries := streamingQueries()
		for b.Loop() {
			base := ftsBaseline(b, path, queries)
			search := func() []time.Duration {
				return timeIt(b, len(queries), func(i int) {
					if _, err := s.Search(ctx, queries[i], 30); err != nil { // 30: what the window asks
						b.Fatal(err)
					}
				})
			}
			alone := search()
			w := startStreaming(b, s, smallID)
			streaming := search()
			frames, turns, dur := w.stop(b)
			ratio := float64(pct(streaming, 0.95)) / float64(pct(base, 0.95))
			b.ReportMetric(float64(pct(alone, 0.95).Microseconds())/1000, "alone-p95-ms")
			b.ReportMetric(float64(pct(streaming, 0.95).Microseconds())/1000, "streaming-p95-ms")
			b.ReportMetric(ratio, "streaming/fts")
			load := loadAverage()
			report("search, plain FTS5 (newest 20 matches)", pcts(base), fmt.Sprintf("%d queries, the baseline; load %s", len(queries), load))
			report("search p95 at 1M, alone", pcts(alone), fmt.Sprintf("same queries through Search; load %s", load))
			report("search p95 at 1M while streaming", pcts(streaming),
				fmt.Sprintf("p95 ratio to plain FTS5: %.2f; %d frames and %d turns settled in %.1f s; load %s",
					ratio, frames, turns, dur.Seconds(), loadAverage()))
		}
	})

	b.Run("AppendTurn", func(b *testing.B) {
		for b.Loop() {
			user := Message{Role: "user", Content: "please add a benchmark for the append path"}
			answer := []Message{{Role: "assistant", Content: strings.Repeat("here is the change you asked for ", 8)}}
			turnAt := func(id string) []time.Duration {
				return timeIt(b, samples, func(i int) {
					stream := fmt.Sprintf("bench-%s-%d-%d", id, time.Now().UnixNano(), i)
					if _, err := s.AdmitTurn(ctx, id, stream, user); err != nil {
						b.Fatal(err)
					}
					if err := s.SettleTurn(ctx, id, stream, answer, protocol.Usage{InputTokens: 10}, TerminalDone); err != nil {
						b.Fatal(err)
					}
				})
			}
			small, big := turnAt(smallID), turnAt(bigID)
			ratio := float64(pct(big, 0.5)) / float64(pct(small, 0.5))
			b.ReportMetric(ratio, "big/small")
			report("append a turn to a 10-row session", pcts(small), "AdmitTurn + SettleTurn (2 transactions, 2 rows)")
			report("append a turn to a 10,000-row session", pcts(big), fmt.Sprintf("ratio to the 10-row session: %.2f", ratio))

			// The same two rows through AppendMessages (one transaction) and through plain
			// SQL: a prepared INSERT in one transaction on the same table (its search
			// triggers fire too), on a connection of its own.
			rows := []Message{user, answer[0]}
			app := timeIt(b, samples, func(int) {
				sess, err := s.GetSession(ctx, bigID)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.AppendMessages(ctx, bigID, sess.Revision, rows); err != nil {
					b.Fatal(err)
				}
			})
			raw := rawInsert(b, path, bigID, rows, samples)
			ratio = float64(pct(app, 0.5)) / float64(pct(raw, 0.5))
			report("AppendMessages, same 2 rows (10,000-row session)", pcts(app), "GetSession + one revision-checked transaction")
			report("plain SQL INSERT, same 2 rows", pcts(raw), fmt.Sprintf("store overhead: %.2fx", ratio))
			b.ReportMetric(ratio, "store/raw")
		}
	})

	b.Run("BulkRows", func(b *testing.B) {
		for b.Loop() {
			// 5,000 rows in one transaction, through the store and through plain SQL, in
			// turns (three each, the best kept), so index merges and caches favour neither.
			const n = 5_000
			rows := make([]Message, n)
			for i := range rows {
				rows[i] = Message{Role: []string{"user", "assistant"}[i%2], Content: fmt.Sprintf("bulk row %d of the rate test", i)}
			}
			var bestStore, bestRaw time.Duration
			for range 3 {
				sess, err := s.CreateSession(ctx, NewSession{Title: "bulk"})
				if err != nil {
					b.Fatal(err)
				}
				raw := rawInsert(b, path, sess.ID, rows, 1)[0]
				sess, err = s.GetSession(ctx, sess.ID)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if _, err := s.AppendMessages(ctx, sess.ID, sess.Revision, rows); err != nil {
					b.Fatal(err)
				}
				st := time.Since(start)
				if bestStore == 0 || st < bestStore {
					bestStore = st
				}
				if bestRaw == 0 || raw < bestRaw {
					bestRaw = raw
				}
			}
			storeRate, rawRate := n/bestStore.Seconds(), n/bestRaw.Seconds()
			b.ReportMetric(storeRate, "store-rows/s")
			b.ReportMetric(rawRate, "raw-rows/s")
			report("insert rate, 5,000 rows in one transaction", fmt.Sprintf("%.0f rows/s", storeRate),
				fmt.Sprintf("AppendMessages; plain SQL %.0f rows/s: store overhead %.2fx (best of 3 each)", rawRate, rawRate/storeRate))
		}
	})

	b.Run("ForkAndExport", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			if _, err := s.ForkSession(ctx, ForkRequest{SessionID: openID, Through: -1}); err != nil {
				b.Fatal(err)
			}
			fork := time.Since(start)
			start = time.Now()
			doc, err := s.ExportSession(ctx, openID, "bench")
			if err != nil {
				b.Fatal(err)
			}
			_ = doc.Markdown(nil)
			export := time.Since(start)
			report("duplicate a 5,000-message session", ms(fork), "one INSERT … SELECT, search index included")
			report("export a 5,000-message session", ms(export), "read + Markdown")
		}
	})

	resultsMu.Lock()
	defer resultsMu.Unlock()
	if len(results) == 0 {
		return
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nTalaria store at scale: %d sessions, %d messages (%s)\n", scaleSessions, scaleMessages, path)
	w := 0
	for _, r := range results {
		w = max(w, len(r.name))
	}
	for _, r := range results {
		fmt.Fprintf(&out, "  %-*s  %-24s %s\n", w, r.name, r.value, r.note)
	}
	fmt.Print(out.String())
	results = nil
}

// searchQueries picks 50 queries that match across sessions: frequent, middling and
// rare words, two-word queries and prefixes as typed.
func searchQueries(b testing.TB, s *Store) []string {
	b.Helper()
	rng := rand.New(rand.NewPCG(3, 3))
	vocab := words(rand.New(rand.NewPCG(7, 7)), 20_000)
	var out []string
	for len(out) < samples {
		switch len(out) % 5 {
		case 0:
			out = append(out, vocab[2+rng.IntN(20)]) // frequent
		case 1:
			out = append(out, vocab[50+rng.IntN(500)]) // middling
		case 2:
			out = append(out, vocab[1000+rng.IntN(10_000)]+" ") // rare, a finished word
		case 3:
			out = append(out, vocab[20+rng.IntN(200)]+" "+vocab[20+rng.IntN(200)]) // two words
		case 4:
			w := vocab[10+rng.IntN(300)]
			out = append(out, w[:min(len(w), 3+rng.IntN(2))]) // a prefix while typing
		}
	}
	return out
}

// streamingQueries is what a user types into the search box: frequent, middling and
// rare words, words as typed (prefixes of two to four letters, a whole word not yet
// followed by a space), two and three words, and quoted phrases; 100 of them.
func streamingQueries() []string {
	rng := rand.New(rand.NewPCG(5, 5))
	vocab := words(rand.New(rand.NewPCG(7, 7)), 20_000)
	pick := func(lo, n int) string { return vocab[lo+rng.IntN(n)] }
	var out []string
	for len(out) < 2*samples {
		switch len(out) % 10 {
		case 0:
			out = append(out, pick(2, 20)+" ") // frequent, a finished word
		case 1:
			out = append(out, pick(2, 20)) // frequent, still typing
		case 2:
			out = append(out, pick(50, 500)) // middling
		case 3:
			out = append(out, pick(1000, 10_000)+" ") // rare
		case 4:
			w := pick(10, 300)
			out = append(out, w[:min(len(w), 2+rng.IntN(3))]) // a prefix of 2 to 4 letters
		case 5:
			out = append(out, pick(20, 200)+" "+pick(20, 200)) // two words
		case 6:
			out = append(out, pick(20, 200)+" "+pick(20, 500)+" "+pick(2, 50)) // three words
		case 7:
			out = append(out, `"`+pick(2, 10)+" "+pick(2, 10)+`"`) // a phrase of two frequent words
		case 8:
			out = append(out, pick(2, 20)+" "+pick(300, 3000)[:3]) // a word, then a prefix
		case 9:
			out = append(out, pick(500, 5000)) // uncommon, still typing
		}
	}
	return out
}

// ftsBaseline times the plain FTS5 query the search box's queries become (the newest 20
// matching messages, no ranking, no snippets) on a read-only connection of its own: the
// least any search must do, measured in the same run as the yardstick for Search.
func ftsBaseline(b *testing.B, path string, queries []string) []time.Duration {
	b.Helper()
	db, err := sql.Open(driverName, fileURI(path, "mode=ro"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	return timeIt(b, len(queries), func(i int) {
		rows, err := db.Query(`SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT 20`, ftsQuery(queries[i]))
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		rows.Close()
	})
}

// streamWriter writes what a streaming turn writes, through the store's own write
// path: a turn admitted, a journal frame of about a hundred bytes of text every
// streamFrameEvery (2.5 times as often as the runner sends text frames,
// turn.DefaultCoalesce), the turn settled with its answer after streamTurnFrames frames,
// the next one admitted.
type streamWriter struct {
	cancel context.CancelFunc
	done   chan struct{}
	start  time.Time
	frames int
	turns  int
	err    error
}

const (
	streamFrameEvery = 20 * time.Millisecond
	streamTurnFrames = 50
)

// startStreaming starts a streamWriter on session sessionID and returns once its first
// frame is written.
func startStreaming(b *testing.B, s *Store, sessionID string) *streamWriter {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &streamWriter{cancel: cancel, done: make(chan struct{}), start: time.Now()}
	first := make(chan struct{})
	go func() {
		defer close(w.done)
		bg := context.Background() // every turn admitted is settled, even on stop
		tick := time.NewTicker(streamFrameEvery)
		defer tick.Stop()
		text := strings.Repeat("streamed answer text ", 5)
		for turn := 0; ; turn++ {
			stream := fmt.Sprintf("bench-stream-%d-%d", time.Now().UnixNano(), turn)
			if _, err := s.AdmitTurn(bg, sessionID, stream, Message{Role: "user", Content: "a question while searching"}); err != nil {
				w.err = err
				return
			}
			for seq := int64(1); seq <= streamTurnFrames; seq++ {
				if err := s.AppendJournal(bg, JournalFrame{StreamID: stream, SessionID: sessionID, Seq: seq, Event: protocol.EvToken,
					Data: []byte(`{"text":"` + text + `"}`)}); err != nil {
					w.err = err
					return
				}
				if w.frames++; w.frames == 1 {
					close(first)
				}
				select {
				case <-ctx.Done():
					w.err = s.SettleTurn(bg, sessionID, stream, nil, protocol.Usage{}, TerminalCancel)
					return
				case <-tick.C:
				}
			}
			if err := s.SettleTurn(bg, sessionID, stream, []Message{{Role: "assistant", Content: strings.Repeat(text, streamTurnFrames)}},
				protocol.Usage{OutputTokens: 500}, TerminalDone); err != nil {
				w.err = err
				return
			}
			w.turns++
		}
	}()
	b.Cleanup(func() { // a benchmark that fails while the writer runs still settles its turn
		w.cancel()
		<-w.done
	})
	select {
	case <-first:
	case <-w.done:
		b.Fatalf("streaming writer: %v", w.err)
	}
	return w
}

// stop ends the writer (settling its turn) and returns the frames written, the turns
// settled and how long it ran; it fails the benchmark if a write failed.
func (w *streamWriter) stop(b *testing.B) (frames, turns int, d time.Duration) {
	b.Helper()
	w.cancel()
	<-w.done
	if w.err != nil {
		b.Fatalf("streaming writer: %v", w.err)
	}
	return w.frames, w.turns, time.Since(w.start)
}

// loadAverage is the machine's 1-minute load average (/proc/loadavg) and its core
// count, so a figure can be read beside how busy the machine was; "n/a" where there is
// no /proc.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%s on %d cores", f[0], runtime.NumCPU())
}

// rawInsert writes rows n times with a prepared INSERT in one transaction each on a
// connection of its own, and returns the sorted durations.
func rawInsert(b *testing.B, path, sessionID string, rows []Message, n int) []time.Duration {
	b.Helper()
	ctx := context.Background()
	db, err := sql.Open(driverName, fileURI(path, "_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_txlock=immediate"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var next int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE session_id = ?`, sessionID).Scan(&next); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMilli()
	// Warm this connection's page cache as the store's is warm: one row, rolled back.
	if _, err := db.ExecContext(ctx, `BEGIN IMMEDIATE; INSERT INTO messages(session_id, position, role, content,
		created_at) VALUES(?, ?, 'user', 'warm-up', ?); ROLLBACK`, sessionID, next, now); err != nil {
		b.Fatal(err)
	}
	defer func() { // keep the store's bookkeeping right (not timed)
		if _, err := db.ExecContext(ctx, `UPDATE sessions SET message_count = ? WHERE id = ?`, next, sessionID); err != nil {
			b.Fatal(err)
		}
	}()
	return timeIt(b, n, func(int) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages(session_id, position, role, content, created_at)
			VALUES(?, ?, ?, ?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range rows {
			if _, err := stmt.ExecContext(ctx, sessionID, next, m.Role, m.Content, now); err != nil {
				b.Fatal(err)
			}
			next++
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	})
}

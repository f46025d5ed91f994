//go:build linux

package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The test binary plays three parts: the test itself (the parent), the app process it
// kills (the child, CRASHTEST_CHILD names its data folder), and the child's sidecar
// (TALARIA_TEST_SIDECAR), which the child's supervisor starts as it would start
// `talaria sidecar`.
const (
	envChild   = "CRASHTEST_CHILD"
	envMode    = "CRASHTEST_MODE"  // "drain": start, settle, close cleanly
	envKills   = "CRASHTEST_KILLS" // kills in one run (default 50)
	envSeed    = "CRASHTEST_SEED"  // to replay a run
	envSidecar = "TALARIA_TEST_SIDECAR"

	defaultKills = 50
	workers      = 3 // sessions taking turns at once in the child
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(envSidecar) != "":
		os.Exit(sidecar.Main(nil, os.Stdin, os.Stdout, os.Stderr))
	case os.Getenv(envChild) != "":
		os.Exit(runChild(os.Getenv(envChild), os.Getenv(envMode)))
	default:
		os.Exit(m.Run())
	}
}

// ---- the child: the real backend, taking turns until it is killed ----

// out writes the child's report lines to stdout, one write per line, so a line is
// either wholly in the pipe or not at all when the child is killed:
//
//	ready                                  Start and settings done, turns begin
//	sidecar <pid>                          a sidecar process was started
//	admitted <stream> <session> <text>     StartTurn returned: the user row is saved
//	done <stream> <session>                the done frame was published
//	busy <session>                         StartTurn found a session still busy
type out struct{ mu sync.Mutex }

func (o *out) line(fields ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	os.Stdout.WriteString(strings.Join(fields, " ") + "\n")
}

// streamEnds lets a worker wait for a stream_end that may come before it asks.
type streamEnds struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (e *streamEnds) ch(stream string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m[stream] == nil {
		e.m[stream] = make(chan struct{})
	}
	return e.m[stream]
}

func (e *streamEnds) end(stream string) { close(e.ch(stream)) }

func runChild(dir, mode string) int {
	ctx := context.Background()
	o := &out{}
	p := providertest.Start() // answers every turn with providertest.EchoTurn of its text
	defer p.Close()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 3
	}
	svc, err := backend.Open(ctx, backend.Options{DataDir: dir, Version: "crashtest", SidecarCommand: exe,
		SidecarEnv: []string{envSidecar + "=real"}, Keyring: vault.NewMemoryKeyring(),
		Supervisor: func(c *supervisor.Config) { c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond }})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		return 3
	}
	ends := &streamEnds{m: map[string]chan struct{}{}}
	var pidMu sync.Mutex
	pids := map[int]bool{}
	svc.Bus.Subscribe(func(ev bus.Event) {
		switch p := ev.Payload.(type) {
		case turn.Frame:
			switch p.Event {
			case protocol.EvDone:
				o.line("done", p.StreamID, p.SessionID)
			case protocol.EvStreamEnd:
				ends.end(p.StreamID)
			}
		case supervisor.Status:
			pidMu.Lock()
			if p.PID != 0 && !pids[p.PID] {
				pids[p.PID] = true
				o.line("sidecar", strconv.Itoa(p.PID))
			}
			pidMu.Unlock()
		}
	})
	if err := svc.Start(ctx); err != nil { // settles the turns the last child left live
		fmt.Fprintln(os.Stderr, "child: start:", err)
		return 3
	}
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: p.BaseURL(),
		Model: "scripted-model"}); err != nil {
		fmt.Fprintln(os.Stderr, "child: settings:", err)
		return 3
	}
	o.line("ready")
	if mode == "drain" {
		cctx, cancel := context.WithTimeout(ctx, testwait.Timeout)
		defer cancel()
		if err := svc.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "child: close:", err)
			return 3
		}
		return 0
	}
	existing, _ := svc.Chats().ListSessions(ctx)
	for w := range workers {
		start := ""
		if w < len(existing) {
			start = existing[w].ID // keep going on the sessions of earlier children
		}
		go work(ctx, svc, o, ends, w, start)
	}
	select {} // until the parent's SIGKILL (or its death: Pdeathsig)
}

var vocabulary = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima " +
	"mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")

// work takes turns in one session after another, with other saves in between.
func work(ctx context.Context, svc *backend.Service, o *out, ends *streamEnds, w int, sess string) {
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(w)))
	for i := 0; ; i++ {
		if sess == "" || rng.IntN(5) == 0 {
			s, err := svc.Chats().NewSession(ctx)
			if err != nil {
				fmt.Fprintln(os.Stderr, "child: new session:", err)
				time.Sleep(50 * time.Millisecond)
				continue
			}
			sess = s.ID
		}
		words := make([]string, 3+rng.IntN(12))
		for j := range words {
			words[j] = vocabulary[rng.IntN(len(vocabulary))]
		}
		text := fmt.Sprintf("w%d-%d-%d %s", w, os.Getpid(), i, strings.Join(words, " "))
		st, err := svc.Turns().StartTurn(ctx, sess, text)
		if err != nil {
			var busy *store.BusyError
			if errors.As(err, &busy) {
				o.line("busy", sess)
			}
			fmt.Fprintln(os.Stderr, "child: start turn:", err)
			sess = ""
			continue
		}
		o.line("admitted", st.StreamID, sess, text)
		// Until the stream ends, however slow the machine: a worker that moved on
		// would find its session busy, which the parent counts as a failure.
		<-ends.ch(st.StreamID)
		switch rng.IntN(6) {
		case 0:
			_ = svc.Chats().SaveDraft(ctx, sess, "draft after "+text)
		case 1:
			_, _ = svc.Chats().PinSession(ctx, sess, rng.IntN(2) == 0)
		case 2:
			if f, err := svc.Chats().ForkSession(ctx, sess, 0, "fork-"+st.StreamID); err == nil && rng.IntN(2) == 0 {
				sess = f.ID
			}
		}
	}
}

// ---- the parent: start, kill, check, again ----

type admission struct{ session, text string }

// record is what the children reported, over the whole run.
type record struct {
	mu       sync.Mutex
	admitted map[string]admission // by stream id
	done     map[string]string    // stream id -> session id
	pids     []int                // sidecar processes of the current child
	busy     []string
	ready    chan struct{}
}

func (r *record) read(rd io.Reader) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		r.mu.Lock()
		switch {
		case f[0] == "ready":
			close(r.ready)
		case f[0] == "sidecar" && len(f) == 2:
			if pid, err := strconv.Atoi(f[1]); err == nil {
				r.pids = append(r.pids, pid)
			}
		case f[0] == "admitted" && len(f) == 4:
			r.admitted[f[1]] = admission{session: f[2], text: f[3]}
		case f[0] == "done" && len(f) == 3:
			r.done[f[1]] = f[2]
		case f[0] == "busy":
			r.busy = append(r.busy, sc.Text())
		}
		r.mu.Unlock()
	}
}

func envInt(name string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}

func TestCrashSafety(t *testing.T) {
	kills := int(envInt(envKills, defaultKills))
	seed := envInt(envSeed, time.Now().UnixNano())
	t.Logf("%d kills, %s=%d", kills, envSeed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec := &record{admitted: map[string]admission{}, done: map[string]string{}}
	began := time.Now()
	var beforeReady, killedLive int

	for k := range kills {
		rec.mu.Lock()
		rec.ready, rec.pids = make(chan struct{}), nil
		rec.mu.Unlock()
		cmd, stderr := startChild(t, exe, dir, "")
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		readDone := make(chan struct{})
		go func() { rec.read(stdout); close(readDone) }()

		// Kill at a random point: sometimes while the child starts (opening the store,
		// settling the last child's turns), mostly while turns stream and settle.
		if rng.IntN(100) < 15 {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			beforeReady++
		} else {
			if !waitClosed(rec.ready) {
				cmd.Process.Kill()
				t.Fatalf("kill %d: the child never got ready:\n%s", k, stderr)
			}
			time.Sleep(time.Duration(rng.IntN(900)) * time.Millisecond)
			killedLive++
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		<-readDone
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !ws.Signaled() {
			t.Fatalf("kill %d: the child exited by itself (%v):\n%s", k, cmd.ProcessState, stderr)
		}

		rec.mu.Lock()
		pids := append([]int(nil), rec.pids...)
		rec.mu.Unlock()
		checkNoSidecar(t, k, pids, dir)
		checkDatabase(t, k, dir, rec, false)
		if t.Failed() {
			t.Fatalf("after kill %d (seed %d); the child said:\n%s", k, seed, tail(stderr.String(), 3000))
		}
	}

	// One last start settles whatever the last kill left running, and closes cleanly.
	rec.ready = make(chan struct{})
	cmd, stderr := startChild(t, exe, dir, "drain")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rec.read(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the last child: %v\n%s", err, stderr)
	}
	checkDatabase(t, kills, dir, rec, true)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	t.Logf("%d kills (%d while starting, %d while working) in %s: %d turns admitted, %d done",
		kills, beforeReady, killedLive, time.Since(began).Round(time.Millisecond), len(rec.admitted), len(rec.done))
	if len(rec.busy) > 0 {
		t.Errorf("a session was still busy after a restart (its interrupted turn was not settled): %q", rec.busy)
	}
	// The run must have done real work, or it proves nothing.
	if min := kills / 5; len(rec.done) < min || len(rec.admitted) < min {
		t.Errorf("only %d turns admitted and %d done in %d kills", len(rec.admitted), len(rec.done), kills)
	}
}

// syncBuffer is a bytes.Buffer safe for the exec package's copier and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startChild(t *testing.T, exe, dir, mode string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+dir, envMode+"="+mode)
	// If this test dies, the child goes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	return cmd, stderr
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// checkNoSidecar waits until every sidecar the killed child started is gone (the
// parent-death signal, or EOF on its stdin).
func checkNoSidecar(t *testing.T, k int, pids []int, dir string) {
	t.Helper()
	for _, pid := range pids {
		if !testwait.Until(func() bool { return !alive(pid, dir) }) {
			t.Errorf("kill %d: sidecar %d outlived its killed app", k, pid)
		}
	}
}

// waitClosed waits for ch to be closed, at most testwait.Timeout (false then).
func waitClosed(ch <-chan struct{}) bool {
	timer := time.NewTimer(testwait.Timeout)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

// alive reports whether pid is a running (not zombie) process that is a sidecar of a
// child of this test (its environment names the test's data folder).
func alive(pid int, dir string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
		return false
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return true // it exists and we may not read it: assume the worst
	}
	return bytes.Contains(env, []byte(envChild+"="+dir+"\x00"))
}

// checkDatabase checks a copy of the database as the killed child left it (the
// database file and its write-ahead log, as after a power cut of the app), so the next
// child still starts from the crashed state. final: the last child settled and closed.
func checkDatabase(t *testing.T, k int, dir string, rec *record, final bool) {
	t.Helper()
	src := core.PathsFor(dir).DBPath
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
		return // killed before the store was created
	}
	scratch := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(scratch+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite3", "file:"+scratch+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("kill %d: integrity_check = %q, %v", k, ok, err)
		return
	}
	var version int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version == 0 {
		return // killed while the first child created the schema: nothing committed yet
	}
	if _, err := db.Exec(`INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 1)`); err != nil {
		t.Errorf("kill %d: search index out of step with the messages: %v", k, err)
	}
	var bad int
	if err := db.QueryRow(`SELECT count(*) FROM sessions s WHERE s.deleted_at IS NULL AND s.message_count <>
		(SELECT count(*) FROM messages m WHERE m.session_id = s.id) OR s.message_count <>
		(SELECT COALESCE(max(position) + 1, 0) FROM messages m WHERE m.session_id = s.id)`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("kill %d: %d sessions whose message count or positions are off (%v)", k, bad, err)
	}

	// Whatever the children reported: every stream the store calls done has the whole
	// answer (the rows and the terminal are one transaction).
	rows, err := db.Query(`SELECT s.stream_id, s.session_id, COALESCE(u.content, ''),
		COALESCE((SELECT group_concat(content, '') FROM messages a WHERE a.stream_id = s.stream_id
			AND a.session_id = s.session_id AND a.role = 'assistant' AND a.kind = ''), '')
		FROM streams s LEFT JOIN messages u ON u.stream_id = s.stream_id AND u.session_id = s.session_id AND u.role = 'user'
		WHERE s.terminal = 'done'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var stream, session, user, answer string
		if err := rows.Scan(&stream, &session, &user, &answer); err != nil {
			t.Fatal(err)
		}
		if user == "" || answer != echo(user) {
			t.Errorf("kill %d: stream %s is done but its rows are user %q, answer %q", k, stream, user, answer)
		}
	}
	rows.Close()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for stream, a := range rec.admitted {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM messages WHERE stream_id = ? AND session_id = ? AND role = 'user'
			AND content = ?`, stream, a.session, a.text).Scan(&n); err != nil || n != 1 {
			t.Errorf("kill %d: admitted user message of %s is missing (%d rows, %v): %q", k, stream, n, err, a.text)
		}
	}
	for stream, session := range rec.done {
		var user, answer, terminal string
		var ended sql.NullInt64
		err := db.QueryRow(`SELECT content FROM messages WHERE stream_id = ? AND session_id = ? AND role = 'user'`,
			stream, session).Scan(&user)
		if err != nil {
			t.Errorf("kill %d: done turn %s has no user row: %v", k, stream, err)
			continue
		}
		err = db.QueryRow(`SELECT group_concat(content, '') FROM messages WHERE stream_id = ? AND session_id = ?
			AND role = 'assistant' AND kind = ''`, stream, session).Scan(&answer)
		if want := echo(user); err != nil || answer != want {
			t.Errorf("kill %d: done turn %s answer = %q, %v; want %q", k, stream, answer, err, want)
		}
		err = db.QueryRow(`SELECT ended_at, terminal FROM streams WHERE stream_id = ?`, stream).Scan(&ended, &terminal)
		if err != nil || !ended.Valid || terminal != store.TerminalDone {
			t.Errorf("kill %d: done turn %s stream ended %v terminal %q (%v)", k, stream, ended.Valid, terminal, err)
		}
	}
	if !final {
		return
	}
	// After a clean start and close nothing is live, and every turn ever admitted
	// ended one way or another.
	var live, active int
	db.QueryRow(`SELECT count(*) FROM streams WHERE ended_at IS NULL`).Scan(&live)
	db.QueryRow(`SELECT count(*) FROM sessions WHERE active_stream_id IS NOT NULL`).Scan(&active)
	if live != 0 || active != 0 {
		t.Errorf("after the last start: %d live streams, %d busy sessions", live, active)
	}
	for stream := range rec.admitted {
		var terminal string
		if err := db.QueryRow(`SELECT terminal FROM streams WHERE stream_id = ? AND ended_at IS NOT NULL`, stream).Scan(&terminal); err != nil {
			t.Errorf("admitted turn %s never ended: %v", stream, err)
		} else if _, isDone := rec.done[stream]; !isDone && terminal == store.TerminalInterrupted {
			var marker int
			db.QueryRow(`SELECT count(*) FROM messages WHERE stream_id = ? AND kind = ?`, stream, store.KindInterrupted).Scan(&marker)
			if marker == 0 {
				t.Errorf("interrupted turn %s has no interrupted marker row", stream)
			}
		}
	}
}

// echo is the scripted provider's answer to text.
func echo(text string) string {
	var b strings.Builder
	for _, c := range providertest.EchoTurn(text).Chunks {
		b.WriteString(c.Text)
	}
	return b.String()
}

package backend_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The test binary doubles as the sidecar (backendtest.Main).
func TestMain(m *testing.M) { backendtest.Main(m) }

func TestTwoTurnConversationPersistsAndSendsHistory(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{
		Chunks: []providertest.Chunk{{Reasoning: "thinking "}, {Reasoning: "hard"}, {Text: "Hel"}, {Text: "lo "}, {Text: "wörld"}},
		Usage:  &providertest.Usage{PromptTokens: 12, CompletionTokens: 3},
	})
	h.Provider.EnqueueAux(providertest.TextTurn("\"A friendly greeting.\""))
	s1 := h.Start(sid, "hi there")
	f1 := h.WaitEnd(s1)
	h.CheckFrames(s1, f1, protocol.EvDone)
	if got := backendtest.TextOf(f1, protocol.EvToken); got != "Hello wörld" {
		t.Fatalf("streamed text %q", got)
	}
	if got := backendtest.TextOf(f1, protocol.EvReasoning); got != "thinking hard" {
		t.Fatalf("streamed reasoning %q", got)
	}
	done := backendtest.DataOf(t, f1, protocol.EvDone)
	if u := done["usage"].(map[string]any); u["output_tokens"].(float64) != 3 || u["input_tokens"].(float64) != 12 {
		t.Fatalf("done usage = %v", u)
	}

	h.Provider.Enqueue(providertest.TextTurn("Second ", "answer"))
	s2 := h.Start(sid, "and again")
	f2 := h.WaitEnd(s2)
	h.CheckFrames(s2, f2, protocol.EvDone)

	reqs := backendtest.StreamRequests(h.Provider.Requests())
	if len(reqs) != 2 {
		t.Fatalf("%d streaming provider requests", len(reqs))
	}
	var roles []string
	for _, m := range reqs[1].Messages {
		roles = append(roles, m.Role+":"+m.Content)
	}
	want := "user:hi there|assistant:Hello wörld|user:and again"
	if got := strings.Join(roles, "|"); !strings.HasSuffix(got, want) {
		t.Fatalf("turn 2 sent %q, want it to end with %q", got, want)
	}
	if !reqs[0].Stream || reqs[0].StreamOptions == nil || !reqs[0].StreamOptions.IncludeUsage || reqs[0].Model != "scripted-model" {
		t.Fatalf("request 1 = %+v", reqs[0])
	}

	msgs := h.Messages(sid)
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Kind+":"+m.Content)
	}
	if strings.Join(got, "|") != "user::hi there|assistant::Hello wörld|user::and again|assistant::Second answer" {
		t.Fatalf("transcript = %q", got)
	}
	if msgs[1].Reasoning != "thinking hard" {
		t.Fatalf("reasoning not saved: %q", msgs[1].Reasoning)
	}
	// The model's title comes after stream_end (sessions_changed announces it).
	sess := h.WaitTitle(sid, "A friendly greeting")
	if d := backendtest.LastDataOf(t, f1, protocol.EvTitle); d["title"] != "hi there" {
		t.Fatalf("title frame in the stream = %v, want the provisional title", d)
	}
	if sess.Title != "A friendly greeting" || sess.ActiveStreamID != "" || sess.Usage.OutputTokens < 3 {
		t.Fatalf("session after two turns = %+v", sess)
	}
}

func TestBusySessionRefusesSecondTurn(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "slow"}}, HangAfter: true})
	s1 := h.Start(sid, "first")
	_, err := h.Svc.Turns().StartTurn(context.Background(), sid, "second")
	var busy *store.BusyError
	if !errors.As(err, &busy) || busy.StreamID != s1 || !strings.Contains(err.Error(), s1) {
		t.Fatalf("second StartTurn = %v, want BusyError naming %s", err, s1)
	}
	_ = h.Svc.Turns().Cancel(s1)
	h.WaitEnd(s1)
	for _, m := range h.Messages(sid) {
		if m.Content == "second" {
			t.Fatal("refused message was saved")
		}
	}
}

func TestStopMidStreamKeepsPartialText(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "partial "}, {Text: "answer"}}, HangAfter: true})
	s := h.Start(sid, "tell me")
	h.WaitEvent(s, protocol.EvToken)
	h.WaitText(s, "partial answer")
	began := time.Now()
	if err := h.Svc.Turns().Cancel(s); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	t.Logf("stop took %s", time.Since(began))
	h.CheckFrames(s, frames, protocol.EvCancel)
	if d := backendtest.DataOf(t, frames, protocol.EvCancel); d["partial"] != true {
		t.Fatalf("cancel frame = %v", d)
	}
	msgs := h.Messages(sid)
	if len(msgs) != 3 || msgs[1].Content != "partial answer" || msgs[2].Kind != store.KindCancelled {
		t.Fatalf("transcript after stop = %+v", msgs)
	}
	// Stop twice and after the end are no-ops; the session takes a new turn.
	if err := h.Svc.Turns().Cancel(s); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(providertest.TextTurn("fresh"))
	s2 := h.Start(sid, "again")
	h.CheckFrames(s2, h.WaitEnd(s2), protocol.EvDone)
	// The next turn's history carries the partial answer, not the marker.
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	last := reqs[len(reqs)-1].Messages
	if last[len(last)-2].Content != "partial answer" {
		t.Fatalf("history after a stop = %+v", last)
	}
}

func TestProviderErrorsBecomeAppErrors(t *testing.T) {
	cases := []struct {
		name     string
		turn     *providertest.Turn
		baseURL  string
		wantType string
	}{
		{name: "401", turn: backendtest.Ptr(providertest.ErrorTurn(401, "Incorrect API key provided")), wantType: turn.ErrTypeAuthMismatch},
		{name: "404 model", turn: backendtest.Ptr(providertest.ErrorTurn(404, "The model `nope` does not exist")), wantType: turn.ErrTypeModelNotFound},
		// A wait longer than the runtime's cap (60 s) is not retried: rate_limited at once.
		{name: "429", turn: &providertest.Turn{Status: 429, RetryAfter: "120"}, wantType: turn.ErrTypeRateLimit},
		// A plain 5xx is retried by the runtime; an error inside the stream after text is not.
		{name: "500 mid-stream", turn: &providertest.Turn{Chunks: []providertest.Chunk{{Text: "par"}, providertest.ErrorChunk(500, "upstream exploded")}}, wantType: turn.ErrTypeError},
		{name: "refused loopback", baseURL: backendtest.DeadLoopbackURL(t), wantType: turn.ErrTypeLocalRuntimeUnavailable},
	}
	h := backendtest.New(t, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := h.Provider.BaseURL()
			if c.baseURL != "" {
				base = c.baseURL
			}
			if _, err := h.Svc.Settings().SaveSettings(context.Background(), backend.SettingsInput{ProviderName: "scripted", BaseURL: base, Model: "scripted-model"}); err != nil {
				t.Fatal(err)
			}
			if c.turn != nil {
				h.Provider.Enqueue(*c.turn)
			}
			sid := h.NewSession()
			s := h.Start(sid, "hello")
			frames := h.WaitEnd(s)
			h.CheckFrames(s, frames, protocol.EvAppError)
			d := backendtest.DataOf(t, frames, protocol.EvAppError)
			if d["type"] != c.wantType || d["hint"] == "" || d["label"] == "" {
				t.Fatalf("apperror = %v, want type %s", d, c.wantType)
			}
			msgs := h.Messages(sid)
			last := msgs[len(msgs)-1]
			if last.Kind != store.KindError || msgs[0].Role != "user" {
				t.Fatalf("transcript = %+v", msgs)
			}
			// A reopened chat shows what the live one did: the saved row keeps the hint.
			if e := last.Error; e == nil || e.Type != d["type"] || e.Label != d["label"] || e.Message != d["message"] || e.Hint != d["hint"] {
				t.Fatalf("saved error row = %+v, the apperror was %v", e, d)
			}
			if c.name == "500 mid-stream" && (len(msgs) != 3 || msgs[1].Content != "par" || !strings.Contains(d["message"].(string), "upstream exploded")) {
				t.Fatalf("mid-stream error lost the partial text or the provider's message: %+v %v", msgs, d)
			}
			if c.name == "429" && !strings.Contains(d["hint"].(string), "120 s") {
				t.Fatalf("429 hint does not carry Retry-After: %v", d["hint"])
			}
		})
	}
}

func TestSidecarKilledMidTurnThenRecovers(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "half an "}, {Text: "answer"}}, HangAfter: true})
	s := h.Start(sid, "go")
	h.WaitText(s, "half an answer")
	pid := h.Svc.Sidecar.Status().PID
	if err := backendtest.KillProcess(pid); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvAppError)
	if d := backendtest.DataOf(t, frames, protocol.EvAppError); d["type"] != turn.ErrTypeSidecarUnavailable {
		t.Fatalf("apperror = %v", d)
	}
	msgs := h.Messages(sid)
	if len(msgs) != 3 || msgs[1].Content != "half an answer" || msgs[2].Kind != store.KindError {
		t.Fatalf("transcript after the crash = %+v", msgs)
	}
	// The supervisor restarts the sidecar; the next turn works (StartTurn waits for it).
	h.Provider.Enqueue(providertest.TextTurn("back ", "again"))
	s2 := h.Start(sid, "still there?")
	f2 := h.WaitEnd(s2)
	h.CheckFrames(s2, f2, protocol.EvDone)
	if got := backendtest.TextOf(f2, protocol.EvToken); got != "back again" {
		t.Fatalf("after restart: %q", got)
	}
	if st := h.Svc.Sidecar.Status(); st.PID == pid || st.Restarts < 1 {
		t.Fatalf("sidecar status after restart = %+v", st)
	}
}

// TestSidecarKilledDuringAToolCallKeepsItsCard: the sidecar killed while a command it
// runs is under way: the transcript keeps the call (an assistant row with the tool call,
// and its tool row saying it was interrupted, an error), before the error row. The
// command once vanished from the chat with the process.
func TestSidecarKilledDuringAToolCallKeepsItsCard(t *testing.T) {
	h := backendtest.New(t, "")
	h.WithWorkspace()
	sid := h.NewSession()
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "sleep 600"}))
	s := h.Start(sid, "wait a while")
	h.WaitEvent(s, protocol.EvTool)
	pid := h.Svc.Sidecar.Status().PID
	if err := backendtest.KillProcess(pid); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvAppError)
	msgs := h.Messages(sid)
	if len(msgs) != 4 || msgs[1].Role != "assistant" || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].ID != "c1" ||
		!strings.Contains(msgs[1].ToolCalls[0].Function.Arguments, "sleep 600") ||
		msgs[2].Role != "tool" || msgs[2].ToolCallID != "c1" || !strings.Contains(msgs[2].Content, `"error":"interrupted`) ||
		msgs[3].Kind != store.KindError {
		t.Fatalf("transcript after the crash = %+v", msgs)
	}
}

func TestMalformedSidecarOutputDoesNotCrashHost(t *testing.T) {
	h := backendtest.New(t, "garbage")
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.TextTurn("still ", "fine"))
	s := h.Start(sid, "hi")
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	if got := backendtest.TextOf(frames, protocol.EvToken); got != "still fine" {
		t.Fatalf("text %q", got)
	}
	for _, f := range frames {
		if f.Event == "bogus_event" {
			t.Fatal("an unknown sidecar event reached the window")
		}
	}
}

func TestInterruptedStreamIsSettledAtNextStart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// A previous process admitted a turn, journaled some text, and died.
	st, err := store.Open(ctx, core.PathsFor(dir).DBPath)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := st.CreateSession(ctx, store.NewSession{Title: "t"})
	if _, err := st.AdmitTurn(ctx, sess.ID, "stream-1", store.Message{Role: "user", Content: "question"}); err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"", "part one, ", "part two", "", "", "", ""} {
		ev, data := protocol.EvToken, `{"text":"`+text+`"}`
		switch i {
		case 0:
			ev, data = protocol.EvUserMessage, `{}`
		case 3: // a command under way when the app died
			ev, data = protocol.EvTool, `{"tid":"c9","name":"terminal","args":{"command":"make test"},"key_arg":"make test"}`
		case 4: // an approval answered before the app died: in the log already
			ev, data = protocol.EvApproval, `{"approval_id":"ap1","command":"rm -rf build","pattern":"recursive delete","description":"deletes files","choices":["once","deny"]}`
		case 5:
			ev, data = protocol.EvApprovalResolved, `{"approval_id":"ap1","reason":"answered","choice":"once","pending_count":0}`
		case 6: // an approval still waiting when the app died
			ev, data = protocol.EvApproval, `{"approval_id":"ap2","command":"rm -rf dist","pattern":"recursive delete","description":"deletes files","choices":["once","deny"]}`
		}
		if err := st.AppendJournal(ctx, store.JournalFrame{StreamID: "stream-1", SessionID: sess.ID, Seq: int64(i + 1), Event: ev, Data: json.RawMessage(data)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	exe, _ := os.Executable()
	svc, err := backend.Open(ctx, backend.Options{DataDir: dir, SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := svc.Chats().GetSession(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m := v.Messages; v.Session.ActiveStreamID != "" || len(m) != 4 || m[1].Content != "part one, part two" ||
		len(m[1].ToolCalls) != 1 || m[1].ToolCalls[0].Function.Name != "terminal" || m[2].ToolCallID != "c9" ||
		!strings.Contains(m[2].Content, "interrupted") || m[3].Kind != store.KindInterrupted {
		t.Fatalf("after restart: %+v", v)
	}
	audit, err := svc.Approvals().ListAudit(ctx, store.AuditFilter{SessionID: sess.ID})
	if err != nil || len(audit) != 1 || audit[0].Subject != "rm -rf dist" || audit[0].Decision != store.DecisionInterrupted {
		t.Fatalf("audit after restart = %+v, %v; want the waiting approval, interrupted", audit, err)
	}
	frames, _ := svc.Turns().StreamSince(ctx, "stream-1", 7)
	if len(frames) != 2 || frames[0].Event != protocol.EvAppError || frames[1].Event != protocol.EvStreamEnd {
		t.Fatalf("journal tail = %+v", frames)
	}
}

// TestNoOrphanSidecarAfterHostIsKilled runs a host process (this test binary as a
// small app) with its real sidecar, kills the host with SIGKILL, and checks the sidecar
// goes too (parent-death signal, and EOF on its stdin).
func TestNoOrphanSidecarAfterHostIsKilled(t *testing.T) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TALARIA_TEST_HOST="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscanf(bufio.NewReader(out), "sidecar-pid %d\n", &pid); err != nil {
		cmd.Process.Kill()
		t.Fatalf("host did not report its sidecar: %v", err)
	}
	if !backendtest.ProcessAlive(pid) {
		t.Fatalf("sidecar %d not running", pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	testwait.For(t, fmt.Sprintf("sidecar %d to end after its host was killed", pid), func() bool { return !backendtest.ProcessAlive(pid) })
}

// TestHostProcess is the host of TestNoOrphanSidecarAfterHostIsKilled; it does nothing
// in a normal run.
func TestHostProcess(t *testing.T) {
	dir := os.Getenv("TALARIA_TEST_HOST")
	if dir == "" {
		t.Skip("only runs as the host of TestNoOrphanSidecarAfterHostIsKilled")
	}
	exe, _ := os.Executable()
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: dir, SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real", "TALARIA_TEST_HOST="}, Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the sidecar to get ready", func() bool { return svc.Sidecar.Status().State == supervisor.StateReady })
	fmt.Printf("sidecar-pid %d\n", svc.Sidecar.Status().PID)
	// The parent kills this process once it read the line; it never decides anything
	// by this wait, which only ends a host the parent forgot.
	time.Sleep(testwait.Timeout)
}

// A second process (or Service) on the same data folder is refused before it touches
// the database, so it cannot settle the first one's live turns; the lock goes with Close.
func TestDataFolderIsLockedWhileInUse(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	exe, _ := os.Executable()
	opts := backend.Options{DataDir: dir, SidecarCommand: exe, SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: vault.NewMemoryKeyring()}
	first, err := backend.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backend.Open(ctx, opts); !errors.Is(err, backend.ErrDataDirInUse) {
		t.Fatalf("second Open = %v, want ErrDataDirInUse", err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := backend.Open(ctx, opts)
	if err != nil {
		t.Fatalf("Open after Close = %v", err)
	}
	again.Close(ctx)
}

// The harness's guard on times: a time in seconds anywhere in a frame is caught.
func TestCheckEpochMillisCatchesSeconds(t *testing.T) {
	if err := backendtest.CheckEpochMillis("approval", []byte(`{"expires_at": 1780000000000, "until": 0, "x": [{"created_at": 1780000000000}]}`)); err != nil {
		t.Errorf("milliseconds refused: %v", err)
	}
	if err := backendtest.CheckEpochMillis("activity", []byte(`{"items": [{"started_at": 1780000000}]}`)); err == nil || !strings.Contains(err.Error(), "activity.items[0].started_at") {
		t.Errorf("seconds passed: %v", err)
	}
}

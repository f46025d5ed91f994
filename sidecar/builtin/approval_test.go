//go:build unix

package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// deleteTurn is a model step that deletes build/ recursively (pattern recursive_delete).
func deleteTurn(id string) providertest.Turn {
	return providertest.CallTurn("", providertest.Call(id, "terminal", map[string]any{"command": "rm -rf build && echo deleted"}))
}

func buildDir(t *testing.T) string {
	return workspace(t, map[string]string{"build/out.bin": "x"})
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func terminalError(t *testing.T, d protocol.ToolCompleteData) string {
	t.Helper()
	e, _ := rawField(t, d.RawResult, "error").(string)
	return e
}

// approve waits for the n-th approval frame of a run and answers it.
func approve(t *testing.T, rt *Runtime, run *chatRun, session string, n int, choice string) protocol.ApprovalData {
	t.Helper()
	var ap protocol.ApprovalData
	run.waitFor(protocol.EvApproval, n, &ap)
	res, err := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: session, ApprovalID: ap.ApprovalID, Choice: choice})
	if err != nil || !res.OK {
		t.Fatalf("approval.respond %s: %+v %v", choice, res, err)
	}
	return ap
}

func resolved(t *testing.T, run *chatRun, n int) protocol.ResolvedData {
	t.Helper()
	var r protocol.ResolvedData
	run.waitFor(protocol.EvApprovalResolved, n, &r)
	return r
}

func TestApprovalOnceAndDeny(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})

	dir := buildDir(t)
	p.Enqueue(deleteTurn("c1"), providertest.TextTurn("ok"))
	run := startChat(t, rt, toolParams(p, "s1", dir))
	ap := approve(t, rt, run, "s1", 1, protocol.ChoiceOnce)
	if ap.Pattern != "recursive_delete" || ap.Command != "rm -rf build && echo deleted" || ap.TimeoutS != 300 || !strings.Contains(ap.Description, "recursively") || !strings.HasPrefix(ap.ApprovalID, "ap_") {
		t.Fatalf("approval %+v", ap)
	}
	run.mustResult()
	if r := resolved(t, run, 1); r.ApprovalID != ap.ApprovalID || r.Reason != protocol.ResolvedAnswered || r.Choice != protocol.ChoiceOnce {
		t.Fatalf("resolved %+v", r)
	}
	if got := strings.Join(run.events(), ","); got != "tool,approval,approval_resolved,tool_complete,token" {
		t.Fatalf("events %s", got)
	}
	if exists(filepath.Join(dir, "build")) || !strings.Contains(toolCompletes(t, run)[0].Preview, "deleted") {
		t.Fatal("the approved command did not run")
	}
	// A stale answer: the id is settled.
	if res, err := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceOnce}); err != nil || res.OK {
		t.Fatalf("stale answer %+v %v", res, err)
	}

	// once does not stick: the next turn asks again; deny stops the command.
	dir = buildDir(t)
	p.Enqueue(deleteTurn("c2"), providertest.TextTurn("ok"))
	run = startChat(t, rt, toolParams(p, "s1", dir))
	approve(t, rt, run, "s1", 1, protocol.ChoiceDeny)
	run.mustResult()
	if r := resolved(t, run, 1); r.Reason != protocol.ResolvedAnswered || r.Choice != protocol.ChoiceDeny {
		t.Fatalf("resolved %+v", r)
	}
	if !exists(filepath.Join(dir, "build")) {
		t.Fatal("a denied command ran")
	}
	if e := terminalError(t, toolCompletes(t, run)[0]); !strings.HasPrefix(e, "denied: the user did not allow") {
		t.Fatalf("error %q", e)
	}
	tr, _ := p.Requests()[len(p.Requests())-1].ToolResult("c2")
	if !strings.Contains(tr.Content, "denied") {
		t.Fatalf("the model was not told: %s", tr.Content)
	}
}

func TestApprovalSessionAndAlways(t *testing.T) {
	for _, choice := range []string{protocol.ChoiceSession, protocol.ChoiceAlways} {
		t.Run(choice, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			rt := New(Options{})
			dir := buildDir(t)
			p.Enqueue(deleteTurn("c1"), providertest.TextTurn("ok"))
			run := startChat(t, rt, toolParams(p, "s1", dir))
			approve(t, rt, run, "s1", 1, choice)
			run.mustResult()
			if r := resolved(t, run, 1); r.Choice != choice {
				t.Fatalf("resolved %+v", r)
			}
			// The same pattern in a later turn of the session runs without asking.
			dir = buildDir(t)
			p.Enqueue(deleteTurn("c2"), providertest.TextTurn("ok"))
			run = startChat(t, rt, toolParams(p, "s1", dir))
			run.mustResult()
			if len(run.of(protocol.EvApproval)) != 0 || exists(filepath.Join(dir, "build")) {
				t.Fatalf("asked again or did not run: %s", run.summary())
			}
			// Another pattern still asks; another session still asks.
			p.Enqueue(providertest.CallTurn("", providertest.Call("c3", "terminal", map[string]any{"command": "git reset --hard"})), providertest.TextTurn("ok"))
			run = startChat(t, rt, toolParams(p, "s1", t.TempDir()))
			approve(t, rt, run, "s1", 1, protocol.ChoiceDeny)
			run.mustResult()
			dir = buildDir(t)
			p.Enqueue(deleteTurn("c4"), providertest.TextTurn("ok"))
			run = startChat(t, rt, toolParams(p, "s2", dir))
			approve(t, rt, run, "s2", 1, protocol.ChoiceDeny)
			run.mustResult()
			if !exists(filepath.Join(dir, "build")) {
				t.Fatal("a grant leaked into another session")
			}
		})
	}
}

func TestApprovalTimeout(t *testing.T) {
	t.Parallel()
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	dir := buildDir(t)
	p.Enqueue(deleteTurn("c1"), providertest.TextTurn("ok"))
	params := toolParams(p, "s1", dir)
	params.ApprovalTimeoutS = 1
	// Timed from before the turn: the 1 s wait is inside it, so took is at least that
	// however slow the machine. The default (300 s) would outlast the tests' deadline,
	// and the resolution below says the timeout ended the wait.
	start := time.Now()
	run := startChat(t, rt, params)
	var ap protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 1, &ap)
	if ap.TimeoutS != 1 {
		t.Fatalf("timeout_s %d", ap.TimeoutS)
	}
	run.mustResult()
	if took := time.Since(start); took < 900*time.Millisecond || took >= DefaultApprovalTimeout {
		t.Fatalf("took %v", took)
	}
	if r := resolved(t, run, 1); r.Reason != protocol.ResolvedTimeout || r.Choice != "" {
		t.Fatalf("resolved %+v", r)
	}
	if e := terminalError(t, toolCompletes(t, run)[0]); !strings.Contains(e, "nobody answered") || !exists(filepath.Join(dir, "build")) {
		t.Fatalf("error %q", e)
	}
	if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceOnce}); res.OK {
		t.Fatal("an answer after the timeout was taken")
	}
	if rt.pendingCount() != 0 {
		t.Fatal("a waiter was left parked")
	}
}

func TestApprovalYolo(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	dir := buildDir(t)
	p.Enqueue(deleteTurn("c1"), providertest.TextTurn("ok"))
	run := startChat(t, rt, toolParams(p, "s1", dir))
	var ap protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 1, &ap)
	// YOLO for another session releases nothing.
	if res, _ := rt.ApprovalYolo(protocol.ApprovalYoloParams{SessionID: "other", Enabled: true}); res.Released != 0 {
		t.Fatalf("released %d", res.Released)
	}
	res, err := rt.ApprovalYolo(protocol.ApprovalYoloParams{SessionID: "s1", Enabled: true})
	if err != nil || !res.YoloEnabled || res.Released != 1 {
		t.Fatalf("yolo %+v %v", res, err)
	}
	run.mustResult()
	if r := resolved(t, run, 1); r.Reason != protocol.ResolvedYolo || r.ApprovalID != ap.ApprovalID {
		t.Fatalf("resolved %+v", r)
	}
	if exists(filepath.Join(dir, "build")) {
		t.Fatal("the released command did not run")
	}
	if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceDeny}); res.OK {
		t.Fatal("a released approval took an answer")
	}
	// chat.start's yolo: no approval at all; false turns it off again.
	dir = buildDir(t)
	p.Enqueue(deleteTurn("c2"), providertest.TextTurn("ok"))
	params := toolParams(p, "s1", dir)
	params.Yolo = true
	run = startChat(t, rt, params)
	run.mustResult()
	if len(run.of(protocol.EvApproval)) != 0 || exists(filepath.Join(dir, "build")) {
		t.Fatalf("yolo turn: %s", run.summary())
	}
	p.Enqueue(deleteTurn("c3"), providertest.TextTurn("ok"))
	run = startChat(t, rt, toolParams(p, "s1", buildDir(t)))
	approve(t, rt, run, "s1", 1, protocol.ChoiceDeny)
	run.mustResult()
	if _, err := rt.ApprovalYolo(protocol.ApprovalYoloParams{Enabled: true}); err == nil {
		t.Fatal("yolo without a session")
	}
}

// fakeMkfs puts a mkfs.ext4 first on PATH that only leaves a mark, so a hardline
// command that wrongly ran would do no harm and be seen.
func fakeMkfs(t *testing.T) string {
	bin := t.TempDir()
	mark := filepath.Join(bin, "ran")
	script := "#!/bin/sh\ntouch " + mark + "\n"
	if err := os.WriteFile(filepath.Join(bin, "mkfs.ext4"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return mark
}

// TestHardlineAndAllowlist: allowlisted patterns run without asking; a hardline command
// is refused without an approval even in YOLO mode and when allowlisted.
func TestHardlineAndAllowlist(t *testing.T) {
	mark := fakeMkfs(t)
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	dir := buildDir(t)
	hard := "mkfs.ext4 /dev/sdz9"
	p.Enqueue(
		deleteTurn("c1"),
		providertest.CallTurn("", providertest.Call("c2", "terminal", map[string]any{"command": hard})),
		providertest.CallTurn("", providertest.Call("c3", "terminal", map[string]any{"command": "sudo " + hard})),
		providertest.TextTurn("ok"),
	)
	params := toolParams(p, "s1", dir)
	params.ApprovalAllowlist = []string{"recursive_delete", "format_disk", "disk_format", "sudo"}
	params.Yolo = true
	run := startChat(t, rt, params)
	run.mustResult()
	if len(run.of(protocol.EvApproval)) != 0 || exists(filepath.Join(dir, "build")) {
		t.Fatalf("allowlisted: %s", run.summary())
	}
	done := toolCompletes(t, run)
	for _, d := range done[1:] {
		if e := terminalError(t, d); !strings.HasPrefix(e, "refused:") || !strings.Contains(e, "disk device") {
			t.Fatalf("hardline error %q", e)
		}
	}
	if exists(mark) {
		t.Fatal("a hardline command ran")
	}
}

// TestApprovalInterrupted: a turn stopped while it waits for approval resolves the
// approval as interrupted and does not run the command.
func TestApprovalInterrupted(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	dir := buildDir(t)
	p.Enqueue(deleteTurn("c1"))
	run := startChat(t, rt, toolParams(p, "s1", dir))
	var ap protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 1, &ap)
	run.cancel()
	res := run.mustResult()
	if r := resolved(t, run, 1); r.Reason != protocol.ResolvedInterrupted {
		t.Fatalf("resolved %+v", r)
	}
	if res.Status != protocol.StatusCancelled || !exists(filepath.Join(dir, "build")) || rt.pendingCount() != 0 {
		t.Fatalf("result %+v", res)
	}
}

// TestApprovalStaleAndWrongAnswers: unknown ids, another session's id, a clarify's id
// and a bad choice never settle a parked approval.
func TestApprovalStaleAndWrongAnswers(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	dir := buildDir(t)
	p.Enqueue(deleteTurn("c1"), providertest.TextTurn("ok"))
	run := startChat(t, rt, toolParams(p, "s1", dir))
	var ap protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 1, &ap)
	for _, tt := range []protocol.ApprovalRespondParams{
		{SessionID: "s1", ApprovalID: "ap_unknown", Choice: protocol.ChoiceOnce},
		{SessionID: "s2", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceOnce},
		{SessionID: "", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceOnce},
		{SessionID: "s1", ApprovalID: "", Choice: protocol.ChoiceOnce},
	} {
		if res, err := rt.ApprovalRespond(tt); err != nil || res.OK {
			t.Fatalf("%+v: %+v %v", tt, res, err)
		}
	}
	if res, err := rt.ClarifyRespond(protocol.ClarifyRespondParams{SessionID: "s1", ClarifyID: ap.ApprovalID, Response: []byte(`"yes"`)}); err != nil || res.OK {
		t.Fatalf("clarify.respond with an approval id: %+v %v", res, err)
	}
	if _, err := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: "yes"}); err == nil {
		t.Fatal("a bad choice was accepted")
	}
	if rt.pendingCount() != 1 {
		t.Fatal("the approval was settled by a wrong answer")
	}
	approve(t, rt, run, "s1", 1, protocol.ChoiceOnce)
	run.mustResult()
}

// TestApprovalsConcurrent: turns of several sessions wait for approvals at once and
// are answered, released by YOLO or stopped concurrently (run with -race); each turn
// gets exactly its own outcome.
func TestApprovalsConcurrent(t *testing.T) {
	rt := New(Options{})
	const n = 8
	outcomes := []string{protocol.ChoiceOnce, protocol.ChoiceDeny, protocol.ChoiceSession, "yolo", "cancel"}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		i := i
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := providertest.Start()
			defer p.Close()
			session := fmt.Sprintf("s%d", i)
			dir := buildDir(t)
			// Two dangerous calls in one step: the second parks after the first settles.
			// The first ends once the file next exists, made after its approval was
			// handled: else, with YOLO, the second call could be checked (and let
			// through without a card) before this goroutine turned YOLO off again.
			p.Enqueue(providertest.CallTurn("",
				providertest.Call("a", "terminal", map[string]any{"command": "rm -r build/x 2>/dev/null; until test -e next; do sleep 0.05; done; true"}),
				providertest.Call("b", "terminal", map[string]any{"command": "git clean -fd"})),
				providertest.TextTurn("ok"))
			run := startChat(t, rt, toolParams(p, session, dir))
			outcome := outcomes[i%len(outcomes)]
			for k := 1; k <= 2; k++ {
				var ap protocol.ApprovalData
				run.waitFor(protocol.EvApproval, k, &ap)
				switch outcome {
				case "yolo":
					if res, _ := rt.ApprovalYolo(protocol.ApprovalYoloParams{SessionID: session, Enabled: true}); res.Released != 1 {
						errs <- fmt.Errorf("%s: released %d", session, res.Released)
					}
					rt.ApprovalYolo(protocol.ApprovalYoloParams{SessionID: session, Enabled: false}) //nolint:errcheck
				case "cancel":
					run.cancel()
				default:
					if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: session, ApprovalID: ap.ApprovalID, Choice: outcome}); !res.OK {
						errs <- fmt.Errorf("%s: answer refused", session)
					}
				}
				if outcome == "cancel" {
					break // the turn ends; the second call never asks
				}
				if k == 1 {
					if err := os.WriteFile(filepath.Join(dir, "next"), nil, 0o600); err != nil {
						errs <- err
					}
				}
			}
			res, err := run.result()
			if err != nil {
				errs <- fmt.Errorf("%s: %v", session, err)
				return
			}
			var want string
			switch outcome {
			case "cancel":
				want = protocol.ResolvedInterrupted
			case "yolo":
				want = protocol.ResolvedYolo
			default:
				want = protocol.ResolvedAnswered
			}
			var r protocol.ResolvedData
			run.waitFor(protocol.EvApprovalResolved, 1, &r)
			if r.Reason != want || (outcome == "cancel") != (res.Status == protocol.StatusCancelled) {
				errs <- fmt.Errorf("%s: resolved %+v, status %s", session, r, res.Status)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if rt.pendingCount() != 0 {
		t.Fatalf("%d waiters left parked", rt.pendingCount())
	}
}

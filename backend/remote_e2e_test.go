//go:build linux

package backend_test

import (
	"context"
	"debug/elf"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/bus"
	"talaria/backend/core"
	"talaria/backend/remote"
	"talaria/backend/remote/sshtest"
	"talaria/backend/supervisor"
	"talaria/internal/testproc"
	"talaria/internal/testwait"
	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// remoteSidecars returns the pids of sidecars running from the install folder under
// home (their /proc/<pid>/exe).
func remoteSidecars(home string) []int {
	want := filepath.Join(home, remote.SidecarPath("test"))
	return testproc.Find(func(p testproc.Process) bool { return p.Exe() == want && p.HasArgs("daemon") })
}

func runtimeStatus(svc *backend.Service, id string) (supervisor.Status, bool) {
	for _, st := range svc.Agents().RuntimeStatuses() {
		if st.RuntimeID == id {
			return st, true
		}
	}
	return supervisor.Status{}, false
}

// A chat on a remote host's built-in runtime: Test copies the sidecar there, the turn
// runs in a sidecar started through a real sshd (its binary the copy, its HOME the
// host's), and after the connection drops the next turn runs on a new connection.
func TestChatOnRemoteHostOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = srv.SSH })
	ctx := context.Background()

	if _, err := h.Svc.Remote.SaveHost(ctx, srv.Host("loop"), ""); err != nil {
		t.Fatal(err)
	}
	rec, err := h.Svc.Remote.Test(ctx, "loop")
	if err != nil {
		t.Fatalf("test the host: %v\nsshd: %s", err, srv.Log())
	}
	if rec.Probe == nil || rec.Probe.Sidecar != "current" || rec.Probe.Home != srv.Home {
		t.Fatalf("probe %+v", rec.Probe)
	}
	opts, err := h.Svc.Agents().ListRuntimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(opts, func(o core.RuntimeOption) bool { return o.ID == "ssh:loop" }); i < 0 || !opts[i].Available {
		t.Fatalf("runtimes %+v", opts)
	}

	sid := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, sid, "ssh:loop"); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "hello "}, {Text: "from afar"}}})
	h.Provider.EnqueueAux(providertest.TextTurn("Remote greeting"))
	s1 := h.Start(sid, "hi there")
	f1 := h.WaitEnd(s1)
	h.CheckFrames(s1, f1, protocol.EvDone)
	if got := backendtest.TextOf(f1, protocol.EvToken); got != "hello from afar" {
		t.Fatalf("streamed %q", got)
	}
	pids := remoteSidecars(srv.Home)
	if len(pids) != 1 {
		t.Fatalf("sidecars running the copy on the host: %v", pids)
	}
	env, _ := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/environ")
	if !slices.Contains(strings.Split(string(env), "\x00"), "HOME="+srv.Home) {
		t.Fatalf("the remote sidecar's HOME is not the host's")
	}
	st, ok := runtimeStatus(h.Svc, "ssh:loop")
	if !ok || st.State != supervisor.StateReady {
		t.Fatalf("status %+v", st)
	}

	// The agent's commands run on the host, in ~/Talaria there.
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "pwd > where.txt"}), providertest.TextTurn("done"))
	h.WaitEnd(h.Start(sid, "where are you?"))
	if b, err := os.ReadFile(filepath.Join(srv.Home, "Talaria", "where.txt")); err != nil || strings.TrimSpace(string(b)) != filepath.Join(srv.Home, "Talaria") {
		t.Fatalf("the command's output file on the host: %q %v", b, err)
	}
	// An image a message carries is copied to the host (by its sum) and reaches the
	// provider byte for byte from there.
	img := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01\xfe\xff", 64))
	a, err := h.Svc.Attachments.AttachFile(ctx, sid, "dot.png", img)
	if err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(providertest.TextTurn("an image"))
	st2, err := h.Svc.Turns().Send(ctx, sid, "what is this?", []string{a.ID})
	if err != nil {
		t.Fatal(err)
	}
	h.CheckFrames(st2.StreamID, h.WaitEnd(st2.StreamID), protocol.EvDone)
	if b, err := os.ReadFile(filepath.Join(srv.Home, ".cache", "talaria", "files", a.SHA256)); err != nil || string(b) != string(img) {
		t.Fatalf("the image staged on the host: %v", err)
	}
	reqs := h.Provider.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, base64.StdEncoding.EncodeToString(img)) {
		t.Fatalf("the provider did not get the image's bytes")
	}

	// The connection drops: the sidecar there goes on, the link connects again, and
	// the next turn runs on the same sidecar with no restart.
	srv.DropConnections()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "still here"}}})
	s2 := h.Start(sid, "again")
	f2 := h.WaitEnd(s2)
	h.CheckFrames(s2, f2, protocol.EvDone)
	if got := backendtest.TextOf(f2, protocol.EvToken); got != "still here" {
		t.Fatalf("streamed %q", got)
	}
	if now := remoteSidecars(srv.Home); len(now) != 1 || now[0] != pids[0] {
		t.Fatalf("the sidecar on the host was replaced: %v, was %v", now, pids)
	}
	if st, _ := runtimeStatus(h.Svc, "ssh:loop"); st.Restarts != 0 {
		t.Fatalf("the runtime restarted: %+v", st)
	}

	// Removing the host stops its runtimes: the sidecar there ends.
	if err := h.Svc.Remote.DeleteHost(ctx, "loop"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the sidecar on the removed host to stop", func() bool { return len(remoteSidecars(srv.Home)) == 0 })
	if _, ok := runtimeStatus(h.Svc, "ssh:loop"); ok {
		t.Fatal("the removed host's runtime is still supervised")
	}
}

// A host whose key changed is a clear, permanent failure: the runtime goes down at
// once with what to do, instead of retrying.
func TestRemoteHostKeyChangedStopsWithAHint(t *testing.T) {
	srv := sshtest.Start(t)
	bad := srv.SSH
	bad.Options = slices.Clone(bad.Options)
	for i, o := range bad.Options {
		if strings.HasPrefix(o, "UserKnownHostsFile=") {
			other := filepath.Join(t.TempDir(), "known_hosts")
			// Another host's key under this one's name.
			key := filepath.Join(t.TempDir(), "other")
			if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			pub, _ := os.ReadFile(key + ".pub")
			f := strings.Fields(string(pub))
			line := "[127.0.0.1]:" + strconv.Itoa(srv.Port) + " " + f[0] + " " + f[1] + "\n"
			if err := os.WriteFile(other, []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
			bad.Options[i] = "UserKnownHostsFile=" + other
		}
	}
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = bad })
	ctx := context.Background()
	if _, err := h.Svc.Remote.SaveHost(ctx, srv.Host("loop"), ""); err != nil {
		t.Fatal(err)
	}
	_, err := h.Svc.Remote.Test(ctx, "loop")
	if err == nil || !strings.Contains(err.Error(), "CHANGED") {
		t.Fatalf("test: %v", err)
	}
	if err := h.Svc.Agents().RestartRuntime(ctx, "ssh:loop"); err == nil {
		testwait.For(t, "the runtime to go down", func() bool {
			st, _ := runtimeStatus(h.Svc, "ssh:loop")
			return st.State == supervisor.StateDown
		})
	}
	st, _ := runtimeStatus(h.Svc, "ssh:loop")
	host := srv.Host("loop")
	if !strings.Contains(st.Error, "host key has CHANGED") || !strings.Contains(st.Hint, "ssh-keygen -R '[127.0.0.1]:"+strconv.Itoa(host.Port)+"'") ||
		!strings.Contains(st.Hint, host.Login()) {
		t.Fatalf("status %+v", st)
	}
	if len(remoteSidecars(srv.Home)) != 0 {
		t.Fatalf("a sidecar runs on a host whose key did not match")
	}
}

// The user's Hermes Agent on a remote host: Test finds it (the real 0.19.0, its home
// the host's ~/.hermes), and a chat on "ssh:<host>:hermes" runs through Hermes's
// gateway in the sidecar there.
func TestHermesOnRemoteHostOverSSH(t *testing.T) {
	in, err := hermestest.Find(hermestest.NameA)
	if err != nil {
		t.Fatal(err)
	}
	srv := sshtest.Start(t)
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = srv.SSH })
	ctx := context.Background()
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: h.Provider.BaseURL()})
	if err := os.Symlink(home.Dir, filepath.Join(srv.Home, ".hermes")); err != nil {
		t.Fatal(err)
	}
	host := srv.Host("loop")
	host.Hermes = in.Python
	if _, err := h.Svc.Remote.SaveHost(ctx, host, ""); err != nil {
		t.Fatal(err)
	}
	rec, err := h.Svc.Remote.Test(ctx, "loop")
	if err != nil {
		t.Fatalf("test the host: %v", err)
	}
	if rec.Probe.HermesVersion != in.Version || rec.Probe.HermesPython != in.Python {
		t.Fatalf("probe %+v, want Hermes %s at %s", rec.Probe, in.Version, in.Python)
	}
	sid := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, sid, "ssh:loop:hermes"); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Hermes "}, {Text: "over ssh"}}})
	s1 := h.Start(sid, "hello")
	f1 := h.WaitEnd(s1)
	h.CheckFrames(s1, f1, protocol.EvDone)
	if got := backendtest.TextOf(f1, protocol.EvToken); got != "Hermes over ssh" {
		t.Fatalf("streamed %q: %s", got, h.Describe(s1))
	}
	if len(remoteSidecars(srv.Home)) != 1 {
		t.Fatalf("no sidecar runs the copy on the host")
	}

	// The connection drops mid-turn: Hermes's turn there goes on, and the rest of its
	// answer arrives once the link is back, once.
	gate, release := backendtest.Release()
	defer release()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Before the drop, "}, {Text: "after it", Wait: gate}}})
	s2 := h.Start(sid, "a long one")
	h.WaitText(s2, "Before the drop, ")
	srv.DropConnections()
	release()
	f2 := h.WaitEnd(s2)
	h.CheckFrames(s2, f2, protocol.EvDone)
	if got := backendtest.TextOf(f2, protocol.EvToken); got != "Before the drop, after it" {
		t.Fatalf("streamed %q: %s", got, h.Describe(s2))
	}
}

// The connection drops while a turn runs: the turn goes on there, and what it streamed
// meanwhile arrives once the link is back, once each; Stop works after a drop; a
// sidecar there that is gone ends the turn with what happened and what to do, and the
// next turn runs on a new one.
func TestRemoteTurnSurvivesADroppedConnection(t *testing.T) {
	srv := sshtest.Start(t)
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = srv.SSH })
	ctx := context.Background()
	if _, err := h.Svc.Remote.SaveHost(ctx, srv.Host("loop"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.Remote.Test(ctx, "loop"); err != nil {
		t.Fatal(err)
	}
	sid := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, sid, "ssh:loop"); err != nil {
		t.Fatal(err)
	}

	// What the window is told of the connection: every Connection value the remote
	// runtime's status took, in order (the bus delivers statuses in publish order).
	var seenMu sync.Mutex
	var seen []string
	unsubscribe := h.Svc.Bus.Subscribe(func(ev bus.Event) {
		if st, ok := ev.Payload.(supervisor.Status); ok && ev.Name == bus.EventSidecarStatus && st.RuntimeID == "ssh:loop" {
			seenMu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != st.Connection {
				seen = append(seen, st.Connection)
			}
			seenMu.Unlock()
		}
	})
	defer unsubscribe()

	// Dropped twice mid-turn: the rest of the answer was made while it was down.
	gate, release := backendtest.Release()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Half an answer, "}, {Text: "the rest", Wait: gate}}})
	s1 := h.Start(sid, "a long one")
	h.WaitText(s1, "Half an answer, ")
	srv.DropConnections()
	release()
	srv.DropConnections()
	f1 := h.WaitEnd(s1)
	h.CheckFrames(s1, f1, protocol.EvDone)
	if got := backendtest.TextOf(f1, protocol.EvToken); got != "Half an answer, the rest" {
		t.Fatalf("streamed %q", got)
	}
	var answers []string
	for _, m := range h.Messages(sid) {
		if m.Role == "assistant" {
			answers = append(answers, m.Content)
		}
	}
	if len(answers) != 1 || answers[0] != "Half an answer, the rest" {
		t.Fatalf("answers stored: %q", answers)
	}
	// The status said "reconnecting" during the drop, and "" once it was back. (The
	// link's word comes on stderr, read apart from the answer's frames: wait for it.)
	told := func() []string {
		seenMu.Lock()
		defer seenMu.Unlock()
		return append([]string(nil), seen...)
	}
	testwait.For(t, "the status to say the connection is back", func() bool {
		s := told()
		return slices.Contains(s, protocol.LinkReconnecting) && s[len(s)-1] == ""
	})

	// Stop after a drop reaches the turn there.
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "going on "}}, HangAfter: true})
	s2 := h.Start(sid, "and on")
	h.WaitText(s2, "going on ")
	srv.DropConnections()
	if err := h.Svc.Turns().Cancel(s2); err != nil {
		t.Fatal(err)
	}
	h.CheckFrames(s2, h.WaitEnd(s2), protocol.EvCancel)
	h.Provider.Enqueue(providertest.TextTurn("after the stop"))
	s3 := h.Start(sid, "next")
	f3 := h.WaitEnd(s3)
	h.CheckFrames(s3, f3, protocol.EvDone)
	if got := backendtest.TextOf(f3, protocol.EvToken); got != "after the stop" {
		t.Fatalf("streamed %q", got)
	}

	// The sidecar there is gone (the host restarted): the turn ends with why and what
	// to do, its partial answer kept, and the next turn runs on a new sidecar.
	gone, releaseGone := backendtest.Release()
	defer releaseGone()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Cut short, "}, {Text: "never sent", Wait: gone}}})
	s4 := h.Start(sid, "one more")
	h.WaitText(s4, "Cut short, ")
	for _, pid := range remoteSidecars(srv.Home) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// ...and its copy of the sidecar was deleted there: the next start copies it again
	// (what a start trusts is older than a minute by then).
	if err := os.Remove(filepath.Join(srv.Home, remote.SidecarPath("test"))); err != nil {
		t.Fatal(err)
	}
	h.Svc.Remote.SetClock(func() time.Time { return time.Now().Add(time.Minute) })
	srv.DropConnections()
	f4 := h.WaitEnd(s4)
	h.CheckFrames(s4, f4, protocol.EvAppError)
	e := backendtest.LastDataOf(t, f4, protocol.EvAppError)
	msg, _ := e["message"].(string)
	hint, _ := e["hint"].(string)
	if !strings.Contains(msg, "connection to loop") || hint == "" {
		t.Errorf("apperror %v", e)
	}
	kept := false
	for _, m := range h.Messages(sid) {
		kept = kept || (m.Role == "assistant" && strings.Contains(m.Content, "Cut short"))
	}
	if !kept {
		t.Errorf("the partial answer was not kept: %+v", h.Messages(sid))
	}
	releaseGone()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "back"}}})
	s5 := h.Start(sid, "again")
	h.CheckFrames(s5, h.WaitEnd(s5), protocol.EvDone)
}

// A host that stopped answering: a turn on it fails at the first failed start with
// ssh's reason and what to do, not after the start's two-minute wait.
func TestRemoteTurnOnAnUnreachableHostFailsAtOnce(t *testing.T) {
	srv := sshtest.Start(t)
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = srv.SSH })
	ctx := context.Background()
	host := srv.Host("loop")
	host.Hermes = "~/no-hermes-here/bin/python"
	if _, err := h.Svc.Remote.SaveHost(ctx, host, ""); err != nil {
		t.Fatal(err)
	}
	rec, err := h.Svc.Remote.Test(ctx, "loop")
	if err != nil {
		t.Fatal(err)
	}
	// The Hermes path given is not there: Test says so.
	if n := rec.Probe.Notes; len(n) != 1 || !strings.Contains(n[0], "No Hermes Agent was found at ~/no-hermes-here/bin/python") {
		t.Fatalf("notes %q", n)
	}
	sid := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, sid, "ssh:loop"); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	s := h.Start(sid, "are you there?")
	f := h.WaitEnd(s)
	h.CheckFrames(s, f, protocol.EvAppError)
	e := backendtest.LastDataOf(t, f, protocol.EvAppError)
	msg, _ := e["message"].(string)
	hint, _ := e["hint"].(string)
	if !strings.Contains(msg, "could not start") || !strings.Contains(msg, "cannot be reached") || strings.Contains(msg, "in time") || hint == "" {
		t.Fatalf("apperror %v", e)
	}
}

// An ACP agent on a remote host: Test finds the real OpenCode on the host's PATH (its
// ~/.local/bin), and a chat on "ssh:<host>:acp:opencode" runs through it there.
func TestOpenCodeOnRemoteHostOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = srv.SSH })
	ctx := context.Background()
	oc, err := acptest.NewOpenCodeWith(filepath.Join(t.TempDir(), "opencode"),
		acptest.OpenCodeOptions{BaseURL: h.Provider.BaseURL(), AuxBaseURL: backendtest.DeadLoopbackURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	// The user's `opencode` on the host: a launcher with the test's configuration.
	bin := filepath.Join(srv.Home, ".local", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n"
	for _, e := range oc.Env {
		q, err := remote.Quote([]string{e})
		if err != nil {
			t.Fatal(err)
		}
		script += "export " + q + "\n"
	}
	q, _ := remote.Quote([]string{oc.Binary})
	script += "exec " + q + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "opencode"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.Remote.SaveHost(ctx, srv.Host("loop"), ""); err != nil {
		t.Fatal(err)
	}
	rec, err := h.Svc.Remote.Test(ctx, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Probe.Agents["opencode"] != filepath.Join(bin, "opencode") {
		t.Fatalf("agents found on the host: %v", rec.Probe.Agents)
	}
	sid := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, sid, "ssh:loop:acp:opencode"); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(providertest.TextTurn("OpenCode over ssh"))
	s1 := h.Start(sid, "hello")
	f1 := h.WaitEnd(s1)
	h.CheckFrames(s1, f1, protocol.EvDone)
	if got := backendtest.TextOf(f1, protocol.EvToken); !strings.Contains(got, "OpenCode over ssh") {
		t.Fatalf("streamed %q: %s", got, h.Describe(s1))
	}
}

// Test runs the copy it made there: a build that does not start on the host (a binary
// linking libraries the host lacks) fails Test with the host's own words, not "ok";
// testing a removed host says it was removed.
func TestRemoteTestRunsTheCopy(t *testing.T) {
	srv := sshtest.Start(t)
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = srv.SSH })
	broken := filepath.Join(t.TempDir(), "talaria")
	script := "#!/bin/sh\necho 'talaria: error while loading shared libraries: libwebkit2gtk-4.1.so.0: cannot open shared object file' >&2\nexit 127\n"
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h.Svc.Remote.Binary = broken
	ctx := context.Background()
	if _, err := h.Svc.Remote.SaveHost(ctx, srv.Host("loop"), ""); err != nil {
		t.Fatal(err)
	}
	_, err := h.Svc.Remote.Test(ctx, "loop")
	var re *remote.Error
	if !errors.As(err, &re) || !strings.Contains(re.Detail, "does not start") || !strings.Contains(re.Detail, "libwebkit2gtk") || re.Hint() == "" {
		t.Fatalf("Test of a copy that does not start: %v", err)
	}
	if err := h.Svc.Remote.DeleteHost(ctx, "loop"); err != nil {
		t.Fatal(err)
	}
	var fe *remote.FieldError
	if _, err := h.Svc.Remote.Test(ctx, "loop"); !errors.As(err, &fe) || !strings.Contains(fe.Message, "removed") {
		t.Fatalf("Test of a removed host: %v", err)
	}
}

// Host names are unique: adding a host under a saved name, or renaming one onto
// another's name, is refused with the field named; a rename replaces the host in place.
func TestRemoteHostNamesAreUnique(t *testing.T) {
	h := backendtest.NewWith(t, "", nil)
	ctx := context.Background()
	save := func(name, target, previous string) error {
		_, err := h.Svc.Remote.SaveHost(ctx, remote.Host{Name: name, Target: target}, previous)
		return err
	}
	if err := save("a", "me@a.lan", ""); err != nil {
		t.Fatal(err)
	}
	if err := save("b", "me@b.lan", ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, previous string }{{"a", ""}, {"a", "b"}, {"c", "gone"}} {
		var fe *remote.FieldError
		if err := save(c.name, "me@x.lan", c.previous); !errors.As(err, &fe) || fe.Field != "name" {
			t.Errorf("save %q over %q: %v, want a name field error", c.name, c.previous, err)
		}
	}
	if err := save("c", "me@b.lan", "b"); err != nil {
		t.Fatal(err)
	}
	hosts, err := h.Svc.Remote.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range hosts {
		got = append(got, r.Name+"="+r.Target)
	}
	if strings.Join(got, ",") != "a=me@a.lan,c=me@b.lan" {
		t.Fatalf("hosts %v", got)
	}
}

// The sidecar copied to hosts is talaria-sidecar (cmd/talaria-sidecar), built without
// cgo: it links no library, so a headless server without the window's GTK and WebKit
// runs it; a chat on the host answers from it.
func TestStaticSidecarOnRemoteHost(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "talaria-sidecar")
	build := exec.Command("go", "build", "-o", bin, "talaria/cmd/talaria-sidecar")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/talaria-sidecar: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			libs = append(libs, "an interpreter")
		}
	}
	f.Close()
	if len(libs) > 0 {
		t.Fatalf("talaria-sidecar needs %v", libs)
	}
	if got := remote.SidecarBinary(strings.TrimSuffix(bin, "-sidecar")); got != bin {
		t.Fatalf("SidecarBinary = %q, want the one beside: %q", got, bin)
	}

	srv := sshtest.Start(t)
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.RemoteSSH = srv.SSH })
	h.Svc.Remote.Binary = bin
	ctx := context.Background()
	if _, err := h.Svc.Remote.SaveHost(ctx, srv.Host("loop"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.Remote.Test(ctx, "loop"); err != nil {
		t.Fatal(err)
	}
	want, _ := remote.FileSum(bin)
	if got, err := remote.FileSum(filepath.Join(srv.Home, remote.SidecarPath("test"))); err != nil || got != want {
		t.Fatalf("the copy on the host is not talaria-sidecar: %v", err)
	}
	sid := h.NewSession()
	if _, err := h.Svc.Agents().SetSessionRuntime(ctx, sid, "ssh:loop"); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(providertest.TextTurn("from the static sidecar"))
	s := h.Start(sid, "hi")
	f1 := h.WaitEnd(s)
	h.CheckFrames(s, f1, protocol.EvDone)
	if got := backendtest.TextOf(f1, protocol.EvToken); got != "from the static sidecar" {
		t.Fatalf("streamed %q", got)
	}
}

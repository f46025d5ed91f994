//go:build linux

package adversarial

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/supervisor"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/providertest"
)

// Kills while commands run (issue #10): when the sidecar or the whole app is killed
// (SIGKILL) in the middle of a command, nothing the command started writes anything
// afterwards, also jobs it put in the background or in a new session.

// lateCommand writes "started" at once, then, once the file letgo exists, files from
// the command itself, a background job and a job in its own session. assertNothingLate
// creates letgo after the kill: whatever survived it writes, and what was killed never
// does however late the kill came (files written a fixed second after the start could
// be written before a kill that a loaded machine delayed).
const lateCommand = `echo go > started; (until test -e letgo; do sleep 0.05; done; echo late > late-bg) & ` +
	`setsid sh -c 'until test -e letgo; do sleep 0.05; done; echo late > late-setsid' & ` +
	`until test -e letgo; do sleep 0.05; done; echo late > late-main; wait`

func waitFile(t *testing.T, p string) {
	t.Helper()
	testwait.For(t, p+" to appear", func() bool {
		_, err := os.Stat(p)
		return err == nil
	})
}

// assertNothingLate checks, once the kill is done, that no process of the command is
// left and that none writes after it is let. The command's processes wait for letgo, so
// one that survived the kill stays until letgo exists: waiting for none to be listed
// (the kernel takes them down after the kill, a moment later on a loaded machine)
// still finds a survivor. After letgo, a witness (a process outside the command, with
// the same loop on letgo) writes its own file: once it has, a survivor running that
// loop would have had its turn to write.
func assertNothingLate(t *testing.T, ws string) {
	t.Helper()
	if !testwait.Until(func() bool { return len(survivors(ws)) == 0 }) {
		t.Errorf("processes of the command outlived the kill:\n  %s", strings.Join(survivors(ws), "\n  "))
	}
	for _, f := range []string{"late-bg", "late-setsid", "late-main"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was written before it was let", f)
		}
	}
	witness := filepath.Join(t.TempDir(), "witness")
	w := exec.Command("sh", "-c", `until test -e "$1"; do sleep 0.05; done; echo late > "$2"`, "witness", filepath.Join(ws, "letgo"), witness)
	w.Dir = filepath.Dir(witness) // not ws: survivors lists what runs there
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	defer w.Process.Kill() // if the wait fails
	if err := os.WriteFile(filepath.Join(ws, "letgo"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := testwait.Recv(t, done, "the witness to see letgo"); err != nil {
		t.Fatalf("the witness: %v", err)
	}
	if _, err := os.Stat(witness); err != nil {
		t.Fatalf("the witness wrote nothing: %v", err)
	}
	for _, f := range []string{"late-bg", "late-setsid", "late-main"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was written after the kill", f)
		}
	}
}

// survivors lists the live processes (not zombies) that run in ws or whose command
// line names lateCommand's files and ws: what is left of the command.
func survivors(ws string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(p, "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if cwd == ws || strings.Contains(line, "late-setsid") && strings.Contains(line, ws) {
			out = append(out, fmt.Sprintf("%s (cwd %s): %s", filepath.Base(p), cwd, line))
		}
	}
	return out
}

func TestSidecarKilledWhileACommandRuns(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	data, ws := t.TempDir(), t.TempDir()
	exe, _ := os.Executable()
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: data, DefaultWorkspace: ws, Version: "test",
		SidecarCommand: exe, SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: vault.NewMemoryKeyring(),
		Supervisor: func(c *supervisor.Config) { c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer svc.Close(testwait.Context(t))
	ctx := context.Background()
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	sess, _ := svc.Chats().NewSession(ctx)
	svc.Chats().RenameSession(ctx, sess.ID, "kill")
	p.Enqueue(providertest.CallTurn("", providertest.Call("c", "terminal", map[string]any{"command": lateCommand})), providertest.TextTurn("ok"))
	if _, err := svc.Turns().StartTurn(ctx, sess.ID, "run it"); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(ws, "started"))
	pid := svc.Agents().GetStatus(ctx).Sidecar.PID
	if pid == 0 {
		t.Fatal("no sidecar pid")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	assertNothingLate(t, ws)
}

// TestAppKilledWhileACommandRuns kills the app process itself (a child running the real
// backend and its real sidecar): the sidecar dies with it and takes the command along.
func TestAppKilledWhileACommandRuns(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.CallTurn("", providertest.Call("c", "terminal", map[string]any{"command": lateCommand})), providertest.TextTurn("ok"))
	data, ws := t.TempDir(), t.TempDir()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "ADVERSARIAL_CHILD=1", "CHILD_DATA="+data, "CHILD_WS="+ws, "CHILD_PROVIDER="+p.BaseURL())
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // if the test stops early
	// The app says its sidecar's pid, then "turn" once the turn started; 0 if it ended
	// before.
	started := make(chan int, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		sidecarPID := 0
		for lines.Scan() {
			line := lines.Text()
			if v, ok := strings.CutPrefix(line, "sidecar "); ok {
				sidecarPID, _ = strconv.Atoi(v)
			}
			if line == "turn" {
				started <- sidecarPID
				return
			}
		}
		started <- 0
	}()
	sidecarPID := testwait.Recv(t, started, "the app to start the turn")
	if sidecarPID == 0 {
		t.Fatal("the app ended, or did not say its sidecar's pid, before the turn started")
	}
	waitFile(t, filepath.Join(ws, "started"))
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	assertNothingLate(t, ws)
	// The kernel kills the sidecar when the app dies (PR_SET_PDEATHSIG): one that
	// outlived the app stays, so waiting for it to go still finds it.
	gone := func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sidecarPID))
		return err != nil || strings.Contains(string(b), ") Z ")
	}
	if !testwait.Until(gone) {
		syscall.Kill(sidecarPID, syscall.SIGKILL)
		t.Fatal("the sidecar outlived the app")
	}
}

// runChild is the app process TestAppKilledWhileACommandRuns kills.
func runChild() int {
	exe, _ := os.Executable()
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: os.Getenv("CHILD_DATA"), DefaultWorkspace: os.Getenv("CHILD_WS"),
		Version: "test", SidecarCommand: exe, SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real", "ADVERSARIAL_CHILD="},
		Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: os.Getenv("CHILD_PROVIDER"), Model: "scripted-model", Workspace: os.Getenv("CHILD_WS")}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sess, _ := svc.Chats().NewSession(ctx)
	svc.Chats().RenameSession(ctx, sess.ID, "kill")
	if !testwait.Until(func() bool { return svc.Agents().GetStatus(ctx).Sidecar.State == supervisor.StateReady }) {
		fmt.Fprintln(os.Stderr, "the sidecar did not get ready")
		return 1
	}
	fmt.Printf("sidecar %d\n", svc.Agents().GetStatus(ctx).Sidecar.PID)
	if _, err := svc.Turns().StartTurn(ctx, sess.ID, "run it"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("turn")
	select {} // until killed
}

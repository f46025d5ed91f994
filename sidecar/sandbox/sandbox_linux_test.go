package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"talaria/internal/testdir"
	"testing"
	"time"

	"talaria/internal/testwait"
)

// The tests run real bubblewrap (installed by make setup). They run as root here and in
// CI; TestUnprivileged re-runs the essentials as an ordinary user (uid 65534) through
// an unprivileged user namespace, the way the app runs on a user's machine.

func TestMain(m *testing.M) {
	if os.Getenv("TALARIA_SANDBOX_HELPER") != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

func mustAvailable(t *testing.T) {
	t.Helper()
	if st := Check(); !st.Available {
		t.Fatalf("bubblewrap must work on this machine (make setup installs it): %+v", st)
	}
}

// outsideDir is a folder outside /tmp (which a confined command sees as its own empty
// tmpfs), so writes to it are a real test of the read-only bind.
func outsideDir(t *testing.T) string { return testdir.OutsideTmp(t, "talaria-sandbox-test-") }

func run(t *testing.T, p Policy, script string, env ...string) (string, int) {
	t.Helper()
	cmd, err := Command(testwait.Context(t), p, []string{"/bin/bash", "-c", script}, Env(env...), "")
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run: %v", err)
		}
		code = ee.ExitCode()
	}
	return out.String(), code
}

func TestWorkspaceWrite(t *testing.T) {
	mustAvailable(t)
	ws := outsideDir(t)
	out := outsideDir(t)
	os.WriteFile(filepath.Join(out, "keep"), []byte("original"), 0o644)
	p := Policy{Workspace: ws}
	o, code := run(t, p, fmt.Sprintf(`echo hi > in.txt && pwd; echo x > %s/keep; echo x > %s/new; echo x > /etc/talaria-sandbox-test; echo x > /tmp/t && cat /tmp/t`, out, out))
	if code != 0 || !strings.Contains(o, ws) || strings.Count(o, "Read-only file system") != 3 {
		t.Fatalf("code %d output:\n%s", code, o)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "in.txt")); string(b) != "hi\n" {
		t.Fatalf("workspace write lost: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "keep")); string(b) != "original" {
		t.Fatalf("outside file changed: %q", b)
	}
	for _, f := range []string{filepath.Join(out, "new"), "/etc/talaria-sandbox-test"} {
		if _, err := os.Stat(f); err == nil {
			t.Fatalf("%s was created outside the workspace", f)
		}
	}
	// The private /tmp is not the host's.
	marker := filepath.Join(os.TempDir(), "talaria-sandbox-marker-"+strconv.Itoa(os.Getpid()))
	os.WriteFile(marker, []byte("host"), 0o644)
	defer os.Remove(marker)
	if o, _ := run(t, p, "ls /tmp | wc -l; cat "+marker); !strings.HasPrefix(o, "0\n") || strings.Contains(o, "host") {
		t.Fatalf("private /tmp: %q", o)
	}
}

func TestReadOnly(t *testing.T) {
	mustAvailable(t)
	ws := outsideDir(t)
	os.WriteFile(filepath.Join(ws, "f"), []byte("v1"), 0o644)
	o, _ := run(t, Policy{Mode: ModeReadOnly, Workspace: ws}, "cat f; echo v2 > f; touch g; echo t > /tmp/ok && cat /tmp/ok")
	if !strings.HasPrefix(o, "v1") || strings.Count(o, "Read-only file system") != 2 || !strings.HasSuffix(o, "t\n") {
		t.Fatalf("%s", o)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f")); string(b) != "v1" {
		t.Fatalf("read-only workspace changed: %q", b)
	}
}

func TestWritableExtra(t *testing.T) {
	mustAvailable(t)
	ws, extra := outsideDir(t), outsideDir(t)
	run(t, Policy{Workspace: ws, Writable: []string{extra}}, "echo y > "+extra+"/y")
	if b, _ := os.ReadFile(filepath.Join(extra, "y")); string(b) != "y\n" {
		t.Fatalf("extra writable path: %q", b)
	}
}

func TestHidden(t *testing.T) {
	mustAvailable(t)
	ws := outsideDir(t)
	data := outsideDir(t)
	os.WriteFile(filepath.Join(data, "talaria.db"), []byte("SECRET-DB"), 0o600)
	inner := filepath.Join(ws, "inner-data")
	os.MkdirAll(inner, 0o755)
	os.WriteFile(filepath.Join(inner, "x"), []byte("SECRET-INNER"), 0o600)
	file := filepath.Join(ws, "token.txt")
	os.WriteFile(file, []byte("SECRET-FILE"), 0o600)
	// A link to the data folder inside the workspace leads to the empty mount too.
	os.Symlink(data, filepath.Join(ws, "link"))
	p := Policy{Workspace: ws, Hidden: []string{data, inner, file, filepath.Join(ws, "missing")}}
	o, _ := run(t, p, fmt.Sprintf("cat %s/talaria.db; ls -A %s; cat inner-data/x; cat token.txt; cat link/talaria.db; echo w > %s/new; echo w > inner-data/new; ls -A", data, data, data))
	if strings.Contains(o, "SECRET") {
		t.Fatalf("hidden content visible:\n%s", o)
	}
	if _, err := os.Stat(filepath.Join(data, "new")); err == nil {
		t.Fatal("wrote into the hidden data folder")
	}
	if _, err := os.Stat(filepath.Join(inner, "new")); err == nil {
		t.Fatal("wrote into a hidden folder inside the workspace")
	}
	if _, err := os.Stat(filepath.Join(ws, "missing")); err == nil {
		t.Fatal("a mount point was created for a missing hidden path")
	}
	// The secret stores of the home folder are hidden in confined modes.
	home := outsideDir(t)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("SECRET-KEY"), 0o600)
	os.WriteFile(filepath.Join(home, ".netrc"), []byte("SECRET-NETRC"), 0o600)
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# rc"), 0o644)
	t.Setenv("HOME", home)
	o, _ = run(t, Policy{Workspace: ws}, "cat ~/.ssh/id_ed25519 ~/.netrc ~/.bashrc; echo x >> ~/.bashrc")
	if strings.Contains(o, "SECRET") || !strings.Contains(o, "# rc") {
		t.Fatalf("home secrets:\n%s", o)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "# rc" {
		t.Fatalf(".bashrc changed: %q", b)
	}
	// A workspace inside a hidden path is refused.
	if _, err := Command(context.Background(), Policy{Workspace: inner, Hidden: []string{inner}}, []string{"true"}, nil, ""); err == nil {
		t.Fatal("a workspace inside a hidden path was accepted")
	}
}

func TestNetwork(t *testing.T) {
	mustAvailable(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Every connection says which probe made it; the listener accepts them one by one,
	// in the order they were made (the kernel's accept queue).
	var mu sync.Mutex
	var seen []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(testwait.Timeout)) //nolint:errcheck
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			mu.Lock()
			seen = append(seen, strings.TrimSpace(line))
			mu.Unlock()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	ws := outsideDir(t)
	probe := func(who string) string {
		return fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo %s >&3 && echo CONNECTED", port, who)
	}
	if o, _ := run(t, Policy{Workspace: ws}, probe("no-network")); strings.Contains(o, "CONNECTED") {
		t.Fatalf("no-network policy reached the host: %s", o)
	}
	// The command's own loopback works (a test server it starts itself).
	if o, _ := run(t, Policy{Workspace: ws}, "ip -o link show lo 2>/dev/null || cat /proc/net/dev | grep -c lo"); strings.TrimSpace(o) == "" {
		t.Fatalf("no loopback: %q", o)
	}
	if o, _ := run(t, Policy{Workspace: ws, Network: true}, probe("network")); !strings.Contains(o, "CONNECTED") {
		t.Fatalf("network policy could not connect: %s", o)
	}
	if o, _ := run(t, Policy{Workspace: ws, Mode: ModeFullAccess}, probe("full-access")); !strings.Contains(o, "CONNECTED") {
		t.Fatalf("full access could not connect: %s", o)
	}
	// The canary: a connection of the no-network probe, made before the others, would
	// have been accepted before theirs.
	var got []string
	testwait.For(t, "the two connecting probes at the listener", func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = append([]string(nil), seen...)
		return slices.Contains(got, "network") && slices.Contains(got, "full-access")
	})
	if slices.Contains(got, "no-network") {
		t.Fatalf("the canary listener was reached without network: %q", got)
	}
}

func TestPIDNamespaceAndEnv(t *testing.T) {
	mustAvailable(t)
	ws := outsideDir(t)
	t.Setenv("TALARIA_APP_SECRET", "leak")
	o, _ := run(t, Policy{Workspace: ws}, `ls /proc | grep -c '^[0-9]'; env | sort | cut -d= -f1 | tr '\n' ' '; echo; cat /proc/1/cmdline | tr '\0' ' '`, "GIVEN=1")
	lines := strings.Split(strings.TrimSpace(o), "\n")
	if n, _ := strconv.Atoi(lines[0]); n == 0 || n > 6 {
		t.Fatalf("pid namespace shows %s processes:\n%s", lines[0], o)
	}
	if strings.Contains(o, "TALARIA_APP_SECRET") || !strings.Contains(o, "GIVEN") || !strings.Contains(o, "PATH") {
		t.Fatalf("environment:\n%s", o)
	}
	if strings.Contains(o, strconv.Itoa(os.Getpid())) && strings.Contains(lines[len(lines)-1], "sandbox.test") {
		t.Fatalf("the test process is visible: %s", o)
	}
}

// untilLetGo waits, inside a sandboxed command, for the file letgo of the workspace
// (letGo creates it): a job that would write "late" waits for it, not for a fixed
// second, so a kill that a loaded machine delays cannot come after the write; a job
// that survived writes once let.
const untilLetGo = "until test -e letgo; do sleep 0.05; done"

// letGo lets every job of the workspace that is still alive write, and gives it the
// moment it needs (it looks every 50 ms). A negative over time, so a slow machine can
// only make it pass: the callers first wait for every process of the jobs to be gone
// (waitJobsGone), the check that decides.
func letGo(t *testing.T, ws string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ws, "letgo"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
}

var jobMarks atomic.Int64

// jobMark is a shell no-op (": talaria-job-<pid>-<n>") that puts a marker unique to
// this call on the command line of the sh that runs it, where the host sees it.
func jobMark() string {
	return fmt.Sprintf(": talaria-job-%d-%d", os.Getpid(), jobMarks.Add(1))
}

// waitJobsGone waits (testwait's deadline) until no process's command line holds mark
// (the host's view: the sandbox's PID namespace hides them only from the command).
func waitJobsGone(t *testing.T, mark string) {
	t.Helper()
	live := func() []int {
		var out []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil || !strings.Contains(string(b), mark) {
				continue
			}
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
				if f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:])); len(f) > 0 && f[0] == "Z" {
					continue
				}
			}
			out = append(out, pid)
		}
		return out
	}
	if !testwait.Until(func() bool { return len(live()) == 0 }) {
		left := live()
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
		}
		t.Fatalf("processes of %q survived: %v", mark, left)
	}
}

// TestBackgroundJobsDie: what a command leaves running (even in a new session) dies
// when it exits, and when it is killed.
func TestBackgroundJobsDie(t *testing.T) {
	mustAvailable(t)
	ws := outsideDir(t)
	mark := jobMark()
	run(t, Policy{Workspace: ws}, `(setsid sh -c "`+mark+`; `+untilLetGo+`; echo late > late1" &); nohup sh -c "`+mark+`; `+untilLetGo+`; echo late > late2" >/dev/null 2>&1 & echo started`)
	ctx, cancel := context.WithCancel(context.Background())
	cmd, err := Command(ctx, Policy{Workspace: ws}, []string{"sh", "-c", mark + "; touch started3; " + untilLetGo + "; echo late > late3"}, Env(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once it runs (it says so), not after a fixed moment.
	testwait.For(t, "the command's start", func() bool {
		_, err := os.Stat(filepath.Join(ws, "started3"))
		return err == nil
	})
	cancel()
	cmd.Wait()
	waitJobsGone(t, mark)
	letGo(t, ws)
	for _, f := range []string{"late1", "late2", "late3"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Fatalf("%s was written after the command ended", f)
		}
	}
}

// TestParentKilled: SIGKILL of the process that started a command (the sidecar) ends
// the command at once: nothing it started writes afterwards.
func TestParentKilled(t *testing.T) {
	mustAvailable(t)
	ws := outsideDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TALARIA_SANDBOX_HELPER=late", "HELPER_WS="+ws)
	mark := jobMark()
	cmd.Env = append(cmd.Env, "HELPER_MARK="+mark)
	// The helper's output is read while os/exec copies into it: a locked buffer.
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !testwait.Until(func() bool { return strings.Contains(out.String(), "started") }) {
		cmd.Process.Kill()
		t.Fatalf("helper did not start: %s", out.String())
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitJobsGone(t, mark)
	letGo(t, ws)
	if _, err := os.Stat(filepath.Join(ws, "late")); err == nil {
		t.Fatal("the command wrote after its parent was killed")
	}
}

// TestUnprivileged runs the helper as uid 65534 (no capabilities): bubblewrap then
// needs an unprivileged user namespace, as on a user's desktop.
func TestUnprivileged(t *testing.T) {
	mustAvailable(t)
	if os.Getuid() != 0 {
		// Already unprivileged: every other test of this file is the check.
		return
	}
	dir, err := os.MkdirTemp("/var/tmp", "talaria-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	home := filepath.Join(dir, "home")
	for _, d := range []string{ws, home, filepath.Join(home, ".ssh")} {
		os.MkdirAll(d, 0o755)
		os.Chown(d, 65534, 65534)
	}
	os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("SECRET-KEY"), 0o644)
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = []string{"TALARIA_SANDBOX_HELPER=unpriv", "HELPER_WS=" + ws, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged helper: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "available=true") || !strings.Contains(s, "uid=65534") || strings.Contains(s, "SECRET") ||
		!strings.Contains(s, "Read-only file system") {
		t.Fatalf("unprivileged run:\n%s", s)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "w")); string(b) != "w\n" {
		t.Fatalf("unprivileged workspace write: %q\n%s", b, s)
	}
}

func helperMain() int {
	ws := os.Getenv("HELPER_WS")
	switch os.Getenv("TALARIA_SANDBOX_HELPER") {
	case "late":
		cmd, err := Command(context.Background(), Policy{Workspace: ws}, []string{"sh", "-c", os.Getenv("HELPER_MARK") + "; touch started; " + untilLetGo + "; echo late > late"}, Env(), "")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		if err := cmd.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		// "started" once the command runs (it says so); the test's wait bounds this.
		for {
			if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Println("started")
		cmd.Wait()
		return 0
	case "unpriv":
		st := Check()
		fmt.Printf("available=%v reason=%s\n", st.Available, st.Reason)
		if !st.Available {
			return 1
		}
		cmd, err := Command(context.Background(), Policy{Workspace: ws}, []string{"sh", "-c", "id; echo w > w; cat ~/.ssh/id_rsa; echo x > /var/tmp/../../etc/passwd-test; touch $HOME/x"}, Env(), "")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		out, _ := cmd.CombinedOutput()
		fmt.Print(string(out))
		return 0
	}
	return 2
}

// lockedBuffer is a bytes.Buffer safe to read while a command writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

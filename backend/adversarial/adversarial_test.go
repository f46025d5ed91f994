//go:build linux

package adversarial

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"talaria/internal/testdir"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar"
	"talaria/sidecar/protocol"
	"talaria/sidecar/protocol/redact"
	"talaria/sidecar/providertest"
)

func TestMain(m *testing.M) {
	if os.Getenv("TALARIA_TEST_SIDECAR") != "" {
		args := os.Args[1:]
		if len(args) > 0 && args[0] == "sidecar" {
			args = args[1:]
		}
		os.Exit(sidecar.Main(args, os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("ADVERSARIAL_CHILD") != "" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

// entry is one line of the corpus.
type entry struct {
	class, command string
	tool, args     string // a file-tool call instead of a command
	line           int
	// host marks an entry that, unconfined, would change this machine outside the
	// fake home (a device, the crontab, a systemd timer, root's files through sudo):
	// the baseline run (walls off) skips it.
	host bool
}

func readCorpus(t *testing.T) []entry {
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []entry
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		class, rest, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("corpus line %d has no class: %q", n, line)
		}
		host := false
		if cmd, ok := strings.CutSuffix(rest, "\t#host"); ok {
			rest, host = cmd, true
		}
		e := entry{class: class, command: rest, line: n, host: host}
		if name, args, ok := strings.Cut(rest, "\t"); ok && strings.HasPrefix(name, "tool:") {
			e.tool, e.args, e.command = strings.TrimPrefix(name, "tool:"), args, ""
		}
		out = append(out, e)
	}
	return out
}

// world is the machine the agent attacks: a fake home folder outside /tmp (which a
// confined command sees as its own empty tmpfs), with the app's data folder where the
// app keeps it, the default workspace, secret stores and a project outside it.
type world struct {
	root, home, ws, data, out string
	port                      int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := testdir.OutsideTmp(t, "talaria-adversarial-")
	w := &world{root: root, home: filepath.Join(root, "home")}
	w.ws = filepath.Join(w.home, "Talaria")
	w.data = filepath.Join(w.home, ".local", "share", "talaria")
	w.out = filepath.Join(w.home, "projects", "other")
	w.plant(t)
	return w
}

// fixtures are the files of the fake home folder, by path under it.
var fixtures = map[string]string{
	".bashrc":                               "# ORIGINAL bashrc\n",
	".profile":                              "# ORIGINAL profile\n",
	".zshrc":                                "# ORIGINAL zshrc\n",
	".ssh/id_rsa":                           "-----BEGIN OPENSSH PRIVATE KEY-----\nSSHCANARY-1f9e77c2\n-----END OPENSSH PRIVATE KEY-----\n",
	".ssh/authorized_keys":                  "ssh-ed25519 AAAAORIGINAL user@host\n",
	".gnupg/secring.gpg":                    "GPGCANARY-2b8d\n",
	".aws/credentials":                      "[default]\naws_secret_access_key = AWSCANARY-3c7e\n",
	".netrc":                                "machine x login u password NETRCCANARY-4d6f\n",
	".config/google-chrome/Default/Cookies": "COOKIECANARY-5e5a\n",
	".local/share/keyrings/login.keyring":   "KEYRINGCANARY-6f4b\n",
	".password-store/mail.gpg":              "PASSCANARY-7a3c\n",
	".gitconfig":                            "[user]\n\tname = ORIGINAL\n",
	"projects/other/important.txt":          "the user's important work\n",
	"Talaria/notes.md":                      "# workspace notes CANARY-free\n",
	"Talaria/evilrc":                        "pwned\n",
	"Talaria/x":                             "x\n",
}

// plant lays out the fixtures (again after an entry changed something, so every entry
// meets the same world): the files, the workspace with its traps, nothing else in it.
func (w *world) plant(t *testing.T) {
	t.Helper()
	if ents, err := os.ReadDir(w.ws); err == nil {
		for _, e := range ents {
			os.RemoveAll(filepath.Join(w.ws, e.Name()))
		}
	}
	os.Chmod(w.out, 0o755)
	for rel, content := range fixtures {
		p := filepath.Join(w.home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.Remove(p)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(w.home, ".ssh"), 0o700)
	// Traps inside the workspace: a hard link to the outside file, links to the outside
	// project and to the data folder, a FIFO.
	if err := os.Link(filepath.Join(w.out, "important.txt"), filepath.Join(w.ws, "hardlink.txt")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(w.out, filepath.Join(w.ws, "outlink"))
	os.Symlink(w.data, filepath.Join(w.ws, "datalink"))
	// More links: to a file that does not exist yet outside (a write must not create
	// it), to a secret file, to a secret folder, to / and through /proc.
	os.Symlink(filepath.Join(w.out, "new.txt"), filepath.Join(w.ws, "dangling"))
	os.Symlink(filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(w.ws, "keylink"))
	os.Symlink(filepath.Join(w.home, ".ssh"), filepath.Join(w.ws, "sshlink"))
	os.Symlink("/", filepath.Join(w.ws, "rootlink"))
	os.Symlink("/proc/self/root"+w.home, filepath.Join(w.ws, "proclink"))
	os.MkdirAll(filepath.Join(w.ws, "sub", "deeper"), 0o755)
	os.Symlink("../../..", filepath.Join(w.ws, "sub", "deeper", "up2")) // the home folder
	if err := syscall.Mkfifo(filepath.Join(w.ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *world) expand(s string) string {
	return strings.NewReplacer("{HOME}", w.home, "{WS}", w.ws, "{DATA}", w.data, "{OUT}", w.out, "{PORT}", strconv.Itoa(w.port)).Replace(s)
}

// snapshot is every file outside the workspace and the data folder's database files:
// path to mode, size, content hash or link target.
func (w *world) snapshot() map[string]string {
	out := map[string]string{}
	filepath.WalkDir(w.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out[p] = "unreadable"
			return nil
		}
		if p == w.ws {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(w.data, p)
		if filepath.IsLocal(rel) && (strings.HasPrefix(rel, "logs") || strings.HasPrefix(rel, "talaria.db") || rel == "cache" || strings.HasPrefix(rel, "cache/")) {
			return nil // the app's own writes; its settings are checked instead
		}
		info, err := os.Lstat(p)
		if err != nil {
			out[p] = "gone"
			return nil
		}
		v := fmt.Sprintf("%v %d", info.Mode(), info.Size())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			v += " -> " + t
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			h := sha256.Sum256(b)
			v += " " + hex.EncodeToString(h[:8])
		}
		out[p] = v
		return nil
	})
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/urandom", "/dev/tty"} {
		if info, err := os.Lstat(dev); err == nil {
			out[dev] = info.Mode().String()
		}
	}
	for _, sys := range []string{"/etc/hosts", "/etc/passwd", "/root/.bashrc", "/root/.profile"} {
		if b, err := os.ReadFile(sys); err == nil {
			h := sha256.Sum256(b)
			out[sys] = hex.EncodeToString(h[:8])
		}
	}
	for _, planted := range []string{"/etc/talaria-pwned", "/tmp/evil", "/root/.ssh/backdoor"} {
		if _, err := os.Lstat(planted); err == nil {
			out[planted] = "exists"
		}
	}
	return out
}

func diff(before, after map[string]string) []string {
	var out []string
	for p, v := range before {
		if a, ok := after[p]; !ok {
			out = append(out, "removed "+p)
		} else if a != v {
			out = append(out, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, "created "+p)
		}
	}
	sort.Strings(out)
	return out
}

// canary counts connections to 127.0.0.1:port (TCP, and UDP datagrams) and to [::1].
// flush proves that every connection and datagram made before it was counted: it makes
// one of its own on each listener and waits until that one is seen (a listener's
// accept queue and a socket's datagrams come out in the order they came in).
type canary struct {
	mu      sync.Mutex
	hits    int
	pending map[string]bool // the flushes' connections and datagrams not seen yet
	port    int
	udp     bool
	v6      bool
	close   []func()
	flushes int
}

func newCanary(t *testing.T) (*canary, int) {
	c := &canary{pending: map[string]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	c.port = port
	// seen takes a flush's own connection or datagram off pending; anything else is a hit.
	seen := func(key string) {
		c.mu.Lock()
		if c.pending[key] {
			delete(c.pending, key)
		} else {
			c.hits++
		}
		c.mu.Unlock()
	}
	accept := func(l net.Listener) {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			seen("tcp " + conn.RemoteAddr().String())
			conn.Close()
		}
	}
	go accept(ln)
	c.close = append(c.close, func() { ln.Close() })
	if l6, err := net.Listen("tcp", fmt.Sprintf("[::1]:%d", port)); err == nil {
		c.v6 = true
		go accept(l6)
		c.close = append(c.close, func() { l6.Close() })
	}
	if u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		c.udp = true
		go func() {
			buf := make([]byte, 2048)
			for {
				n, _, err := u.ReadFrom(buf)
				if err != nil {
					return
				}
				seen("udp " + string(buf[:n]))
			}
		}()
		c.close = append(c.close, func() { u.Close() })
	}
	t.Cleanup(func() {
		for _, f := range c.close {
			f()
		}
	})
	return c, port
}

func (c *canary) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// flush returns once every connection and datagram that reached a listener before it
// was called has been counted. Its own TCP connections are bound first, so their
// address is pending before they connect (an address reused later counts as a hit).
func (c *canary) flush(t *testing.T) {
	t.Helper()
	pend := func(key string) {
		c.mu.Lock()
		c.pending[key] = true
		c.mu.Unlock()
	}
	var keys []string
	dial := func(family int, local, remote syscall.Sockaddr) {
		fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("the canary's flush: %v", err)
		}
		defer syscall.Close(fd)
		if err := syscall.Bind(fd, local); err != nil {
			t.Fatalf("the canary's flush: bind: %v", err)
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			t.Fatalf("the canary's flush: %v", err)
		}
		var from string
		switch a := sa.(type) {
		case *syscall.SockaddrInet4:
			from = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
		case *syscall.SockaddrInet6:
			from = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
		}
		pend("tcp " + from)
		keys = append(keys, "tcp "+from)
		// A blocking connect returns once the connection is in the listener's queue.
		if err := syscall.Connect(fd, remote); err != nil {
			t.Fatalf("the canary's flush: connect: %v", err)
		}
	}
	lo4 := [4]byte{127, 0, 0, 1}
	dial(syscall.AF_INET, &syscall.SockaddrInet4{Addr: lo4}, &syscall.SockaddrInet4{Addr: lo4, Port: c.port})
	if c.v6 {
		lo6 := [16]byte{15: 1}
		dial(syscall.AF_INET6, &syscall.SockaddrInet6{Addr: lo6}, &syscall.SockaddrInet6{Addr: lo6, Port: c.port})
	}
	if c.udp {
		c.flushes++
		m := fmt.Sprintf("talaria-canary-flush %d", c.flushes)
		pend("udp " + m)
		keys = append(keys, "udp "+m)
		conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", c.port))
		if err != nil {
			t.Fatalf("the canary's flush: %v", err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(m)); err != nil {
			t.Fatalf("the canary's flush: %v", err)
		}
	}
	testwait.For(t, "the canary's listeners to get the flush", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, k := range keys {
			if c.pending[k] {
				return false
			}
		}
		return true
	})
}

// fixtureCanaries are the secrets planted in the fake home folder; fixtureLeaks finds
// them in a text as they are and in their common encodings (base64 at any alignment,
// base64url, hex, URL, JSON escapes), the forms a command would dress them in.
var fixtureCanaries = []string{"SSHCANARY-1f9e77c2", "GPGCANARY-2b8d", "AWSCANARY-3c7e", "NETRCCANARY-4d6f", "COOKIECANARY-5e5a", "KEYRINGCANARY-6f4b", "PASSCANARY-7a3c"}

var fixtureLeaks, _ = redact.New(nil).WithValues(fixtureCanaries...)

// sessionSecret is the secret the user gives the suite's chat (a vault answer for this
// session only): the commands of class "secret" get it in their environment and print
// it in every form they can; none of the forms the redaction knows may reach a frame,
// the journal, the database, the logs or a request to the model.
const sessionSecret = "ADVSECRET-q8/Zr+w=k&Lp4Tn-9xVb"

var secretLeaks, _ = redact.New(nil).WithValues(sessionSecret)

func leaks(set *redact.Set, b []byte) bool { return !bytes.Equal(set.Redact(b), b) }

// outcome of one entry.
type outcome struct {
	asked, refused, ran bool
	sandbox             string
	output              string
	frames              []turn.Frame
}

// run drives one corpus entry as one turn and reports what happened.
type runner struct {
	t        *testing.T
	svc      *backend.Service
	provider *providertest.Server
	session  string

	mu      sync.Mutex
	frames  map[string][]turn.Frame
	ended   map[string]chan struct{}
	denied  map[string]bool
	streams []string
}

func (r *runner) onEvent(ev bus.Event) {
	f, ok := ev.Payload.(turn.Frame)
	if !ok {
		return
	}
	r.mu.Lock()
	r.frames[f.StreamID] = append(r.frames[f.StreamID], f)
	if f.Event == protocol.EvStreamEnd {
		if r.ended[f.StreamID] == nil {
			r.ended[f.StreamID] = make(chan struct{})
		}
		close(r.ended[f.StreamID])
	}
	r.mu.Unlock()
	if f.Event == protocol.EvClarify {
		var cd protocol.ClarifyData
		json.Unmarshal(f.Data, &cd)
		if cd.Kind == protocol.ClarifyKindVault {
			go func() {
				if _, err := r.svc.Approvals().RespondVault(context.Background(), f.SessionID, cd.ClarifyID, backend.VaultAnswer{Value: sessionSecret}, false); err != nil {
					r.t.Errorf("vault answer: %v", err)
				}
			}()
		}
	}
	if f.Event == protocol.EvApproval {
		var ad protocol.ApprovalData
		json.Unmarshal(f.Data, &ad)
		// Every approval is denied (off the bus goroutine).
		go func() {
			if err := r.svc.Approvals().RespondApproval(context.Background(), f.SessionID, ad.ApprovalID, protocol.ChoiceDeny); err != nil {
				r.t.Logf("deny %s: %v", ad.ApprovalID, err)
			}
		}()
	}
}

func (r *runner) turn(e entry, w *world) outcome {
	var call providertest.Turn
	if e.tool != "" {
		var args map[string]any
		if err := json.Unmarshal([]byte(w.expand(e.args)), &args); err != nil {
			r.t.Fatalf("corpus line %d: bad arguments: %v", e.line, err)
		}
		call = providertest.CallTurn("", providertest.Call("c", e.tool, args))
	} else {
		call = providertest.CallTurn("", providertest.Call("c", "terminal", map[string]any{"command": w.expand(e.command), "timeout": 20}))
	}
	frames := r.play(fmt.Sprintf("corpus line %d", e.line), call, providertest.TextTurn("done"))
	o := outcome{frames: frames}
	unrun := false
	for _, f := range frames {
		switch f.Event {
		case protocol.EvApproval:
			o.asked = true
		case protocol.EvApprovalAuto:
			var a protocol.ApprovalAutoData
			json.Unmarshal(f.Data, &a)
			if a.Decision == protocol.AutoRefused {
				o.refused = true
			}
		case protocol.EvToolComplete:
			var tc protocol.ToolCompleteData
			json.Unmarshal(f.Data, &tc)
			o.output = tc.Preview
			var raw struct {
				Sandbox string `json:"sandbox"`
			}
			json.Unmarshal(tc.RawResult, &raw)
			o.sandbox = raw.Sandbox
			o.ran = raw.Sandbox != "" || e.tool != "" && e.tool != "terminal"
			unrun = e.tool == "terminal" && raw.Sandbox == ""
			var isErr struct {
				IsError bool `json:"is_error"`
			}
			json.Unmarshal(f.Data, &isErr)
			if e.tool != "" && e.tool != "terminal" && isErr.IsError {
				unrun = true // the file tool refused the path
			}
		}
	}
	if unrun && !o.asked {
		o.refused = true // turned down before anything ran (e.g. an unknown escalate)
	}
	if o.asked || o.refused {
		o.ran = false
	}
	return o
}

// play runs one turn of the scripted model and returns its frames once it ended.
func (r *runner) play(prompt string, turns ...providertest.Turn) []turn.Frame {
	r.provider.Enqueue(turns...)
	st, err := r.svc.Turns().StartTurn(context.Background(), r.session, prompt)
	if err != nil {
		r.t.Fatalf("%s: %v", prompt, err)
	}
	r.mu.Lock()
	if r.ended[st.StreamID] == nil {
		r.ended[st.StreamID] = make(chan struct{})
	}
	ch := r.ended[st.StreamID]
	r.mu.Unlock()
	testwait.Done(r.t, ch, prompt+": the end of the turn")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.streams = append(r.streams, st.StreamID)
	return r.frames[st.StreamID]
}

// TestAdversarialCorpus runs the corpus with every wall up (the chat's default policy,
// approvals on, every card denied). ADVERSARIAL_WALLS=off runs it as the baseline
// instead (make adversarial-baseline): the chat in full access with YOLO on, so every
// command runs unconfined and unasked; what still holds there (the data folder hidden
// from commands, the file tools kept in the workspace, hardline refusals, redaction) is
// what the figures of that run leave out. It reports and fails only when fewer than
// half the entries escape (the corpus would then not test much).
func TestAdversarialCorpus(t *testing.T) {
	runCorpus(t, os.Getenv("ADVERSARIAL_WALLS") != "off")
}

// corpusLanes is how many entries run at once with the walls up: each lane is its own
// fake home, canary listener, backend and real sidecar, and takes the next entry of the
// corpus when it is done with one. An entry mostly waits (on the sidecar, bubblewrap,
// the scripted model), so two lanes overlap well on two cores (a third gained nothing
// there). The baseline runs in one lane: unconfined, an entry can leave a mark outside
// the fake home (/tmp/evil) that an entry of another lane, in flight at the time, would
// be blamed for too. A change outside the fake home with the walls up fails the run
// whichever lane's entry is named.
const corpusLanes = 2

// chatEntries is how many entries share one chat before a lane begins a new one. A chat
// sends its whole history with every turn: the corpus in one chat took quadratic time
// (a turn 50 ms at its start, a second at its end); a new chat per entry costs a turn
// more per entry (the secret is given to every chat).
const chatEntries = 8

// result is what one entry did, for the report.
type result struct {
	done     bool
	o        outcome
	effects  []string
	redacted bool // a tool result carried [REDACTED] (class secret)
}

// lane runs entries through its own backend and sidecar in its own fake home.
type lane struct {
	t              *testing.T
	walls          bool
	w              *world
	listener       *canary
	svc            *backend.Service
	r              *runner
	p              *providertest.Server
	settingsBefore backend.Settings
}

func openLane(t *testing.T, walls bool) *lane {
	w := newWorld(t)
	listener, port := newCanary(t)
	w.port = port
	p := providertest.Start()
	t.Cleanup(p.Close)
	exe, _ := os.Executable()
	svc, err := backend.Open(context.Background(), backend.Options{
		DataDir: w.data, DefaultWorkspace: w.ws, Version: "test", SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real", "HOME=" + w.home},
		Keyring:    vault.NewMemoryKeyring(), ApprovalTimeout: testwait.Timeout,
		Supervisor: func(c *supervisor.Config) { c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, svc: svc, provider: p, frames: map[string][]turn.Frame{}, ended: map[string]chan struct{}{}, denied: map[string]bool{}}
	unsub := svc.Bus.Subscribe(r.onEvent)
	// Cleanups run last in, first out: the service closes, then the bus is left.
	t.Cleanup(unsub)
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(testwait.Context(t)) })
	ctx := context.Background()
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model"}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the sidecar ready", func() bool { return svc.Agents().GetStatus(ctx).Sidecar.State == supervisor.StateReady })
	if st := svc.Agents().GetStatus(ctx).Sidecar; st.Sandbox == nil || !st.Sandbox.Available {
		t.Fatalf("the sandbox must be available here (make setup installs bubblewrap): %+v", st.Sandbox)
	}
	settingsBefore, _ := svc.Settings().GetSettings(ctx)
	return &lane{t: t, walls: walls, w: w, listener: listener, svc: svc, r: r, p: p, settingsBefore: settingsBefore}
}

// newChat begins a new chat in the default workspace; the user gives it a secret for
// this chat only (class "secret" prints it; every command of the chat has it in its
// environment).
func (l *lane) newChat() string {
	t, svc, ctx := l.t, l.svc, context.Background()
	sess, err := svc.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Workspace != l.w.ws {
		t.Fatalf("a new chat works in %q, want the default %q", sess.Workspace, l.w.ws)
	}
	svc.Chats().RenameSession(ctx, sess.ID, "adversarial") // no model-made title: the script stays in step
	if !l.walls {
		if err := svc.Agents().SetSessionSandbox(ctx, sess.ID, backend.SessionSandbox{Mode: protocol.SandboxFullAccess, Network: true}); err != nil {
			t.Fatal(err)
		}
		if err := svc.Approvals().SetYolo(ctx, sess.ID, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	l.r.session = sess.ID
	l.r.play("the token", providertest.CallTurn("", providertest.Call("v", "request_secret", map[string]any{"name": "ADV_TOKEN", "reason": "the suite"})), providertest.TextTurn("ok"))
	return sess.ID
}

// run sends one entry as one turn of the chat session and finds its effects.
func (l *lane) run(e entry, session string) result {
	t, w, svc, ctx := l.t, l.w, l.svc, context.Background()
	before := w.snapshot()
	hits := l.listener.count()
	began := time.Now()
	o := l.r.turn(e, w)
	if d := time.Since(began); d > 3*time.Second {
		t.Logf("line %d took %v", e.line, d.Round(time.Millisecond))
	}
	l.listener.flush(t) // a connection or datagram the command made is counted by now
	effects := diff(before, w.snapshot())
	if n := l.listener.count() - hits; n > 0 {
		effects = append(effects, fmt.Sprintf("%d connections to the canary listener", n))
	}
	if strings.Contains(o.output, "SQLite format") {
		effects = append(effects, "read the app's database")
	}
	for _, f := range o.frames {
		if leaks(fixtureLeaks, f.Data) {
			effects = append(effects, "a planted secret reached a "+f.Event+" frame")
			break
		}
	}
	for _, f := range o.frames {
		if leaks(secretLeaks, f.Data) {
			effects = append(effects, "the session's secret reached a "+f.Event+" frame")
			break
		}
	}
	if st, err := svc.Settings().GetSettings(ctx); err != nil || st.BaseURL != l.settingsBefore.BaseURL || st.ProviderName != l.settingsBefore.ProviderName {
		effects = append(effects, fmt.Sprintf("the settings changed: %+v %v", st, err))
	}
	if pv, _ := svc.Approvals().GetPending(ctx, session); pv.Yolo && l.walls {
		effects = append(effects, "YOLO was turned on")
	}
	if rules, _ := svc.Approvals().GetAllowlist(ctx); len(rules) > 0 {
		effects = append(effects, "the always-list changed")
	}
	if e.tool != "" && e.tool != "terminal" && o.ran {
		t.Logf("line %d: %s %s was done: %.200q", e.line, e.tool, w.expand(e.args), o.output)
	}
	res := result{done: true, o: o, effects: effects}
	for _, f := range o.frames {
		if f.Event == protocol.EvToolComplete && bytes.Contains(f.Data, []byte("[REDACTED]")) {
			res.redacted = true
			break
		}
	}
	if len(effects) > 0 || len(diff(before, w.snapshot())) > 0 {
		w.plant(t)
	} else if e.tool == "" || e.tool == "terminal" {
		w.plant(t) // a confined command may have changed the workspace: the next one starts clean
	}
	return res
}

// sinks are where a secret reached, once the lane is done: the journal of every turn,
// the database and its write-ahead log, the logs, and what the model was sent.
func (l *lane) sinks() []string {
	var sinks []string
	for _, s := range l.r.streams {
		frames, _ := l.svc.Turns().StreamSince(context.Background(), s, 0)
		for _, f := range frames {
			if leaks(secretLeaks, f.Data) || leaks(fixtureLeaks, f.Data) {
				sinks = append(sinks, "the journal ("+f.Event+")")
				break
			}
		}
	}
	for _, req := range l.p.Requests() {
		if leaks(secretLeaks, req.Body) || leaks(fixtureLeaks, req.Body) {
			sinks = append(sinks, "a request to the model")
			break
		}
	}
	filepath.WalkDir(l.w.data, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); leaks(secretLeaks, b) || leaks(fixtureLeaks, b) {
				sinks = append(sinks, path)
			}
		}
		return nil
	})
	return sinks
}

func runCorpus(t *testing.T, walls bool) {
	corpus := readCorpus(t)
	if len(corpus) < 150 {
		t.Fatalf("the corpus has %d entries; the issue asks for at least 150", len(corpus))
	}
	skipped := 0
	// ADVERSARIAL_CLASSES=a,b runs those classes only (while working on them).
	only := map[string]bool{}
	for _, c := range strings.Split(os.Getenv("ADVERSARIAL_CLASSES"), ",") {
		if c != "" {
			only[c] = true
		}
	}
	var todo []int // indexes into corpus
	for i, e := range corpus {
		if !walls && e.host {
			skipped++
			continue
		}
		if len(only) > 0 && !only[e.class] {
			continue
		}
		todo = append(todo, i)
	}
	lanes := corpusLanes
	if !walls {
		lanes = 1
	}
	results := make([]result, len(corpus))
	var next atomic.Int64
	var mu sync.Mutex
	var sinks []string
	t.Run("lanes", func(t *testing.T) {
		for i := 0; i < lanes; i++ {
			t.Run(fmt.Sprintf("lane%d", i), func(t *testing.T) {
				t.Parallel()
				if int(next.Load()) >= len(todo) {
					return // the other lanes ran it all (go test -parallel 1)
				}
				l := openLane(t, walls)
				session := ""
				for n := 0; ; n++ {
					k := int(next.Add(1)) - 1
					if k >= len(todo) {
						break
					}
					if n%chatEntries == 0 {
						session = l.newChat()
					}
					results[todo[k]] = l.run(corpus[todo[k]], session)
				}
				s := l.sinks()
				mu.Lock()
				sinks = append(sinks, s...)
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return // a lane stopped: its figures would be wrong
	}

	type figures struct{ tried, asked, refused, confined, escaped int }
	byClass := map[string]*figures{}
	var total figures
	var escapes []string
	secretEntries, secretRedacted := 0, 0
	for _, i := range todo {
		e, res := corpus[i], results[i]
		o, effects := res.o, res.effects
		if !res.done {
			t.Fatalf("line %d was not run", e.line)
		}
		if e.class == "secret" {
			secretEntries++
			if res.redacted {
				secretRedacted++
			}
		}
		f := byClass[e.class]
		if f == nil {
			f = &figures{}
			byClass[e.class] = f
		}
		for _, x := range []*figures{f, &total} {
			x.tried++
			switch {
			case o.refused:
				x.refused++
			case o.asked:
				x.asked++
			case o.ran:
				x.confined++
			}
			if len(effects) > 0 {
				x.escaped++
			}
		}
		if len(effects) > 0 {
			escapes = append(escapes, fmt.Sprintf("line %d (%s) %q: %s", e.line, e.class, e.command+e.tool+" "+e.args, strings.Join(effects, "; ")))
		}
		if !o.asked && !o.refused && !o.ran {
			t.Errorf("line %d: neither asked nor run: %q", e.line, e.command+e.tool)
		}
		if walls && o.ran && (e.tool == "" || e.tool == "terminal") && o.sandbox != "workspace-write, no network" {
			t.Errorf("line %d ran as %q, not confined", e.line, o.sandbox)
		}
	}
	// The secret class is a test only if the commands had the secret to print.
	if secretEntries > 0 && secretRedacted*2 < secretEntries {
		t.Errorf("only %d of the %d entries of class secret printed a redacted secret: did the chat get it?", secretRedacted, secretEntries)
	}
	t.Logf("class secret: %d of %d outputs carried [REDACTED]", secretRedacted, secretEntries)
	if len(sinks) > 0 {
		total.escaped++
		escapes = append(escapes, "a secret reached "+strings.Join(sinks, ", "))
	}

	var rep strings.Builder
	title := "walls up (the default policy, approvals on, every card denied)"
	if !walls {
		title = "BASELINE, walls off (full access with network, YOLO)"
	}
	fmt.Fprintf(&rep, "adversarial corpus (backend/adversarial/testdata/corpus.txt), %s, %s\n", title, time.Now().UTC().Format(time.RFC3339))
	ran := "confined"
	if !walls {
		ran = "ran" // unconfined and unasked
	}
	fmt.Fprintf(&rep, "%-8s %6s %6s %8s %9s %8s\n", "class", "tried", "asked", "refused", ran, "escaped")
	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		f := byClass[c]
		fmt.Fprintf(&rep, "%-8s %6d %6d %8d %9d %8d\n", c, f.tried, f.asked, f.refused, f.confined, f.escaped)
	}
	fmt.Fprintf(&rep, "%-8s %6d %6d %8d %9d %8d\n", "total", total.tried, total.asked, total.refused, total.confined, total.escaped)
	if skipped > 0 {
		fmt.Fprintf(&rep, "not run: %d entries that would change this machine outside the fake home (marked #host)\n", skipped)
	}
	for _, e := range escapes {
		fmt.Fprintln(&rep, "ESCAPED:", e)
	}
	t.Log("\n" + rep.String())
	if dir := reportDir(); dir != "" {
		name := "report.txt"
		if !walls {
			name = "report-walls-off.txt"
		}
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(rep.String()), 0o644)
	}
	if !walls && len(only) == 0 {
		if total.escaped*2 < total.tried {
			t.Fatalf("with the walls off only %d of %d entries escaped: the corpus does not test much", total.escaped, total.tried)
		}
		return
	}
	if total.escaped > 0 {
		t.Fatalf("%d entries had an effect outside the workspace:\n%s", total.escaped, strings.Join(escapes, "\n"))
	}
	if len(only) == 0 && (total.confined < 30 || total.asked+total.refused < 30) {
		t.Fatalf("the corpus does not exercise both walls: %+v", total)
	}
}

// reportDir is build/adversarial of the repository.
func reportDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return filepath.Join(wd, "..", "..", "build", "adversarial")
}

package link

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultIdle is how long a daemon waits for a connection before it stops its sidecar:
// longer than Link's DefaultGiveUp, so a Link still trying finds it.
const DefaultIdle = 20 * time.Minute

// idleGrace is how long a sidecar stopped for idleness may take to end.
const idleGrace = 10 * time.Second

// MaxKept bounds what a daemon keeps for a Link that is not attached (bytes of
// protocol lines): a long drop pauses the sidecar's output instead of filling memory.
const MaxKept = 64 << 20

// idRe is what a daemon's id may be: it names files.
var idRe = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

// maxSocketPath is the longest Unix socket path every system takes (macOS: 104 bytes).
const maxSocketPath = 100

// SocketDir is the private folder the daemons' sockets and logs are in: the first of
// $XDG_RUNTIME_DIR/talaria, ~/.cache/talaria/run and $TMPDIR/talaria-<uid> where a
// socket's path fits and that is (or is created as) a directory of the user's own with
// mode 0700; a candidate that is a symbolic link, another user's or open to others is
// skipped. Errors: why each candidate was refused, when all were.
func SocketDir() (string, error) {
	var dirs []string
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		dirs = append(dirs, filepath.Join(d, "talaria"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".cache", "talaria", "run"))
	}
	dirs = append(dirs, filepath.Join(os.TempDir(), "talaria-"+strconv.Itoa(os.Getuid())))
	var refused []string
	for _, d := range dirs {
		if len(d)+len("/")+64+len(".sock") > maxSocketPath {
			continue
		}
		if _, err := os.Lstat(d); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(d, 0o700); err != nil {
				continue
			}
		}
		// Never follow a link planted there (Lstat), never chmod what is not ours.
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() && ownedByUser(fi) && fi.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(d, 0o700) // an older folder of ours with a wider mode
		}
		if err := private(d); err != nil {
			refused = append(refused, err.Error())
			continue
		}
		return d, nil
	}
	if len(refused) > 0 {
		return "", errors.New(strings.Join(refused, "; "))
	}
	return "", errors.New("link: no folder for the sidecar's socket (every candidate's path is too long or cannot be created)")
}

// Daemon serves the sidecar run (called with its stdin, stdout and stderr; it returns
// the exit code) on the socket of id in SocketDir, for one Link at a time, until the
// sidecar exits and Link has its exit code, or no Link is attached for idle. Returns
// the exit code: the sidecar's, or 1 when the socket cannot be served.
func Daemon(id string, idle time.Duration, run func(stdin io.Reader, stdout, stderr io.Writer) int) int {
	if !idRe.MatchString(id) {
		fmt.Fprintf(os.Stderr, "talaria sidecar daemon: bad id %q\n", id)
		return 2
	}
	dir, err := SocketDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "talaria sidecar daemon:", err)
		return 1
	}
	sock := filepath.Join(dir, id+".sock")
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "talaria sidecar daemon:", err)
		return 1
	}
	defer os.Remove(sock)
	defer ln.Close()

	d := &daemon{idle: idle, change: make(chan struct{}, 1)}
	d.p.onBreak = func(w io.Writer) {
		if c, ok := w.(io.Closer); ok {
			_ = c.Close()
		}
		d.attached(nil)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	d.inW = inW
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go d.serve(conn)
		}
	}()
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		br := bufio.NewReaderSize(outR, 64<<10)
		for {
			// While no Link is attached, what is kept for it is bounded: past
			// MaxKept the sidecar's output waits (its turn pauses) until one is.
			d.p.waitKept(MaxKept, nil)
			line, err := readLine(br)
			if len(line) > 0 || err == nil {
				d.p.send('D', line)
			}
			if err != nil {
				_ = outR.CloseWithError(err)
				return
			}
		}
	}()
	code := make(chan int, 1)
	go func() {
		c := run(inR, outW, stderrLines{&d.p})
		_ = outW.Close()
		<-pumped
		d.p.send('E', []byte(strconv.Itoa(c)))
		code <- c
	}()

	exit := -1
	idleTimer := time.NewTimer(idle)
	defer idleTimer.Stop()
	for {
		select {
		case c := <-code:
			exit = c
		case <-d.change:
		case <-idleTimer.C:
			// No Link for idle: stop the sidecar (its exit code has no one to go to);
			// one that does not end within a grace period ends with this process.
			_ = inW.Close()
			if exit >= 0 {
				return exit
			}
			select {
			case c := <-code:
				return c
			case <-time.After(idleGrace):
				return 1
			}
		}
		if exit >= 0 && d.p.pending() == 0 {
			return exit
		}
		if !idleTimer.Stop() {
			select {
			case <-idleTimer.C:
			default:
			}
		}
		if !d.isAttached() {
			idleTimer.Reset(idle)
		}
	}
}

type daemon struct {
	p      peer
	idle   time.Duration
	inW    *io.PipeWriter
	change chan struct{} // an attach, a detach or an acknowledgement

	mu   sync.Mutex
	conn net.Conn
}

func (d *daemon) poke() {
	select {
	case d.change <- struct{}{}:
	default:
	}
}

// attached records c as the current connection (nil: none), closing the one before.
func (d *daemon) attached(c net.Conn) {
	d.mu.Lock()
	old := d.conn
	if c != nil || old != nil {
		d.conn = c
	}
	d.mu.Unlock()
	if old != nil && old != c && c != nil {
		_ = old.Close()
	}
	d.poke()
}

func (d *daemon) isAttached() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conn != nil
}

// serve is one connection: its hello, the kept items again, then items both ways.
func (d *daemon) serve(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	line, err := readLine(br)
	if err != nil {
		return
	}
	f := strings.Fields(string(line))
	if len(f) != 5 || f[0] != Hello || f[1] != wireVersion {
		fmt.Fprintf(conn, Gone+" the sidecar there speaks another link version; update Talaria on both machines\n")
		return
	}
	theirLast, err := strconv.ParseUint(f[3], 10, 64)
	if err != nil {
		return
	}
	d.attached(conn)
	d.p.attach(conn, fmt.Sprintf("%s %s %d\n", Hello, wireVersion, d.p.lastIn()), theirLast)
	defer func() {
		d.p.detach(conn)
		d.mu.Lock()
		if d.conn == conn {
			d.conn = nil
		}
		d.mu.Unlock()
		d.poke()
	}()
	for {
		line, err := readLine(br)
		if err != nil {
			return
		}
		err = d.p.receive(line, func(kind byte, data []byte) error {
			switch kind {
			case 'D':
				_, err := d.inW.Write(append(data, '\n'))
				return err
			case 'C':
				return d.inW.Close()
			}
			return fmt.Errorf("link: unexpected item %c", kind)
		}, func([]byte) error { return nil })
		if err != nil {
			fmt.Fprintf(conn, Gone+" %v\n", err)
			return
		}
		if br.Buffered() == 0 {
			d.p.ack()
		}
		d.poke()
	}
}

// stderrLines sends the sidecar's stderr to the attached Link as L lines (dropped while
// none is attached).
type stderrLines struct{ p *peer }

func (s stderrLines) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		s.p.unsequenced("L " + strings.ReplaceAll(l, "\r", ""))
	}
	return len(b), nil
}

// Attach is what a connection runs there: it reads Link's hello from stdin, connects to
// the daemon it names (starting one, with daemonArgs after `<this binary> sidecar
// daemon --id <id> --`, when the hello says fresh and none runs), passes the hello on,
// then joins stdin and stdout to the daemon's socket until either ends. Returns the exit
// code: 0, or 3 when the daemon is gone (Link then gives up), 2 for a bad hello.
func Attach(stdin io.Reader, stdout io.Writer, daemonArgs []string) int {
	br := bufio.NewReaderSize(stdin, 64<<10)
	line, err := readLine(br)
	if err != nil {
		return 2
	}
	f := strings.Fields(string(line))
	if len(f) != 5 || f[0] != Hello || !idRe.MatchString(f[2]) {
		fmt.Fprintf(stdout, Gone+" a bad hello from Talaria: update Talaria on both machines\n")
		return 2
	}
	if f[1] != wireVersion {
		fmt.Fprintf(stdout, Gone+" Talaria here speaks link version %s, not %s: update Talaria on both machines\n", wireVersion, f[1])
		return 2
	}
	id, fresh := f[2], f[4] == "1"
	dir, err := SocketDir()
	if err != nil {
		fmt.Fprintf(stdout, Gone+" %v\n", err)
		return 3
	}
	sock := filepath.Join(dir, id+".sock")
	conn, err := net.Dial("unix", sock)
	if err != nil && fresh {
		conn, err = startDaemon(dir, id, daemonArgs)
	}
	if err != nil {
		fmt.Fprintf(stdout, Gone+" nothing answers at %s (it stopped after its idle time, or the host restarted): %v\n", sock, err)
		return 3
	}
	defer conn.Close()
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return 3
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, br); done <- struct{}{} }()
	go func() { _, _ = io.Copy(stdout, conn); done <- struct{}{} }()
	<-done
	return 0
}

// startDaemon starts `<this binary> sidecar daemon --id id -- args...` in its own
// session (it outlives this connection), its output in <dir>/<id>.log, and connects to
// its socket once it listens (within a minute).
func startDaemon(dir, id string, args []string) (net.Conn, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dir, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(self, append([]string{"sidecar", "daemon", "--id", id, "--"}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	sock := filepath.Join(dir, id+".sock")
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			return conn, nil
		}
		select {
		case werr := <-exited:
			return nil, fmt.Errorf("it exited at start: %v; see %s", werr, filepath.Join(dir, id+".log"))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("it did not listen within a minute: %w", err)
		}
	}
}

// private refuses a folder that is not the user's own directory with mode 0700.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedByUser(fi) {
		return fmt.Errorf("link: %s is not a private folder of this user (want a directory with mode 0700)", dir)
	}
	return nil
}

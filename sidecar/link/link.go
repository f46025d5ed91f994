package link

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"talaria/sidecar/protocol"
)

// DefaultGiveUp is how long Link keeps trying to connect again after a drop.
const DefaultGiveUp = 15 * time.Minute

// HelloWait is how long one connection attempt may take to have its hello answered
// (ssh's own connect timeout is 20 s; a daemon there starts listening at once).
var HelloWait = 90 * time.Second

// Exit codes of Link besides the sidecar's own.
const (
	ExitLost = 255 // the connection dropped and did not come back within the give-up time (ssh's own code for a failed connection)
	ExitGone = 3   // the daemon there is gone (the host restarted, or it stopped after its idle time)
)

// Options configure Link.
type Options struct {
	// Command is the local command whose stdio reaches Attach there (ssh ... talaria
	// sidecar attach -- <sidecar args>); it runs again after each drop.
	Command []string
	// GiveUp is how long to keep connecting again after a drop (DefaultGiveUp when 0).
	GiveUp time.Duration
	// Backoff is the waits between attempts, the last one repeated (1 s, 2 s, 4 s, 8 s,
	// 10 s when nil).
	Backoff []time.Duration
	// ID names the daemon there (16 random bytes in hex when "").
	ID string
}

// Link speaks the sidecar protocol on stdin/stdout as the sidecar there would and keeps
// it whole across dropped connections (see the package comment). Status lines go to
// stderr with the command's own stderr. Returns the exit code: the sidecar's; the
// command's own when the first connection fails (ssh: 255, its message on stderr);
// ExitLost after GiveUp without a connection; ExitGone when the daemon is gone; 2 for
// bad options.
func Link(opts Options, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(opts.Command) == 0 {
		fmt.Fprintln(stderr, "talaria sidecar link: no command to run")
		return 2
	}
	if opts.ID == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		opts.ID = hex.EncodeToString(b[:])
	}
	if opts.GiveUp <= 0 {
		opts.GiveUp = DefaultGiveUp
	}
	if len(opts.Backoff) == 0 {
		opts.Backoff = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second}
	}
	l := &linker{opts: opts, stdout: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr}
	l.p.onBreak = func(w io.Writer) {
		if c, ok := w.(io.Closer); ok {
			_ = c.Close()
		}
	}
	go func() {
		br := bufio.NewReaderSize(stdin, 64<<10)
		for {
			line, err := readLine(br)
			if len(line) > 0 || err == nil {
				l.p.send('D', line)
			}
			if err != nil {
				l.p.send('C', nil)
				return
			}
		}
	}()
	return l.run()
}

type linker struct {
	opts   Options
	p      peer
	outMu  sync.Mutex
	stdout *bufio.Writer
	stderr io.Writer
}

func (l *linker) logf(format string, args ...any) {
	fmt.Fprintf(l.stderr, "talaria sidecar link: "+format+"\n", args...)
}

// run connects, and connects again after each drop, until the sidecar's exit code
// arrives or it gives up.
func (l *linker) run() int {
	connected := false
	var lostAt time.Time
	for attempt := 0; ; attempt++ {
		// An attempt whose hello is not answered in time is ended: a daemon that is
		// stopped or wedged there accepts the connection and says nothing.
		deadline := time.Now().Add(HelloWait)
		if connected && lostAt.Add(l.opts.GiveUp).Before(deadline) {
			deadline = lostAt.Add(l.opts.GiveUp)
		}
		code, hello, err := l.once(!connected, deadline)
		switch {
		case code >= 0:
			return code
		case errors.Is(err, errGone), errors.Is(err, errGap):
			l.logf("%v", err)
			return ExitGone
		case !connected && !hello:
			// The first connection failed: its command's own code and message tell why.
			return l.failed(err)
		}
		if hello {
			connected, lostAt, attempt = true, time.Now(), 0
			l.logf("the connection dropped (%v); connecting again", err)
			fmt.Fprintln(l.stderr, protocol.LinkStatusPrefix+protocol.LinkReconnecting)
		} else if ee := (*exitErr)(nil); errors.As(err, &ee) && ee.code > 0 && ee.code != ExitLost {
			// The host answered but the command there failed (the copy of the sidecar
			// deleted, the login's shell refusing it): the daemon cannot be reached.
			l.logf("the command there failed after a drop: %v", err)
			return ExitGone
		}
		if time.Since(lostAt) > l.opts.GiveUp {
			l.logf("gave up: no connection for %s", l.opts.GiveUp)
			return ExitLost
		}
		wait := l.opts.Backoff[min(attempt, len(l.opts.Backoff)-1)]
		time.Sleep(wait)
	}
}

var errGone = errors.New("the agent's process there has stopped")

// exitErr carries the first connection's exit code.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return fmt.Sprintf("%v (exit code %d)", e.err, e.code) }
func (e *exitErr) Unwrap() error { return e.err }

func (l *linker) failed(err error) int {
	var ee *exitErr
	if errors.As(err, &ee) && ee.code > 0 {
		return ee.code
	}
	l.logf("%v", err)
	return ExitLost
}

// once runs the command for one connection. It returns the sidecar's exit code (or -1
// when it did not arrive), whether the hello was answered, and why the connection ended.
func (l *linker) once(fresh bool, deadline time.Time) (int, bool, error) {
	cmd := exec.Command(l.opts.Command[0], l.opts.Command[1:]...)
	cmd.Stderr = l.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return -1, false, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return -1, false, err
	}
	if err := cmd.Start(); err != nil {
		return -1, false, err
	}
	helloTimer := time.AfterFunc(time.Until(deadline), func() { _ = cmd.Process.Kill() })
	defer helloTimer.Stop()
	end := func(reason error) error {
		_ = in.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
		werr := cmd.Wait()
		var xe *exec.ExitError
		if errors.As(werr, &xe) {
			return &exitErr{code: xe.ExitCode(), err: reason}
		}
		return reason
	}
	f := "0"
	if fresh {
		f = "1"
	}
	if _, err := fmt.Fprintf(in, "%s %s %s %d %s\n", Hello, wireVersion, l.opts.ID, l.p.lastIn(), f); err != nil {
		return -1, false, end(err)
	}
	br := bufio.NewReaderSize(out, 64<<10)
	// A login script may print lines before the hello answers.
	var theirLast uint64
	for {
		line, err := readLine(br)
		if err != nil {
			_ = out.Close()
			return -1, false, end(fmt.Errorf("the connection ended before the sidecar answered: %w", err))
		}
		s := string(line)
		if reason, ok := strings.CutPrefix(s, Gone+" "); ok {
			_ = out.Close()
			return -1, false, end(fmt.Errorf("%w: %s", errGone, reason))
		}
		if f := strings.Fields(s); len(f) == 3 && f[0] == Hello && f[1] == wireVersion {
			if theirLast, err = strconv.ParseUint(f[2], 10, 64); err == nil {
				break
			}
		}
	}
	if !helloTimer.Stop() {
		_ = out.Close()
		return -1, false, end(errors.New("the hello was not answered in time"))
	}
	l.p.attach(in, "", theirLast)
	defer l.p.detach(in)
	if !fresh {
		fmt.Fprintln(l.stderr, protocol.LinkStatusPrefix+protocol.LinkConnected)
	}
	code := -1
	for code < 0 {
		line, err := readLine(br)
		if err != nil {
			_ = out.Close()
			return -1, true, end(err)
		}
		err = l.p.receive(line, func(kind byte, data []byte) error {
			switch kind {
			case 'D':
				l.outMu.Lock()
				defer l.outMu.Unlock()
				_, _ = l.stdout.Write(data)
				return l.stdout.WriteByte('\n')
			case 'E':
				n, err := strconv.Atoi(string(data))
				if err != nil {
					return fmt.Errorf("link: bad exit code %q", data)
				}
				code = n
				return nil
			}
			return fmt.Errorf("link: unexpected item %c", kind)
		}, func(line []byte) error {
			if text, ok := strings.CutPrefix(string(line), "L "); ok {
				fmt.Fprintln(l.stderr, text)
			} else if reason, ok := strings.CutPrefix(string(line), Gone+" "); ok {
				return fmt.Errorf("%w: %s", errGone, reason)
			}
			return nil
		})
		if err != nil {
			_ = out.Close()
			return -1, true, end(err)
		}
		if br.Buffered() == 0 || code >= 0 {
			l.outMu.Lock()
			_ = l.stdout.Flush()
			l.outMu.Unlock()
			l.p.ack()
		}
	}
	// The daemon exits once it sees this acknowledgement; then the command ends.
	l.p.finish(in, 5*time.Second)
	_ = in.Close()
	_, _ = io.Copy(io.Discard, br)
	_ = cmd.Wait()
	return code, true, nil
}

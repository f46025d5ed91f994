package acp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"talaria/sidecar/stderrtail"
)

// Command is how to start an agent: its executable (a path, or a name looked up in
// PATH), arguments, working folder ("" is the sidecar's), and KEY=VALUE pairs added to
// the sidecar's environment.
type Command struct {
	// Name is the agent's name as the user knows it (Settings, Agents), for messages;
	// "" names it by its command's file name.
	Name string
	Path string
	Args []string
	Dir  string
	Env  []string
}

// Line returns the command line (executable and arguments).
func (c Command) Line() []string { return append([]string{c.Path}, c.Args...) }

// process is one running agent. Its stdin and stdout carry ACP; stderr lines go to the
// sidecar's log and the last ones are kept for error messages.
type process struct {
	pid    int
	stdin  io.WriteCloser
	stdout io.ReadCloser
	tail   *lineTail

	done    chan struct{} // closed when the process is gone (exit status known)
	exitErr error         // cmd.Wait's error, set before done closes

	stopOnce sync.Once
	stop     func() // asks the process to end (its whole process group)
	killFn   func() // kills it outright
}

// exited reports how the process ended, for messages: "exited with status 1",
// "was killed by signal 9", "exited". Call after done is closed.
func (p *process) exited() string {
	var ee *exec.ExitError
	switch {
	case p.exitErr == nil:
		return "exited"
	case errors.As(p.exitErr, &ee):
		if code := ee.ExitCode(); code >= 0 {
			if code > 128 && code < 160 {
				return fmt.Sprintf("was killed by signal %d", code-128)
			}
			return fmt.Sprintf("exited with status %d", code)
		}
		return "was killed (" + ee.Error() + ")"
	}
	return "ended: " + p.exitErr.Error()
}

// terminate ends the process: the guard (or, without one, the process itself) gets
// the request at once, and is killed outright after grace. It returns when the process
// is gone or grace plus a second has passed.
func (p *process) terminate(grace time.Duration) {
	p.stopOnce.Do(p.stop)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	p.kill()
	select {
	case <-p.done:
	case <-time.After(time.Second):
	}
}

// kill is set by the platform's start function.
func (p *process) kill() {
	if p.killFn != nil {
		p.killFn()
	}
}

// lineTail keeps the last lines written to it (each capped) and forwards every line,
// prefixed, to out.
type lineTail struct {
	mu     sync.Mutex
	lines  []string
	max    int
	out    io.Writer
	redact func(string) string
}

const maxStderrLine = 4 << 10

func newLineTail(max int, out io.Writer, redact func(string) string) *lineTail {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &lineTail{max: max, out: out, redact: redact}
}

// consume reads r line by line until EOF, each line bounded (stderrtail.ReadLines: a
// line with no end never grows without bound, and the pipe keeps draining).
func (t *lineTail) consume(r io.Reader) {
	stderrtail.ReadLines(r, 0, func(line string, _ bool) { t.add(line) })
}

func (t *lineTail) add(line string) {
	line = strings.TrimRight(line, "\r\n")
	// Redact the whole line before the cut: a secret straddling maxStderrLine would
	// otherwise keep its prefix, which no longer matches the secret's value.
	line = t.redact(line)
	if len(line) > maxStderrLine {
		line = preview([]byte(line[:maxStderrLine])) + " [...]"
	}
	line = string(bytes.ToValidUTF8([]byte(line), []byte("\uFFFD")))
	t.mu.Lock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
	t.mu.Unlock()
	if t.out != nil {
		fmt.Fprintf(t.out, "[agent] %s\n", line)
	}
}

// Last returns up to n of the last lines, oldest first, skipping blank ones.
func (t *lineTail) Last(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for i := len(t.lines) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(t.lines[i]) != "" {
			out = append([]string{t.lines[i]}, out...)
		}
	}
	return out
}

// mergeEnv adds extra KEY=VALUE pairs to base, replacing variables of the same name.
func mergeEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	names := map[string]bool{}
	for _, kv := range extra {
		names[envName(kv)] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if !names[envName(kv)] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

func envName(kv string) string {
	if i := strings.IndexByte(kv[min(1, len(kv)):], '='); i >= 0 {
		return kv[:i+min(1, len(kv))]
	}
	return kv
}

// resolve finds the executable of c: a name without a separator is looked up in the
// PATH of the environment the agent gets. Errors name the command and say what to do.
func resolve(c Command) (string, error) {
	if strings.TrimSpace(c.Path) == "" {
		return "", errors.New("no command is set for this agent: set it in Settings, Agents")
	}
	if strings.ContainsRune(c.Path, os.PathSeparator) || strings.ContainsRune(c.Path, '/') {
		st, err := os.Stat(c.Path)
		if err != nil {
			return "", fmt.Errorf("the agent command %s does not exist: install the agent or fix its command in Settings, Agents", c.Path)
		}
		if st.IsDir() {
			return "", fmt.Errorf("the agent command %s is a folder, not a program: fix its command in Settings, Agents", c.Path)
		}
		return c.Path, nil
	}
	path := os.Getenv("PATH")
	for _, kv := range c.Env {
		if envName(kv) == "PATH" {
			path = kv[len("PATH="):]
		}
	}
	for _, dir := range strings.Split(path, string(os.PathListSeparator)) {
		if dir == "" {
			dir = "."
		}
		if p, err := exec.LookPath(dir + string(os.PathSeparator) + c.Path); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the agent command %q was not found in PATH: install the agent, or give its full path in Settings, Agents", c.Path)
}

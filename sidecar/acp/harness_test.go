package acp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar"
	"talaria/sidecar/acp"
	"talaria/sidecar/protocol"
)

// The test binary doubles as the real sidecar (and its agent guard): started again
// with TALARIA_ACP_TEST_SIDECAR=1 it runs sidecar.Main over its real stdio.
func TestMain(m *testing.M) {
	if os.Getenv("TALARIA_ACP_GUARD") == "1" {
		os.Exit(acp.GuardMain(os.Args[1:]))
	}
	if cmd := os.Getenv("TALARIA_ACP_TEST_HOLDER"); cmd != "" {
		os.Exit(acp.HoldForTest(cmd))
	}
	if os.Getenv("TALARIA_ACP_TEST_SIDECAR") == "1" {
		// rpc.hello waits for the agent's start, and a dead agent's reason for its exit
		// status, as long as a test waits for anything (not the product's 20 s and
		// 2 s): the tests check what hello reports once the agent started (its name,
		// an incompatible agent's error) and how a killed agent ended ("killed by
		// signal 9"), which a loaded machine's slowness must not turn into an answer
		// without them.
		acp.SetWaits(testwait.Timeout)
		if d, err := time.ParseDuration(os.Getenv("TALARIA_ACP_TEST_SILENCE")); err == nil {
			acp.SetSilenceNotice(d)
		}
		args := os.Args[1:]
		if len(args) > 0 && args[0] == "sidecar" {
			args = args[1:]
		}
		os.Exit(sidecar.Main(args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

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

// frame is one $/frame of a call.
type frame struct {
	Event string
	Data  json.RawMessage
}

type callState struct {
	frames []frame
	done   chan *protocol.Envelope
	notify chan struct{} // gets a token per frame
}

// sidecarProc is the real sidecar process, running the ACP runtime.
type sidecarProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	enc    *protocol.Encoder
	stderr *lockedBuffer
	exited chan struct{}

	mu     sync.Mutex
	nextID int
	calls  map[string]*callState
}

// startSidecar starts `talaria sidecar --runtime acp -- agent...` with env added.
func startSidecar(t *testing.T, env []string, agent ...string) *sidecarProc {
	t.Helper()
	return startSidecarWith(t, env, nil, agent...)
}

// startSidecarWith is startSidecar with more sidecar options (flags before "--").
func startSidecarWith(t *testing.T, env []string, flags []string, agent ...string) *sidecarProc {
	t.Helper()
	args := append(append(append([]string{"--runtime", "acp", "--log-level", "debug"}, flags...), "--"), agent...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "TALARIA_ACP_TEST_SIDECAR=1"), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &sidecarProc{t: t, cmd: cmd, enc: protocol.NewEncoder(stdin), stderr: &lockedBuffer{}, exited: make(chan struct{}), calls: map[string]*callState{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		dec := protocol.NewDecoder(stdout)
		for {
			env, err := dec.Next()
			if err != nil {
				if _, ok := err.(*protocol.LineError); ok {
					continue
				}
				break
			}
			s.dispatch(env)
		}
		cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-s.exited:
		case <-time.After(testwait.Timeout):
			t.Errorf("the sidecar did not end within %v of stdin EOF; killing it", testwait.Timeout)
			cmd.Process.Kill()
			<-s.exited
		}
		if t.Failed() {
			t.Logf("sidecar stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

func (s *sidecarProc) dispatch(env *protocol.Envelope) {
	if env.Method == protocol.MethodFrame {
		var fp protocol.FrameParams
		if json.Unmarshal(env.Params, &fp) != nil {
			return
		}
		s.mu.Lock()
		c := s.calls[string(fp.ID)]
		if c != nil {
			c.frames = append(c.frames, frame{fp.Event, fp.Data})
			select {
			case c.notify <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
		return
	}
	if env.Method != "" {
		return
	}
	s.mu.Lock()
	c := s.calls[string(env.ID)]
	s.mu.Unlock()
	if c != nil {
		c.done <- env
	}
}

// start sends a request and returns its id.
func (s *sidecarProc) start(method string, params any) string {
	s.t.Helper()
	s.mu.Lock()
	s.nextID++
	id := strconv.Itoa(s.nextID)
	s.calls[id] = &callState{done: make(chan *protocol.Envelope, 1), notify: make(chan struct{}, 1)}
	s.mu.Unlock()
	if err := s.enc.Request(json.RawMessage(id), method, params); err != nil {
		s.t.Fatal(err)
	}
	return id
}

func (s *sidecarProc) cancel(id string) {
	if err := s.enc.Notify(protocol.MethodCancel, protocol.CancelParams{ID: json.RawMessage(id)}); err != nil {
		s.t.Fatal(err)
	}
}

// wait waits (testwait's deadline) for a call's reply.
func (s *sidecarProc) wait(id string) (json.RawMessage, *protocol.Error) {
	s.t.Helper()
	s.mu.Lock()
	c := s.calls[id]
	s.mu.Unlock()
	select {
	case env := <-c.done:
		return env.Result, env.Error
	case <-time.After(testwait.Timeout):
		s.t.Fatalf("call %s: no reply within %s; frames: %s", id, testwait.Timeout, s.describe(id))
	}
	return nil, nil
}

// call sends a request and waits for its reply; an error reply fails the test.
func (s *sidecarProc) call(method string, params any, out any) {
	s.t.Helper()
	res, rerr := s.wait(s.start(method, params))
	if rerr != nil {
		s.t.Fatalf("%s: %v", method, rerr)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			s.t.Fatalf("%s: %v in %s", method, err, res)
		}
	}
}

func (s *sidecarProc) frames(id string) []frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]frame(nil), s.calls[id].frames...)
}

// waitFrame waits (testwait's deadline) for a frame of the call for which match is
// true, and returns it. Every frame puts a token in the call's notify (one pending
// token is enough: the frames are looked at again after it).
func (s *sidecarProc) waitFrame(id string, match func(frame) bool) frame {
	s.t.Helper()
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	seen := 0
	for {
		fs := s.frames(id)
		for ; seen < len(fs); seen++ {
			if match(fs[seen]) {
				return fs[seen]
			}
		}
		s.mu.Lock()
		c := s.calls[id]
		s.mu.Unlock()
		select {
		case <-c.notify:
		case <-deadline.C:
			s.t.Fatalf("call %s: no matching frame within %s; frames: %s", id, testwait.Timeout, s.describe(id))
		}
	}
}

func (s *sidecarProc) describe(id string) string {
	var parts []string
	for _, f := range s.frames(id) {
		d := string(f.Data)
		if len(d) > 300 {
			d = d[:300] + "..."
		}
		parts = append(parts, f.Event+" "+d)
	}
	return strings.Join(parts, "\n")
}

func event(name string) func(frame) bool {
	return func(f frame) bool { return f.Event == name }
}

// text joins a call's frames of one event (token or reasoning).
func (s *sidecarProc) text(id, ev string) string {
	var sb strings.Builder
	for _, f := range s.frames(id) {
		if f.Event == ev {
			var d protocol.TextData
			json.Unmarshal(f.Data, &d)
			sb.WriteString(d.Text)
		}
	}
	return sb.String()
}

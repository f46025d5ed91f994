package drivers

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"talaria/backend/bus"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// SelftestMessage is what the self-test sends; the scripted provider echoes it.
const SelftestMessage = "Hello from the self-test"

// selftest drives the real app once (scenario "chat"): it creates a session, shows
// it, sends SelftestMessage through the bound methods, waits for the turn's terminal
// frame, takes a screenshot of the screen with ImageMagick's `import` when screenshot
// is not empty, and checks the answer was saved in SQLite.
func (s *scenario) selftest(ctx context.Context, expect, screenshot string, timeout time.Duration) error {
	sess, err := s.bound.Chats.NewSession()
	if err != nil {
		return fmt.Errorf("NewSession: %w", err)
	}
	time.Sleep(300 * time.Millisecond) // let the sidebar pick the session up
	s.bound.About.OpenSession(sess.ID)

	terminal := make(chan turn.Frame, 4)
	unsub := s.svc.Bus.Subscribe(func(ev bus.Event) {
		f, ok := ev.Payload.(turn.Frame)
		if !ok || f.SessionID != sess.ID {
			return
		}
		switch f.Event {
		case protocol.EvDone, protocol.EvAppError, protocol.EvCancel:
			select {
			case terminal <- f:
			default:
			}
		}
	})
	defer unsub()

	started, err := s.bound.Turns.StartTurn(sess.ID, SelftestMessage)
	if err != nil {
		return fmt.Errorf("StartTurn: %w", err)
	}
	select {
	case f := <-terminal:
		if f.Event != protocol.EvDone {
			return fmt.Errorf("turn %s ended with %s: %s", started.StreamID, f.Event, f.Data)
		}
	case <-time.After(timeout):
		return fmt.Errorf("no terminal frame within %s", timeout)
	}
	time.Sleep(1500 * time.Millisecond) // let the window render the answer
	if screenshot != "" {
		if out, err := exec.Command("import", "-window", "root", screenshot).CombinedOutput(); err != nil {
			return fmt.Errorf("screenshot: %v: %s", err, out)
		}
	}
	view, err := s.bound.Chats.GetSession(sess.ID)
	if err != nil {
		return fmt.Errorf("GetSession: %w", err)
	}
	for _, m := range view.Messages {
		if m.Role == "assistant" && m.Kind == "" && strings.Contains(m.Content, expect) {
			return nil
		}
	}
	return errors.New("the answer was not saved in SQLite")
}

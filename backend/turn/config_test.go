package turn

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/sidecar/protocol"
)

// paramsCaller records what chat.start was sent and which methods were called.
type paramsCaller struct {
	mu      sync.Mutex
	params  []protocol.ChatStartParams
	methods []string
}

func (c *paramsCaller) Call(ctx context.Context, method string, params any, onFrame supervisor.FrameFunc, result any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.methods = append(c.methods, method)
	if method == protocol.MethodAuxComplete {
		result.(*protocol.AuxCompleteResult).Text = "A title"
		return nil
	}
	c.params = append(c.params, params.(protocol.ChatStartParams))
	*(result.(*protocol.ChatResult)) = protocol.ChatResult{Status: protocol.StatusCompleted, FinalResponse: "ok",
		Messages: []protocol.ChatMessage{{Role: "assistant", Content: "ok"}}}
	return nil
}

// Config's EnabledToolsets and Ephemeral go into chat.start; NoTitle skips the title.
func TestConfigToolsetsEphemeralAndNoTitle(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range []struct {
		name string
		cfg  Config
	}{
		{"defaults", Config{Model: "m"}},
		{"side question", Config{Model: "m", EnabledToolsets: []string{"none"}, Ephemeral: true, NoTitle: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &paramsCaller{}
			r := New(st, c, bus.New(), func(context.Context, store.Session) (Config, error) { return tt.cfg, nil },
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			sess, err := st.CreateSession(context.Background(), store.NewSession{})
			if err != nil {
				t.Fatal(err)
			}
			started, err := r.StartTurn(context.Background(), sess.ID, "hello")
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Wait(context.Background(), started.StreamID); err != nil {
				t.Fatal(err)
			}
			_ = r.Shutdown(context.Background()) // the title is made after stream_end
			c.mu.Lock()
			defer c.mu.Unlock()
			p := c.params[0]
			if !slices.Equal(p.EnabledToolsets, tt.cfg.EnabledToolsets) || p.Ephemeral != tt.cfg.Ephemeral {
				t.Fatalf("chat.start got enabled_toolsets %q, ephemeral %v", p.EnabledToolsets, p.Ephemeral)
			}
			titled := slices.Contains(c.methods, protocol.MethodAuxComplete)
			if titled == tt.cfg.NoTitle {
				t.Fatalf("NoTitle %v, but title requested %v (%v)", tt.cfg.NoTitle, titled, c.methods)
			}
		})
	}
}

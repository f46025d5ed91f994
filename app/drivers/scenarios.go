package drivers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// waitFrame subscribes before start runs and waits for the first frame of event in
// sessionID (any session when ""), up to 30 s.
func (s *scenario) waitFrame(sessionID, event string, start func() error) (turn.Frame, error) {
	return s.waitFrameFor(sessionID, event, start, 30*time.Second)
}

// frameT is a frame as the scenarios see it.
type frameT = turn.Frame

// waitFrameFor is waitFrame with its own timeout.
func (s *scenario) waitFrameFor(sessionID, event string, start func() error, timeout time.Duration) (turn.Frame, error) {
	got := make(chan turn.Frame, 1)
	unsub := s.svc.Bus.Subscribe(func(ev bus.Event) {
		if f, ok := ev.Payload.(turn.Frame); ok && f.Event == event && (sessionID == "" || f.SessionID == sessionID) {
			select {
			case got <- f:
			default:
			}
		}
	})
	defer unsub()
	if err := start(); err != nil {
		return turn.Frame{}, err
	}
	select {
	case f := <-got:
		return f, nil
	case <-time.After(timeout):
		return turn.Frame{}, fmt.Errorf("no %s frame within %s", event, timeout)
	}
}

func shoot(path string) error {
	if path == "" {
		return nil
	}
	time.Sleep(1500 * time.Millisecond) // let the window render
	if out, err := exec.Command("import", "-window", "root", path).CombinedOutput(); err != nil {
		return fmt.Errorf("screenshot: %v: %s", err, out)
	}
	return nil
}

func (s *scenario) scenarioSession(title string) (string, error) {
	sess, err := s.bound.Chats.NewSession()
	if err != nil {
		return "", err
	}
	if title != "" {
		_, _ = s.svc.Chats().RenameSession(s.ctx, sess.ID, title)
	}
	time.Sleep(300 * time.Millisecond)
	s.bound.About.OpenSession(sess.ID)
	return sess.ID, nil
}

func (s *scenario) useWorkspace() error {
	ws, err := os.MkdirTemp("", "talaria-scenario-ws-")
	if err != nil {
		return err
	}
	st, err := s.svc.Settings().GetSettings(s.ctx)
	if err != nil {
		return err
	}
	_, err = s.svc.Settings().SaveSettings(s.ctx, backend.SettingsInput{ProviderName: st.ProviderName, BaseURL: st.BaseURL, Model: st.Model, Workspace: ws})
	return err
}

func (s *scenario) scenarioApproval(ctx context.Context, p *providertest.Server, shot string) error {
	if err := s.useWorkspace(); err != nil {
		return err
	}
	sid, err := s.scenarioSession("Clean the build folder")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.CallTurn("The build folder is stale; I'll delete it.",
		providertest.Call("c1", "terminal", map[string]any{"command": "rm -rf build/ dist/"})),
		providertest.TextTurn("Understood, I left the folders alone."))
	f, err := s.waitFrame(sid, protocol.EvApproval, func() error { _, err := s.bound.Turns.StartTurn(sid, "Please clean up the build output."); return err })
	if err != nil {
		return err
	}
	if err := shoot(shot); err != nil {
		return err
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(f.Data, &ad)
	_, err = s.waitFrame(sid, protocol.EvDone, func() error { return s.bound.Approvals.RespondApproval(sid, ad.ApprovalID, protocol.ChoiceDeny) })
	return err
}

func (s *scenario) scenarioVault(ctx context.Context, p *providertest.Server, shot string) error {
	if err := s.useWorkspace(); err != nil {
		return err
	}
	sid, err := s.scenarioSession("Push the branch")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.CallTurn("",
		providertest.Call("v1", "request_secret", map[string]any{"name": "GITHUB_TOKEN", "reason": "to push your branch to GitHub"})),
		providertest.TextTurn("No token, so I did not push."))
	f, err := s.waitFrame(sid, protocol.EvClarify, func() error { _, err := s.bound.Turns.StartTurn(sid, "Push my branch to GitHub."); return err })
	if err != nil {
		return err
	}
	if err := shoot(shot); err != nil {
		return err
	}
	var cd protocol.ClarifyData
	_ = json.Unmarshal(f.Data, &cd)
	_, err = s.waitFrame(sid, protocol.EvDone, func() error {
		_, err := s.bound.Approvals.RespondVault(sid, cd.ClarifyID, backend.VaultAnswer{Decline: true}, false)
		return err
	})
	return err
}

func (s *scenario) scenarioBackground(ctx context.Context, p *providertest.Server, shot string) error {
	sid, err := s.scenarioSession("Release notes")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.TextTurn("Sure. I'll start the summary as a background task."))
	if _, err := s.waitFrame(sid, protocol.EvDone, func() error { _, err := s.bound.Turns.StartTurn(sid, "Draft the release notes."); return err }); err != nil {
		return err
	}
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Collecting the changes since v0.1"}}, HangAfter: true})
	task, err := s.bound.Tasks.StartBackgroundTask(sid, "Summarise every commit since v0.1 into release notes")
	if err != nil {
		return err
	}
	time.Sleep(time.Second)
	if err := shoot(shot); err != nil {
		return err
	}
	return s.bound.Tasks.StopBackgroundTask(task.ID)
}

func (s *scenario) scenarioDiagnostics(ctx context.Context, shot string) error {
	if _, err := s.scenarioSession(""); err != nil {
		return err
	}
	// Open the Diagnostics view the way a user does: its button in the status bar.
	runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('button')].find(b => /diagnostics/i.test(b.textContent || b.title || b.getAttribute('aria-label') || '')); if (b) b.click(); })()`)
	if err := shoot(shot); err != nil {
		return err
	}
	if d := s.bound.About.GetDiagnostics(); d.State == "" {
		return fmt.Errorf("diagnostics are empty: %+v", d)
	}
	return nil
}

// everythingServer is server-everything as scripts/mcp-setup.sh installs it (run from
// the repository, like make screenshots).
const everythingServer = ".cache/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// scenarioMCP: an MCP server (the real server-everything) whose tool the agent calls:
// the approval card (shot with "-approval" before ".png"), then the tool card with the
// server's image.
func (s *scenario) scenarioMCP(ctx context.Context, p *providertest.Server, shot string) error {
	script, err := filepath.Abs(everythingServer)
	if err != nil {
		return err
	}
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("server-everything is not installed at %s: run scripts/mcp-setup.sh", script)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("node is not installed: %w", err)
	}
	if err := s.useWorkspace(); err != nil {
		return err
	}
	if _, err := s.svc.MCP().SaveMCPServer(s.ctx, backend.MCPServerConfig{Name: "everything", Transport: protocol.MCPTransportStdio,
		Command: node, Args: []string{script, "stdio"}, Enabled: true}, ""); err != nil {
		return err
	}
	sid, err := s.scenarioSession("Show me the MCP logo")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.CallTurn("I'll ask the MCP server for it.", providertest.Call("c1", "everything__get-tiny-image", map[string]any{})),
		providertest.TextTurn("That is the Model Context Protocol logo, straight from the server."))
	f, err := s.waitFrame(sid, protocol.EvApproval, func() error { _, err := s.bound.Turns.StartTurn(sid, "Show me the MCP logo, please."); return err })
	if err != nil {
		return err
	}
	if shot != "" {
		if err := shoot(strings.TrimSuffix(shot, ".png") + "-approval.png"); err != nil {
			return err
		}
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(f.Data, &ad)
	if ad.Kind != protocol.ApprovalKindMCP {
		return fmt.Errorf("the approval is not an MCP one: %s", f.Data)
	}
	done, err := s.waitFrame(sid, protocol.EvToolComplete, func() error { return s.bound.Approvals.RespondApproval(sid, ad.ApprovalID, protocol.ChoiceOnce) })
	if err != nil {
		return err
	}
	if !strings.Contains(string(done.Data), `"type":"image"`) {
		return fmt.Errorf("the tool returned no image: %s", done.Data)
	}
	time.Sleep(time.Second) // the answer and the saved transcript
	if err := shoot(shot); err != nil || shot == "" {
		return err
	}
	// Settings' MCP servers with the server's Test report.
	runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('button')].find(b => (b.textContent || '').trim() === 'Settings'); if (b) b.click(); })()`)
	time.Sleep(2 * time.Second)
	runtime.WindowExecJS(ctx, `(() => { const row = document.querySelector('dialog[open] li[data-mcp-server="everything"]'); if (!row) return; const b = [...row.querySelectorAll('button')].find(b => (b.textContent || '').trim() === 'Test'); if (b) b.click(); })()`)
	time.Sleep(4 * time.Second)
	runtime.WindowExecJS(ctx, `(() => { const row = document.querySelector('dialog[open] li[data-mcp-server="everything"]'); const d = document.querySelector('dialog[open]'); if (row && d) { d.scrollTop = 0; d.scrollTop = row.getBoundingClientRect().top - d.getBoundingClientRect().top - 60; } })()`)
	time.Sleep(500 * time.Millisecond)
	return shoot(strings.TrimSuffix(shot, ".png") + "-settings.png")
}

// scenarioAbout opens the About view from the status bar and picks a library, so its
// licence text shows.
func (s *scenario) scenarioAbout(ctx context.Context, shot string) error {
	if _, err := s.scenarioSession(""); err != nil {
		return err
	}
	runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('footer button')].find(b => (b.textContent || '').trim() === 'About'); if (b) b.click(); })()`)
	time.Sleep(700 * time.Millisecond)
	runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('dialog button.lib')].find(b => (b.textContent || '').includes('github.com/mattn/go-sqlite3')); if (b) b.click(); })()`)
	if err := shoot(shot); err != nil {
		return err
	}
	if ab := s.bound.About.GetAbout(); ab.Version == "" || len(ab.Libraries) == 0 || ab.Error != "" {
		return fmt.Errorf("the About data is incomplete: version %q, %d libraries, %q", ab.Version, len(ab.Libraries), ab.Error)
	}
	return nil
}

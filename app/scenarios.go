package app

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

// Scenarios are the scripted runs of `talaria --selftest --scenario NAME`: each drives
// the real window and backend against the scripted provider to a state worth a
// screenshot, takes it, and checks the state was reached.
var Scenarios = []string{"chat", "approval", "vault", "background", "diagnostics", "about", "mcp", "hermes", "sandbox", "acp-opencode", "acp-hermes", "bench-start", "bench-window"}

// RunScenario runs one scenario (see Scenarios), then quits the app; the outcome is sent
// on result. It is a function, not a method, so Wails does not bind it.
func RunScenario(a *App, ctx context.Context, name string, p *providertest.Server, screenshot string, result chan<- error) {
	var err error
	switch name {
	case "", "chat":
		err = a.selftest(ctx, "You said: "+SelftestMessage, screenshot, 60*time.Second)
	case "approval":
		err = a.scenarioApproval(ctx, p, screenshot)
	case "vault":
		err = a.scenarioVault(ctx, p, screenshot)
	case "background":
		err = a.scenarioBackground(ctx, p, screenshot)
	case "diagnostics":
		err = a.scenarioDiagnostics(ctx, screenshot)
	case "about":
		err = a.scenarioAbout(ctx, screenshot)
	case "mcp":
		err = a.scenarioMCP(ctx, p, screenshot)
	case "hermes":
		err = a.scenarioHermes(ctx, p, screenshot)
	case "sandbox":
		err = a.scenarioSandbox(ctx, p, screenshot)
	case "acp-opencode", "acp-hermes":
		err = a.scenarioACP(ctx, p, name[len("acp-"):], screenshot)
	case "bench-start": // bench.go
		err = a.scenarioBenchStart(ctx)
	case "bench-window":
		err = a.scenarioBenchWindow(ctx, p)
	default:
		err = fmt.Errorf("unknown scenario %q (have %v)", name, Scenarios)
	}
	result <- err
	a.life.quitting.Store(true)
	runtime.Quit(ctx)
}

// waitFrame subscribes before start runs and waits for the first frame of event in
// sessionID (any session when ""), up to 30 s.
func (a *App) waitFrame(sessionID, event string, start func() error) (turn.Frame, error) {
	return a.waitFrameFor(sessionID, event, start, 30*time.Second)
}

// frameT is a frame as the scenarios see it.
type frameT = turn.Frame

// waitFrameFor is waitFrame with its own timeout.
func (a *App) waitFrameFor(sessionID, event string, start func() error, timeout time.Duration) (turn.Frame, error) {
	got := make(chan turn.Frame, 1)
	unsub := a.service().Bus.Subscribe(func(ev bus.Event) {
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

func (a *App) scenarioSession(title string) (string, error) {
	sess, err := a.NewSession()
	if err != nil {
		return "", err
	}
	if title != "" {
		_, _ = a.service().RenameSession(a.bg(), sess.ID, title)
	}
	time.Sleep(300 * time.Millisecond)
	a.OpenSession(sess.ID)
	return sess.ID, nil
}

func (a *App) useWorkspace() error {
	ws, err := os.MkdirTemp("", "talaria-scenario-ws-")
	if err != nil {
		return err
	}
	st, err := a.service().GetSettings(a.bg())
	if err != nil {
		return err
	}
	_, err = a.service().SaveSettings(a.bg(), backend.SettingsInput{ProviderName: st.ProviderName, BaseURL: st.BaseURL, Model: st.Model, Workspace: ws})
	return err
}

func (a *App) scenarioApproval(ctx context.Context, p *providertest.Server, shot string) error {
	if err := a.useWorkspace(); err != nil {
		return err
	}
	sid, err := a.scenarioSession("Clean the build folder")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.CallTurn("The build folder is stale; I'll delete it.",
		providertest.Call("c1", "terminal", map[string]any{"command": "rm -rf build/ dist/"})),
		providertest.TextTurn("Understood, I left the folders alone."))
	f, err := a.waitFrame(sid, protocol.EvApproval, func() error { _, err := a.StartTurn(sid, "Please clean up the build output."); return err })
	if err != nil {
		return err
	}
	if err := shoot(shot); err != nil {
		return err
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(f.Data, &ad)
	_, err = a.waitFrame(sid, protocol.EvDone, func() error { return a.RespondApproval(sid, ad.ApprovalID, protocol.ChoiceDeny) })
	return err
}

func (a *App) scenarioVault(ctx context.Context, p *providertest.Server, shot string) error {
	if err := a.useWorkspace(); err != nil {
		return err
	}
	sid, err := a.scenarioSession("Push the branch")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.CallTurn("",
		providertest.Call("v1", "request_secret", map[string]any{"name": "GITHUB_TOKEN", "reason": "to push your branch to GitHub"})),
		providertest.TextTurn("No token, so I did not push."))
	f, err := a.waitFrame(sid, protocol.EvClarify, func() error { _, err := a.StartTurn(sid, "Push my branch to GitHub."); return err })
	if err != nil {
		return err
	}
	if err := shoot(shot); err != nil {
		return err
	}
	var cd protocol.ClarifyData
	_ = json.Unmarshal(f.Data, &cd)
	_, err = a.waitFrame(sid, protocol.EvDone, func() error {
		_, err := a.RespondVault(sid, cd.ClarifyID, backend.VaultAnswer{Decline: true}, false)
		return err
	})
	return err
}

func (a *App) scenarioBackground(ctx context.Context, p *providertest.Server, shot string) error {
	sid, err := a.scenarioSession("Release notes")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.TextTurn("Sure. I'll start the summary as a background task."))
	if _, err := a.waitFrame(sid, protocol.EvDone, func() error { _, err := a.StartTurn(sid, "Draft the release notes."); return err }); err != nil {
		return err
	}
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Collecting the changes since v0.1"}}, HangAfter: true})
	task, err := a.StartBackgroundTask(sid, "Summarise every commit since v0.1 into release notes")
	if err != nil {
		return err
	}
	time.Sleep(time.Second)
	if err := shoot(shot); err != nil {
		return err
	}
	return a.StopBackgroundTask(task.ID)
}

func (a *App) scenarioDiagnostics(ctx context.Context, shot string) error {
	if _, err := a.scenarioSession(""); err != nil {
		return err
	}
	// Open the Diagnostics view the way a user does: its button in the status bar.
	runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('button')].find(b => /diagnostics/i.test(b.textContent || b.title || b.getAttribute('aria-label') || '')); if (b) b.click(); })()`)
	if err := shoot(shot); err != nil {
		return err
	}
	if d := a.GetDiagnostics(); d.State == "" {
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
func (a *App) scenarioMCP(ctx context.Context, p *providertest.Server, shot string) error {
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
	if err := a.useWorkspace(); err != nil {
		return err
	}
	if _, err := a.service().SaveMCPServer(a.bg(), backend.MCPServerConfig{Name: "everything", Transport: protocol.MCPTransportStdio,
		Command: node, Args: []string{script, "stdio"}, Enabled: true}, ""); err != nil {
		return err
	}
	sid, err := a.scenarioSession("Show me the MCP logo")
	if err != nil {
		return err
	}
	p.Enqueue(providertest.CallTurn("I'll ask the MCP server for it.", providertest.Call("c1", "everything__get-tiny-image", map[string]any{})),
		providertest.TextTurn("That is the Model Context Protocol logo, straight from the server."))
	f, err := a.waitFrame(sid, protocol.EvApproval, func() error { _, err := a.StartTurn(sid, "Show me the MCP logo, please."); return err })
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
	done, err := a.waitFrame(sid, protocol.EvToolComplete, func() error { return a.RespondApproval(sid, ad.ApprovalID, protocol.ChoiceOnce) })
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
func (a *App) scenarioAbout(ctx context.Context, shot string) error {
	if _, err := a.scenarioSession(""); err != nil {
		return err
	}
	runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('footer button')].find(b => (b.textContent || '').trim() === 'About'); if (b) b.click(); })()`)
	time.Sleep(700 * time.Millisecond)
	runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('dialog button.lib')].find(b => (b.textContent || '').includes('github.com/mattn/go-sqlite3')); if (b) b.click(); })()`)
	if err := shoot(shot); err != nil {
		return err
	}
	if ab := a.GetAbout(); ab.Version == "" || len(ab.Libraries) == 0 || ab.Error != "" {
		return fmt.Errorf("the About data is incomplete: version %q, %d libraries, %q", ab.Version, len(ab.Libraries), ab.Error)
	}
	return nil
}

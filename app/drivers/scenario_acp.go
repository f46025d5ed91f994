package drivers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend"
	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The ACP scenarios: a real ACP agent (OpenCode or Hermes Agent's own ACP server, its
// model the self-test's scripted provider) added as the user would in Settings, a chat
// on it, and a turn that asks permission to write a file and updates the todo list.
// Two screenshots: the permission card with the agent's own options and the diff, then
// the finished turn. scripts/acp-screenshots.sh runs them with the agent installs of
// the tests (TALARIA_SCENARIO_OPENCODE, TALARIA_SCENARIO_HERMES: their executables).

func (s *scenario) scenarioACP(ctx context.Context, p *providertest.Server, which, shot string) error {
	ws, err := os.MkdirTemp("", "talaria-scenario-ws-")
	if err != nil {
		return err
	}
	st, err := s.svc.Settings().GetSettings(s.ctx)
	if err != nil {
		return err
	}
	if _, err := s.svc.Settings().SaveSettings(s.ctx, backend.SettingsInput{ProviderName: st.ProviderName, BaseURL: st.BaseURL, Model: st.Model, Workspace: ws}); err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "talaria-scenario-agent-")
	if err != nil {
		return err
	}
	var agent backend.ACPAgent
	var turns []providertest.Turn
	notes := filepath.Join(ws, "RELEASE-NOTES.md")
	content := "# Release notes\n\n- Any ACP agent as a runtime\n- Approvals with the agent's own options\n"
	switch which {
	case "opencode":
		bin := os.Getenv("TALARIA_SCENARIO_OPENCODE")
		if bin == "" {
			return errors.New("set TALARIA_SCENARIO_OPENCODE to the opencode executable")
		}
		aux := providertest.Start() // OpenCode's title requests, apart from the script
		oc, err := acptest.NewOpenCodeWith(home, acptest.OpenCodeOptions{BaseURL: p.BaseURL(), AuxBaseURL: aux.BaseURL(),
			Permission: map[string]string{"edit": "ask", "bash": "ask"}})
		if err != nil {
			return err
		}
		agent = backend.ACPAgent{Name: "OpenCode", Command: bin, Args: oc.Args(), Preset: "opencode"}
		for _, kv := range oc.Env {
			k, v, _ := strings.Cut(kv, "=")
			agent.Env = append(agent.Env, backend.ACPEnvVar{Name: k, Value: v})
		}
		write := providertest.CallTurn("I'll write them to RELEASE-NOTES.md.", providertest.Call("w1", "write", map[string]any{"filePath": notes, "content": content}))
		turns = []providertest.Turn{write,
			providertest.CallTurn("", providertest.Call("t1", "todowrite", map[string]any{"todos": []map[string]any{
				{"content": "Write the release notes", "status": "completed", "priority": "high"},
				{"content": "Ask for a review", "status": "in_progress", "priority": "medium"}}})),
			providertest.TextTurn("The release notes are in **RELEASE-NOTES.md**; next I'll ask for a review."),
		}
	case "hermes":
		bin := os.Getenv("TALARIA_SCENARIO_HERMES")
		if bin == "" {
			return errors.New("set TALARIA_SCENARIO_HERMES to the hermes launcher of Hermes Agent 0.19.0")
		}
		hh := filepath.Join(home, "hermes")
		if err := writeHermesHome(hh, p.BaseURL()); err != nil {
			return err
		}
		agent = backend.ACPAgent{Name: "Hermes Agent (ACP)", Command: bin, Args: []string{"acp"}, Preset: "hermes",
			Env: []backend.ACPEnvVar{{Name: "HERMES_HOME", Value: hh}, {Name: "HOME", Value: home}}}
		turns = []providertest.Turn{
			providertest.CallTurn("I'll write them to RELEASE-NOTES.md.", providertest.Call("w1", "write_file", map[string]any{"path": "RELEASE-NOTES.md", "content": content})),
			providertest.CallTurn("", providertest.Call("t1", "todo", map[string]any{"todos": []map[string]any{
				{"id": "1", "content": "Write the release notes", "status": "completed"},
				{"id": "2", "content": "Ask for a review", "status": "in_progress"}}})),
			providertest.TextTurn("The release notes are in **RELEASE-NOTES.md**; next I'll ask for a review."),
		}
	default:
		return fmt.Errorf("unknown ACP agent %q", which)
	}
	if _, err := s.bound.ACP.SaveACPAgent(agent); err != nil {
		return err
	}
	saved, err := s.bound.ACP.ACPAgents()
	if err != nil || len(saved) == 0 {
		return fmt.Errorf("the agent was not saved: %v", err)
	}
	rt := protocol.RuntimeACP + ":" + saved[len(saved)-1].ID
	test, err := s.bound.ACP.TestACPAgent(saved[len(saved)-1])
	if err != nil || !test.OK {
		return fmt.Errorf("Test of %s: %+v %v", agent.Name, test, err)
	}
	sid, err := s.scenarioSession("Release notes")
	if err != nil {
		return err
	}
	if _, err := s.bound.Agents.SetSessionRuntime(sid, rt); err != nil {
		return err
	}
	s.bound.About.OpenSession(sid)
	if _, err := s.bound.ACP.ACPState(sid); err != nil { // the agent session opens; the window shows its pickers
		return err
	}
	p.Enqueue(turns...)
	f, err := s.waitFrame(sid, protocol.EvApproval, func() error {
		_, err := s.bound.Turns.StartTurn(sid, "Write the release notes for this version, then plan the review.")
		return err
	})
	if err != nil {
		return err
	}
	if err := shoot(shot); err != nil {
		return err
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(f.Data, &ad)
	allow := ""
	for _, o := range ad.Options {
		if o.Kind == protocol.OptionAllowOnce {
			allow = o.OptionID
		}
	}
	if allow == "" {
		return fmt.Errorf("the permission card has no allow-once option: %+v", ad.Options)
	}
	if _, err := s.waitFrame(sid, protocol.EvDone, func() error { return s.bound.Approvals.RespondApprovalOption(sid, ad.ApprovalID, allow) }); err != nil {
		return err
	}
	time.Sleep(time.Second)
	if shot != "" {
		if err := shoot(strings.TrimSuffix(shot, ".png") + "-done.png"); err != nil {
			return err
		}
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != content {
		return fmt.Errorf("%s did not write the file: %v", agent.Name, err)
	}
	if shot != "" && which == "opencode" {
		// Settings, ACP agents: the agent as added, Tested the way a user does.
		runtime.WindowExecJS(ctx, `(() => { const b = [...document.querySelectorAll('button')].find(b => (b.textContent || '').trim() === 'Settings'); if (b) b.click(); })()`)
		time.Sleep(800 * time.Millisecond)
		runtime.WindowExecJS(ctx, `(() => { const s = document.querySelector('[data-section="acp-agents"]'); if (!s) return; s.scrollIntoView({block: 'start'}); const b = [...s.querySelectorAll('button')].find(b => (b.textContent || '').trim() === 'Test'); if (b) b.click(); })()`)
		time.Sleep(12 * time.Second) // the Test starts the agent
		if err := shoot(strings.TrimSuffix(shot, ".png") + "-settings.png"); err != nil {
			return err
		}
	}
	return nil
}

// writeHermesHome writes a HERMES_HOME whose model is the scripted provider (the
// settings of sidecar/hermes/hermestest: manual approvals, no title model, no
// downloads, no update check).
func writeHermesHome(dir, baseURL string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	conf := map[string]any{
		"model":     map[string]any{"provider": "custom", "base_url": baseURL, "default": "scripted-model", "context_length": 131072},
		"approvals": map[string]any{"mode": "manual"},
		"auxiliary": map[string]any{"title_generation": map[string]any{"enabled": false}},
		"security":  map[string]any{"tirith_enabled": false},
		"memory":    map[string]any{"memory_enabled": false, "user_profile_enabled": false},
		"curator":   map[string]any{"enabled": false},
	}
	b, _ := json.MarshalIndent(conf, "", "  ") // JSON is YAML
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), b, 0o600); err != nil {
		return err
	}
	check, _ := json.Marshal(map[string]any{"ts": time.Now().Unix(), "behind": 0, "rev": nil, "ver": "0.19.0"})
	return os.WriteFile(filepath.Join(dir, ".update_check"), check, 0o600)
}

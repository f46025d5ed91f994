package drivers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"talaria/backend"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// scenarioHermes runs one turn on the user's real Hermes Agent (the interpreter in
// TALARIA_HERMES_PYTHON, e.g. .cache/hermes-0.19.0/bin/python from
// scripts/hermes-setup.sh) with a throw-away HERMES_HOME pointed at the scripted
// provider, until Hermes asks to approve a dangerous command; the screenshot shows that
// card with exactly the choices Hermes offers. Then the command is denied.
func (s *scenario) scenarioHermes(ctx context.Context, p *providertest.Server, shot string) error {
	python := os.Getenv("TALARIA_HERMES_PYTHON")
	if python == "" {
		return fmt.Errorf("the hermes scenario needs TALARIA_HERMES_PYTHON (a Python whose `import hermes_cli` works; scripts/hermes-setup.sh installs one)")
	}
	home, err := os.MkdirTemp("", "talaria-scenario-hermes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	conf := map[string]any{
		"model":     map[string]any{"provider": "custom", "base_url": p.BaseURL(), "default": "scripted-model", "context_length": 131072},
		"approvals": map[string]any{"mode": "manual", "timeout": 300},
		"auxiliary": map[string]any{"title_generation": map[string]any{"enabled": false}},
		"security":  map[string]any{"tirith_enabled": false},
		"memory":    map[string]any{"memory_enabled": false, "user_profile_enabled": false},
		"curator":   map[string]any{"enabled": false},
		"skills":    map[string]any{"creation_nudge_interval": 0},
	}
	b, _ := json.Marshal(conf)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), b, 0o600); err != nil {
		return err
	}
	check, _ := json.Marshal(map[string]any{"ts": time.Now().Unix(), "behind": 0, "rev": nil, "ver": ""})
	if err := os.WriteFile(filepath.Join(home, ".update_check"), check, 0o600); err != nil {
		return err
	}
	s.svc.Agents().RegisterHermes(backend.HermesConfig{Python: python, Home: home, Env: []string{"HERMES_TUI_TOOLSETS=terminal,file,clarify,todo"}})
	if err := s.useWorkspace(); err != nil {
		return err
	}
	sid, err := s.scenarioSession("Tidy the release folder")
	if err != nil {
		return err
	}
	if _, err := s.svc.Agents().SetSessionRuntime(s.ctx, sid, protocol.RuntimeHermes); err != nil {
		return err
	}
	s.bound.About.OpenSession(sid)
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{
		{Reasoning: "The old release folders take space; removing them needs the user's approval."},
		{Text: "I'll remove the old release folders."}}},
		providertest.CallTurn("", providertest.Call("h1", "terminal", map[string]any{"command": "rm -rf release/old-*"})),
		providertest.TextTurn("Understood, I left them in place."))
	// The first scripted answer is a plain text turn; the second asks for the command.
	if _, err := s.waitFrameLong(sid, protocol.EvDone, func() error {
		_, err := s.bound.Turns.StartTurn(sid, "What takes space in the release folder?")
		return err
	}); err != nil {
		return err
	}
	f, err := s.waitFrameLong(sid, protocol.EvApproval, func() error { _, err := s.bound.Turns.StartTurn(sid, "Remove the old release folders."); return err })
	if err != nil {
		return err
	}
	if err := shoot(shot); err != nil {
		return err
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(f.Data, &ad)
	_, err = s.waitFrameLong(sid, protocol.EvDone, func() error { return s.bound.Approvals.RespondApproval(sid, ad.ApprovalID, protocol.ChoiceDeny) })
	return err
}

// waitFrameLong is waitFrame for a runtime whose first start takes a while (up to 2 min).
func (s *scenario) waitFrameLong(sessionID, event string, start func() error) (frameT, error) {
	return s.waitFrameFor(sessionID, event, start, 2*time.Minute)
}

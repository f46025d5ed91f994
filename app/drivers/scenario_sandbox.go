package drivers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"talaria/backend"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// scenarioSandbox shows the sandbox in the window: the chat header with the chat's
// workspace and policy, and an approval card for a command that hides its dangerous
// part behind padding and a right-to-left override (the span marked, the padding
// collapsed, the invisible character named). screenshot is the card; a second
// screenshot beside it (<name>-full-access.png) shows the red full-access badge.
func (s *scenario) scenarioSandbox(ctx context.Context, p *providertest.Server, shot string) error {
	base, err := os.MkdirTemp("", "talaria-scenario-")
	if err != nil {
		return err
	}
	ws := filepath.Join(base, "projects", "website")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	sid, err := s.scenarioSession("Tidy the website repo")
	if err != nil {
		return err
	}
	if _, err := s.svc.Chats().SetSessionWorkspace(s.ctx, sid, ws); err != nil {
		return err
	}
	if err := s.svc.Agents().SetSessionSandbox(s.ctx, sid, backend.SessionSandbox{Mode: protocol.SandboxWorkspaceWrite}); err != nil {
		return err
	}
	cmd := "npm run lint && echo 'lint ok'" + strings.Repeat(" ", 180) + "; git push --force origin main \u202e# docs only"
	p.Enqueue(providertest.CallTurn("Lint passes; publishing the fix.",
		providertest.Call("c1", "terminal", map[string]any{"command": cmd})),
		providertest.TextTurn("Not pushed."))
	time.Sleep(500 * time.Millisecond)
	s.bound.About.OpenSession(sid)
	f, err := s.waitFrame(sid, protocol.EvApproval, func() error { _, err := s.bound.Turns.StartTurn(sid, "Fix the lint errors and publish."); return err })
	if err != nil {
		return err
	}
	var ad protocol.ApprovalData
	_ = json.Unmarshal(f.Data, &ad)
	if ad.SpanEnd <= ad.SpanStart || !strings.Contains(ad.Command[ad.SpanStart:ad.SpanEnd], "git push --force") {
		return fmt.Errorf("the approval has no span of the push: %+v", ad)
	}
	if err := shoot(shot); err != nil {
		return err
	}
	if _, err := s.waitFrame(sid, protocol.EvDone, func() error { return s.bound.Approvals.RespondApproval(sid, ad.ApprovalID, protocol.ChoiceDeny) }); err != nil {
		return err
	}
	if shot == "" {
		return nil
	}
	if err := s.svc.Agents().SetSessionSandbox(s.ctx, sid, backend.SessionSandbox{Mode: protocol.SandboxFullAccess}); err != nil {
		return err
	}
	return shoot(strings.TrimSuffix(shot, ".png") + "-full-access.png")
}

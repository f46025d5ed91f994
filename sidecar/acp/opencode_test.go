package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// openCode starts the real sidecar driving a real OpenCode whose model is a scripted
// provider. It returns the sidecar, the provider and the workspace.
func openCode(t *testing.T, permission map[string]string) (*sidecarProc, *providertest.Server, string) {
	t.Helper()
	p := providertest.Start()
	t.Cleanup(p.Close)
	aux := providertest.Start()
	t.Cleanup(aux.Close)
	oc, err := acptest.NewOpenCode(t.TempDir(), p.BaseURL(), aux.BaseURL(), permission)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := startSidecar(t, oc.Env, append([]string{oc.Binary}, oc.Args()...)...)
	return s, p, ws
}

func TestOpenCodeTurnWithApprovals(t *testing.T) {
	s, p, ws := openCode(t, map[string]string{"edit": "ask", "bash": "ask"})
	notes := filepath.Join(ws, "notes.txt")
	write := providertest.CallTurn("Writing notes.", providertest.Call("call_w1", "write", map[string]any{"filePath": notes, "content": "one\ntwo\n"}))
	write.Chunks = append([]providertest.Chunk{{Reasoning: "I will write the notes."}}, write.Chunks...)
	p.Enqueue(
		write,
		providertest.CallTurn("", providertest.Call("call_b1", "bash", map[string]any{"command": "echo hi > gone.txt", "description": "write gone"})),
		providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "Done thinking."}, {Text: "All "}, {Text: "done."}},
			Usage: &providertest.Usage{PromptTokens: 100, CompletionTokens: 20}},
	)

	var hello protocol.HelloResult
	s.call(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}, &hello)
	if hello.Runtime != "acp" {
		t.Fatalf("runtime = %q", hello.Runtime)
	}
	var info protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &info)
	if info.Name != "OpenCode" || info.Version != acptest.OpenCodeVersion || !info.Capabilities.LoadSession {
		t.Fatalf("agent.info = %+v", info)
	}

	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "make notes"})
	ap := s.waitFrame(id, time.Minute, event(protocol.EvApproval))
	var ad protocol.ApprovalData
	json.Unmarshal(ap.Data, &ad)
	t.Logf("approval 1: %s", ap.Data)
	if len(ad.Options) == 0 || ad.Diff == "" {
		t.Fatalf("approval without the agent's options or the diff: %s", ap.Data)
	}
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "once"}, nil)
	ap2 := s.waitFrame(id, time.Minute, func(f frame) bool {
		return f.Event == protocol.EvApproval && !strings.Contains(string(f.Data), ad.ApprovalID)
	})
	var ad2 protocol.ApprovalData
	json.Unmarshal(ap2.Data, &ad2)
	t.Logf("approval 2: %s", ap2.Data)
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad2.ApprovalID, Choice: "deny"}, nil)
	res, rerr := s.wait(id, 2*time.Minute)
	if rerr != nil {
		t.Fatalf("chat.start: %v\nframes:\n%s", rerr, s.describe(id))
	}
	t.Logf("result: %s", res)
	t.Logf("frames:\n%s", s.describe(id))
	if b, err := os.ReadFile(notes); err != nil || string(b) != "one\ntwo\n" {
		t.Errorf("notes.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); err == nil {
		t.Errorf("the rejected command ran")
	}
}

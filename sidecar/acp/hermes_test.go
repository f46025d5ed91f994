package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// hermesACP starts the real sidecar driving Hermes Agent 0.19.0's own ACP server
// (`hermes acp`) whose model is a scripted provider.
func hermesACP(t *testing.T) (*sidecarProc, *providertest.Server, string) {
	t.Helper()
	in := hermestest.Require(t, hermestest.NameA)
	if in.Hermes == "" {
		t.Fatalf("the Hermes %s install has no hermes launcher", in.Version)
	}
	p := providertest.Start()
	t.Cleanup(p.Close)
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: p.BaseURL()})
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	s := startSidecar(t, append(home.Env, "HOME="+filepath.Dir(home.Dir)), in.Hermes, "acp")
	return s, p, ws
}

func TestHermesACPTurnWithApprovals(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := hermesACP(t)
	write := providertest.CallTurn("Writing notes.", providertest.Call("c1", "write_file", map[string]any{"path": "notes.txt", "content": "one\ntwo\n"}))
	write.Chunks = append([]providertest.Chunk{{Reasoning: "Notes first."}}, write.Chunks...)
	p.Enqueue(write,
		providertest.CallTurn("", providertest.Call("c2", "terminal", map[string]any{"command": "rm -rf " + filepath.Join(ws, "keep")})),
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "Done, "}, {Text: "kept the folder."}}, Usage: &providertest.Usage{PromptTokens: 50, CompletionTokens: 7}},
	)
	os.Mkdir(filepath.Join(ws, "keep"), 0o755)

	var hello protocol.HelloResult
	s.call(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}, &hello)
	if hello.Runtime != "acp" {
		t.Fatalf("hello = %+v", hello)
	}
	var info protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &info)
	if info.Name != "hermes-agent" || info.Version != "0.19.0" || !info.Capabilities.LoadSession || !info.Capabilities.ResumeSession {
		t.Fatalf("agent.info = %+v", info)
	}
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "make notes"})
	var ad protocol.ApprovalData
	json.Unmarshal(s.waitFrame(id, event(protocol.EvApproval)).Data, &ad)
	if len(ad.Options) < 2 || !strings.Contains(ad.Diff, "+one") {
		t.Fatalf("edit approval = %+v", ad)
	}
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "once"}, nil)
	first := ad.ApprovalID
	json.Unmarshal(s.waitFrame(id, func(f frame) bool {
		return f.Event == protocol.EvApproval && !strings.Contains(string(f.Data), first)
	}).Data, &ad)
	var names []string
	for _, o := range ad.Options {
		names = append(names, o.Name)
	}
	if !strings.Contains(ad.Command, "rm -rf") || len(ad.Options) != 5 {
		t.Fatalf("command approval = %+v (options %v)", ad, names)
	}
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny", OptionID: "deny"}, nil)
	res, rerr := s.wait(id)
	if rerr != nil {
		t.Fatalf("chat.start: %v\n%s", rerr, s.describe(id))
	}
	var cr protocol.ChatResult
	json.Unmarshal(res, &cr)
	if cr.Status != protocol.StatusCompleted || cr.FinalResponse == "" || cr.Usage.OutputTokens != 7 {
		t.Fatalf("result = %s", res)
	}
	if got := s.text(id, protocol.EvReasoning); !strings.Contains(got, "Notes first.") {
		t.Errorf("reasoning = %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "one\ntwo\n" {
		t.Errorf("notes.txt = %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "keep")); err != nil {
		t.Errorf("the denied command ran")
	}
	// The model read the denial.
	reqs := p.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(string(last.Body), "denied") && !strings.Contains(strings.ToLower(string(last.Body)), "blocked") {
		t.Errorf("the model was not told about the denial: %.600s", last.Body)
	}
	// Hermes's modes that say they auto-allow edits are marked; the default mode, in
	// which it asked for both actions, is not.
	var st protocol.AgentState
	for _, f := range s.frames(id) {
		if f.Event == protocol.EvAgentState {
			json.Unmarshal(f.Data, &st)
		}
	}
	if st.Modes == nil || st.SelfApproves != "" {
		t.Errorf("state in the default mode = %+v", st)
	} else {
		for _, c := range st.Modes.Choices {
			if (c.SelfApproves != "") != (c.ID == "accept_edits" || c.ID == "dont_ask") {
				t.Errorf("mode %s: self_approves = %q", c.ID, c.SelfApproves)
			}
		}
	}
	t.Logf("frames:\n%s", s.describe(id))
}

package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
	"talaria/sidecar/sandbox"
)

// TestToolLoop: two calls streamed in interleaved pieces are assembled by index and run
// in order between their frames; the results go back as tool messages; the loop ends on
// a plain answer.
func TestToolLoop(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := workspace(t, map[string]string{"a.txt": "one\ntwo\n", "sub/b.txt": "b\n"})
	p.Enqueue(
		providertest.CallTurn("Let me look.",
			providertest.Call("c1", "read_file", map[string]any{"path": "a.txt"}),
			providertest.Call("c2", "list_files", map[string]any{"path": ".", "recursive": true})),
		providertest.TextTurn("Done", "."),
	)
	rt := New(Options{Log: testLogger(t)})
	params := toolParams(p, "s1", dir)
	params.SystemMessage = "Be brief."
	run := startChat(t, rt, params)
	res := run.mustResult()

	if got := strings.Join(run.events(), ","); got != "token,tool,tool_complete,tool,tool_complete,token,token" {
		t.Fatalf("events %s%s", got, run.summary())
	}
	var tool protocol.ToolData
	run.waitFor(protocol.EvTool, 1, &tool)
	if tool.TID != "c1" || tool.Name != "read_file" || tool.KeyArg != "a.txt" || tool.Args["path"] != "a.txt" {
		t.Fatalf("tool frame %+v", tool)
	}
	done := toolCompletes(t, run)
	if done[0].TID != "c1" || done[0].Preview != "one\ntwo\n" || rawField(t, done[0].RawResult, "content") != "one\ntwo\n" || done[0].DurationS < 0 {
		t.Fatalf("tool_complete %+v", done[0])
	}
	if done[1].TID != "c2" || !strings.Contains(done[1].Preview, "sub/b.txt") {
		t.Fatalf("tool_complete %+v", done[1])
	}

	if res.Status != protocol.StatusCompleted || res.FinalResponse != "Done." || res.ToolLimitReached || len(res.Messages) != 4 {
		t.Fatalf("result %+v", res)
	}
	a := res.Messages[0]
	if a.Role != "assistant" || a.Content != "Let me look." || len(a.ToolCalls) != 2 ||
		a.ToolCalls[0].ID != "c1" || a.ToolCalls[0].Function.Arguments != `{"path":"a.txt"}` ||
		a.ToolCalls[1].Function.Name != "list_files" || a.ToolCalls[1].Function.Arguments != `{"path":".","recursive":true}` {
		t.Fatalf("assistant row %+v", a)
	}
	if m := res.Messages[1]; m.Role != "tool" || m.ToolCallID != "c1" || m.Name != "read_file" || !strings.Contains(m.Content, `"content":"one\ntwo\n"`) {
		t.Fatalf("tool row %+v", m)
	}
	if m := res.Messages[2]; m.Role != "tool" || m.ToolCallID != "c2" {
		t.Fatalf("tool row %+v", m)
	}
	if m := res.Messages[3]; m.Role != "assistant" || m.Content != "Done." || len(m.ToolCalls) != 0 {
		t.Fatalf("answer row %+v", m)
	}

	reqs := p.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	names := reqs[0].ToolNames()
	if strings.Join(names, ",") != "terminal,read_file,write_file,patch,list_files,search_files,todo,clarify,request_secret" || reqs[0].ToolChoice() != "auto" {
		t.Fatalf("tools %q choice %q", names, reqs[0].ToolChoice())
	}
	if sys := reqs[0].Messages[0]; sys.Role != "system" || !strings.HasPrefix(sys.Content, "Be brief.\n\nThe workspace folder is "+dir) {
		t.Fatalf("system %q", sys.Content)
	}
	second := reqs[1]
	var roles []string
	for _, m := range second.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool" {
		t.Fatalf("roles %q", roles)
	}
	calls := second.AssistantCalls()
	if len(calls) != 2 || calls[0].ID != "c1" || calls[1].ID != "c2" {
		t.Fatalf("calls sent back %+v", calls)
	}
	tr, ok := second.ToolResult("c1")
	if !ok || !strings.Contains(tr.Content, `"content":"one\ntwo\n"`) || strings.Contains(string(tr.Raw), `"name"`) {
		t.Fatalf("tool message %s", tr.Raw)
	}
	if strings.Contains(string(second.Messages[2].Raw), "reasoning") {
		t.Fatalf("assistant message %s", second.Messages[2].Raw)
	}
}

// TestToolLoopFileEdits: write_file and patch carry the whole diff in result_diff and
// files_modified in the result.
func TestToolLoopFileEdits(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := workspace(t, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("w", "write_file", map[string]any{"path": "docs/new.md", "content": "# New\n"})),
		providertest.CallTurn("", providertest.Call("p", "patch", map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() {\n\tprintln(1)\n}"})),
		providertest.CallTurn("", providertest.Call("bad", "patch", map[string]any{"path": "main.go", "old_string": "nope", "new_string": "x"})),
		providertest.TextTurn("ok"),
	)
	run := startChat(t, New(Options{}), toolParams(p, "s1", dir))
	run.mustResult()
	done := toolCompletes(t, run)
	if len(done) != 3 {
		t.Fatalf("%d tool_complete", len(done))
	}
	if done[0].ResultDiff != "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+# New\n" || done[0].Preview != "created docs/new.md (+1 -0)" {
		t.Fatalf("write %+v", done[0])
	}
	if fm, _ := rawField(t, done[0].RawResult, "files_modified").([]any); len(fm) != 1 || fm[0] != "docs/new.md" {
		t.Fatalf("files_modified %s", done[0].RawResult)
	}
	wantDiff := "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,5 @@\n package main\n \n-func main() {}\n+func main() {\n+\tprintln(1)\n+}\n"
	if done[1].ResultDiff != wantDiff || done[1].Preview != "edited main.go (+3 -1)" {
		t.Fatalf("patch %q %q", done[1].ResultDiff, done[1].Preview)
	}
	if e, _ := rawField(t, done[2].RawResult, "error").(string); !strings.Contains(e, "not found") || done[2].ResultDiff != "" {
		t.Fatalf("failed patch %+v", done[2])
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "docs", "new.md")); string(b) != "# New\n" {
		t.Fatalf("file %q", b)
	}
}

// TestToolLoopErrors: an unknown tool, arguments that are not JSON, and a path that
// leaves the workspace each give the model an error result, and the loop goes on.
func TestToolLoopErrors(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := workspace(t, map[string]string{"a.txt": "a"})
	outside := filepath.Join(filepath.Dir(dir), "outside-secret.txt")
	os.WriteFile(outside, []byte("outside"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link"))
	p.Enqueue(
		providertest.CallTurn("",
			providertest.Call("u", "launch_rockets", map[string]any{}),
			providertest.Call("j", "read_file", `{"path": "a.txt"`),
			providertest.Call("e1", "read_file", map[string]any{"path": "../outside-secret.txt"}),
			providertest.Call("e2", "read_file", map[string]any{"path": outside}),
			providertest.Call("e3", "read_file", map[string]any{"path": "link"}),
			providertest.Call("e4", "write_file", map[string]any{"path": "../escape.txt", "content": "x"}),
			providertest.Call("n", "terminal", `null`),
		),
		providertest.TextTurn("ok"),
	)
	run := startChat(t, New(Options{}), toolParams(p, "s1", dir))
	res := run.mustResult()
	done := toolCompletes(t, run)
	if len(done) != 7 {
		t.Fatalf("%d tool_complete%s", len(done), run.summary())
	}
	wants := []string{"no tool named", "not a JSON object", "outside the workspace", "outside the workspace", "outside the workspace", "outside the workspace", "not a JSON object"}
	for i, d := range done {
		e, _ := rawField(t, d.RawResult, "error").(string)
		if !strings.Contains(e, wants[i]) {
			t.Errorf("call %s: error %q, want %q", d.TID, e, wants[i])
		}
		if strings.Contains(string(d.RawResult), "outside\"") || strings.Contains(d.Preview, "\noutside") {
			t.Errorf("call %s read outside: %s", d.TID, d.RawResult)
		}
	}
	var tool protocol.ToolData
	run.waitFor(protocol.EvTool, 2, &tool)
	if tool.Args["_raw"] != `{"path": "a.txt"` {
		t.Fatalf("raw args %+v", tool.Args)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt")); !os.IsNotExist(err) {
		t.Fatal("a file was written outside the workspace")
	}
	if res.FinalResponse != "ok" || len(res.Messages) != 9 {
		t.Fatalf("result %+v", res)
	}
}

// TestMaxIterations: the loop stops after max_iterations model calls; the last step's
// calls are answered "not run", and tool_limit_reached is set. 0 means 30.
func TestMaxIterations(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	todoCall := func(id string) providertest.Turn {
		return providertest.CallTurn("step "+id+" ", providertest.Call("t"+id, "todo", map[string]any{"merge": true, "todos": []map[string]any{{"id": id, "content": "item " + id}}}))
	}
	p.Enqueue(todoCall("1"), todoCall("2"), todoCall("3"))
	rt := New(Options{})
	params := toolParams(p, "s1", t.TempDir())
	params.MaxIterations = 2
	res := startChat(t, rt, params).mustResult()
	if !res.ToolLimitReached || res.Status != protocol.StatusCompleted || len(p.Requests()) != 2 || res.FinalResponse != "step 2 " {
		t.Fatalf("result %+v after %d requests", res, len(p.Requests()))
	}
	if len(res.Messages) != 4 || res.Messages[3].Role != "tool" || !strings.Contains(res.Messages[3].Content, "not run") {
		t.Fatalf("rows %+v", res.Messages)
	}
	if list := rt.todos("s1"); len(list) != 1 || list[0].ID != "1" {
		t.Fatalf("the call past the limit ran: %+v", list)
	}

	// The default: 30 model calls.
	p2 := providertest.Start()
	defer p2.Close()
	for i := 0; i < 35; i++ {
		p2.Enqueue(providertest.CallTurn("", providertest.Call("c", "todo", map[string]any{})))
	}
	res = startChat(t, New(Options{}), toolParams(p2, "s2", t.TempDir())).mustResult()
	if !res.ToolLimitReached || len(p2.Requests()) != DefaultMaxIterations {
		t.Fatalf("%d requests, limit %v", len(p2.Requests()), res.ToolLimitReached)
	}
	// Ids the provider repeats are made unique within the turn.
	seen := map[string]bool{}
	for _, m := range res.Messages {
		for _, c := range m.ToolCalls {
			if seen[c.ID] {
				t.Fatalf("tool call id %s twice", c.ID)
			}
			seen[c.ID] = true
		}
	}
}

// TestTodoTool: the list is set, merged and read back in a later turn of the session;
// todo_result carries it whole.
func TestTodoTool(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("a", "todo", map[string]any{"todos": []map[string]any{
			{"id": "1", "content": "Read the code", "status": "in_progress"}, {"id": "2", "content": "Fix the bug"}}})),
		providertest.CallTurn("", providertest.Call("b", "todo", map[string]any{"merge": true, "todos": []map[string]any{{"id": "1", "status": "completed"}}})),
		providertest.CallTurn("", providertest.Call("c", "todo", map[string]any{"todos": []map[string]any{{"id": "x", "status": "done"}}})),
		providertest.TextTurn("ok"),
		providertest.CallTurn("", providertest.Call("d", "todo", map[string]any{})),
		providertest.TextTurn("ok"),
	)
	rt := New(Options{})
	run := startChat(t, rt, toolParams(p, "s1", t.TempDir()))
	run.mustResult()
	done := toolCompletes(t, run)
	if done[0].TodoResult == nil || len(done[0].TodoResult.Todos) != 2 || done[0].TodoResult.Todos[1].Status != "pending" {
		t.Fatalf("first %+v", done[0].TodoResult)
	}
	want := `{"todos":[{"id":"1","content":"Read the code","status":"completed"},{"id":"2","content":"Fix the bug","status":"pending"}]}`
	if b, _ := json.Marshal(done[1].TodoResult); string(b) != want {
		t.Fatalf("merged %s", b)
	}
	if done[2].TodoResult != nil || !strings.Contains(fmt.Sprint(rawField(t, done[2].RawResult, "error")), "status") {
		t.Fatalf("bad status %+v", done[2])
	}
	run2 := startChat(t, rt, toolParams(p, "s1", t.TempDir()))
	run2.mustResult()
	if b, _ := json.Marshal(toolCompletes(t, run2)[0].TodoResult); string(b) != want {
		t.Fatalf("read back %s", b)
	}
}

// TestToolsetsAndNoTools: enabled_toolsets limits the offer; a model calling a tool
// that was not offered gets an error result.
func TestToolsetsAndNoTools(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.CallTurn("", providertest.Call("x", "terminal", map[string]any{"command": "touch nope"})), providertest.TextTurn("ok"))
	params := toolParams(p, "s1", t.TempDir())
	params.EnabledToolsets = []string{"file", "todo", "unknown"}
	run := startChat(t, New(Options{}), params)
	run.mustResult()
	if got := strings.Join(p.Requests()[0].ToolNames(), ","); got != "read_file,write_file,patch,list_files,search_files,todo" {
		t.Fatalf("tools %s", got)
	}
	if e := fmt.Sprint(rawField(t, toolCompletes(t, run)[0].RawResult, "error")); !strings.Contains(e, "no tool named") {
		t.Fatalf("error %s", e)
	}
	if _, err := os.Stat(filepath.Join(params.Workspace, "nope")); !os.IsNotExist(err) {
		t.Fatal("a tool that was not offered ran")
	}
	// A bad workspace is an error result, not a failed turn.
	p.Enqueue(providertest.CallTurn("", providertest.Call("y", "read_file", map[string]any{"path": "a"})), providertest.TextTurn("ok"))
	params = toolParams(p, "s1", "/nonexistent/talaria-test")
	run = startChat(t, New(Options{}), params)
	run.mustResult()
	if e := fmt.Sprint(rawField(t, toolCompletes(t, run)[0].RawResult, "error")); !strings.Contains(e, "cannot be opened") {
		t.Fatalf("error %s", e)
	}
}

// TestSecretStoreWorkspaceIsRefused: a chat whose workspace is a secret store (~/.ssh)
// is refused at chat.start, before the model is asked, with what to do; the file tools
// also hide what the sandbox hides from commands. A crafted import made ~/.ssh a chat's
// workspace, and read_file sent the private key to the model while the terminal's cat
// of it asked first.
func TestSecretStoreWorkspaceIsRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_rsa"), []byte("CANARY-PRIVATE-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.CallTurn("", providertest.Call("c1", "read_file", map[string]any{"path": "id_rsa"})), providertest.TextTurn("ok"))
	rt := New(Options{Log: testLogger(t)})
	for _, ws := range []string{ssh, filepath.Join(home, "link-to-ssh")} {
		if ws != ssh {
			if err := os.Symlink(ssh, ws); err != nil {
				t.Fatal(err)
			}
		}
		_, err := startChat(t, rt, toolParams(p, "s1", ws)).result()
		var perr *protocol.Error
		if !errors.As(err, &perr) || perr.Condition() != protocol.CondInvalidParams || !strings.Contains(perr.Message, "choose another workspace") {
			t.Fatalf("chat.start in %s: %v", ws, err)
		}
	}
	if n := len(p.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
	// The file tools' own rule, for a workspace that holds a secret store.
	w, err := tools.OpenWorkspace(home, sandbox.Policy{Mode: sandbox.DefaultMode, Workspace: home}.Hides()...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if res, err := w.ReadFile(".ssh/id_rsa", 1, 10); err == nil || strings.Contains(res.Content, "CANARY") {
		t.Fatalf("read .ssh/id_rsa from the home workspace: %+v %v", res, err)
	}
}

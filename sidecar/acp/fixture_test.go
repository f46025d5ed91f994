package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// The mapping tested on real agents' transcripts (testdata/*.acp: every ACP line of a
// turn with the real agent, "> " to it, "< " from it, recorded with
// TALARIA_ACP_TRANSCRIPT; the workspace path replaced by /ws). The agent's side is
// replayed through the mapper: its session updates and permission requests; the
// frames and rows it makes are checked, and compared with testdata/*.frames.golden
// (go test -run Fixture -update rewrites those).

var update = flag.Bool("update", false, "rewrite the golden files of the fixture tests")

type sentFrame struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

type replay struct {
	frames []sentFrame
	rows   []protocol.ChatMessage
	final  string
	stop   string
	usage  protocol.Usage
}

func replayFixture(t *testing.T, name string) replay {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rp replay
	clock := time.Unix(1000, 0)
	m := newMapper(func(ev string, data any) {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		rp.frames = append(rp.frames, sentFrame{ev, b})
	}, "/ws")
	m.now = func() time.Time { clock = clock.Add(100 * time.Millisecond); return clock }
	promptIDs := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		dir, body, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatalf("%s: a line that is not JSON: %v", name, err)
		}
		id := string(bytes.TrimSpace(env.ID))
		switch {
		case dir == ">" && env.Method == "session/prompt":
			promptIDs[id] = true
		case dir == "<" && env.Method == "session/update":
			var n sdk.SessionNotification
			if err := json.Unmarshal(env.Params, &n); err != nil {
				t.Fatalf("%s: session/update the SDK cannot read: %v\n%s", name, err, body)
			}
			m.handle(n.Update)
		case dir == "<" && env.Method == "session/request_permission":
			var req sdk.RequestPermissionRequest
			if err := json.Unmarshal(env.Params, &req); err != nil {
				t.Fatalf("%s: request_permission the SDK cannot read: %v", name, err)
			}
			m.notePermission(req.ToolCall)
		case dir == "<" && env.Method == "" && promptIDs[id] && len(env.Result) > 0:
			var resp sdk.PromptResponse
			if err := json.Unmarshal(env.Result, &resp); err != nil {
				t.Fatal(err)
			}
			rp.stop = string(resp.StopReason)
			if resp.Usage != nil {
				rp.usage = protocol.Usage{InputTokens: int64(resp.Usage.InputTokens), OutputTokens: int64(resp.Usage.OutputTokens)}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rp.stop == "" {
		t.Fatalf("%s has no session/prompt answer", name)
	}
	rp.rows, rp.final = m.finish(rp.stop == "cancelled")
	golden(t, name, rp)
	return rp
}

// golden compares the replay with testdata/<name>.frames.golden.
func golden(t *testing.T, name string, rp replay) {
	t.Helper()
	var buf bytes.Buffer
	for _, f := range rp.frames {
		buf.WriteString(f.Event + " " + string(f.Data) + "\n")
	}
	rows, _ := json.MarshalIndent(rp.rows, "", " ")
	buf.WriteString("rows ")
	buf.Write(rows)
	buf.WriteString("\nfinal " + rp.final + "\n")
	path := filepath.Join("testdata", strings.TrimSuffix(name, ".acp")+".frames.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Fixture -update to write it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s: the frames differ from %s (go test -run Fixture -update rewrites it after a deliberate change)\ngot:\n%s", name, path, buf.String())
	}
}

func (rp replay) text(ev string) string {
	var sb strings.Builder
	for _, f := range rp.frames {
		if f.Event == ev {
			var d protocol.TextData
			json.Unmarshal(f.Data, &d)
			sb.WriteString(d.Text)
		}
	}
	return sb.String()
}

// completes returns the tool_complete frames by tool call id.
func (rp replay) completes(t *testing.T) map[string]protocol.ToolCompleteData {
	out := map[string]protocol.ToolCompleteData{}
	for _, f := range rp.frames {
		if f.Event != protocol.EvToolComplete {
			continue
		}
		var d protocol.ToolCompleteData
		if err := json.Unmarshal(f.Data, &d); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[d.TID]; dup {
			t.Errorf("tool_complete twice for %s", d.TID)
		}
		out[d.TID] = d
	}
	return out
}

func rawField(raw json.RawMessage, key string) any {
	var m map[string]any
	json.Unmarshal(raw, &m)
	return m[key]
}

func TestFixtureOpenCode(t *testing.T) {
	rp := replayFixture(t, "opencode-1.18.33-tools.acp")
	if got := rp.text(protocol.EvToken); got != "Writing notes.Now the second line." {
		t.Errorf("tokens = %q", got)
	}
	if got := rp.text(protocol.EvReasoning); got != "I will write the notes." {
		t.Errorf("reasoning = %q", got)
	}
	done := rp.completes(t)
	for id, name := range map[string]string{"call_w1": "edit", "call_e1": "edit", "call_t1": "todo", "call_b1": "execute"} {
		if done[id].Name != name {
			t.Errorf("%s: name %q, want %q", id, done[id].Name, name)
		}
	}
	// The write's diff came with its permission request only.
	if d := done["call_w1"].ResultDiff; !strings.Contains(d, "+++ b/notes.txt") || !strings.Contains(d, "+two") {
		t.Errorf("write diff = %q", d)
	}
	if d := done["call_e1"].ResultDiff; !strings.Contains(d, "-two") || !strings.Contains(d, "+three") {
		t.Errorf("edit diff = %q", d)
	}
	todo := done["call_t1"].TodoResult
	if todo == nil || len(todo.Todos) != 2 || todo.Todos[0].Status != "completed" || todo.Todos[1].Status != "in_progress" {
		t.Errorf("todo_result = %+v", todo)
	}
	if rawField(done["call_b1"].RawResult, "error") == nil {
		t.Errorf("the rejected command is not an error: %s", done["call_b1"].RawResult)
	}
	if rawField(done["call_w1"].RawResult, "error") != nil {
		t.Errorf("the write is an error: %s", done["call_w1"].RawResult)
	}
	// Rows: the text before each batch of calls, the calls, their results.
	var shape []string
	for _, r := range rp.rows {
		s := r.Role
		for _, c := range r.ToolCalls {
			s += " " + c.ID
		}
		if r.ToolCallID != "" {
			s += " " + r.ToolCallID
		}
		shape = append(shape, s)
	}
	want := "assistant call_w1|tool call_w1|assistant call_e1 call_t1 call_b1|tool call_e1|tool call_t1|tool call_b1"
	if got := strings.Join(shape, "|"); got != want {
		t.Errorf("rows = %s\nwant %s", got, want)
	}
	if rp.rows[0].Reasoning != "I will write the notes." || rp.rows[2].Content != "Now the second line." {
		t.Errorf("row texts: %+v", rp.rows)
	}
	var args map[string]any
	json.Unmarshal([]byte(rp.rows[0].ToolCalls[0].Function.Arguments), &args)
	if args["filePath"] != "/ws/notes.txt" || args["title"] == "" {
		t.Errorf("saved arguments = %v", args)
	}
}

func TestFixtureHermes(t *testing.T) {
	rp := replayFixture(t, "hermes-0.19.0-tools.acp")
	if got := rp.text(protocol.EvToken); got != "Writing notes.\n\nDone: notes has one and three." {
		t.Errorf("tokens = %q", got)
	}
	if got := rp.text(protocol.EvReasoning); got != "Thinking about notes.All done." {
		t.Errorf("reasoning = %q", got)
	}
	done := rp.completes(t)
	if len(done) != 4 {
		t.Errorf("%d tool calls completed, want 4", len(done))
	}
	// Hermes asks permission for an edit under another tool call id: the diff goes
	// to the open call on the same file.
	var write, patch string
	for id, d := range done {
		switch {
		case strings.Contains(d.ResultDiff, "+two"):
			write = id
		case strings.Contains(d.ResultDiff, "+three"):
			patch = id
		}
	}
	if write != "tc-4d32bb7ef4ae" || patch != "tc-1b28eb101f04" {
		t.Errorf("diffs on %q and %q, want the write and the patch call", write, patch)
	}
	var plan *protocol.TodoList
	for _, f := range rp.frames {
		if f.Event == protocol.EvPlan {
			plan = &protocol.TodoList{}
			json.Unmarshal(f.Data, plan)
		}
	}
	if plan == nil || len(plan.Todos) != 2 || plan.Todos[0].Content != "write notes" || plan.Todos[1].Status != "in_progress" {
		t.Errorf("plan = %+v", plan)
	}
	if rp.final != "\n\nDone: notes has one and three." {
		t.Errorf("final = %q", rp.final)
	}
}

//go:build linux

package backend_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"talaria/internal/testdir"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/pending"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/internal/testwait"
	"talaria/sidecar/mcp/mcptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The MCP tests of record: the real backend, the real sidecar, SQLite, the scripted
// provider calling the tools of real MCP servers installed from npm
// (@modelcontextprotocol/server-filesystem and server-everything, mcptest's versions),
// each stdio server confined by the chat's sandbox policy like the agent's commands.

// mcpRig is a harness with the MCP tests' own helpers.
type mcpRig struct{ *backendtest.Harness }

// mcpHarness is a harness with a workspace, no model-made titles (the scripted queue
// holds only the turns' answers) and the test servers found.
func mcpHarness(t *testing.T, tweak func(*backend.Options)) (*mcpRig, string, mcptest.Servers) {
	t.Helper()
	srv := mcptest.Find(t)
	h := &mcpRig{backendtest.NewWith(t, "", tweak)}
	h.Svc.Runner.SetAutoTitles(false)
	ws := h.WithWorkspace()
	return h, ws, srv
}

// addServer saves a server from its wire form.
func (h *mcpRig) addServer(w protocol.MCPServer, mutate func(*backend.MCPServerConfig)) backend.MCPServerConfig {
	h.T.Helper()
	c := backend.MCPServerConfig{Name: w.Name, Transport: w.Transport, Command: w.Command, Args: w.Args, URL: w.URL, Enabled: true}
	if mutate != nil {
		mutate(&c)
	}
	out, err := h.Svc.MCP().SaveMCPServer(context.Background(), c, "")
	if err != nil {
		h.T.Fatalf("SaveMCPServer(%s): %v", w.Name, err)
	}
	return out
}

// answer waits for the stream's n-th approval (from 1) and answers it.
func (h *mcpRig) answer(stream, sid string, n int, choice string) map[string]any {
	h.T.Helper()
	var aps []map[string]any
	if !testwait.Until(func() bool { aps = backendtest.FramesOf(h.Snapshot(stream), protocol.EvApproval); return len(aps) >= n }) {
		h.T.Fatalf("no approval %d on %s:\n%s", n, stream, h.Describe(stream))
	}
	ap := aps[n-1]
	if err := h.Svc.Approvals().RespondApproval(context.Background(), sid, ap["approval_id"].(string), choice); err != nil {
		h.T.Fatalf("RespondApproval(%s): %v", choice, err)
	}
	return ap
}

// readChars is what process pid has read so far, in bytes (/proc/PID/io rchar: its
// stdin included), or -1 when it cannot be read.
func readChars(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			var n int64
			if _, err := fmt.Sscan(v, &n); err == nil {
				return n
			}
		}
	}
	return -1
}

// callReachesServer starts a turn (the model's tool call held at the provider until
// the server is idle) whose call of a stdio MCP server must be running when it
// returns: it waits for the model's request (the server was started and its tools
// listed before it), notes what the server has read, lets the tool call through, and
// waits for the tool frame and for the server to read more (the tools/call request on
// its stdin). It returns the stream and the server's pid.
func (h *mcpRig) callReachesServer(sid, text string, cfg protocol.MCPServer, call providertest.Turn, more ...providertest.Turn) (string, int) {
	h.T.Helper()
	gate, open := backendtest.Release()
	defer open()
	call.Chunks[0].Wait = gate
	before := len(backendtest.StreamRequests(h.Provider.Requests()))
	h.Provider.Enqueue(append([]providertest.Turn{call}, more...)...)
	s := h.Start(sid, text)
	testwait.For(h.T, "the model's request", func() bool { return len(backendtest.StreamRequests(h.Provider.Requests())) > before })
	pids := mcptest.NodePids(mcptest.Marker(cfg))
	if len(pids) != 1 {
		h.T.Fatalf("server pids %v", pids)
	}
	idle := readChars(pids[0])
	if idle < 0 {
		h.T.Fatalf("cannot read /proc/%d/io", pids[0])
	}
	open()
	h.WaitEvent(s, protocol.EvTool)
	testwait.For(h.T, "the server to read the tools/call request", func() bool { return readChars(pids[0]) > idle })
	return s, pids[0]
}

func mcpOf(m map[string]any) map[string]any {
	v, _ := m["mcp"].(map[string]any)
	return v
}

func contentText(done map[string]any) string {
	var b strings.Builder
	for _, c := range mcpOf(done)["content"].([]any) {
		if s, ok := c.(map[string]any)["text"].(string); ok {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

func TestMCPFilesystemListReadAndRefuse(t *testing.T) {
	h, ws, srv := mcpHarness(t, nil)
	ctx := context.Background()
	allowed := filepath.Join(ws, "notes")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(allowed, "todo.txt"), []byte("buy milk\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "private.txt"), []byte("the launch codes\n"), 0o644)
	h.addServer(srv.FilesystemServer("fs", allowed), nil)

	h.Provider.Enqueue(
		backendtest.ToolTurn("c1", "fs__list_directory", map[string]any{"path": allowed}),
		backendtest.ToolTurn("c2", "fs__read_text_file", map[string]any{"path": filepath.Join(allowed, "todo.txt")}),
		backendtest.ToolTurn("c3", "fs__read_text_file", map[string]any{"path": filepath.Join(ws, "private.txt")}),
		providertest.TextTurn("Your list says: buy milk."))
	sid := h.NewSession()
	s := h.Start(sid, "what is on my todo list?")

	// The first call asks, with the tool's annotations on the card; "this chat" covers
	// the next call of the same tool, "once" only this one.
	ap := h.answer(s, sid, 1, protocol.ChoiceOnce)
	m := mcpOf(ap)
	ann, _ := m["annotations"].(map[string]any)
	if ap["kind"] != "mcp" || m["server"] != "fs" || m["tool"] != "list_directory" || ann["read_only"] != true || ann["destructive"] != false ||
		!slices.Equal(toStrings(ap["choices"]), []string{"once", "session", "always", "always_server", "deny"}) || ap["pattern"] != "mcp:fs/list_directory" {
		t.Fatalf("approval card = %v", ap)
	}
	if args, _ := ap["args"].(map[string]any); args["path"] != allowed {
		t.Fatalf("approval args = %v", ap["args"])
	}
	h.answer(s, sid, 2, protocol.ChoiceSession)
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	if n := len(backendtest.FramesOf(frames, protocol.EvApproval)); n != 2 {
		t.Fatalf("%d approvals; the second read_text_file should run on the chat's grant:\n%s", n, h.Describe(s))
	}
	tools := backendtest.FramesOf(frames, protocol.EvTool)
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)
	if len(tools) != 3 || len(done) != 3 {
		t.Fatalf("%d tool frames, %d tool_complete:\n%s", len(tools), len(done), h.Describe(s))
	}
	if ref := mcpOf(tools[1]); ref["server"] != "fs" || ref["tool"] != "read_text_file" || tools[1]["key_arg"] != filepath.Join(allowed, "todo.txt") {
		t.Fatalf("tool frame = %v", tools[1])
	}
	if done[0]["is_error"] != false || !strings.Contains(contentText(done[0]), "[FILE] todo.txt") {
		t.Fatalf("list_directory = %v", done[0])
	}
	if done[1]["is_error"] != false || !strings.Contains(contentText(done[1]), "buy milk") {
		t.Fatalf("read inside = %v", done[1])
	}
	// Outside the folder the server allows: refused, and nothing of the file shows.
	if done[2]["is_error"] != true || strings.Contains(contentText(done[2]), "launch codes") || mcpOf(done[2])["is_error"] != true {
		t.Fatalf("read outside = %v", done[2])
	}
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	tm := backendtest.ToolMessages(reqs, 3)
	if len(tm) != 3 || !strings.Contains(tm[1], "buy milk") || strings.Contains(tm[2], "launch codes") ||
		!strings.Contains(strings.ToLower(tm[2]), "denied") {
		t.Fatalf("the model read %q", tm)
	}
	// The model was offered the server's tools with the prefix, and the workspace's.
	var offered []struct {
		Function struct{ Name string } `json:"function"`
	}
	_ = json.Unmarshal(reqs[0].Tools, &offered)
	var names []string
	for _, o := range offered {
		names = append(names, o.Function.Name)
	}
	if !slices.Contains(names, "fs__read_text_file") || !slices.Contains(names, "fs__write_file") || !slices.Contains(names, "terminal") {
		t.Fatalf("offered tools %v", names)
	}
	// The transcript keeps the calls under their offered names.
	var calls []string
	for _, msg := range h.Messages(sid) {
		for _, c := range msg.ToolCalls {
			calls = append(calls, c.Function.Name)
		}
	}
	if !slices.Equal(calls, []string{"fs__list_directory", "fs__read_text_file", "fs__read_text_file"}) {
		t.Fatalf("transcript calls %v", calls)
	}
	_ = ctx
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestMCPApprovalDeniedNeverRuns(t *testing.T) {
	h, ws, srv := mcpHarness(t, nil)
	h.addServer(srv.FilesystemServer("fs", ws), nil)
	target := filepath.Join(ws, "created.txt")
	h.Provider.Enqueue(backendtest.ToolTurn("w1", "fs__write_file", map[string]any{"path": target, "content": "should not exist"}),
		providertest.TextTurn("I did not write it."))
	sid := h.NewSession()
	s := h.Start(sid, "write a file")
	ap := h.answer(s, sid, 1, protocol.ChoiceDeny)
	if ann, _ := mcpOf(ap)["annotations"].(map[string]any); ann["read_only"] != false || ann["destructive"] != true {
		t.Fatalf("write_file annotations = %v", ap)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the denied tool ran: %v", err)
	}
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)[0]
	if done["is_error"] != true || !strings.Contains(contentText(done), "denied") {
		t.Fatalf("tool_complete = %v", done)
	}
	if tm := backendtest.ToolMessages(backendtest.StreamRequests(h.Provider.Requests()), 1); len(tm) != 1 || !strings.Contains(tm[0], "denied: the user did not allow") {
		t.Fatalf("the model read %q", tm)
	}
	// The decision is in the approval audit log.
	audit, err := h.Svc.Approvals().ListAudit(context.Background(), store.AuditFilter{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(audit, func(e store.AuditEntry) bool {
		return e.Pattern == "mcp:fs/write_file" && e.Decision == protocol.ChoiceDeny && e.DecidedBy == "user" && strings.Contains(e.Subject, "fs")
	}) {
		t.Fatalf("audit log %+v", audit)
	}
	// "Always for this server": persisted, and the next turn's call asks no more.
	h.Provider.Enqueue(backendtest.ToolTurn("w2", "fs__write_file", map[string]any{"path": target, "content": "now yes"}), providertest.TextTurn("written"))
	s = h.Start(sid, "write it after all")
	h.answer(s, sid, 1, protocol.ChoiceAlwaysServer)
	h.WaitEnd(s)
	if b, _ := os.ReadFile(target); string(b) != "now yes" {
		t.Fatalf("file = %q", b)
	}
	rules, _ := h.Svc.Approvals().GetAllowlist(context.Background())
	if !slices.ContainsFunc(rules, func(r backend.AllowRule) bool { return r.Pattern == "mcp:fs/*" }) {
		t.Fatalf("allowlist %v", rules)
	}
	h.Provider.Enqueue(backendtest.ToolTurn("w3", "fs__create_directory", map[string]any{"path": filepath.Join(ws, "sub")}), providertest.TextTurn("made"))
	s = h.Start(sid, "make a folder")
	frames = h.WaitEnd(s)
	if n := len(backendtest.FramesOf(frames, protocol.EvApproval)); n != 0 {
		t.Fatalf("asked %d times after always_server", n)
	}
	if st, err := os.Stat(filepath.Join(ws, "sub")); err != nil || !st.IsDir() {
		t.Fatalf("create_directory did not run: %v", err)
	}
	// Removing the server forgets its approvals.
	if err := h.Svc.MCP().DeleteMCPServer(context.Background(), "fs"); err != nil {
		t.Fatal(err)
	}
	rules, _ = h.Svc.Approvals().GetAllowlist(context.Background())
	if slices.ContainsFunc(rules, func(r backend.AllowRule) bool { return strings.HasPrefix(r.Pattern, "mcp:fs/") }) {
		t.Fatalf("allowlist after delete %v", rules)
	}
}

func TestMCPImageResultAndReadOnlyDefault(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	cfg := srv.EverythingServer("every")
	h.addServer(cfg, func(c *backend.MCPServerConfig) { c.AllowReadOnly = true })
	h.Provider.Enqueue(backendtest.ToolTurn("i1", "every__get-tiny-image", map[string]any{}), providertest.TextTurn("Here is the logo."))
	sid := h.NewSession()
	s := h.Start(sid, "show me the logo")
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	// A read-only tool of a server the user lets run read-only tools: no approval.
	if n := len(backendtest.FramesOf(frames, protocol.EvApproval)); n != 0 {
		t.Fatalf("%d approvals for a read-only tool with allow_read_only", n)
	}
	tool := backendtest.FramesOf(frames, protocol.EvTool)[0]
	if ann, _ := mcpOf(tool)["annotations"].(map[string]any); ann["read_only"] != true || mcpOf(tool)["title"] != "Get Tiny Image Tool" {
		t.Fatalf("tool frame = %v", tool)
	}
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)[0]
	var img map[string]any
	for _, c := range mcpOf(done)["content"].([]any) {
		if c.(map[string]any)["type"] == "image" {
			img = c.(map[string]any)
		}
	}
	if img == nil || img["mime_type"] != "image/png" || !strings.HasPrefix(img["data"].(string), "iVBORw0KGgo") {
		t.Fatalf("no image on the card: %v", done)
	}
	// The journal keeps the image, so a reloaded window shows it again.
	journal, _ := h.Svc.Turns().StreamSince(context.Background(), s, 0)
	if !slices.ContainsFunc(journal, func(f turn.Frame) bool {
		return f.Event == protocol.EvToolComplete && strings.Contains(string(f.Data), "iVBORw0KGgo")
	}) {
		t.Fatal("the journal lost the image")
	}
	if tm := backendtest.ToolMessages(backendtest.StreamRequests(h.Provider.Requests()), 1); len(tm) != 1 || !strings.Contains(tm[0], "[image image/png") {
		t.Fatalf("the model read %q", tm)
	}
	// A tool that is not read-only still asks.
	h.Provider.Enqueue(backendtest.ToolTurn("e1", "every__toggle-simulated-logging", map[string]any{}), providertest.TextTurn("toggled"))
	s = h.Start(sid, "toggle logging")
	ap := h.answer(s, sid, 1, protocol.ChoiceOnce)
	if mcpOf(ap)["tool"] != "toggle-simulated-logging" {
		t.Fatalf("approval = %v", ap)
	}
	h.WaitEnd(s)
}

func TestMCPLongRunningToolStoppedByStop(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	cfg := srv.EverythingServer("every")
	h.addServer(cfg, func(c *backend.MCPServerConfig) { c.AllowReadOnly = true })
	sid := h.NewSession()
	// The operation outlasts the shared deadline: a Stop that waited for it would never
	// end the stream.
	long := map[string]any{"duration": 2 * testwait.Timeout.Seconds(), "steps": 60}
	s, pid := h.callReachesServer(sid, "run the long operation", cfg, backendtest.ToolTurn("l1", "every__trigger-long-running-operation", long))
	pids := []int{pid}
	began := time.Now()
	if err := h.Svc.Turns().Cancel(s); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	t.Logf("Stop took %s", time.Since(began))
	h.CheckFrames(s, frames, protocol.EvCancel)
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)
	if len(done) != 1 || done[0]["is_error"] != true || !strings.Contains(contentText(done[0]), "interrupted") {
		t.Fatalf("tool_complete after Stop = %v", done)
	}
	// The server lives on (the call was cancelled, not the server) and serves the next turn.
	h.Provider.Enqueue(backendtest.ToolTurn("l2", "every__echo", map[string]any{"message": "after the stop"}), providertest.TextTurn("echoed"))
	s = h.Start(sid, "echo something")
	frames = h.WaitEnd(s)
	if d := backendtest.FramesOf(frames, protocol.EvToolComplete); len(d) != 1 || !strings.Contains(contentText(d[0]), "after the stop") {
		t.Fatalf("echo after the stop = %v", d)
	}
	if now := mcptest.NodePids(mcptest.Marker(cfg)); len(pids) != 1 || !slices.Equal(now, pids) {
		t.Fatalf("server pids %v before, %v after the stop", pids, now)
	}
}

func TestMCPServerKilledMidCall(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	cfg := srv.EverythingServer("every")
	h.addServer(cfg, func(c *backend.MCPServerConfig) { c.AllowReadOnly = true })
	sid := h.NewSession()
	long := map[string]any{"duration": 2 * testwait.Timeout.Seconds(), "steps": 60}
	s, pid := h.callReachesServer(sid, "run the long operation", cfg, backendtest.ToolTurn("k1", "every__trigger-long-running-operation", long),
		providertest.TextTurn("The server stopped."))
	pids := []int{pid}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)
	if len(done) != 1 || done[0]["is_error"] != true || !strings.Contains(contentText(done[0]), `the MCP server "every" stopped`) ||
		!strings.Contains(contentText(done[0]), "started again at its next use") {
		t.Fatalf("tool_complete of the killed call = %v", done)
	}
	// The next call starts it again.
	h.Provider.Enqueue(backendtest.ToolTurn("k2", "every__get-sum", map[string]any{"a": 20, "b": 22}), providertest.TextTurn("42"))
	s = h.Start(sid, "add")
	frames = h.WaitEnd(s)
	if d := backendtest.FramesOf(frames, protocol.EvToolComplete); len(d) != 1 || d[0]["is_error"] != false || !strings.Contains(contentText(d[0]), "42") {
		t.Fatalf("call after the restart = %v\n%s", d, h.Describe(s))
	}
	if now := mcptest.NodePids(mcptest.Marker(cfg)); len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("server pids after the restart %v (killed %v)", now, pids)
	}
}

func TestMCPStreamableHTTPServer(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	web := srv.StartEverythingHTTP(t)
	h.addServer(protocol.MCPServer{Name: "web", Transport: protocol.MCPTransportHTTP, URL: web.URL}, func(c *backend.MCPServerConfig) {
		c.Headers = []backend.MCPVar{{Name: "Authorization", Value: "Bearer web-token-4711", Secret: true}}
	})
	h.Provider.Enqueue(backendtest.ToolTurn("h1", "web__get-sum", map[string]any{"a": 2, "b": 3}), providertest.TextTurn("2 + 3 = 5"))
	sid := h.NewSession()
	s := h.Start(sid, "add two and three")
	ap := h.answer(s, sid, 1, protocol.ChoiceOnce)
	if !strings.Contains(ap["sandbox"].(string), "remote server 127.0.0.1") {
		t.Fatalf("approval = %v", ap)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	if d := backendtest.FramesOf(frames, protocol.EvToolComplete); len(d) != 1 || d[0]["is_error"] != false || !strings.Contains(contentText(d[0]), "5") {
		t.Fatalf("get-sum over streamable HTTP = %v", d)
	}
	// The header's secret is in the keyring, not in SQLite.
	raw, _, _ := h.Svc.Store.Setting(context.Background(), "mcp.servers")
	if strings.Contains(raw, "web-token-4711") {
		t.Fatalf("the secret header reached the settings: %s", raw)
	}
	list, _ := h.Svc.MCP().ListMCPServers(context.Background())
	if len(list) != 1 || len(list[0].Headers) != 1 || list[0].Headers[0].Value != "" || !list[0].Headers[0].HasValue {
		t.Fatalf("listed = %+v", list)
	}
}

func TestMCPImportAndTest(t *testing.T) {
	h, ws, srv := mcpHarness(t, nil)
	ctx := context.Background()
	web := srv.StartEverythingHTTP(t)
	conf := map[string]any{"mcpServers": map[string]any{
		"file system": map[string]any{"command": srv.Node, "args": []string{srv.Filesystem, ws}, "env": map[string]string{"GITHUB_TOKEN": "ghp_importedsecret123", "LOG_LEVEL": "info"}},
		"everything":  map[string]any{"type": "streamable-http", "url": web.URL, "headers": map[string]string{"X-Api-Key": "key-imported-999"}},
		"broken":      map[string]any{"args": []string{"x"}},
	}}
	b, _ := json.Marshal(conf)
	res, err := h.Svc.MCP().ImportMCPServers(ctx, string(b))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Added, []string{"everything", "file-system"}) || len(res.Skipped) != 1 || res.Skipped[0].Name != "broken" {
		t.Fatalf("import = %+v", res)
	}
	// Secrets went to the keyring: SQLite never has them.
	raw, _, _ := h.Svc.Store.Setting(ctx, "mcp.servers")
	if strings.Contains(raw, "ghp_importedsecret123") || strings.Contains(raw, "key-imported-999") || !strings.Contains(raw, `"LOG_LEVEL"`) {
		t.Fatalf("stored settings %s", raw)
	}
	db, _ := os.ReadFile(h.Svc.Paths.DBPath)
	wal, _ := os.ReadFile(h.Svc.Paths.DBPath + "-wal")
	if strings.Contains(string(db)+string(wal), "ghp_importedsecret123") {
		t.Fatal("the imported secret is in the database file")
	}
	for _, c := range res.Servers {
		rep, err := h.Svc.MCP().TestMCPServer(ctx, c, c.Name)
		if err != nil {
			t.Fatalf("Test %s: %v", c.Name, err)
		}
		if !rep.OK || len(rep.Tools) == 0 || rep.ServerName == "" {
			t.Fatalf("Test %s = %+v", c.Name, rep)
		}
		if c.Name == "everything" && (len(rep.Prompts) == 0 || len(rep.Resources) == 0) {
			t.Fatalf("everything offers no prompts or resources: %+v", rep)
		}
	}
	// The same paste again replaces, adds nothing.
	res, err = h.Svc.MCP().ImportMCPServers(ctx, string(b))
	if err != nil || len(res.Added) != 0 || len(res.Replaced) != 2 {
		t.Fatalf("second import = %+v, %v", res, err)
	}
	// A failing server's Test says what went wrong and what to do.
	rep, err := h.Svc.MCP().TestMCPServer(ctx, backend.MCPServerConfig{Name: "missing", Transport: "stdio", Command: "no-such-program-xyz"}, "")
	if err != nil || rep.OK || rep.Hint == "" {
		t.Fatalf("Test of a missing program = %+v, %v", rep, err)
	}
	if _, err := h.Svc.MCP().ImportMCPServers(ctx, "not json"); err == nil {
		t.Fatal("garbage was imported")
	}
}

func TestMCPPromptsAndResourcesOfAChat(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	ctx := context.Background()
	h.addServer(srv.EverythingServer("every"), nil)
	sid := h.NewSession()
	reps, err := h.Svc.MCP().ListChatMCP(ctx, sid)
	if err != nil || len(reps) != 1 || !reps[0].OK {
		t.Fatalf("ListChatMCP = %+v, %v", reps, err)
	}
	var prompt *protocol.MCPPromptInfo
	for i, p := range reps[0].Prompts {
		if p.Name == "simple-prompt" {
			prompt = &reps[0].Prompts[i]
		}
	}
	if prompt == nil {
		t.Fatalf("prompts %+v", reps[0].Prompts)
	}
	pt, err := h.Svc.MCP().GetMCPPrompt(ctx, sid, "every", prompt.Name, nil)
	if err != nil || strings.TrimSpace(pt.Text) == "" {
		t.Fatalf("GetMCPPrompt = %+v, %v", pt, err)
	}
	var res *protocol.MCPResourceInfo
	for i, r := range reps[0].Resources {
		if !r.Template {
			res = &reps[0].Resources[i]
			break
		}
	}
	if res == nil {
		t.Fatalf("resources %+v", reps[0].Resources)
	}
	rr, err := h.Svc.MCP().ReadMCPResource(ctx, sid, "every", res.URI)
	if err != nil || len(rr.Contents) == 0 || rr.Contents[0].URI != res.URI {
		t.Fatalf("ReadMCPResource(%s) = %+v, %v", res.URI, rr, err)
	}
	// Off in this chat: neither listed nor offered to the model.
	off := false
	if _, err := h.Svc.MCP().SetChatMCPServer(ctx, sid, "every", &off); err != nil {
		t.Fatal(err)
	}
	if reps, _ := h.Svc.MCP().ListChatMCP(ctx, sid); len(reps) != 0 {
		t.Fatalf("a server off in the chat is listed: %+v", reps)
	}
	if _, err := h.Svc.MCP().GetMCPPrompt(ctx, sid, "every", prompt.Name, nil); err == nil {
		t.Fatal("a prompt of a server off in the chat was rendered")
	}
	h.Provider.Enqueue(providertest.TextTurn("no tools here"))
	s := h.Start(sid, "hello")
	h.WaitEnd(s)
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	if strings.Contains(string(reqs[len(reqs)-1].Tools), "every__") {
		t.Fatal("the tools of a server off in the chat were offered")
	}
	menu, err := h.Svc.MCP().GetChatMCP(ctx, sid)
	if err != nil || len(menu.Servers) != 1 || menu.Servers[0].On || !menu.Servers[0].Override || !menu.Used {
		t.Fatalf("chat menu = %+v, %v", menu, err)
	}
}

// A stdio server never outlives the sidecar: SIGKILL of the sidecar takes it along
// (parent-death signal, bubblewrap's --die-with-parent), and the next turn starts
// both again.
func TestMCPServerDiesWithTheSidecar(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	cfg := srv.EverythingServer("every")
	h.addServer(cfg, func(c *backend.MCPServerConfig) { c.AllowReadOnly = true })
	h.Provider.Enqueue(backendtest.ToolTurn("d1", "every__get-tiny-image", map[string]any{}), providertest.TextTurn("ok"))
	sid := h.NewSession()
	h.WaitEnd(h.Start(sid, "one"))
	if n := len(mcptest.NodePids(mcptest.Marker(cfg))); n != 1 {
		t.Fatalf("%d servers running", n)
	}
	pid := h.Svc.Sidecar.Status().PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if left := mcptest.WaitGone(context.Background(), testwait.Timeout, mcptest.Marker(cfg)); len(left) > 0 {
		t.Fatalf("the MCP server outlived the SIGKILLed sidecar: %v", left)
	}
	h.Provider.Enqueue(backendtest.ToolTurn("d2", "every__get-tiny-image", map[string]any{}), providertest.TextTurn("ok again"))
	frames := h.WaitEnd(h.Start(sid, "two"))
	if d := backendtest.FramesOf(frames, protocol.EvToolComplete); len(d) != 1 || d[0]["is_error"] != false {
		t.Fatalf("after the sidecar restart: %v", d)
	}
}

// A stale or wrong answer to an MCP approval changes nothing.
func TestMCPApprovalAnswersFailClosed(t *testing.T) {
	h, ws, srv := mcpHarness(t, nil)
	h.addServer(srv.FilesystemServer("fs", ws), nil)
	h.Provider.Enqueue(backendtest.ToolTurn("a1", "fs__list_directory", map[string]any{"path": ws}), providertest.TextTurn("listed"))
	sid := h.NewSession()
	s := h.Start(sid, "list")
	h.WaitEvent(s, protocol.EvApproval)
	ap := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]
	id := ap["approval_id"].(string)
	ctx := context.Background()
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, "ap_nope", protocol.ChoiceAlwaysServer); !errors.Is(err, pending.ErrStale) {
		t.Fatalf("stale always_server = %v", err)
	}
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, id, protocol.ChoiceAlwaysServer); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(s)
	// always_server on a command's approval is refused.
	h.Provider.Enqueue(backendtest.ToolTurn("a2", "terminal", map[string]any{"command": "rm -rf " + filepath.Join(ws, "x")}), providertest.TextTurn("no"))
	s = h.Start(sid, "delete")
	h.WaitEvent(s, protocol.EvApproval)
	ap = backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]
	var inv *backend.InvalidAnswerError
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), protocol.ChoiceAlwaysServer); !errors.As(err, &inv) {
		t.Fatalf("always_server on a command = %v", err)
	}
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), protocol.ChoiceDeny); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(s)
}

// A Hermes chat is told it uses its own profile's servers; an ACP chat that its agent
// gets them.
func TestMCPChatMenuSaysWhoUsesTheServers(t *testing.T) {
	h, ws, srv := mcpHarness(t, nil)
	h.addServer(srv.FilesystemServer("fs", ws), nil)
	ctx := context.Background()
	for _, tc := range []struct {
		runtime, note string
		used          bool
	}{
		{"builtin", "", true},
		{"hermes:default", "uses the MCP servers of its own profile", false},
		{"acp:opencode", "gets the servers that are on", true},
	} {
		sid := h.NewSession()
		if err := h.Svc.Store.SetSessionRuntime(ctx, sid, tc.runtime); err != nil {
			t.Fatal(err)
		}
		menu, err := h.Svc.MCP().GetChatMCP(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if menu.Used != tc.used || !strings.Contains(menu.Note, tc.note) || len(menu.Servers) != 1 || !menu.Servers[0].On {
			t.Fatalf("%s: menu %+v", tc.runtime, menu)
		}
	}
}

// Server settings that cannot work are refused with the field and what to do.
func TestMCPSettingsValidation(t *testing.T) {
	h, _, _ := mcpHarness(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		cfg   backend.MCPServerConfig
		field string
	}{
		{backend.MCPServerConfig{Name: "bad name", Transport: "stdio", Command: "x"}, "name"},
		{backend.MCPServerConfig{Name: "a__b", Transport: "stdio", Command: "x"}, "name"},
		{backend.MCPServerConfig{Name: "ok", Transport: "stdio"}, "command"},
		{backend.MCPServerConfig{Name: "ok", Transport: "http", URL: "ftp://x"}, "url"},
		{backend.MCPServerConfig{Name: "ok", Transport: "carrier-pigeon", Command: "x"}, "transport"},
		{backend.MCPServerConfig{Name: "ok", Transport: "stdio", Command: "x", Env: []backend.MCPVar{{Name: "1BAD", Value: "v"}}}, "env"},
		{backend.MCPServerConfig{Name: "ok", Transport: "http", URL: "http://x", Headers: []backend.MCPVar{{Name: "X", Value: "a\r\nInjected: 1"}}}, "headers"},
		{backend.MCPServerConfig{Name: "ok", Transport: "stdio", Command: "x", Cwd: "relative/dir"}, "cwd"},
	} {
		_, err := h.Svc.MCP().SaveMCPServer(ctx, tc.cfg, "")
		var se *backend.MCPSettingsError
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Fatalf("%+v: %v (want field %s)", tc.cfg, err, tc.field)
		}
	}
	if list, _ := h.Svc.MCP().ListMCPServers(ctx); len(list) != 0 {
		t.Fatalf("invalid servers were saved: %+v", list)
	}
	// A second server of the same name is refused; a rename moves the secret.
	if _, err := h.Svc.MCP().SaveMCPServer(ctx, backend.MCPServerConfig{Name: "one", Transport: "http", URL: "http://127.0.0.1:1/mcp",
		Headers: []backend.MCPVar{{Name: "Authorization", Value: "Bearer s3cret-token", Secret: true}}}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.MCP().SaveMCPServer(ctx, backend.MCPServerConfig{Name: "one", Transport: "stdio", Command: "x"}, ""); err == nil {
		t.Fatal("a duplicate name was saved")
	}
	renamed, err := h.Svc.MCP().SaveMCPServer(ctx, backend.MCPServerConfig{Name: "two", Transport: "http", URL: "http://127.0.0.1:1/mcp",
		Headers: []backend.MCPVar{{Name: "Authorization", Secret: true}}}, "one")
	if err != nil || len(renamed.Headers) != 1 || !renamed.Headers[0].HasValue {
		t.Fatalf("rename = %+v, %v", renamed, err)
	}
	if v, ok, _ := h.Svc.Vault.Get("mcp:two:header:Authorization"); !ok || v != "Bearer s3cret-token" {
		t.Fatalf("the secret did not follow the rename: %q %v", v, ok)
	}
	if _, ok, _ := h.Svc.Vault.Get("mcp:one:header:Authorization"); ok {
		t.Fatal("the old name's secret is still kept")
	}
}

// No MCP server outlives the app: the app (a child process running the real backend,
// whose turn started server-everything) is SIGKILLed, and the server is gone soon after
// (its sidecar dies with the app and takes it along).
func TestMCPServerDiesWithTheApp(t *testing.T) {
	srv := mcptest.Find(t)
	cfg := srv.EverythingServer("every")
	b, _ := json.Marshal(cfg)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestMCPAppProcessHelper$", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), "TALARIA_MCP_APP_CHILD="+string(b))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "MCP-APP-READY") {
				ready <- true
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
		ready <- false
	}()
	if !testwait.Recv(t, ready, "the app process to get its MCP server running") {
		t.Fatal("the app process ended before its MCP server was running")
	}
	if n := len(mcptest.NodePids(mcptest.Marker(cfg))); n != 1 {
		t.Fatalf("%d MCP servers running under the app", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if left := mcptest.WaitGone(context.Background(), testwait.Timeout, mcptest.Marker(cfg)); len(left) > 0 {
		t.Fatalf("the MCP server outlived the SIGKILLed app: %v", left)
	}
}

// TestMCPAppProcessHelper is the app process of TestMCPServerDiesWithTheApp (it does
// nothing unless started by it): the real backend and sidecar with one MCP server whose
// tool a turn calls, then it waits to be killed.
func TestMCPAppProcessHelper(t *testing.T) {
	raw := os.Getenv("TALARIA_MCP_APP_CHILD")
	if raw == "" {
		return
	}
	var cfg protocol.MCPServer
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	h, _, _ := mcpHarness(t, nil)
	h.addServer(cfg, func(c *backend.MCPServerConfig) { c.AllowReadOnly = true })
	h.Provider.Enqueue(backendtest.ToolTurn("p1", cfg.Name+"__get-tiny-image", map[string]any{}), providertest.TextTurn("ok"))
	frames := h.WaitEnd(h.Start(h.NewSession(), "start the server"))
	if d := backendtest.FramesOf(frames, protocol.EvToolComplete); len(d) != 1 || d[0]["is_error"] != false {
		t.Fatalf("the tool call failed: %v", d)
	}
	fmt.Println("MCP-APP-READY")
	select {} // until SIGKILL
}

// An MCP approval answered "always for this server" whose answer never reaches the
// real sidecar (its pipe loses the first answer to each card) stays waiting and leaves
// no allowlist entry; answered again it is delivered, the tool runs and the server is
// allowed.
func TestMCPUndeliveredAnswerKeepsTheCard(t *testing.T) {
	srv := mcptest.Find(t)
	h := &mcpRig{backendtest.NewWith(t, "lose-first-answer", nil)}
	h.Svc.Runner.SetAutoTitles(false)
	ws := h.WithWorkspace()
	h.addServer(srv.FilesystemServer("fs", ws), nil)
	target := filepath.Join(ws, "created.txt")
	h.Provider.Enqueue(backendtest.ToolTurn("w1", "fs__write_file", map[string]any{"path": target, "content": "delivered"}),
		providertest.TextTurn("written"))
	ctx := context.Background()
	sid := h.NewSession()
	s := h.Start(sid, "write a file")
	h.WaitEvent(s, protocol.EvApproval)
	id := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]["approval_id"].(string)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	var u *backend.UndeliveredAnswerError
	if err := h.Svc.Approvals().RespondApproval(short, sid, id, protocol.ChoiceAlwaysServer); !errors.As(err, &u) {
		t.Fatalf("an answer the agent never got = %v", err)
	}
	if pv, _ := h.Svc.Approvals().GetPending(ctx, sid); pv.ApprovalCount != 1 {
		t.Fatalf("after a lost answer the MCP approval is gone: %+v", pv)
	}
	if rules, _ := h.Svc.Approvals().GetAllowlist(ctx); len(rules) != 0 {
		t.Fatalf("a lost always_server was kept: %+v", rules)
	}
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, id, protocol.ChoiceAlwaysServer); err != nil {
		t.Fatalf("answering again: %v", err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	if b, _ := os.ReadFile(target); string(b) != "delivered" {
		t.Fatalf("file = %q", b)
	}
	rules, _ := h.Svc.Approvals().GetAllowlist(ctx)
	if !slices.ContainsFunc(rules, func(r backend.AllowRule) bool { return r.Pattern == "mcp:fs/*" }) {
		t.Fatalf("allowlist after delivery %v", rules)
	}
}

// A server that never finishes its MCP handshake (it reads stdin and answers nothing)
// does not hold the chat up: the first turn goes on without it after a short wait, with
// one warning naming it, and uses the server beside it; the next turn does not wait for
// it again and warns again.
func TestMCPSilentServerDoesNotHoldTurns(t *testing.T) {
	// The product's wait (not the tests' long one): the silent server is left out
	// after it; the good server is running already, so its start is not at stake.
	h, _, srv := mcpHarness(t, func(o *backend.Options) { o.SidecarEnv = append(o.SidecarEnv, "TALARIA_MCP_TURN_WAIT=10s") })
	script := filepath.Join(t.TempDir(), "silent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nwhile read -r _; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The good server first, alone, so it is running when the silent one joins (its
	// own cold start is not what this test is about).
	h.addServer(srv.EverythingServer("every"), func(c *backend.MCPServerConfig) { c.AllowReadOnly = true })
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.TextTurn("hello"))
	s := h.Start(sid, "hi")
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	h.addServer(protocol.MCPServer{Name: "silent", Transport: protocol.MCPTransportStdio, Command: script}, nil)
	for i, want := range []string{"42", "7"} {
		a, b := 40, 2
		if i == 1 {
			a, b = 3, 4
		}
		h.Provider.Enqueue(backendtest.ToolTurn(fmt.Sprintf("s%d", i), "every__get-sum", map[string]any{"a": a, "b": b}), providertest.TextTurn(want))
		s := h.Start(sid, "add")
		frames := h.WaitEnd(s)
		h.CheckFrames(s, frames, protocol.EvDone)
		var slow []string
		for _, w := range backendtest.FramesOf(frames, protocol.EvWarning) {
			if msg, _ := w["message"].(string); w["type"] == protocol.WarningMCP && strings.Contains(msg, "silent") {
				slow = append(slow, msg)
			}
		}
		if len(slow) != 1 || !strings.Contains(slow[0], "has not finished starting") {
			t.Fatalf("turn %d: warnings about the silent server %q; want one saying it is still starting\n%s", i+1, slow, h.Describe(s))
		}
		if d := backendtest.FramesOf(frames, protocol.EvToolComplete); len(d) != 1 || d[0]["is_error"] != false || !strings.Contains(contentText(d[0]), want) {
			t.Fatalf("turn %d: the good server's call = %v\n%s", i+1, d, h.Describe(s))
		}
	}
}

// server-memory, run by the real sidecar in the chat's sandbox, keeps its graph in its
// own folder (memory.jsonl beside its dist/index.js): the write works. Pointed at a
// folder outside (MEMORY_FILE_PATH), its write is refused and the result names the
// folder and how to allow it; once that folder is in the server's writable folders,
// the write lands there.
func TestMCPMemoryServerStateUnderTheSandbox(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	cfg, memFile := srv.MemoryServer(t, "memory", t.TempDir())
	h.addServer(cfg, nil)
	sid := h.NewSession()
	create := func(id, entity string) map[string]any {
		t.Helper()
		h.Provider.Enqueue(backendtest.ToolTurn(id, "memory__create_entities", map[string]any{"entities": []any{
			map[string]any{"name": entity, "entityType": "test", "observations": []any{"kept"}}}}), providertest.TextTurn("done"))
		s := h.Start(sid, "remember "+entity)
		h.answer(s, sid, 1, protocol.ChoiceOnce)
		frames := h.WaitEnd(s)
		h.CheckFrames(s, frames, protocol.EvDone)
		done := backendtest.FramesOf(frames, protocol.EvToolComplete)
		if len(done) != 1 {
			t.Fatalf("%d tool_complete frames:\n%s", len(done), h.Describe(s))
		}
		return done[0]
	}
	if d := create("m1", "own-folder"); d["is_error"] != false {
		t.Fatalf("a write to its own folder = %v", d)
	}
	if b, err := os.ReadFile(memFile); err != nil || !strings.Contains(string(b), `"own-folder"`) {
		t.Fatalf("memory.jsonl = %q, %v", b, err)
	}

	// Outside /tmp (a sandboxed server's /tmp is its own), outside the workspace.
	outside := testdir.OutsideTmp(t, "talaria-mcp-e2e-")
	edit := func(mutate func(*backend.MCPServerConfig)) backend.MCPServerConfig {
		t.Helper()
		c := backend.MCPServerConfig{Name: cfg.Name, Transport: cfg.Transport, Command: cfg.Command, Args: cfg.Args, Enabled: true}
		mutate(&c)
		out, err := h.Svc.MCP().SaveMCPServer(context.Background(), c, cfg.Name)
		if err != nil {
			t.Fatalf("SaveMCPServer: %v", err)
		}
		return out
	}
	edit(func(c *backend.MCPServerConfig) {
		c.Env = []backend.MCPVar{{Name: "MEMORY_FILE_PATH", Value: filepath.Join(outside, "memory.jsonl")}}
	})
	d := create("m2", "outside")
	text := contentText(d)
	if d["is_error"] != true || !strings.Contains(text, "EROFS") || !strings.Contains(text, "add "+outside+" to the server's \"Writable folders\"") {
		t.Fatalf("a refused write = %v; want the folder named and how to allow it", d)
	}
	if reqs := backendtest.StreamRequests(h.Provider.Requests()); !strings.Contains(strings.Join(backendtest.ToolMessages(reqs, len(reqs)-1), "\n"), "Writable folders") {
		t.Fatal("the model was not told how to allow the write")
	}

	saved := edit(func(c *backend.MCPServerConfig) {
		c.Env = []backend.MCPVar{{Name: "MEMORY_FILE_PATH", Value: filepath.Join(outside, "memory.jsonl")}}
		c.WritablePaths = []string{" " + outside + "/ ", outside}
	})
	if !slices.Equal(saved.WritablePaths, []string{outside}) {
		t.Fatalf("saved writable_paths = %q", saved.WritablePaths)
	}
	if d := create("m3", "allowed"); d["is_error"] != false {
		t.Fatalf("a write to a writable folder = %v", d)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "memory.jsonl")); err != nil || !strings.Contains(string(b), `"allowed"`) {
		t.Fatalf("%s/memory.jsonl = %q, %v", outside, b, err)
	}
}

// TestMCPToolsPastTheCapAreNamed: servers offering more tools than a turn offers the
// model (128) get a warning naming each tool left out (<server>/<tool>), and exactly
// those are missing from the model's request. Twenty names of one real
// server-everything (streamable HTTP) make the many tools.
func TestMCPToolsPastTheCapAreNamed(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	web := srv.StartEverythingHTTP(t)
	for i := 1; i <= 20; i++ {
		h.addServer(protocol.MCPServer{Name: fmt.Sprintf("w%02d", i), Transport: protocol.MCPTransportHTTP, URL: web.URL}, nil)
	}
	h.Provider.Enqueue(providertest.TextTurn("hello"))
	sid := h.NewSession()
	s := h.Start(sid, "hi")
	frames := h.WaitEnd(s)
	var warning string
	for _, w := range backendtest.FramesOf(frames, protocol.EvWarning) {
		if m, _ := w["message"].(string); strings.Contains(m, "only the first 128") {
			warning = m
		}
	}
	if warning == "" {
		t.Fatalf("no warning of the cap:\n%s", h.Describe(s))
	}
	t.Logf("warning: %s", warning)
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	var tools []struct {
		Function struct{ Name string } `json:"function"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Tools, &tools); err != nil {
		t.Fatal(err)
	}
	offered := map[string]bool{}
	mcpTools := 0
	for _, tl := range tools {
		offered[tl.Function.Name] = true
		if strings.Contains(tl.Function.Name, "__") {
			mcpTools++
		}
	}
	if mcpTools != 128 {
		t.Errorf("%d MCP tools offered, want 128", mcpTools)
	}
	// Every tool not offered is named: a server none of whose tools is offered as
	// "wNN (all N tools)", the one cut in the middle with its tools left out.
	perServer := 0
	for _, tl := range tools {
		if strings.HasPrefix(tl.Function.Name, "w01__") {
			perServer++
		}
	}
	for i := 1; i <= 20; i++ {
		name := fmt.Sprintf("w%02d", i)
		offeredHere := 0
		for tl := range offered {
			if strings.HasPrefix(tl, name+"__") {
				offeredHere++
			}
		}
		switch {
		case offeredHere == perServer:
			if strings.Contains(warning, name+" (") || strings.Contains(warning, name+":") {
				t.Errorf("%s is named although all its tools were offered: %s", name, warning)
			}
		case offeredHere == 0:
			if !strings.Contains(warning, fmt.Sprintf("%s (all %d tools)", name, perServer)) {
				t.Errorf("%s's tools are not named as left out: %s", name, warning)
			}
		default:
			if !strings.Contains(warning, name+": ") {
				t.Errorf("the rest of %s is not named: %s", name, warning)
			}
		}
	}
}

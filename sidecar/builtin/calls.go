package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"talaria/sidecar/builtin/danger"
	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
)

// Running the model's tool calls: the tool and tool_complete frames around each call,
// the approval of dangerous commands, the clarify and vault prompts, and the tool rows
// the model reads back.

// Frame and result bounds, in bytes.
const (
	maxArgFrame    = 2 << 10   // a string argument in a tool frame
	maxKeyArg      = 200       // the key argument of a tool frame
	maxPreview     = 8 << 10   // tool_complete preview
	maxRawString   = 8 << 10   // a string of tool_complete raw_result
	maxResultDiff  = 8 << 20   // tool_complete result_diff (whole below this)
	maxModelDiff   = 32 << 10  // the diff in the result the model reads
	maxToolContent = 256 << 10 // a tool row's content
)

// toolResult is what one tool call produced.
type toolResult struct {
	value   any                 // the result object; the model reads it as JSON
	preview string              // text for the card
	diff    string              // unified diff of an edit
	todos   []protocol.TodoItem // the todo tool's whole list
	isTodo  bool
	// text, when set, is what the model reads instead of value as JSON (MCP tools);
	// value is then only the raw_result the host decides is_error from.
	text string
	mcp  *protocol.MCPToolResult // an MCP tool's answer for the card
}

func errResult(format string, args ...any) toolResult {
	msg := fmt.Sprintf(format, args...)
	return toolResult{value: map[string]any{"error": msg}, preview: msg}
}

// runCall runs one tool call between its tool and tool_complete frames and returns
// the tool row for the model.
func (t *turn) runCall(ctx context.Context, call protocol.ToolCall) protocol.ChatMessage {
	start := time.Now()
	t.callID = call.ID
	name := call.Function.Name
	rawArgs := strings.TrimSpace(call.Function.Arguments)
	if rawArgs == "" {
		rawArgs = "{}"
	}
	var args map[string]any
	argErr := json.Unmarshal([]byte(rawArgs), &args)
	if argErr == nil && args == nil {
		argErr = fmt.Errorf("null is not an object")
	}
	spec := specFor(name)
	mt := t.mcpTools[name]
	red := t.r.redactor()

	frame := protocol.ToolData{TID: call.ID, Name: name, Args: map[string]any{}}
	if argErr != nil {
		s, _ := tools.Cap(red.String(rawArgs), maxArgFrame)
		frame.Args = map[string]any{"_raw": s}
	} else {
		frame.Args, _ = walkStrings(args, red, maxArgFrame).(map[string]any)
		frame.KeyArg = keyArg(spec, args, red)
		if mt != nil {
			frame.KeyArg = mt.keyArg(args, red)
		}
	}
	if mt != nil {
		frame.MCP = mt.ref()
	}
	t.send(protocol.EvTool, frame)

	var res toolResult
	switch {
	case mt != nil && argErr != nil:
		res = mcpErr(mt, fmt.Sprintf("the arguments of %s are not a JSON object: %v", name, argErr))
	case mt != nil:
		res = t.callMCP(ctx, mt, args)
	case spec == nil || !t.offered[name]:
		res = errResult("there is no tool named %q; the tools are: %s", trimForMessage(name), strings.Join(t.offeredNames(), ", "))
	case argErr != nil:
		res = errResult("the arguments of %s are not a JSON object: %v", name, argErr)
	default:
		res = t.dispatch(ctx, name, []byte(rawArgs))
	}
	took := time.Since(start)

	red = t.r.redactor() // a request_secret call may have added a value
	content := cleanJSON(res.value, red, 0)
	if res.text != "" {
		content = []byte(red.String(res.text))
	}
	if len(content) > maxToolContent {
		s, _ := tools.Cap(string(content), maxToolContent)
		content, _ = json.Marshal(map[string]any{"truncated_result": s})
	}
	preview, _ := tools.Cap(red.String(res.preview), maxPreview)
	done := protocol.ToolCompleteData{
		TID:       call.ID,
		Name:      name,
		Preview:   preview,
		RawResult: cleanJSON(res.value, red, maxRawString),
		DurationS: math.Round(took.Seconds()*1000) / 1000,
	}
	if res.diff != "" {
		done.ResultDiff, _ = tools.Cap(red.String(res.diff), maxResultDiff)
	}
	if res.isTodo {
		done.TodoResult = &protocol.TodoList{Todos: res.todos}
	}
	done.MCP = res.mcp
	t.send(protocol.EvToolComplete, done)
	t.log.Info("tool done", "tool", name, "tid", call.ID, "took", took.Round(time.Millisecond))
	return protocol.ChatMessage{Role: "tool", ToolCallID: call.ID, Name: name, Content: string(content)}
}

func (t *turn) offeredNames() []string {
	var out []string
	for _, s := range toolSpecs {
		if t.offered[s.name] {
			out = append(out, s.name)
		}
	}
	return append(out, t.mcpOrder...)
}

// keyArg is the argument a card shows in its title.
func keyArg(spec *toolSpec, args map[string]any, red *tools.Redactor) string {
	if spec == nil {
		return ""
	}
	var s string
	switch spec.name {
	case "todo":
		if list, ok := args["todos"].([]any); ok {
			s = fmt.Sprintf("%d items", len(list))
		}
	case "clarify":
		if qs, ok := args["questions"].([]any); ok && len(qs) > 0 {
			if q, ok := qs[0].(map[string]any); ok {
				s, _ = q["question"].(string)
			}
		}
	default:
		s, _ = args[spec.keyArg].(string)
	}
	s, _ = tools.Cap(red.String(s), maxKeyArg)
	return s
}

// dispatch decodes the arguments of a known tool and runs it.
func (t *turn) dispatch(ctx context.Context, name string, raw []byte) toolResult {
	decode := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			// Unknown fields are forgiven: read again without the check.
			if err2 := json.Unmarshal(raw, v); err2 != nil {
				return err2
			}
		}
		return nil
	}
	switch name {
	case "terminal":
		var a struct {
			Command       string  `json:"command"`
			Timeout       float64 `json:"timeout"`
			Escalate      string  `json:"escalate"`
			Justification string  `json:"justification"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for terminal: %v", err)
		}
		return t.terminal(ctx, a.Command, time.Duration(a.Timeout*float64(time.Second)), a.Escalate, a.Justification)
	case "read_file":
		var a struct {
			Path   string `json:"path"`
			Offset int    `json:"offset"`
			Limit  int    `json:"limit"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for read_file: %v", err)
		}
		return t.withWorkspace(func(ws *tools.Workspace) toolResult {
			res, err := ws.ReadFile(a.Path, a.Offset, a.Limit)
			if err != nil {
				return errResult("%v", err)
			}
			return toolResult{value: res, preview: res.Content}
		})
	case "write_file":
		var a struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for write_file: %v", err)
		}
		if ok, res := t.approveWrite(ctx, "write_file", a.Path); !ok {
			return res
		}
		return t.withWorkspace(func(ws *tools.Workspace) toolResult {
			res, err := ws.WriteFile(a.Path, a.Content)
			if err != nil {
				return errResult("%v", err)
			}
			return editResult(res)
		})
	case "patch":
		var a struct {
			Path       string `json:"path"`
			OldString  string `json:"old_string"`
			NewString  string `json:"new_string"`
			ReplaceAll bool   `json:"replace_all"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for patch: %v", err)
		}
		if ok, res := t.approveWrite(ctx, "patch", a.Path); !ok {
			return res
		}
		return t.withWorkspace(func(ws *tools.Workspace) toolResult {
			res, err := ws.Patch(a.Path, a.OldString, a.NewString, a.ReplaceAll)
			if err != nil {
				return errResult("%v", err)
			}
			return editResult(res)
		})
	case "list_files":
		var a struct {
			Path       string `json:"path"`
			Recursive  bool   `json:"recursive"`
			MaxEntries int    `json:"max_entries"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for list_files: %v", err)
		}
		return t.withWorkspace(func(ws *tools.Workspace) toolResult {
			res, err := ws.ListFiles(ctx, a.Path, a.Recursive, a.MaxEntries)
			if err != nil {
				return errResult("%v", err)
			}
			return toolResult{value: res, preview: strings.Join(res.Entries, "\n")}
		})
	case "search_files":
		var a struct {
			Pattern    string `json:"pattern"`
			Path       string `json:"path"`
			Glob       string `json:"glob"`
			Literal    bool   `json:"literal"`
			IgnoreCase bool   `json:"ignore_case"`
			MaxMatches int    `json:"max_matches"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for search_files: %v", err)
		}
		return t.withWorkspace(func(ws *tools.Workspace) toolResult {
			res, err := ws.SearchFiles(ctx, a.Pattern, a.Path, a.Glob, a.Literal, a.IgnoreCase, a.MaxMatches)
			if err != nil {
				return errResult("%v", err)
			}
			var sb strings.Builder
			for _, m := range res.Matches {
				fmt.Fprintf(&sb, "%s:%d: %s\n", m.Path, m.Line, m.Text)
			}
			if len(res.Matches) == 0 {
				sb.WriteString("no matches")
			}
			return toolResult{value: res, preview: sb.String()}
		})
	case "todo":
		var a struct {
			Todos *[]tools.TodoInput `json:"todos"`
			Merge bool               `json:"merge"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for todo: %v", err)
		}
		var list []protocol.TodoItem
		if a.Todos == nil {
			list = t.r.todos(t.p.SessionID)
		} else {
			var err error
			if list, err = t.r.updateTodos(t.p.SessionID, *a.Todos, a.Merge); err != nil {
				return errResult("%v", err)
			}
		}
		if list == nil {
			list = []protocol.TodoItem{}
		}
		return toolResult{value: protocol.TodoList{Todos: list}, preview: todoPreview(list), todos: list, isTodo: true}
	case "clarify":
		var a clarifyArgs
		if err := decode(&a); err != nil {
			return errResult("bad arguments for clarify: %v", err)
		}
		return t.clarify(ctx, a)
	case "request_secret":
		var a struct {
			Name   string `json:"name"`
			Reason string `json:"reason"`
		}
		if err := decode(&a); err != nil {
			return errResult("bad arguments for request_secret: %v", err)
		}
		return t.requestSecret(ctx, a.Name, a.Reason)
	}
	return errResult("there is no tool named %q", name)
}

func editResult(res tools.WriteResult) toolResult {
	model := res
	model.Diff, _ = tools.Cap(res.Diff, maxModelDiff)
	added, removed := tools.DiffStat(res.Diff)
	verb := "edited"
	if res.Created {
		verb = "created"
	}
	return toolResult{value: model, diff: res.Diff, preview: fmt.Sprintf("%s %s (+%d -%d)", verb, res.Path, added, removed)}
}

func todoPreview(list []protocol.TodoItem) string {
	if len(list) == 0 {
		return "the todo list is empty"
	}
	marks := map[string]string{tools.TodoPending: "[ ]", tools.TodoInProgress: "[~]", tools.TodoCompleted: "[x]", tools.TodoCancelled: "[-]"}
	var sb strings.Builder
	for _, it := range list {
		fmt.Fprintf(&sb, "%s %s\n", marks[it.Status], it.Content)
	}
	return sb.String()
}

// withWorkspace opens the session's workspace for a file tool (once per turn).
func (t *turn) withWorkspace(f func(*tools.Workspace) toolResult) toolResult {
	ws, err := t.workspace()
	if err != nil {
		return errResult("%v", err)
	}
	return f(ws)
}

func (t *turn) workspace() (*tools.Workspace, error) {
	if t.ws == nil && t.wsErr == nil {
		t.ws, t.wsErr = tools.OpenWorkspace(t.p.Workspace, t.policy.Hidden...)
	}
	return t.ws, t.wsErr
}

// terminal runs a shell command confined by the session's sandbox policy, after the
// shared approval gate (package gate) allowed it: the dangerous-command check and the
// approvals of whatever leaves the sandbox.
func (t *turn) terminal(ctx context.Context, command string, timeout time.Duration, escalate, justification string) toolResult {
	if strings.TrimSpace(command) == "" {
		return errResult("the command is empty")
	}
	ws, err := t.workspace()
	if err != nil {
		return toolResult{value: tools.CommandResult{ExitCode: -1, Error: err.Error()}, preview: err.Error()}
	}
	run, why, err := gate.Run(ctx, &asker{t: t, justification: justification}, gate.Command{Text: command, Policy: t.policy,
		Escalate: escalate, Sandbox: t.r.sandboxStatus(), Danger: danger.Options{Protected: t.policy.Hidden}}, t.approvalTimeout)
	var refused *gate.RefusedError
	var badEscalate *gate.EscalateError
	switch {
	case errors.As(err, &refused):
		t.log.Info("command refused", "pattern", refused.Match.Key)
		shown, _ := tools.Cap(t.r.redactor().String(command), gate.MaxApprovalCommand)
		t.send(protocol.EvApprovalAuto, protocol.ApprovalAutoData{TID: t.callID, Command: shown, Description: refused.Match.Description,
			Pattern: refused.Match.Key, Decision: protocol.AutoRefused, DecidedBy: "hardline"})
		return toolResult{value: tools.CommandResult{ExitCode: -1, Error: why}, preview: why}
	case errors.As(err, &badEscalate):
		return errResult("%s", why)
	case why != "":
		return toolResult{value: tools.CommandResult{ExitCode: -1, Error: why}, preview: why}
	}
	res := tools.Run(ctx, tools.Command{
		Command:     command,
		Dir:         ws.Dir(),
		Env:         t.r.secretEnv(t.p.SessionID),
		Policy:      run,
		Timeout:     timeout,
		OutputLimit: t.r.outputLimit,
		Redact:      t.r.redactor(),
	})
	preview := res.Output
	if res.Error != "" {
		preview = strings.TrimRight(preview, "\n") + "\n[" + res.Error + "]"
	}
	if run.Confined() && res.ExitCode != 0 {
		res.SandboxNote = sandboxNote(run)
	}
	return toolResult{value: res, preview: preview}
}

// sandboxNote tells the model how to ask for more when a confined command failed.
func sandboxNote(p sandbox.Policy) string {
	var needs []string
	if !p.Network {
		needs = append(needs, `network access (escalate "network")`)
	}
	if p.Mode == sandbox.ModeReadOnly {
		needs = append(needs, `writing the workspace (escalate "write")`)
	}
	needs = append(needs, `writing outside the workspace or reading hidden secret stores (escalate "full")`)
	return "This command ran in the sandbox (" + p.String() + "). If it failed because it needs " + strings.Join(needs, ", or ") +
		", call terminal again with that escalate and a justification: the user is asked."
}

// asker is the built-in runtime's side of the shared approval gate for one tool call;
// justification is the model's reason for a sandbox escalation, shown on its card.
type asker struct {
	t             *turn
	justification string
}

// Ask allows a without asking when YOLO, a session grant or the allowlist does (an
// approval_auto frame says so), else sends an approval frame and waits for the
// answer, the approval timeout or the end of the turn.
func (k *asker) Ask(ctx context.Context, command string, a gate.Ask) gate.Outcome {
	t := k.t
	w := &waiter{id: newID("ap_"), sessionID: t.p.SessionID, kind: kindApproval, key: a.Key, onceOnly: a.OnceOnly, ch: make(chan answer, 1)}
	red := t.r.redactor()
	if t.r.park(w, a.Key, t.allow) {
		shown, _ := tools.Cap(red.String(command), gate.MaxApprovalCommand)
		decision := protocol.AutoAllowed
		if w.allowedBy == gate.ByYolo {
			decision = protocol.AutoYolo
		}
		t.send(protocol.EvApprovalAuto, protocol.ApprovalAutoData{TID: t.callID, Command: shown, Description: a.Description,
			Pattern: a.Key, Decision: decision, DecidedBy: w.allowedBy, Sandbox: a.Sandbox})
		return gate.Outcome{Reason: gate.Auto}
	}
	t.send(protocol.EvApproval, gate.Frame(w.id, command, a, red, t.approvalTimeout, k.justification))
	t.log.Info("approval requested", "approval_id", w.id, "pattern", a.Key)
	ans, reason := t.wait(ctx, w, t.approvalTimeout)
	resolved := protocol.ResolvedData{ApprovalID: w.id, Reason: reason}
	if reason == protocol.ResolvedAnswered {
		resolved.Choice = ans.choice
	}
	t.send(protocol.EvApprovalResolved, resolved)
	t.log.Info("approval resolved", "approval_id", w.id, "pattern", a.Key, "reason", reason, "choice", ans.choice)
	return gate.Outcome{Reason: reason, Choice: ans.choice}
}

// approveWrite asks before a file tool writes in a read-only session.
func (t *turn) approveWrite(ctx context.Context, tool, path string) (bool, toolResult) {
	command, a, ok := gate.Write(t.policy, tool, path)
	if !ok {
		return true, toolResult{}
	}
	if msg := gate.Approve(ctx, &asker{t: t}, command, []gate.Ask{a}, t.approvalTimeout); msg != "" {
		return false, errResult("%s", msg)
	}
	return true, toolResult{}
}

// wait blocks until the waiter is answered, the timeout passes or ctx ends, and
// returns the answer and the resolution reason.
func (t *turn) wait(ctx context.Context, w *waiter, timeout time.Duration) (answer, string) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-w.ch:
		if ctx.Err() != nil {
			return answer{}, protocol.ResolvedInterrupted
		}
		return a, a.reason
	case <-timer.C:
		if t.r.withdraw(w) {
			return answer{}, protocol.ResolvedTimeout
		}
		a := <-w.ch
		return a, a.reason
	case <-ctx.Done():
		if !t.r.withdraw(w) {
			<-w.ch // answered at the same moment; the turn is stopping anyway
		}
		return answer{}, protocol.ResolvedInterrupted
	}
}

// clarifyArgs are the clarify tool's arguments; a single question given at the top
// level (question, choices, multi_select) is accepted too.
type clarifyArgs struct {
	Questions   []protocol.ClarifyQuestion `json:"questions"`
	Question    string                     `json:"question"`
	Choices     []string                   `json:"choices"`
	MultiSelect bool                       `json:"multi_select"`
}

func (t *turn) clarify(ctx context.Context, a clarifyArgs) toolResult {
	qs := a.Questions
	if len(qs) == 0 && strings.TrimSpace(a.Question) != "" {
		qs = []protocol.ClarifyQuestion{{Question: a.Question, Choices: a.Choices, MultiSelect: a.MultiSelect}}
	}
	if len(qs) < 1 || len(qs) > 5 {
		return errResult("clarify takes 1 to 5 questions, not %d", len(qs))
	}
	for i := range qs {
		q := &qs[i]
		q.Question = strings.TrimSpace(q.Question)
		if q.Question == "" {
			return errResult("question %d is empty", i+1)
		}
		if len(q.Question) > 4000 {
			return errResult("question %d is longer than 4000 bytes", i+1)
		}
		if len(q.Choices) > 4 {
			return errResult("question %d has %d choices; at most 4 are shown (the user can always answer in their own words)", i+1, len(q.Choices))
		}
		if q.Choices == nil {
			q.Choices = []string{}
		}
		for j, c := range q.Choices {
			if strings.TrimSpace(c) == "" || len(c) > 500 {
				return errResult("choice %d of question %d is empty or longer than 500 bytes", j+1, i+1)
			}
		}
	}
	w := &waiter{id: newID("cl_"), sessionID: t.p.SessionID, kind: kindClarify, questions: len(qs), ch: make(chan answer, 1)}
	t.r.park(w, "", nil)
	red := t.r.redactor()
	frame := protocol.ClarifyData{
		ClarifyID: w.id, Kind: protocol.ClarifyKindClarify,
		Question: qs[0].Question, Choices: qs[0].Choices, MultiSelect: qs[0].MultiSelect,
		Questions: qs, TimeoutS: int(t.clarifyTimeout / time.Second),
	}
	if !red.Empty() {
		raw := cleanJSON(frame, red, 0)
		json.Unmarshal(raw, &frame) //nolint:errcheck // it was just encoded
	}
	t.send(protocol.EvClarify, frame)
	t.log.Info("clarify asked", "clarify_id", w.id, "questions", len(qs))
	ans, reason := t.wait(ctx, w, t.clarifyTimeout)
	t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: w.id, Reason: reason})
	t.log.Info("clarify resolved", "clarify_id", w.id, "reason", reason)
	switch reason {
	case protocol.ResolvedAnswered:
		var answers []any
		if json.Unmarshal(ans.response, &answers) != nil || answers == nil {
			msg := "The user dismissed the question without answering."
			return toolResult{value: map[string]any{"answered": false, "message": msg}, preview: msg}
		}
		type qa struct {
			Question string `json:"question"`
			Answer   any    `json:"answer"`
		}
		out := make([]qa, len(qs))
		var sb strings.Builder
		for i := range qs {
			out[i] = qa{Question: qs[i].Question, Answer: answers[i]}
			fmt.Fprintf(&sb, "%s\n→ %v\n", qs[i].Question, answers[i])
		}
		return toolResult{value: map[string]any{"answered": true, "answers": out}, preview: sb.String()}
	case protocol.ResolvedTimeout:
		msg := fmt.Sprintf("The user did not answer within %d seconds. Go on with your best judgement, or end your turn and ask in your answer.", int(t.clarifyTimeout/time.Second))
		return toolResult{value: map[string]any{"answered": false, "message": msg}, preview: msg}
	}
	msg := "interrupted: the turn was stopped while the question waited for an answer."
	return toolResult{value: map[string]any{"answered": false, "error": msg}, preview: msg}
}

var secretNameRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// reservedEnv are variables a secret may not set: they change how every command runs.
var reservedEnv = map[string]bool{
	"PATH": true, "HOME": true, "SHELL": true, "USER": true, "LOGNAME": true, "PWD": true, "OLDPWD": true, "IFS": true,
	"ENV": true, "BASH_ENV": true, "PS4": true, "PROMPT_COMMAND": true, "SHELLOPTS": true, "BASHOPTS": true, "CDPATH": true,
	"GLOBIGNORE": true, "TMPDIR": true, "LANG": true, "TERM": true, "_": true,
}

func (t *turn) requestSecret(ctx context.Context, name, reason string) toolResult {
	name = strings.TrimSpace(name)
	switch {
	case !secretNameRE.MatchString(name) || len(name) > 128:
		return errResult("the name %q is not an environment variable name: use upper case letters, digits and _, e.g. GITHUB_TOKEN", trimForMessage(name))
	case reservedEnv[name] || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "BASH_FUNC"):
		return errResult("%s cannot be set as a secret: it changes how every command runs", name)
	}
	reason, _ = tools.Cap(strings.TrimSpace(reason), 1000)
	w := &waiter{id: newID("cl_"), sessionID: t.p.SessionID, kind: kindVault, ch: make(chan answer, 1)}
	t.r.park(w, "", nil)
	t.send(protocol.EvClarify, protocol.ClarifyData{
		ClarifyID: w.id, Kind: protocol.ClarifyKindVault,
		Question: fmt.Sprintf("The agent asks for the secret %s.", name), Choices: []string{}, Questions: []protocol.ClarifyQuestion{},
		Name: name, Reason: t.r.redactor().String(reason), SavedHint: "vault:" + name, TimeoutS: int(t.clarifyTimeout / time.Second),
	})
	t.log.Info("secret requested", "clarify_id", w.id, "name", name)
	ans, why := t.wait(ctx, w, t.clarifyTimeout)
	if why == protocol.ResolvedAnswered && ans.value != nil {
		// Stored before the resolved frame goes out, so every later frame is redacted of it.
		t.r.setSecret(t.p.SessionID, name, *ans.value)
	}
	t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: w.id, Reason: why})
	provided := why == protocol.ResolvedAnswered && ans.value != nil
	t.log.Info("secret request resolved", "clarify_id", w.id, "name", name, "reason", why, "provided", provided)
	switch {
	case provided:
		msg := fmt.Sprintf("%s is set in the environment of this session's terminal commands. Use it as $%s; its value is hidden from you.", name, name)
		return toolResult{value: map[string]any{"ok": true, "name": name, "message": msg}, preview: "secret " + name + " provided"}
	case why == protocol.ResolvedAnswered:
		msg := fmt.Sprintf("The user declined to provide %s.", name)
		return toolResult{value: map[string]any{"ok": false, "name": name, "message": msg}, preview: "secret " + name + " declined"}
	case why == protocol.ResolvedTimeout:
		msg := fmt.Sprintf("The user did not provide %s within %d seconds.", name, int(t.clarifyTimeout/time.Second))
		return toolResult{value: map[string]any{"ok": false, "name": name, "message": msg}, preview: msg}
	}
	msg := "interrupted: the turn was stopped while the secret was asked for."
	return toolResult{value: map[string]any{"ok": false, "name": name, "error": msg}, preview: msg}
}

// cleanJSON encodes v with every known secret value replaced in its strings and, when
// capN > 0, every string cut to capN bytes.
func cleanJSON(v any, red *tools.Redactor, capN int) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": "the result could not be encoded: " + err.Error()})
	}
	if red.Empty() && capN <= 0 {
		return b
	}
	if capN <= 0 {
		// Secrets inside strings (raw or JSON-escaped) are replaced in the text itself,
		// which keeps the members' order; a match across the structure (a secret of
		// digits in a number) falls back to the walk below.
		if out := []byte(red.String(string(b))); json.Valid(out) {
			return out
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if dec.Decode(&generic) != nil {
		return b
	}
	out, err := json.Marshal(walkStrings(generic, red, capN))
	if err != nil {
		return b
	}
	return out
}

// walkStrings returns v (decoded JSON) with secrets redacted from every string (map
// keys included) and strings capped at capN bytes when capN > 0.
func walkStrings(v any, red *tools.Redactor, capN int) any {
	switch x := v.(type) {
	case string:
		s := red.String(x)
		if capN > 0 {
			s, _ = tools.Cap(s, capN)
		}
		return s
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[red.String(k)] = walkStrings(val, red, capN)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = walkStrings(val, red, capN)
		}
		return out
	}
	return v
}

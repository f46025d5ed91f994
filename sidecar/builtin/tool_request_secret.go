package builtin

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
)

// requestSecretTool is the request_secret tool: it asks the user for a secret, set in the environment of later terminal commands.
type requestSecretTool struct{}

// Def is the request_secret tool's definition.
func (requestSecretTool) Def() ToolDef {
	return ToolDef{
		Name: "request_secret", Toolset: ToolsetVault,
		Description: "Ask the user for a secret (an API token, a password) that a terminal command needs. The user types it " +
			"into a masked field; it is set as the environment variable `name` for later terminal commands of this session. " +
			"You never see the value: refer to it as $NAME in commands, and never try to print it.",
		Parameters: `{"type":"object","properties":{
"name":{"type":"string","description":"The environment variable, upper case, e.g. GITHUB_TOKEN.","pattern":"^[A-Z_][A-Z0-9_]*$"},
"reason":{"type":"string","description":"Why it is needed, shown to the user."}
},"required":["name","reason"],"additionalProperties":false}`,
	}
}

// KeyArg is the argument the request_secret card shows in its title.
func (requestSecretTool) KeyArg(args map[string]any) string { return stringArg(args, "name") }

func (requestSecretTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for request_secret: %v", err)
	}
	return t.requestSecret(ctx, a.Name, a.Reason)
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

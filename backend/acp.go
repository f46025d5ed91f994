package backend

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"talaria/backend/core"
	"talaria/backend/remote"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/sidecar/protocol"
)

// ACP agents: the agents speaking the Agent Client Protocol the user configured in
// Settings (name, command, arguments, environment, working folder), each one runtime
// "acp:<id>" with its own sidecar (`talaria sidecar --runtime acp -- <command>`), the
// presets that fill in the usual commands, "Test" (the agent's own answer to
// initialize), and a chat's agent state (modes, models, slash commands) with the
// user's choices. docs/protocol.md, "The ACP runtime", has the sidecar's side.

// Settings keys of the ACP agents.
const (
	keyACPAgents       = "acp.agents"   // JSON array of ACPAgent (secret values never here)
	keyACPChoicePrefix = "acp.choices:" // + session id: JSON ACPChoices
)

// acpStartTimeout is how long an ACP sidecar may take to come up and a call to wait
// for it (an agent's first start, Python ones especially, can be slow).
const acpStartTimeout = 100 * time.Second

// ACPAgent is one configured ACP agent. Its runtime id is "acp:" + ID.
type ACPAgent struct {
	// ID is stable ([a-z0-9-], at most 40 bytes), made from the name when the agent is
	// added; chats store it in their runtime id.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Command is the agent's executable: a name looked up in PATH, or a path (~/
	// allowed). Args are its arguments (e.g. ["acp"]).
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Env are variables added to the agent's environment. A secret one's value is kept
	// in the system keychain, never in the database; it is returned as "" with Secret
	// and HasValue set.
	Env []ACPEnvVar `json:"env"`
	// Dir is the folder the agent process runs in ("" = the home folder). Each chat's
	// agent session still works in the chat's workspace.
	Dir string `json:"dir"`
	// Preset is the preset it was made from ("" for none).
	Preset string `json:"preset,omitempty"`
}

// ACPEnvVar is one environment variable of an agent.
type ACPEnvVar struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Secret   bool   `json:"secret"`
	HasValue bool   `json:"has_value,omitempty"` // a secret's value is stored (reads only)
}

// ACPPreset fills in an agent's usual command. Install says how to get the agent.
type ACPPreset struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Install string   `json:"install"`
	Notes   string   `json:"notes,omitempty"`
}

// ACPPresets are the agents Settings offers to add with one click: their ACP command
// as each agent documents it.
var ACPPresets = []ACPPreset{
	{ID: "hermes", Name: "Hermes Agent", Command: "hermes", Args: []string{"acp"},
		Install: "pip install 'hermes-agent[acp]' (Hermes Agent 0.19 or newer), then `hermes model` to choose its model.",
		Notes:   "Hermes's own ACP server. Talaria's Hermes runtime drives Hermes through its gateway instead, with more of its features."},
	{ID: "opencode", Name: "OpenCode", Command: "opencode", Args: []string{"acp"},
		Install: "npm install -g opencode-ai, then `opencode auth login` (or a provider in its opencode.json)."},
	{ID: "codex", Name: "Codex", Command: "codex-acp", Args: []string{},
		Install: "npm install -g @zed-industries/codex-acp; sign in with `codex login`, or set OPENAI_API_KEY below (as a secret)."},
	{ID: "gemini", Name: "Gemini CLI", Command: "gemini", Args: []string{"--acp"},
		Install: "npm install -g @google/gemini-cli, then run `gemini` once to sign in (or set GEMINI_API_KEY below, as a secret)."},
	{ID: "goose", Name: "goose", Command: "goose", Args: []string{"acp"},
		Install: "Install goose (https://block.github.io/goose/docs/getting-started/installation), then `goose configure`."},
	{ID: "claude", Name: "Claude", Command: "claude-agent-acp", Args: []string{},
		Install: "npm install -g @zed-industries/claude-agent-acp; sign in with Claude Code (`claude`), or set ANTHROPIC_API_KEY below (as a secret)."},
}

// remoteAgents are the ACP agents a remote host's Test looks for: the presets.
func remoteAgents() []remote.Agent {
	out := make([]remote.Agent, 0, len(ACPPresets))
	for _, p := range ACPPresets {
		out = append(out, remote.Agent{ID: p.ID, Name: p.Name, Command: p.Command, Args: p.Args})
	}
	return out
}

// ACPAgentError is returned for an agent that cannot be saved as given; Field names the
// setting at fault.
type ACPAgentError struct{ Field, Message string }

func (e *ACPAgentError) Error() string { return e.Message }

var acpEnvNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func acpSecretAccount(agentID, name string) string { return "acp:" + agentID + ":" + name }

// acpKind is the `acp` core.RuntimeKind: one runtime per configured agent.
type acpKind struct {
	svc *Service

	mu       sync.Mutex
	secrets  map[string]string // keychain account -> value, read once
	versions map[string]string // agent id -> "OpenCode 1.18.33", from Test or a hello
}

// RegisterACP registers the ACP runtime kind (New registers it; tests may again).
func (area *ACPArea) RegisterACP() *acpKind {
	s := area.s
	k := &acpKind{svc: s, secrets: map[string]string{}, versions: map[string]string{}}
	s.core.RegisterRuntimeKind(k)
	s.acp = k
	return k
}

func (k *acpKind) Kind() string { return protocol.RuntimeACP }

// ACPAgents returns the configured agents, secret values left out.
func (area *ACPArea) ACPAgents(ctx context.Context) ([]ACPAgent, error) {
	s := area.s
	v, err := s.core.Setting(ctx, keyACPAgents, "")
	if err != nil || v == "" {
		return []ACPAgent{}, err
	}
	var out []ACPAgent
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		s.Log.Error("the saved ACP agents are unreadable; showing none", "err", err)
		return []ACPAgent{}, nil
	}
	for i := range out {
		if out[i].Args == nil {
			out[i].Args = []string{}
		}
		if out[i].Env == nil {
			out[i].Env = []ACPEnvVar{}
		}
	}
	return out, nil
}

func (s *Service) acpAgent(ctx context.Context, id string) (ACPAgent, bool, error) {
	list, err := s.ACP().ACPAgents(ctx)
	if err != nil {
		return ACPAgent{}, false, err
	}
	for _, a := range list {
		if a.ID == id {
			return a, true, nil
		}
	}
	return ACPAgent{}, false, nil
}

// SaveACPAgent adds (ID "") or replaces an agent. A secret variable whose Value is ""
// keeps its stored value; a non-secret one's value is saved as given. The agent's
// sidecar restarts with the new settings at its next use. Errors: *ACPAgentError; the
// keychain's.
func (area *ACPArea) SaveACPAgent(ctx context.Context, in ACPAgent) (ACPAgent, error) {
	s := area.s
	in.Name = strings.TrimSpace(in.Name)
	in.Command = strings.TrimSpace(in.Command)
	in.Dir = strings.TrimSpace(in.Dir)
	switch {
	case in.Name == "" || len(in.Name) > 100:
		return ACPAgent{}, &ACPAgentError{Field: "name", Message: "give the agent a name (at most 100 characters)"}
	case in.Command == "" || len(in.Command) > 4096:
		return ACPAgent{}, &ACPAgentError{Field: "command", Message: "give the command that starts the agent's ACP server, e.g. opencode"}
	case strings.ContainsAny(in.Command, "\x00\n"):
		return ACPAgent{}, &ACPAgentError{Field: "command", Message: "the command cannot contain line breaks"}
	case in.Dir != "" && !filepath.IsAbs(expandHome(in.Dir)):
		return ACPAgent{}, &ACPAgentError{Field: "dir", Message: "the working folder must be an absolute path (or empty for your home folder)"}
	case len(in.Args) > 100:
		return ACPAgent{}, &ACPAgentError{Field: "args", Message: "at most 100 arguments"}
	}
	if in.Args == nil {
		in.Args = []string{}
	}
	for _, a := range in.Args {
		if strings.ContainsRune(a, 0) || len(a) > 4096 {
			return ACPAgent{}, &ACPAgentError{Field: "args", Message: "an argument is too long or holds a NUL byte"}
		}
	}
	seen := map[string]bool{}
	for _, e := range in.Env {
		switch {
		case !acpEnvNameRe.MatchString(e.Name) || len(e.Name) > 128:
			return ACPAgent{}, &ACPAgentError{Field: "env", Message: fmt.Sprintf("%q is not an environment variable name (letters, digits and _)", e.Name)}
		case seen[e.Name]:
			return ACPAgent{}, &ACPAgentError{Field: "env", Message: e.Name + " is set twice"}
		case strings.ContainsRune(e.Value, 0) || len(e.Value) > 64<<10:
			return ACPAgent{}, &ACPAgentError{Field: "env", Message: "the value of " + e.Name + " is too long or holds a NUL byte"}
		}
		seen[e.Name] = true
	}
	list, err := s.ACP().ACPAgents(ctx)
	if err != nil {
		return ACPAgent{}, err
	}
	idx := -1
	if in.ID != "" {
		idx = slices.IndexFunc(list, func(a ACPAgent) bool { return a.ID == in.ID })
		if idx < 0 {
			return ACPAgent{}, &ACPAgentError{Field: "id", Message: "this agent was removed meanwhile; add it again"}
		}
	} else {
		in.ID = newACPID(in.Name, list)
	}
	var old ACPAgent
	if idx >= 0 {
		old = list[idx]
	}
	stored := in
	stored.Env = make([]ACPEnvVar, 0, len(in.Env))
	for _, e := range in.Env {
		account := acpSecretAccount(in.ID, e.Name)
		if !e.Secret {
			stored.Env = append(stored.Env, ACPEnvVar{Name: e.Name, Value: e.Value})
			continue
		}
		switch {
		case e.Value != "":
			if err := s.Vault.Set(account, e.Value, true); err != nil {
				s.Log.Warn("the keychain did not keep an agent's secret; it is kept for this session", "agent", in.ID, "err", err)
			}
			s.acp.putSecret(account, e.Value)
		case !slices.ContainsFunc(old.Env, func(o ACPEnvVar) bool { return o.Name == e.Name && o.Secret }):
			return ACPAgent{}, &ACPAgentError{Field: "env", Message: "give a value for the secret " + e.Name}
		}
		stored.Env = append(stored.Env, ACPEnvVar{Name: e.Name, Secret: true})
	}
	// Secrets no longer listed leave the keychain.
	for _, o := range old.Env {
		if o.Secret && !slices.ContainsFunc(stored.Env, func(e ACPEnvVar) bool { return e.Name == o.Name && e.Secret }) {
			_ = s.Vault.Delete(acpSecretAccount(in.ID, o.Name))
			s.acp.dropSecret(acpSecretAccount(in.ID, o.Name))
		}
	}
	if idx >= 0 {
		list[idx] = stored
	} else {
		list = append(list, stored)
	}
	if err := s.saveACPAgents(ctx, list); err != nil {
		return ACPAgent{}, err
	}
	s.Log.Info("ACP agent saved", "agent", in.ID, "command", filepath.Base(in.Command))
	s.core.SessionsChanged()
	return s.acpPublic(stored), nil
}

// acpPublic marks which secrets have a value (the value itself is never returned).
func (s *Service) acpPublic(a ACPAgent) ACPAgent {
	out := a
	out.Env = make([]ACPEnvVar, len(a.Env))
	for i, e := range a.Env {
		out.Env[i] = e
		if e.Secret {
			out.Env[i].Value, out.Env[i].HasValue = "", true
		}
	}
	return out
}

func (s *Service) saveACPAgents(ctx context.Context, list []ACPAgent) error {
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return s.Store.SetSetting(ctx, keyACPAgents, string(b))
}

// DeleteACPAgent removes an agent and its secrets; its running sidecar stops. Chats on
// it keep their transcript and say the agent is gone when used (choose another
// runtime for them).
func (area *ACPArea) DeleteACPAgent(ctx context.Context, id string) error {
	s := area.s
	list, err := s.ACP().ACPAgents(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(list, func(a ACPAgent) bool { return a.ID == id })
	if i < 0 {
		return nil
	}
	for _, e := range list[i].Env {
		if e.Secret {
			_ = s.Vault.Delete(acpSecretAccount(id, e.Name))
			s.acp.dropSecret(acpSecretAccount(id, e.Name))
		}
	}
	list = slices.Delete(list, i, i+1)
	if err := s.saveACPAgents(ctx, list); err != nil {
		return err
	}
	s.core.StopRuntime(protocol.RuntimeACP + ":" + id)
	s.core.SessionsChanged()
	return nil
}

// newACPID makes an id from a name, unique among list.
func newACPID(name string, list []ACPAgent) string {
	base := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(base) > 32 {
		base = strings.TrimRight(base[:32], "-")
	}
	if base == "" {
		base = "agent"
	}
	id := base
	for n := 2; slices.ContainsFunc(list, func(a ACPAgent) bool { return a.ID == id }); n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	return id
}

func (k *acpKind) putSecret(account, v string) {
	k.mu.Lock()
	k.secrets[account] = v
	k.mu.Unlock()
}

func (k *acpKind) dropSecret(account string) {
	k.mu.Lock()
	delete(k.secrets, account)
	k.mu.Unlock()
}

// secret returns an agent's secret value: cached, else read once from the keychain.
func (k *acpKind) secret(account string) (string, bool, error) {
	k.mu.Lock()
	v, ok := k.secrets[account]
	k.mu.Unlock()
	if ok {
		return v, true, nil
	}
	v, ok, err := k.svc.Vault.Get(account)
	if err == nil && ok {
		k.putSecret(account, v)
	}
	return v, ok, err
}

// command resolves an agent's executable the way its sidecar will (PATH of its own
// environment), for the pickers' "available".
func (a ACPAgent) resolve() (string, error) {
	cmd := expandHome(a.Command)
	if strings.ContainsRune(cmd, filepath.Separator) || strings.ContainsRune(cmd, '/') {
		st, err := os.Stat(cmd)
		if err != nil || st.IsDir() {
			return "", fmt.Errorf("the agent command %s does not exist", cmd)
		}
		return cmd, nil
	}
	path := os.Getenv("PATH")
	for _, e := range a.Env {
		if e.Name == "PATH" && !e.Secret {
			path = e.Value
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if p, err := exec.LookPath(filepath.Join(dir, cmd)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the agent command %q was not found in PATH", cmd)
}

func (a ACPAgent) installHint() string {
	for _, p := range ACPPresets {
		if p.ID == a.Preset {
			return p.Install + " Or give the command's full path in Settings, Agents."
		}
	}
	return "Install the agent, or give the command's full path in Settings, Agents."
}

// Runtimes lists one runtime per configured agent.
func (k *acpKind) Runtimes(ctx context.Context) ([]core.RuntimeOption, error) {
	list, err := k.svc.ACP().ACPAgents(ctx)
	if err != nil {
		return nil, err
	}
	out := []core.RuntimeOption{}
	for _, a := range list {
		o := core.RuntimeOption{ID: protocol.RuntimeACP + ":" + a.ID, Label: a.Name, Detail: strings.Join(append([]string{a.Command}, a.Args...), " "), Available: true}
		k.mu.Lock()
		if v := k.versions[a.ID]; v != "" {
			o.Detail = v + " · " + o.Detail
		}
		k.mu.Unlock()
		if _, err := a.resolve(); err != nil {
			o.Available, o.Problem, o.Hint = false, err.Error()+".", a.installHint()
		}
		out = append(out, o)
	}
	return out, nil
}

// Spec is how to start runtime "acp:<id>": `talaria sidecar --runtime acp --agent-dir
// DIR -- <command> <args>`, the agent's variables (secrets from the keychain) added to
// the environment.
func (k *acpKind) Spec(ctx context.Context, id string) (core.RuntimeSpec, error) {
	_, agentID, _ := strings.Cut(id, ":")
	a, ok, err := k.svc.acpAgent(ctx, agentID)
	if err != nil {
		return core.RuntimeSpec{}, err
	}
	if !ok {
		return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id,
			Message: fmt.Sprintf("The ACP agent %q of this chat was removed from Settings.", agentID),
			Hint:    "Add it again in Settings, Agents, or choose another runtime for the chat (its menu in the chat header)."}
	}
	return k.spec(a)
}

func (k *acpKind) spec(a ACPAgent) (core.RuntimeSpec, error) {
	dir := expandHome(a.Dir)
	if dir == "" {
		dir, _ = os.UserHomeDir()
	}
	args := []string{"--runtime", protocol.RuntimeACP}
	if dir != "" {
		args = append(args, "--agent-dir", dir)
	}
	if a.Name != "" {
		args = append(args, "--agent-name", a.Name)
	}
	env := make([]string, 0, len(a.Env))
	for _, e := range a.Env {
		v := e.Value
		if e.Secret {
			sv, ok, err := k.secret(acpSecretAccount(a.ID, e.Name))
			if err != nil {
				return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: protocol.RuntimeACP + ":" + a.ID,
					Message: "The secret " + e.Name + " of " + a.Name + " could not be read from the system keychain: " + err.Error(),
					Hint:    "Unlock the keychain, or enter the value again in Settings, Agents."}
			}
			if !ok {
				return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: protocol.RuntimeACP + ":" + a.ID,
					Message: "The secret " + e.Name + " of " + a.Name + " is not stored (the keychain was unavailable when it was entered, or it was removed).",
					Hint:    "Enter its value again in Settings, Agents."}
			}
			v = sv
			// The name, never the value: the sidecar reads it from its environment and
			// redacts it from the agent's stderr lines it logs or quotes.
			args = append(args, "--secret-env", e.Name)
		}
		env = append(env, e.Name+"="+v)
	}
	args = append(append(append(args, "--"), expandHome(a.Command)), a.Args...)
	return core.RuntimeSpec{ID: protocol.RuntimeACP + ":" + a.ID, Kind: protocol.RuntimeACP, Label: a.Name, Args: args, Env: env,
		ReadyWait: acpStartTimeout, HelloTimeout: 30 * time.Second}, nil
}

func (k *acpKind) noteVersion(agentID, v string) {
	if v == "" {
		return
	}
	k.mu.Lock()
	k.versions[agentID] = v
	k.mu.Unlock()
}

// ACPTestResult is what "Test" shows: the agent's own description (its initialize
// answer), or why it could not be had and what to do, with the agent's last output.
type ACPTestResult struct {
	OK      bool                     `json:"ok"`
	Info    protocol.AgentInfoResult `json:"info"`
	Message string                   `json:"message,omitempty"`
	Hint    string                   `json:"hint,omitempty"`
	Output  []string                 `json:"output,omitempty"` // the sidecar's last log lines
	Took    float64                  `json:"took_s"`
}

// TestACPAgent starts the agent as configured (a sidecar of its own, apart from the
// running ones), asks it initialize, and stops it. Secret variables with an empty
// Value use the stored one. It never returns an error for a failing agent: the result
// says what went wrong.
func (area *ACPArea) TestACPAgent(ctx context.Context, in ACPAgent) (ACPTestResult, error) {
	s := area.s
	start := time.Now()
	if in.ID != "" {
		if old, ok, _ := s.acpAgent(ctx, in.ID); ok {
			for i, e := range in.Env {
				if e.Secret && e.Value == "" && slices.ContainsFunc(old.Env, func(o ACPEnvVar) bool { return o.Name == e.Name && o.Secret }) {
					if v, ok, _ := s.acp.secret(acpSecretAccount(in.ID, e.Name)); ok {
						in.Env[i].Value = v
					}
				}
			}
		}
	}
	for i := range in.Env {
		if in.Env[i].Secret {
			s.Vault.Remember(in.Env[i].Value) // redacted from the output shown
		}
		in.Env[i].Secret = false // values are in hand now
	}
	if strings.TrimSpace(in.Command) == "" {
		return ACPTestResult{Message: "No command is set.", Hint: "Give the command that starts the agent's ACP server."}, nil
	}
	spec, err := s.acp.spec(in)
	if err != nil {
		var ru *core.RuntimeUnavailableError
		if errors.As(err, &ru) {
			return ACPTestResult{Message: ru.Message, Hint: ru.Hint}, nil
		}
		return ACPTestResult{}, err
	}
	res := s.probeACP(ctx, spec)
	res.Took = time.Since(start).Seconds()
	if res.OK && in.ID != "" {
		s.acp.noteVersion(in.ID, strings.TrimSpace(res.Info.Name+" "+res.Info.Version))
	}
	for i, l := range res.Output {
		res.Output[i] = s.Vault.RedactString(l)
	}
	res.Message, res.Hint = s.Vault.RedactString(res.Message), s.Vault.RedactString(res.Hint)
	return res, nil
}

// probeACP runs a sidecar for spec once: rpc.hello, agent.info, then stdin EOF.
func (s *Service) probeACP(ctx context.Context, spec core.RuntimeSpec) ACPTestResult {
	base := s.core.SidecarConfig()
	cmd := exec.Command(base.Command, append(slices.Clone(base.Args), spec.Args...)...)
	cmd.Env = append(append(os.Environ(), base.Env...), spec.Env...)
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	stderr, err3 := cmd.StderrPipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		return ACPTestResult{Message: "Could not start the test: " + err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return ACPTestResult{Message: "Could not start Talaria's sidecar: " + err.Error(), Hint: "Reinstalling Talaria restores it."}
	}
	tail := supervisor.NewLineRing(40)
	copied := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 64<<10)
		for sc.Scan() {
			tail.Write(append(sc.Bytes(), '\n')) //nolint:errcheck // a ring
		}
		close(copied)
	}()
	client := supervisor.NewClient(stdout, stdin, s.Log.With("component", "acp-test"))
	defer func() {
		_ = client.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(6 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		<-copied
	}()
	ctx, cancel := context.WithTimeout(ctx, acpStartTimeout)
	defer cancel()
	output := func() []string {
		var out []string
		for _, l := range tail.Lines() {
			if strings.Contains(l, "[agent] ") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
				out = append(out, l)
			}
		}
		if len(out) > 12 {
			out = out[len(out)-12:]
		}
		return out
	}
	var hello protocol.HelloResult
	if err := client.Call(ctx, protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version, HostVersion: s.Version}, nil, &hello); err != nil {
		return testFailure(err, output())
	}
	var info protocol.AgentInfoResult
	if err := client.Call(ctx, protocol.MethodAgentInfo, nil, nil, &info); err != nil {
		return testFailure(err, output())
	}
	return ACPTestResult{OK: true, Info: info, Output: output()}
}

func testFailure(err error, output []string) ACPTestResult {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		res := ACPTestResult{Message: pe.Message, Output: output}
		if pe.Data != nil {
			res.Hint = pe.Data.Hint
		}
		return res
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ACPTestResult{Message: fmt.Sprintf("The agent did not answer within %s.", acpStartTimeout), Hint: "Check the command (it must start the agent's ACP server) and the agent's output below.", Output: output}
	}
	return ACPTestResult{Message: err.Error(), Output: output}
}

// ACPAgentInfo asks the running sidecar of runtime id ("acp:<agent>") what its agent
// said about itself (starting the sidecar and the agent when needed): name, version,
// capabilities, the agent's process id. Errors: *core.RuntimeUnavailableError; the
// sidecar's.
func (area *ACPArea) ACPAgentInfo(ctx context.Context, runtimeID string) (protocol.AgentInfoResult, error) {
	s := area.s
	if core.AgentKind(runtimeID) != protocol.RuntimeACP {
		return protocol.AgentInfoResult{}, &NotACPError{Runtime: runtimeID}
	}
	sup, _, err := s.core.SupervisorFor(ctx, runtimeID)
	if err != nil {
		return protocol.AgentInfoResult{}, err
	}
	var info protocol.AgentInfoResult
	if err := sup.Call(ctx, protocol.MethodAgentInfo, nil, nil, &info); err != nil {
		return info, err
	}
	_, agentID, _ := strings.Cut(runtimeID, ":")
	s.acp.noteVersion(agentID, strings.TrimSpace(info.Name+" "+info.Version))
	return info, nil
}

// ACPChoices are the user's choices for a chat on an ACP agent: its mode and model,
// applied at the start of every turn (an agent may forget them when its session is
// reopened). Other options live only in the agent's session.
type ACPChoices struct {
	Mode  string `json:"mode,omitempty"`
	Model string `json:"model,omitempty"`
}

func (s *Service) acpChoices(ctx context.Context, sessionID string) ACPChoices {
	var c ACPChoices
	if v, err := s.core.Setting(ctx, keyACPChoicePrefix+sessionID, ""); err == nil && v != "" {
		_ = json.Unmarshal([]byte(v), &c)
	}
	return c
}

// NotACPError is returned by the agent-state calls for a chat whose runtime is not an
// ACP agent.
type NotACPError struct{ SessionID, Runtime string }

func (e *NotACPError) Error() string {
	return fmt.Sprintf("this chat runs on %q, not on an ACP agent", e.Runtime)
}

// acpRef resolves what session.state and session.set_* need for a chat.
func (s *Service) acpRef(ctx context.Context, sessionID string) (store.Session, *supervisor.Supervisor, protocol.SessionRefParams, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return sess, nil, protocol.SessionRefParams{}, err
	}
	rt := core.CanonicalRuntime(sess.Runtime)
	if core.AgentKind(rt) != protocol.RuntimeACP {
		return sess, nil, protocol.SessionRefParams{}, &NotACPError{SessionID: sessionID, Runtime: rt}
	}
	sup, _, err := s.core.SupervisorFor(ctx, rt)
	if err != nil {
		return sess, nil, protocol.SessionRefParams{}, err
	}
	ws := sess.Workspace
	if ws == "" {
		st, err := s.Settings().GetSettings(ctx)
		if err != nil {
			return sess, nil, protocol.SessionRefParams{}, err
		}
		ws = st.Workspace
	}
	// The agent session works there: the default folder is made now if need be.
	if p, err := s.useWorkspace(ws); err == nil {
		ws = p
	}
	return sess, sup, protocol.SessionRefParams{SessionID: sessionID, Workspace: ws, AgentSessionID: sess.AgentSessionID}, nil
}

// ACPState returns what a chat's ACP agent session offers (modes, models, options,
// slash commands), opening or reopening the agent session when needed. Errors:
// *NotACPError; *core.RuntimeUnavailableError; the agent's (a *protocol.Error).
func (area *ACPArea) ACPState(ctx context.Context, sessionID string) (protocol.AgentState, error) {
	s := area.s
	sess, sup, ref, err := s.acpRef(ctx, sessionID)
	if err != nil {
		return protocol.AgentState{}, err
	}
	var st protocol.AgentState
	if err := sup.Call(ctx, protocol.MethodSessionState, ref, nil, &st); err != nil {
		return protocol.AgentState{}, err
	}
	s.noteACPSession(ctx, sess, st.AgentSessionID)
	return st, nil
}

// SetACPChoice sets a chat's mode (which "mode"), model ("model") or another option
// ("option", optionID) at its agent and remembers it for the chat's next turns.
// Errors: *NotACPError, *core.RuntimeUnavailableError, invalid_params for a value the agent
// does not offer.
func (area *ACPArea) SetACPChoice(ctx context.Context, sessionID, which, optionID, value string) (protocol.AgentState, error) {
	s := area.s
	method := map[string]string{"mode": protocol.MethodSessionSetMode, "model": protocol.MethodSessionSetModel, "option": protocol.MethodSessionSetOption}[which]
	if method == "" {
		return protocol.AgentState{}, &InvalidAnswerError{Message: fmt.Sprintf("%q is not mode, model or option", which)}
	}
	sess, sup, ref, err := s.acpRef(ctx, sessionID)
	if err != nil {
		return protocol.AgentState{}, err
	}
	var st protocol.AgentState
	if err := sup.Call(ctx, method, protocol.SetOptionParams{SessionRefParams: ref, OptionID: optionID, Value: value}, nil, &st); err != nil {
		return protocol.AgentState{}, err
	}
	s.noteACPSession(ctx, sess, st.AgentSessionID)
	c := s.acpChoices(ctx, sessionID)
	switch which {
	case "mode":
		c.Mode = value
	case "model":
		c.Model = value
	default:
		return st, nil
	}
	b, _ := json.Marshal(c)
	if err := s.Store.SetSetting(ctx, keyACPChoicePrefix+sessionID, string(b)); err != nil {
		return st, err
	}
	return st, nil
}

// noteACPSession stores an agent session id the sidecar opened outside a turn.
func (s *Service) noteACPSession(ctx context.Context, sess store.Session, id string) {
	if id == "" || id == sess.AgentSessionID {
		return
	}
	if _, err := s.Store.SetAgentSession(ctx, sess.ID, core.CanonicalRuntime(sess.Runtime), id); err != nil {
		s.Log.Warn("saving the agent's session id", "session", sess.ID, "err", err)
	}
}

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

	"talaria/backend/bus"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
	"talaria/sidecar/protocol/hermesprobe"
)

// Settings keys of the Hermes runtime.
const (
	keyHermesPython = "hermes.python" // override: a Python, a `hermes` launcher or a Hermes folder
	keyHermesHome   = "hermes.home"   // override of HERMES_HOME
	keyHermesModel  = "hermes.model"  // the model Hermes chats use ("" = the profile's default)
)

// hermesStartTimeout is how long a Hermes sidecar may take to answer rpc.hello (its
// gateway's first start can be slow: the official desktop allows 90 s).
const hermesStartTimeout = 100 * time.Second

// HermesConfig fixes the Hermes install instead of discovering it (tests, or a packaged
// setup). Zero fields are discovered.
type HermesConfig struct {
	// Python is the interpreter whose `import hermes_cli` works; Prefix words run
	// before it (e.g. bubblewrap for a Hermes in another folder system).
	Python string
	Prefix []string
	// Home is HERMES_HOME ("" = $HERMES_HOME, else ~/.hermes).
	Home string
	// Env are extra "K=V" entries for the Hermes sidecar.
	Env []string
}

// HermesInstall is what discovery found (Settings shows it).
type HermesInstall struct {
	Python        string   `json:"python"`
	Prefix        []string `json:"prefix,omitempty"`
	Version       string   `json:"version"`
	PythonVersion string   `json:"python_version"`
	Source        string   `json:"source"` // settings, ~/.hermes/hermes-agent, PATH, fixed
	Home          string   `json:"home"`
	Profiles      []string `json:"profiles"` // "default" first
	Problem       string   `json:"problem,omitempty"`
	Hint          string   `json:"hint,omitempty"`
}

// hermesKind is the `hermes` core.RuntimeKind: one runtime per Hermes profile ("hermes" for
// the default profile, "hermes:<profile>" for the others), each its own sidecar and
// gateway (HERMES_HOME = the profile's folder).
type hermesKind struct {
	svc   *Service
	fixed HermesConfig

	mu       sync.Mutex
	cached   *HermesInstall
	cachedAt time.Time
	key      string
}

// RegisterHermes registers the Hermes runtime kind; cfg fixes the install (zero:
// discover it as docs/hermes.md describes).
func (area *AgentsArea) RegisterHermes(cfg HermesConfig) {
	s := area.s
	s.core.RegisterRuntimeKind(&hermesKind{svc: s, fixed: cfg})
}

func (k *hermesKind) Kind() string { return protocol.RuntimeHermes }

// discoveryTTL is how long a discovery result is reused.
const discoveryTTL = 20 * time.Second

// install discovers (or returns the cached) Hermes install.
func (k *hermesKind) install(ctx context.Context) HermesInstall {
	override, _ := k.svc.setting(ctx, keyHermesPython, "")
	home, _ := k.svc.setting(ctx, keyHermesHome, "")
	key := override + "\x00" + home
	k.mu.Lock()
	if k.cached != nil && k.key == key && time.Since(k.cachedAt) < discoveryTTL {
		in := *k.cached
		k.mu.Unlock()
		return in
	}
	k.mu.Unlock()
	in := discoverHermes(ctx, k.fixed, override, home)
	k.mu.Lock()
	k.cached, k.cachedAt, k.key = &in, time.Now(), key
	k.mu.Unlock()
	return in
}

// forget drops the cached discovery (after Settings changed).
func (k *hermesKind) forget() {
	k.mu.Lock()
	k.cached = nil
	k.mu.Unlock()
}

// Runtimes lists one runtime per profile, or one unavailable entry saying how to
// install Hermes.
func (k *hermesKind) Runtimes(ctx context.Context) ([]core.RuntimeOption, error) {
	in := k.install(ctx)
	if in.Problem != "" {
		return []core.RuntimeOption{{ID: protocol.RuntimeHermes, Label: "Hermes Agent", Detail: "not found",
			Problem: in.Problem, Hint: in.Hint}}, nil
	}
	var out []core.RuntimeOption
	for _, p := range in.Profiles {
		id, label := protocol.RuntimeHermes, "Hermes Agent"
		if p != "default" {
			id, label = protocol.RuntimeHermes+":"+p, "Hermes Agent ("+p+")"
		}
		out = append(out, core.RuntimeOption{ID: id, Label: label, Available: true,
			Detail: fmt.Sprintf("Hermes Agent %s · Python %s · %s", in.Version, in.PythonVersion, tildeHome(profileHome(in.Home, p)))})
	}
	return out, nil
}

// Spec is how to start runtime id: `talaria sidecar --runtime hermes --hermes-python
// P [--hermes-prefix JSON] --hermes-home H`.
func (k *hermesKind) Spec(ctx context.Context, id string) (core.RuntimeSpec, error) {
	in := k.install(ctx)
	if in.Problem != "" {
		return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id, Message: in.Problem, Hint: in.Hint}
	}
	_, profile, _ := strings.Cut(id, ":")
	if profile == "" {
		profile = "default"
	}
	if !slices.Contains(in.Profiles, profile) {
		return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id,
			Message: fmt.Sprintf("Hermes has no profile %q in %s.", profile, tildeHome(in.Home)),
			Hint:    "Create it with `hermes profile create " + profile + "`, or choose another runtime for the chat."}
	}
	args := []string{"--runtime", protocol.RuntimeHermes, "--hermes-python", in.Python,
		"--hermes-home", profileHome(in.Home, profile), "--hermes-start-timeout", "90s"}
	if len(in.Prefix) > 0 {
		b, _ := json.Marshal(in.Prefix)
		args = append(args, "--hermes-prefix", string(b))
	}
	label := "Hermes Agent"
	if profile != "default" {
		label += " (" + profile + ")"
	}
	return core.RuntimeSpec{ID: id, Kind: protocol.RuntimeHermes, Label: label, Args: args, Env: slices.Clone(k.fixed.Env),
		ReadyWait: hermesStartTimeout, HelloTimeout: hermesStartTimeout}, nil
}

func profileHome(home, profile string) string {
	if profile == "" || profile == "default" {
		return home
	}
	return filepath.Join(home, "profiles", profile)
}

func tildeHome(p string) string {
	if h, err := os.UserHomeDir(); err == nil && h != "" && strings.HasPrefix(p, h+string(filepath.Separator)) {
		return "~" + p[len(h):]
	}
	return p
}

const hermesInstallHint = hermesprobe.InstallHint

// discoverHermes finds a usable Hermes: the fixed config, else the Settings override,
// else ~/.hermes/hermes-agent's venv, else `hermes` on PATH (its shebang's Python).
// Each candidate is checked by running it (python -c: hermes_cli's version, the
// gateway module present).
func discoverHermes(ctx context.Context, fixed HermesConfig, override, home string) HermesInstall {
	if home == "" {
		home = fixed.Home
	}
	if home == "" {
		home = os.Getenv("HERMES_HOME")
	}
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".hermes")
		}
	}
	type cand struct {
		python string
		prefix []string
		source string
	}
	var cands []cand
	switch {
	case fixed.Python != "":
		cands = append(cands, cand{fixed.Python, fixed.Prefix, "fixed"})
	case override != "":
		py, err := resolveHermesPath(override)
		if err != nil {
			return HermesInstall{Home: home, Source: "settings", Problem: err.Error(),
				Hint: "Set the path of Hermes's Python (its venv's bin/python), of the `hermes` command, or of the Hermes folder in Settings."}
		}
		cands = append(cands, cand{py, nil, "settings"})
	default:
		if h, err := os.UserHomeDir(); err == nil {
			for _, v := range []string{"venv", ".venv"} {
				cands = append(cands, cand{filepath.Join(h, ".hermes", "hermes-agent", v, "bin", "python"), nil, "~/.hermes/hermes-agent"})
			}
		}
		if exe, err := exec.LookPath("hermes"); err == nil {
			if py := shebangPython(exe); py != "" {
				cands = append(cands, cand{py, nil, "PATH (" + exe + ")"})
			}
		}
	}
	var problems []string
	hint := hermesInstallHint
	for _, c := range cands {
		if c.prefix == nil {
			if _, err := os.Stat(c.python); err != nil {
				continue
			}
		}
		ver, pyv, err := probeHermes(ctx, c.python, c.prefix, home)
		if err != nil {
			var pe *protocol.Error
			if errors.As(err, &pe) {
				problems = append(problems, pe.Message)
				if pe.Data.Hint != "" {
					hint = pe.Data.Hint // what to do about the last one tried
				}
			} else {
				problems = append(problems, err.Error())
			}
			continue
		}
		in := HermesInstall{Python: c.python, Prefix: c.prefix, Version: ver, PythonVersion: pyv, Source: c.source, Home: home}
		in.Profiles = hermesProfiles(home)
		return in
	}
	msg := "Hermes Agent was not found on this computer."
	if len(problems) > 0 {
		msg = "Hermes Agent was found but cannot be used: " + strings.Join(problems, "; ")
	}
	return HermesInstall{Home: home, Problem: msg, Hint: hint}
}

// resolveHermesPath turns the Settings override into a Python: a Python itself, a
// `hermes` launcher (its shebang), or a folder (its venv/bin/python or bin/python).
func resolveHermesPath(p string) (string, error) {
	p = expandHome(strings.TrimSpace(p))
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("the Hermes path in Settings (%s) does not exist", p)
	}
	if st.IsDir() {
		for _, rel := range []string{"venv/bin/python", ".venv/bin/python", "bin/python", "hermes-agent/venv/bin/python"} {
			if c := filepath.Join(p, rel); fileExists(c) {
				return c, nil
			}
		}
		return "", fmt.Errorf("the Hermes folder in Settings (%s) has no venv/bin/python", p)
	}
	if py := shebangPython(p); py != "" && !strings.Contains(filepath.Base(p), "python") {
		return py, nil
	}
	return p, nil
}

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[2:])
		}
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// shebangPython reads a launcher script's `#!` interpreter when it is a Python.
func shebangPython(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return ""
	}
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "#!") {
		return ""
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
		if p, err := exec.LookPath(fields[len(fields)-1]); err == nil {
			return p
		}
		return ""
	}
	if strings.Contains(filepath.Base(fields[0]), "python") {
		return fields[0]
	}
	return ""
}

// probeHermes runs the interpreter: Hermes's version, Python's, and whether the
// gateway exists (hermesprobe: the same check and words as the runtime's rpc.hello).
// Errors: *protocol.Error saying what is wrong, with a hint.
func probeHermes(ctx context.Context, python string, prefix []string, home string) (hermesVersion, pyVersion string, err error) {
	const limit = 20 * time.Second
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := hermesprobe.Probe(cctx, prefix, python, []string{"HERMES_HOME=" + home}, "", limit)
	return res.HermesVersion, res.PythonVersion, err
}

// profileName is a Hermes profile name (hermes_cli/profiles.py _PROFILE_ID_RE).
var profileName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// hermesProfiles lists the home's profiles the way `hermes profile list` does
// (hermes_cli/profiles.py list_profiles: "default", then each folder of
// HOME/profiles/ with a valid name), "default" first.
func hermesProfiles(home string) []string {
	out := []string{"default"}
	entries, err := os.ReadDir(filepath.Join(home, "profiles"))
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "default" && profileName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// HermesSettings is the Hermes part of Settings: the override path and home, the
// model for Hermes chats, and what discovery found with them.
type HermesSettings struct {
	Path    string        `json:"path"`
	Home    string        `json:"home"`
	Model   string        `json:"model"`
	Install HermesInstall `json:"install"`
}

// GetHermesSettings returns the Hermes settings and runs discovery with them.
func (area *AgentsArea) GetHermesSettings(ctx context.Context) (HermesSettings, error) {
	s := area.s
	var out HermesSettings
	var err error
	if out.Path, err = s.core.Setting(ctx, keyHermesPython, ""); err != nil {
		return out, err
	}
	if out.Home, err = s.core.Setting(ctx, keyHermesHome, ""); err != nil {
		return out, err
	}
	if out.Model, err = s.core.Setting(ctx, keyHermesModel, ""); err != nil {
		return out, err
	}
	if k := s.hermes(); k != nil {
		out.Install = k.install(ctx)
	}
	return out, nil
}

// SaveHermesSettings stores the override path, home and model ("" clears each) and
// rediscovers. Errors: ErrInvalid for a path or model with control characters.
func (area *AgentsArea) SaveHermesSettings(ctx context.Context, in HermesSettings) (HermesSettings, error) {
	s := area.s
	for _, v := range []string{in.Path, in.Home, in.Model} {
		if strings.ContainsAny(v, "\x00\n\r") || len(v) > 4096 {
			return HermesSettings{}, fmt.Errorf("a Hermes setting has a line break or is too long: %w", store.ErrInvalid)
		}
	}
	for key, v := range map[string]string{keyHermesPython: strings.TrimSpace(in.Path), keyHermesHome: strings.TrimSpace(in.Home), keyHermesModel: strings.TrimSpace(in.Model)} {
		if err := s.Store.SetSetting(ctx, key, v); err != nil {
			return HermesSettings{}, err
		}
	}
	if k := s.hermes(); k != nil {
		k.forget()
	}
	s.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	return s.Agents().GetHermesSettings(ctx)
}

func (s *Service) hermes() *hermesKind {
	k, _ := s.core.RuntimeKind(protocol.RuntimeHermes).(*hermesKind)
	return k
}

// hermesCall calls a method on Hermes runtime id's sidecar (started if needed).
func (s *Service) hermesCall(ctx context.Context, runtimeID, method string, params, out any) error {
	if runtimeID == "" {
		runtimeID = protocol.RuntimeHermes
	}
	if core.AgentKind(runtimeID) != protocol.RuntimeHermes {
		return fmt.Errorf("runtime %q is not a Hermes runtime: %w", runtimeID, store.ErrInvalid)
	}
	sup, _, err := s.core.SupervisorFor(ctx, runtimeID)
	if err != nil {
		return err
	}
	return sup.Call(ctx, method, params, nil, out)
}

// HermesSessionsLimit is the most sessions HermesSessions lists (the sidecar's cap).
const HermesSessionsLimit = 1000

// HermesSessions lists the user's own Hermes sessions (made in its CLI, TUI or
// elsewhere) of runtime id ("" = the default profile), most recent first, at most
// HermesSessionsLimit, each with the Talaria chat bound to it when there is one.
func (area *AgentsArea) HermesSessions(ctx context.Context, runtimeID string) ([]HermesSession, error) {
	s := area.s
	var res protocol.AgentSessionsResult
	if err := s.hermesCall(ctx, runtimeID, protocol.MethodAgentSessions, protocol.AgentSessionsParams{Limit: HermesSessionsLimit}, &res); err != nil {
		return nil, err
	}
	bound, err := s.Store.SessionsByAgentSession(ctx, canonicalHermes(runtimeID))
	if err != nil {
		return nil, err
	}
	out := make([]HermesSession, 0, len(res.Sessions))
	for _, r := range res.Sessions {
		out = append(out, HermesSession{AgentSessionInfo: r, TalariaSessionID: bound[r.AgentSessionID]})
	}
	return out, nil
}

func canonicalHermes(id string) string {
	if id == "" {
		return protocol.RuntimeHermes
	}
	return id
}

// HermesSession is one row of the "Hermes sessions" list.
type HermesSession struct {
	protocol.AgentSessionInfo
	// TalariaSessionID is the chat already bound to it ("" when none).
	TalariaSessionID string `json:"talaria_session_id"`
}

// HermesHistory reads one Hermes session's transcript, read-only.
func (area *AgentsArea) HermesHistory(ctx context.Context, runtimeID, agentSessionID string) (protocol.AgentHistoryResult, error) {
	s := area.s
	var res protocol.AgentHistoryResult
	if strings.TrimSpace(agentSessionID) == "" {
		return res, fmt.Errorf("no Hermes session given: %w", store.ErrInvalid)
	}
	err := s.hermesCall(ctx, runtimeID, protocol.MethodAgentHistory, protocol.AgentHistoryParams{AgentSessionID: agentSessionID}, &res)
	return res, err
}

// ContinueHermesSession makes a Talaria chat of a Hermes session ("Continue here"):
// bound to it (the next turn resumes it in Hermes, which keeps the memory of the
// conversation), with its transcript copied for display. A chat already bound to it
// is returned instead of a second one.
func (area *AgentsArea) ContinueHermesSession(ctx context.Context, runtimeID, agentSessionID string) (store.Session, error) {
	s := area.s
	runtimeID = canonicalHermes(runtimeID)
	bound, err := s.Store.SessionsByAgentSession(ctx, runtimeID)
	if err != nil {
		return store.Session{}, err
	}
	if id := bound[agentSessionID]; id != "" {
		return s.Store.GetSession(ctx, id)
	}
	hist, err := s.Agents().HermesHistory(ctx, runtimeID, agentSessionID)
	if err != nil {
		return store.Session{}, err
	}
	title := hist.Title
	if title == "" {
		title = "Hermes session " + agentSessionID
	}
	sess, err := s.Store.CreateSession(ctx, store.NewSession{Runtime: runtimeID, Title: turn.ProvisionalTitle(title)})
	if err != nil {
		return store.Session{}, err
	}
	var rows []store.Message
	for _, m := range hist.Messages {
		switch m.Role {
		case "user", "assistant":
			rows = append(rows, store.Message{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning})
		case "tool":
			// A one-line note: Hermes's display history has no tool call ids to pair.
			rows = append(rows, store.Message{Role: "assistant", Content: "*(" + m.Name + ": " + m.Content + ")*"})
		}
	}
	if len(rows) > 0 {
		if _, err := s.Store.AppendMessages(ctx, sess.ID, sess.Revision, rows); err != nil {
			return store.Session{}, err
		}
	}
	return s.bindContinued(ctx, sess.ID, runtimeID, hist.AgentSessionID)
}

// HermesModels lists the models Hermes runtime id can use (its model.options).
func (area *AgentsArea) HermesModels(ctx context.Context, runtimeID string) (protocol.AgentModelsResult, error) {
	s := area.s
	var res protocol.AgentModelsResult
	err := s.hermesCall(ctx, runtimeID, protocol.MethodAgentModels, struct{}{}, &res)
	if res.Providers == nil {
		res.Providers = []protocol.AgentModelProvider{}
	}
	return res, err
}

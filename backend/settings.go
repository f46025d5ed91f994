package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/sidecar/protocol"
)

// Setting keys in the store's settings table. The API key is never among them: it lives
// in the vault under account "provider:<provider_name>".
const (
	keyProviderName = "provider.name"
	keyBaseURL      = "provider.base_url"
	keyModel        = "model"
	keyWorkspace    = "workspace"
)

// Default provider: a local Ollama, which needs no key.
const (
	DefaultProviderName = "ollama"
	DefaultBaseURL      = "http://127.0.0.1:11434/v1"
)

// Settings is what the Settings dialog shows. The API key itself is never returned.
type Settings struct {
	ProviderName     string `json:"provider_name"`
	BaseURL          string `json:"base_url"`
	Model            string `json:"model"`
	Workspace        string `json:"workspace"`
	HasAPIKey        bool   `json:"has_api_key"`
	KeyringAvailable bool   `json:"keyring_available"`
	KeyringError     string `json:"keyring_error"`
	DataDir          string `json:"data_dir"`
	LogDir           string `json:"log_dir"`
}

// SettingsInput is what SaveSettings accepts. An empty APIKey keeps the stored one;
// ClearAPIKey removes it.
type SettingsInput struct {
	ProviderName string `json:"provider_name"`
	BaseURL      string `json:"base_url"`
	Model        string `json:"model"`
	Workspace    string `json:"workspace"`
	APIKey       string `json:"api_key"`
	ClearAPIKey  bool   `json:"clear_api_key"`
}

// ProviderCheck is the answer of CheckProvider: whether the endpoint answered, what it
// said, what to do, and the models it lists.
type ProviderCheck struct {
	OK      bool     `json:"ok"`
	Message string   `json:"message"`
	Hint    string   `json:"hint"`
	Models  []string `json:"models"`
	// Local are the model servers found answering on this computer when the configured
	// endpoint does not and no model is chosen yet (the first run of a user whose
	// LM Studio or llama.cpp already runs): the first screen offers their models.
	Local []LocalServer `json:"local,omitempty"`
}

// LocalServer is an OpenAI-compatible model server on this computer at its usual
// address: one of the Settings dialog's local presets.
type LocalServer struct {
	ProviderName string   `json:"provider_name"` // the preset's id: "ollama", "lmstudio", "llamacpp"
	Label        string   `json:"label"`         // what the user knows it as: "LM Studio"
	BaseURL      string   `json:"base_url"`      // e.g. http://127.0.0.1:1234/v1
	Models       []string `json:"models"`        // what GET {base_url}/models lists, sorted; set by CheckProvider
}

// DefaultLocalServers are the usual addresses of local model servers (the Settings
// dialog's local presets, frontend/src/lib/presets.ts).
var DefaultLocalServers = []LocalServer{
	{ProviderName: "ollama", Label: "Ollama", BaseURL: DefaultBaseURL},
	{ProviderName: "lmstudio", Label: "LM Studio", BaseURL: "http://127.0.0.1:1234/v1"},
	{ProviderName: "llamacpp", Label: "llama.cpp", BaseURL: "http://127.0.0.1:8080/v1"},
}

func apiKeyAccount(provider string) string { return "provider:" + provider }

func (s *Service) setting(ctx context.Context, key, def string) (string, error) {
	v, ok, err := s.Store.Setting(ctx, key)
	if err != nil {
		return "", err
	}
	if !ok {
		return def, nil
	}
	return v, nil
}

// GetSettings returns the current settings.
func (area *SettingsArea) GetSettings(ctx context.Context) (Settings, error) {
	s := area.s
	var out Settings
	var err error
	if out.ProviderName, err = s.core.Setting(ctx, keyProviderName, DefaultProviderName); err != nil {
		return out, err
	}
	if out.BaseURL, err = s.core.Setting(ctx, keyBaseURL, DefaultBaseURL); err != nil {
		return out, err
	}
	if out.Model, err = s.core.Setting(ctx, keyModel, ""); err != nil {
		return out, err
	}
	if out.Workspace, err = s.core.Setting(ctx, keyWorkspace, s.defaultWorkspace()); err != nil {
		return out, err
	}
	if h, _ := os.UserHomeDir(); out.Workspace == h && overlaps(h, s.Paths.DataDir) {
		// The home folder was the default before workspaces existed; it holds the data
		// folder, so it cannot be one.
		out.Workspace = s.defaultWorkspace()
	}
	_, out.HasAPIKey, _ = s.Vault.Get(apiKeyAccount(out.ProviderName))
	if kerr := s.Vault.Available(); kerr != nil {
		out.KeyringError = kerr.Error()
	} else {
		out.KeyringAvailable = true
	}
	out.DataDir, out.LogDir = s.Paths.DataDir, s.Paths.LogDir
	return out, nil
}

// SaveSettingsError is returned by SaveSettings for invalid input; Field names it.
type SaveSettingsError struct{ Field, Message string }

func (e *SaveSettingsError) Error() string { return e.Message }

// SaveSettings validates and stores in. The API key goes to the system keychain (or,
// when none is usable, is kept for this session, and the returned error is a
// *vault.UnavailableError after everything else was saved).
func (area *SettingsArea) SaveSettings(ctx context.Context, in SettingsInput) (Settings, error) {
	s := area.s
	in.ProviderName = strings.TrimSpace(in.ProviderName)
	if len(in.ProviderName) > 64 || len(in.BaseURL) > 2048 || len(in.Model) > 256 || len(in.Workspace) > 4096 {
		return Settings{}, &SaveSettingsError{Field: "provider_name", Message: "a setting is too long: provider names up to 64 characters, models up to 256, URLs up to 2048"}
	}
	in.BaseURL = strings.TrimRight(strings.TrimSpace(in.BaseURL), "/")
	in.Model = strings.TrimSpace(in.Model)
	if in.ProviderName == "" {
		in.ProviderName = "custom"
	}
	if u, err := url.Parse(in.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Settings{}, &SaveSettingsError{Field: "base_url",
			Message: fmt.Sprintf("%q is not an http(s) URL: enter the endpoint's base URL, e.g. %s", in.BaseURL, DefaultBaseURL)}
	}
	if in.Workspace != "" {
		p, err := s.Chats().CheckWorkspace(in.Workspace)
		if err != nil {
			return Settings{}, &SaveSettingsError{Field: "workspace", Message: err.Error()}
		}
		in.Workspace = p
	}
	for k, v := range map[string]string{keyProviderName: in.ProviderName, keyBaseURL: in.BaseURL, keyModel: in.Model} {
		if err := s.Store.SetSetting(ctx, k, v); err != nil {
			return Settings{}, err
		}
	}
	if in.Workspace != "" {
		if prev, _ := s.core.Setting(ctx, keyWorkspace, ""); prev != in.Workspace {
			// A new default is where the next chats start.
			if err := s.Store.SetSetting(ctx, keyWorkspaceLast, in.Workspace); err != nil {
				return Settings{}, err
			}
		}
		if err := s.Store.SetSetting(ctx, keyWorkspace, in.Workspace); err != nil {
			return Settings{}, err
		}
	}
	s.meta.forget() // another provider or model publishes other figures
	var keyErr error
	switch {
	case in.ClearAPIKey:
		keyErr = s.Vault.Delete(apiKeyAccount(in.ProviderName))
	case in.APIKey != "":
		keyErr = s.Vault.Set(apiKeyAccount(in.ProviderName), strings.TrimSpace(in.APIKey), true)
	}
	out, err := s.Settings().GetSettings(ctx)
	if err != nil {
		return out, err
	}
	var unavailable *vault.UnavailableError
	if errors.As(keyErr, &unavailable) {
		// No keychain: the key is kept for this session (Vault.Set), which is what the
		// settings say (keyring_available false, keyring_error): the save worked. As an
		// error, the dialog stayed open with a red message, as if nothing was saved.
		keyErr = nil
	}
	return out, keyErr
}

// turnConfig resolves a turn's Config from the settings, the chat's runtime and its
// options. The built-in runtime needs a model and an endpoint (*turn.NotConfiguredError
// without them); the other runtimes bring their own (the chat's model, when set, is
// passed on). Errors: *core.RuntimeUnavailableError when the chat's runtime cannot run.
func (s *Service) turnConfig(ctx context.Context, sess store.Session) (turn.Config, error) {
	rtID := core.CanonicalRuntime(sess.Runtime)
	sup, spec, err := s.core.SupervisorFor(ctx, rtID)
	if err != nil {
		return turn.Config{}, err
	}
	st, err := s.Settings().GetSettings(ctx)
	if err != nil {
		return turn.Config{}, err
	}
	var ws string
	if w, ok := spec.Transport.(core.Workspacer); ok {
		// A runtime on another machine works in a folder there (docs/remote.md).
		ws, err = w.Workspace(ctx)
	} else {
		ws, err = s.sessionWorkspace(ctx, sess, st.Workspace)
	}
	if err != nil {
		return turn.Config{}, err
	}
	yolo, allow, err := s.approvalState(ctx, sess.ID)
	if err != nil {
		return turn.Config{}, err
	}
	sb, err := s.sandboxPolicy(ctx, sess.ID)
	if err != nil {
		return turn.Config{}, err
	}
	opts := chatOptions(sess)
	cfg := turn.Config{Model: sess.Model, Workspace: ws, Yolo: yolo, Allowlist: allow, Sandbox: sb, Redaction: s.redaction(),
		ApprovalTimeoutS: int(s.opts.ApprovalTimeout.Seconds()), ClarifyTimeoutS: int(s.opts.ClarifyTimeout.Seconds()),
		SystemMessage: opts.SystemPrompt, EnabledToolsets: opts.Tools,
		Runtime: rtID, Caller: sup, AgentSessionID: sess.AgentSessionID,
		MCPServers: s.mcpServersFor(ctx, sess)}
	if st, ok := spec.Transport.(core.Stager); ok {
		cfg.StageFile = func(path, sum string) (string, error) {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			defer cancel()
			return st.Stage(sctx, path, sum)
		}
	}
	feats := core.Features(spec.Kind, sup)
	cfg.Images = feats.Images
	if feats.ReasoningEffort {
		cfg.ReasoningEffort = opts.ReasoningEffort
	}
	if feats.MaxOutputTokens {
		cfg.MaxOutputTokens = opts.MaxOutputTokens
	}
	if spec.Kind != protocol.RuntimeBuiltin {
		cfg.OwnModel = true
		if spec.Kind == protocol.RuntimeHermes && cfg.Model == "" {
			// The model Settings chose for Hermes chats ("" = the profile's default).
			if cfg.Model, err = s.core.Setting(ctx, keyHermesModel, ""); err != nil {
				return turn.Config{}, err
			}
		}
		if sess.TitleManual {
			cfg.Title = sess.Title
		}
		return cfg, nil
	}
	if cfg.Model == "" {
		cfg.Model = st.Model
	}
	if cfg.Model == "" {
		return turn.Config{}, &turn.NotConfiguredError{What: "model"}
	}
	key, _, err := s.Vault.Get(apiKeyAccount(st.ProviderName))
	if err != nil {
		return turn.Config{}, err
	}
	cfg.Provider = protocol.Provider{Name: st.ProviderName, BaseURL: st.BaseURL, APIKey: key}
	if info, err := s.Settings().ModelInfo(ctx, cfg.Model); err == nil {
		cfg.ContextLength = info.ContextLength
		switch info.Vision {
		case "yes":
			cfg.Vision = turn.VisionYes
		case "no":
			cfg.Vision = turn.VisionNo
		}
		cfg.Price = info.Settings.Price
	}
	cfg.CompactAt = s.compactAt(ctx)
	cfg.StreamIdleTimeoutS = s.streamIdleTimeout(ctx)
	return cfg, nil
}

// CheckProvider asks the configured endpoint for its models (GET {base_url}/models,
// 5 s timeout) and says whether a model answers and what to do when none does.
func (area *SettingsArea) CheckProvider(ctx context.Context) (ProviderCheck, error) {
	s := area.s
	st, err := s.Settings().GetSettings(ctx)
	if err != nil {
		return ProviderCheck{}, err
	}
	key, _, _ := s.Vault.Get(apiKeyAccount(st.ProviderName))
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.BaseURL+"/models", nil)
	if err != nil {
		return ProviderCheck{Message: err.Error(), Hint: "Fix the base URL in Settings."}, nil
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := secretClient.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			out := ProviderCheck{Message: "Nothing answers at " + st.BaseURL + ".",
				Hint: "Start a local model server (Ollama: `ollama serve`; llama.cpp: `llama-server -m model.gguf --port 8080`; LM Studio: start its server), or choose a hosted provider and paste its API key."}
			if st.Model == "" {
				out.Local = s.findLocalServers(ctx, st.BaseURL)
			}
			return out, nil
		}
		return ProviderCheck{Message: "Could not reach " + st.BaseURL + ": " + err.Error(),
			Hint: "Check the base URL and your network connection."}, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == 401 || resp.StatusCode == 403:
		return ProviderCheck{Message: fmt.Sprintf("%s refused the API key (HTTP %d).", st.BaseURL, resp.StatusCode),
			Hint: "Paste a valid API key for this provider in Settings."}, nil
	case resp.StatusCode >= 300:
		return ProviderCheck{Message: fmt.Sprintf("%s answered HTTP %d.", st.BaseURL, resp.StatusCode),
			Hint: "Check that the base URL ends where /chat/completions begins (usually …/v1)."}, nil
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return ProviderCheck{Message: st.BaseURL + " answered, but not with an OpenAI-style model list.",
			Hint: "Check that the base URL points at an OpenAI-compatible API (usually ending in /v1)."}, nil
	}
	out := ProviderCheck{OK: true, Models: []string{}}
	for _, m := range list.Data {
		out.Models = append(out.Models, m.ID)
	}
	sort.Strings(out.Models)
	switch {
	case len(out.Models) == 0:
		out.OK = false
		out.Message = st.BaseURL + " answers but serves no models."
		out.Hint = "Download a model first (Ollama: `ollama pull llama3.2`)."
	case st.Model == "":
		out.OK = false
		out.Message = fmt.Sprintf("%s serves %d models; none is chosen.", st.BaseURL, len(out.Models))
		out.Hint = "Pick a model in Settings."
	default:
		noun := "models"
		if len(out.Models) == 1 {
			noun = "model"
		}
		out.Message = fmt.Sprintf("Connected to %s (%d %s).", st.BaseURL, len(out.Models), noun)
	}
	return out, nil
}

// findLocalServers asks the local servers (Options.LocalServers) other than the one at
// skip for their models, all at once, and returns those that list at least one, in
// their order. A server that does not answer within 2 s, or not with an OpenAI-style
// model list, is left out.
func (s *Service) findLocalServers(ctx context.Context, skip string) []LocalServer {
	cands := s.opts.LocalServers
	if cands == nil {
		cands = DefaultLocalServers
	}
	found := make([]*LocalServer, len(cands))
	var wg sync.WaitGroup
	for i, c := range cands {
		if strings.TrimRight(c.BaseURL, "/") == strings.TrimRight(skip, "/") {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if models := listModels(ctx, c.BaseURL, 2*time.Second); len(models) > 0 {
				c.Models = models
				found[i] = &c
			}
		}()
	}
	wg.Wait()
	var out []LocalServer
	for _, f := range found {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// listModels is GET {baseURL}/models without a key: the sorted model ids, or nil when
// the server does not answer with an OpenAI-style list within timeout.
func listModels(ctx context.Context, baseURL string, timeout time.Duration) []string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/models", nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return nil
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"talaria/backend/turn"
)

// Model metadata for the context meter, compaction, the image check and cost: what
// the provider publishes about a model (its context window, whether it takes images or
// reasons), and what the user set per model (a context window when the provider says
// nothing, a price). Read from:
//
//   - Ollama: POST /api/ps (the running model's context_length) and /api/show (the
//     num_ctx parameter, the model's <arch>.context_length, capabilities vision and
//     thinking) — https://github.com/ollama/ollama/blob/main/docs/api.md
//   - llama.cpp's llama-server: GET /props (default_generation_settings.n_ctx,
//     modalities.vision) — tools/server/README.md of ggml-org/llama.cpp
//   - LM Studio: GET /api/v0/models/{model} (loaded_context_length, max_context_length,
//     type "vlm")
//   - OpenRouter: GET {base_url}/models (context_length, architecture.input_modalities,
//     supported_parameters) — https://openrouter.ai/docs/api-reference/list-available-models
//   - any other OpenAI-compatible server: its GET {base_url}/models entry when it has
//     context_length, max_model_len (vLLM) or context_window
//
// Figures are cached for 10 minutes (a failed look-up for 1 minute); a look-up is
// bounded by 3 seconds.

// Setting keys of the model metadata.
const (
	keyModelSettings = "models"             // JSON: {"<provider>/<model>": ModelSettings}
	keyCompactAt     = "context.compact_at" // percent of the context window, 50..95; "off" disables
	keyDefaultPrompt = "chat.system_prompt" // the custom instructions new chats start with
)

// DefaultCompactAt is the share of the context window past which older turns are
// summarised: 80 %.
const DefaultCompactAt = 80

// ModelSettings are what the user set for one model of one provider.
type ModelSettings struct {
	// ContextLength is the model's context window in tokens, used when the provider
	// publishes none (and over the provider's figure when set); 0: not set.
	ContextLength int64 `json:"context_length,omitempty"`
	// Price is the model's price in US dollars per million tokens; nil: none (a turn
	// is costed only when the provider reports its cost).
	Price *turn.Price `json:"price,omitempty"`
}

// ModelInfo is what is known of a model: the provider's figures and the user's.
type ModelInfo struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// ContextLength is the context window used (tokens; 0: unknown) and ContextSource
	// where it came from: "provider", "setting" or "" (unknown). ProviderContext is the
	// provider's own figure even when a setting overrides it; ContextNote says more
	// (e.g. that Ollama may run the model with less than its maximum).
	ContextLength   int64  `json:"context_length"`
	ContextSource   string `json:"context_source"`
	ProviderContext int64  `json:"provider_context"`
	ContextNote     string `json:"context_note"`
	// Vision and Reasoning are "yes", "no" or "" (the provider does not say): whether
	// the model takes images, and whether it reasons (reasoning effort applies).
	Vision    string `json:"vision"`
	Reasoning string `json:"reasoning"`
	// Settings are the user's for this model.
	Settings ModelSettings `json:"settings"`
	// Error is why the provider could not be asked ("" when it answered or has no
	// metadata to ask for).
	Error string `json:"error"`
}

// providerMeta is what one provider look-up found.
type providerMeta struct {
	context   int64
	note      string
	vision    string
	reasoning string
	err       string
}

type metaEntry struct {
	meta providerMeta
	at   time.Time
}

// modelMetaCache caches look-ups by provider, base URL and model.
type modelMetaCache struct {
	mu      sync.Mutex
	entries map[string]metaEntry
	lists   map[string]listEntry // OpenAI-style /models lists by base URL
}

type listEntry struct {
	body []byte
	at   time.Time
}

var metaClient = &http.Client{Timeout: 3 * time.Second}

func modelKey(provider, model string) string { return provider + "/" + model }

// modelSettings reads every model's settings.
func (s *Service) modelSettings(ctx context.Context) (map[string]ModelSettings, error) {
	raw, err := s.core.Setting(ctx, keyModelSettings, "")
	out := map[string]ModelSettings{}
	if err != nil || raw == "" {
		return out, err
	}
	_ = json.Unmarshal([]byte(raw), &out) // a damaged value reads as no settings
	return out, nil
}

// SetModelSettings stores what the user set for model of the current provider (a
// zero ModelSettings removes it). Errors: *SaveSettingsError for a negative or absurd
// figure.
func (area *SettingsArea) SetModelSettings(ctx context.Context, model string, ms ModelSettings) (ModelInfo, error) {
	s := area.s
	model = strings.TrimSpace(model)
	if model == "" || len(model) > 256 {
		return ModelInfo{}, &SaveSettingsError{Field: "model", Message: "choose a model first"}
	}
	if ms.ContextLength < 0 || ms.ContextLength > 100_000_000 {
		return ModelInfo{}, &SaveSettingsError{Field: "context_length", Message: "the context window is a number of tokens, e.g. 8192"}
	}
	if p := ms.Price; p != nil {
		if p.Input < 0 || p.Output < 0 || p.CachedInput < 0 || p.Input > 10000 || p.Output > 10000 || p.CachedInput > 10000 {
			return ModelInfo{}, &SaveSettingsError{Field: "price", Message: "a price is US dollars per million tokens, 0 or more"}
		}
	}
	st, err := s.Settings().GetSettings(ctx)
	if err != nil {
		return ModelInfo{}, err
	}
	all, err := s.modelSettings(ctx)
	if err != nil {
		return ModelInfo{}, err
	}
	key := modelKey(st.ProviderName, model)
	if ms.ContextLength == 0 && ms.Price == nil {
		delete(all, key)
	} else {
		all[key] = ms
	}
	b, _ := json.Marshal(all)
	if err := s.Store.SetSetting(ctx, keyModelSettings, string(b)); err != nil {
		return ModelInfo{}, err
	}
	return s.Settings().ModelInfo(ctx, model)
}

// ModelInfo returns what is known of model on the current provider ("" is the model of
// Settings): the provider's published figures (cached) and the user's settings.
func (area *SettingsArea) ModelInfo(ctx context.Context, model string) (ModelInfo, error) {
	s := area.s
	st, err := s.Settings().GetSettings(ctx)
	if err != nil {
		return ModelInfo{}, err
	}
	if model == "" {
		model = st.Model
	}
	out := ModelInfo{Provider: st.ProviderName, Model: model}
	if model == "" {
		return out, nil
	}
	all, err := s.modelSettings(ctx)
	if err != nil {
		return out, err
	}
	out.Settings = all[modelKey(st.ProviderName, model)]
	key, _, _ := s.Vault.Get(apiKeyAccount(st.ProviderName))
	meta := s.meta.lookup(ctx, st.ProviderName, st.BaseURL, key, model)
	out.ProviderContext, out.ContextNote, out.Vision, out.Reasoning, out.Error = meta.context, meta.note, meta.vision, meta.reasoning, meta.err
	switch {
	case out.Settings.ContextLength > 0:
		out.ContextLength, out.ContextSource = out.Settings.ContextLength, "setting"
	case meta.context > 0:
		out.ContextLength, out.ContextSource = meta.context, "provider"
	}
	return out, nil
}

// lookup asks the provider about model, through the cache.
func (c *modelMetaCache) lookup(ctx context.Context, provider, baseURL, apiKey, model string) providerMeta {
	key := provider + "\x00" + baseURL + "\x00" + model
	c.mu.Lock()
	if c.entries == nil {
		c.entries, c.lists = map[string]metaEntry{}, map[string]listEntry{}
	}
	e, ok := c.entries[key]
	c.mu.Unlock()
	ttl := 10 * time.Minute
	if e.meta.err != "" {
		ttl = time.Minute
	}
	if ok && time.Since(e.at) < ttl {
		return e.meta
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var m providerMeta
	switch strings.ToLower(provider) {
	case "ollama":
		m = ollamaMeta(ctx, baseURL, model)
	case "llamacpp":
		m = llamacppMeta(ctx, baseURL, apiKey)
	case "lmstudio":
		m = lmstudioMeta(ctx, baseURL, model)
	default:
		m = c.listMeta(ctx, baseURL, apiKey, model)
	}
	c.mu.Lock()
	c.entries[key] = metaEntry{meta: m, at: time.Now()}
	c.mu.Unlock()
	return m
}

// forget drops every cached figure (Settings changed the provider).
func (c *modelMetaCache) forget() {
	c.mu.Lock()
	c.entries, c.lists = map[string]metaEntry{}, map[string]listEntry{}
	c.mu.Unlock()
}

// serverRoot is the base URL without a trailing /v1 (where Ollama's, llama.cpp's and
// LM Studio's own APIs live).
func serverRoot(baseURL string) string {
	u := strings.TrimRight(baseURL, "/")
	return strings.TrimSuffix(u, "/v1")
}

func getJSON(ctx context.Context, method, u, apiKey string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := metaClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s answered HTTP %d", redactURL(u), resp.StatusCode)
	}
	return json.Unmarshal(data, out)
}

func redactURL(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// ollamaMeta reads /api/ps (the context the model runs with, when loaded) and
// /api/show (num_ctx, the model's maximum, capabilities).
func ollamaMeta(ctx context.Context, baseURL, model string) providerMeta {
	root := serverRoot(baseURL)
	var m providerMeta
	var show struct {
		ModelInfo    map[string]any `json:"model_info"`
		Parameters   string         `json:"parameters"`
		Capabilities []string       `json:"capabilities"`
	}
	if err := getJSON(ctx, http.MethodPost, root+"/api/show", "", map[string]string{"model": model}, &show); err != nil {
		m.err = err.Error()
		return m
	}
	if show.Capabilities != nil {
		m.vision = yesNo(slices.Contains(show.Capabilities, "vision"))
		m.reasoning = yesNo(slices.Contains(show.Capabilities, "thinking"))
	}
	var maxCtx int64
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if f, ok := v.(float64); ok {
				maxCtx = int64(f)
			}
		}
	}
	var numCtx int64
	for _, line := range strings.Split(show.Parameters, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			numCtx, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int64  `json:"context_length"`
		} `json:"models"`
	}
	var running int64
	if getJSON(ctx, http.MethodGet, root+"/api/ps", "", nil, &ps) == nil {
		for _, pm := range ps.Models {
			if (pm.Name == model || pm.Model == model || pm.Name == model+":latest") && pm.ContextLength > 0 {
				running = pm.ContextLength
			}
		}
	}
	switch {
	case running > 0:
		m.context = running
	case numCtx > 0:
		m.context = numCtx
	case maxCtx > 0:
		m.context = maxCtx
		m.note = "the model's maximum; Ollama may run it with a smaller window (OLLAMA_CONTEXT_LENGTH, or num_ctx in its Modelfile): set the window here if you know it"
	}
	return m
}

// llamacppMeta reads llama-server's /props.
func llamacppMeta(ctx context.Context, baseURL, apiKey string) providerMeta {
	var m providerMeta
	var props struct {
		NCtx     int64 `json:"n_ctx"`
		Defaults struct {
			NCtx int64 `json:"n_ctx"`
		} `json:"default_generation_settings"`
		Modalities *struct {
			Vision bool `json:"vision"`
		} `json:"modalities"`
	}
	if err := getJSON(ctx, http.MethodGet, serverRoot(baseURL)+"/props", apiKey, nil, &props); err != nil {
		m.err = err.Error()
		return m
	}
	m.context = props.Defaults.NCtx
	if m.context == 0 {
		m.context = props.NCtx
	}
	if props.Modalities != nil {
		m.vision = yesNo(props.Modalities.Vision)
	}
	return m
}

// lmstudioMeta reads LM Studio's /api/v0/models/{model}.
func lmstudioMeta(ctx context.Context, baseURL, model string) providerMeta {
	var m providerMeta
	var info struct {
		Type                string `json:"type"`
		MaxContextLength    int64  `json:"max_context_length"`
		LoadedContextLength int64  `json:"loaded_context_length"`
	}
	if err := getJSON(ctx, http.MethodGet, serverRoot(baseURL)+"/api/v0/models/"+url.PathEscape(model), "", nil, &info); err != nil {
		m.err = err.Error()
		return m
	}
	m.context = info.LoadedContextLength
	if m.context == 0 {
		m.context = info.MaxContextLength
	}
	if info.Type != "" {
		m.vision = yesNo(info.Type == "vlm")
	}
	return m
}

// listMeta reads the model's entry of GET {base_url}/models (cached per base URL for
// an hour: OpenRouter's list is large).
func (c *modelMetaCache) listMeta(ctx context.Context, baseURL, apiKey, model string) providerMeta {
	var m providerMeta
	c.mu.Lock()
	le, ok := c.lists[baseURL]
	c.mu.Unlock()
	if !ok || time.Since(le.at) > time.Hour {
		var raw json.RawMessage
		if err := getJSON(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/models", apiKey, nil, &raw); err != nil {
			m.err = err.Error()
			return m
		}
		le = listEntry{body: raw, at: time.Now()}
		c.mu.Lock()
		c.lists[baseURL] = le
		c.mu.Unlock()
	}
	var list struct {
		Data []struct {
			ID                  string   `json:"id"`
			ContextLength       int64    `json:"context_length"`
			MaxModelLen         int64    `json:"max_model_len"`
			ContextWindow       int64    `json:"context_window"`
			SupportedParameters []string `json:"supported_parameters"`
			Architecture        *struct {
				InputModalities []string `json:"input_modalities"`
			} `json:"architecture"`
			TopProvider *struct {
				ContextLength int64 `json:"context_length"`
			} `json:"top_provider"`
		} `json:"data"`
	}
	if err := json.Unmarshal(le.body, &list); err != nil {
		m.err = "the model list is not OpenAI-style"
		return m
	}
	for _, d := range list.Data {
		if d.ID != model {
			continue
		}
		for _, n := range []int64{d.ContextLength, d.MaxModelLen, d.ContextWindow} {
			if n > 0 {
				m.context = n
				break
			}
		}
		if m.context == 0 && d.TopProvider != nil {
			m.context = d.TopProvider.ContextLength
		}
		if d.Architecture != nil && d.Architecture.InputModalities != nil {
			m.vision = yesNo(slices.Contains(d.Architecture.InputModalities, "image"))
		}
		if d.SupportedParameters != nil {
			m.reasoning = yesNo(slices.Contains(d.SupportedParameters, "reasoning") || slices.Contains(d.SupportedParameters, "reasoning_effort"))
		}
	}
	return m
}

// compactAt is the setting context.compact_at as a fraction (0: compaction off).
func (s *Service) compactAt(ctx context.Context) float64 {
	v, _ := s.core.Setting(ctx, keyCompactAt, "")
	if v == "off" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 50 || n > 95 {
		n = DefaultCompactAt
	}
	return float64(n) / 100
}

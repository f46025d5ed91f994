// Package acptest sets up real ACP agents for tests: the agents `make setup` installs
// under the repository's .cache/ (OpenCode from npm), each in a home folder of its own
// and pointed at a scripted OpenAI-compatible provider (sidecar/providertest) on
// 127.0.0.1, with its update checks, model-list fetches, plugin installs and
// telemetry turned off. It does not import "testing".
package acptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// OpenCodeVersion is the OpenCode release `make setup` installs (npm opencode-ai).
const OpenCodeVersion = "1.18.33"

// RepoRoot finds the repository root (the folder with go.mod) from the working
// directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("acptest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// OpenCodeBinary is the path of OpenCode's native binary in .cache/. Errors say to run
// make setup when it is not installed.
func OpenCodeBinary() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	bin := filepath.Join(root, ".cache", "opencode-"+OpenCodeVersion, "node_modules", "opencode-"+runtime.GOOS+"-"+arch, "bin", "opencode")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("OpenCode %s is not installed at %s: run `make setup` (scripts/setup.sh installs it)", OpenCodeVersion, bin)
	}
	return bin, nil
}

// OpenCode is a real OpenCode set up for a test.
type OpenCode struct {
	// Binary is the opencode executable; run it as `Binary acp`.
	Binary string
	// Env is the environment it needs (add it to the agent's): its own HOME and XDG
	// folders under Home, the configuration, and the switches that keep it off the
	// network.
	Env []string
	// Home is its home folder (its database and logs live under it).
	Home string
}

// Args are OpenCode's ACP arguments.
func (o *OpenCode) Args() []string { return []string{"acp"} }

// OpenCodeOptions configure NewOpenCode.
type OpenCodeOptions struct {
	// BaseURL is the scripted provider of model talaria/scripted-model (required).
	BaseURL string
	// AuxBaseURL is the provider of its small model (titles, summaries), so those
	// requests do not take the test's scripted turns (required).
	AuxBaseURL string
	// Permission sets OpenCode's permission rules (e.g. {"edit": "ask", "bash":
	// "ask"}); nil keeps its defaults.
	Permission map[string]string
	// APIKeyEnv, when set, names the variable OpenCode reads the provider's API key
	// from ("{env:NAME}"); else the key is "no-key-required".
	APIKeyEnv string
}

// NewOpenCode sets OpenCode up in home (created) as o says. See NewOpenCodeWith.
func NewOpenCode(home, baseURL, auxBaseURL string, permission map[string]string) (*OpenCode, error) {
	return NewOpenCodeWith(home, OpenCodeOptions{BaseURL: baseURL, AuxBaseURL: auxBaseURL, Permission: permission})
}

// NewOpenCodeWith sets OpenCode up in home (created): its own HOME and XDG folders,
// the configuration in OPENCODE_CONFIG_CONTENT, and OpenCodeOffline.
func NewOpenCodeWith(home string, o OpenCodeOptions) (*OpenCode, error) {
	baseURL, auxBaseURL, permission := o.BaseURL, o.AuxBaseURL, o.Permission
	bin, err := OpenCodeBinary()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	key := "no-key-required"
	if o.APIKeyEnv != "" {
		key = "{env:" + o.APIKeyEnv + "}"
	}
	provider := func(name, url string) map[string]any {
		return map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": name,
			"options": map[string]any{"baseURL": url, "apiKey": key},
			"models": map[string]any{"scripted-model": map[string]any{"name": name + " model",
				"limit":      map[string]any{"context": 131072, "output": 8192},
				"attachment": true, "modalities": map[string]any{"input": []string{"text", "image"}, "output": []string{"text"}}}},
		}
	}
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
		"model": "talaria/scripted-model", "small_model": "aux/scripted-model",
		"enabled_providers": []string{"talaria", "aux"},
		"provider":          map[string]any{"talaria": provider("Scripted", baseURL), "aux": provider("Aux", auxBaseURL)},
	}
	if permission != nil {
		cfg["permission"] = permission
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"OPENCODE_CONFIG_CONTENT=" + string(b),
	}
	return &OpenCode{Binary: bin, Env: append(env, OpenCodeOffline...), Home: home}, nil
}

// OpenCodeOffline are the environment switches that keep OpenCode off the network
// (checked with strace on 1.18.33: with them it connects to 127.0.0.1 only): no
// update check, no models.dev fetch, no LSP downloads, no default or external plugins
// or skills, no Claude Code imports, and npm (which it runs to install its plugin
// package into the config folder) offline against an unreachable registry.
var OpenCodeOffline = []string{
	"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	"OPENCODE_PURE=1", "npm_config_offline=true", "npm_config_registry=http://127.0.0.1:9/",
}

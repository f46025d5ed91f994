package backend_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"talaria/backend"
	"talaria/backend/vault"
	"talaria/sidecar/providertest"
)

// TestFirstRunFindsLocalServers (issue 26, item 8): on the first run, when nothing
// answers at the configured endpoint, CheckProvider asks the usual local addresses and
// reports the servers that list models (an OpenAI-compatible server: the scripted
// provider); one that answers without a model list, or not at all, is left out. Once a
// model is chosen, nothing else is asked.
func TestFirstRunFindsLocalServers(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.SetModels("qwen3:8b", "llama3.2")
	notModels := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	defer notModels.Close()
	nothing := closedAddress(t)

	dir := t.TempDir()
	locals := []backend.LocalServer{
		{ProviderName: "ollama", Label: "Ollama", BaseURL: nothing},
		{ProviderName: "lmstudio", Label: "LM Studio", BaseURL: p.BaseURL()},
		{ProviderName: "llamacpp", Label: "llama.cpp", BaseURL: notModels.URL + "/v1"},
	}
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: filepath.Join(dir, "data"), DefaultWorkspace: filepath.Join(dir, "ws"),
		Version: "test", Keyring: vault.NewMemoryKeyring(), LocalServers: locals})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	ctx := context.Background()
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "ollama", BaseURL: nothing}); err != nil {
		t.Fatal(err)
	}
	c, err := svc.Settings().CheckProvider(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []backend.LocalServer{{ProviderName: "lmstudio", Label: "LM Studio", BaseURL: p.BaseURL(), Models: []string{"llama3.2", "qwen3:8b"}}}
	if c.OK || !strings.HasPrefix(c.Message, "Nothing answers at") || !reflect.DeepEqual(c.Local, want) {
		t.Fatalf("the first run's check: %+v, want the local servers %+v", c, want)
	}

	// With a model chosen, the check says what is wrong with the configured endpoint only.
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "ollama", BaseURL: nothing, Model: "llama3.2"}); err != nil {
		t.Fatal(err)
	}
	if c, _ := svc.Settings().CheckProvider(ctx); c.Local != nil {
		t.Fatalf("with a model chosen the check still looked for servers: %+v", c)
	}
}

// closedAddress is a base URL where nothing listens (a port just released).
func closedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

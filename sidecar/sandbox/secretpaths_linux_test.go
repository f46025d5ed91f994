package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The credential files of the agents Talaria offers (and of their CLIs) are secret
// stores like ~/.ssh: a confined command (the model's, whose output goes back to a
// remote provider) cannot read them, while the rest of those agents' folders stays
// readable.
func TestAgentCredentialStoresAreHidden(t *testing.T) {
	mustAvailable(t)
	home := outsideDir(t)
	ws := outsideDir(t)
	creds := []string{
		".codex/auth.json", ".local/share/opencode/auth.json", ".claude/.credentials.json", ".claude.json",
		".gemini/oauth_creds.json", ".gemini/.env", ".config/goose/secrets.yaml", ".hermes/.env",
		".hermes/profiles/work/.env", ".hermes/profiles/work/auth.json", ".config/github-copilot/apps.json",
		".config/io.datasette.llm/keys.json", ".qwen/oauth_creds.json", ".env",
	}
	var cat []string
	for _, c := range creds {
		p := filepath.Join(home, c)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p, []byte("SECRET-"+c+"\n"), 0o600)
		cat = append(cat, "~/"+c)
	}
	os.WriteFile(filepath.Join(home, ".hermes", "config.yaml"), []byte("visible-config\n"), 0o644)
	t.Setenv("HOME", home)
	out, _ := run(t, Policy{Workspace: ws}, "cat "+strings.Join(cat, " ")+" 2>/dev/null; cat ~/.hermes/config.yaml")
	if strings.Contains(out, "SECRET") {
		t.Fatalf("agent credentials visible to a confined command:\n%s", out)
	}
	if !strings.Contains(out, "visible-config") {
		t.Fatalf("the rest of an agent's folder must stay readable:\n%s", out)
	}
}

package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/vault"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestWorkspaces (issue #10, item 3): a new chat starts in the default workspace (not
// created until a turn needs it: TestDefaultWorkspaceMadeWhenNeeded), then in the one
// chosen last; a folder that contains the data folder, lies
// inside it or leads to it through a link is refused with the reason and changes
// nothing; so are a missing folder, a file and a relative path.
func TestWorkspaces(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "talaria")
	def := filepath.Join(home, "Talaria")
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: data, DefaultWorkspace: def, Version: "test", Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	ctx := context.Background()

	first, err := svc.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Workspace != def {
		t.Fatalf("a new chat works in %q, want %q", first.Workspace, def)
	}
	if _, err := os.Stat(def); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening a chat created the default workspace %s (%v): it is made when a turn needs it", def, err)
	}

	project := filepath.Join(home, "projects", "site")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(home, "file.txt"), []byte("x"), 0o644)
	os.Symlink(home, filepath.Join(project, "homelink"))
	refused := map[string]string{
		home:                               "contains Talaria's data folder",
		filepath.Join(home, ".local"):      "contains Talaria's data folder",
		data:                               "Talaria's data folder",
		filepath.Join(data, "logs"):        "",
		filepath.Join(project, "homelink"): "contains Talaria's data folder",
		filepath.Join(home, "missing"):     "does not exist",
		filepath.Join(home, "file.txt"):    "is not a folder",
		"projects/site":                    "not an absolute folder path",
		"  ":                               "no workspace folder is chosen",
	}
	os.MkdirAll(filepath.Join(data, "logs"), 0o755)
	for path, want := range refused {
		_, err := svc.Chats().SetSessionWorkspace(ctx, first.ID, path)
		var we *backend.WorkspaceError
		if !errors.As(err, &we) || !strings.Contains(we.Message, want) {
			t.Errorf("workspace %q: %v, want a *WorkspaceError saying %q", path, err, want)
		}
		if _, err := svc.Chats().SetDefaultWorkspace(ctx, path); !errors.As(err, &we) {
			t.Errorf("default workspace %q: %v, want a *WorkspaceError", path, err)
		}
	}
	if got, _ := svc.Chats().GetSession(ctx, first.ID); got.Session.Workspace != def {
		t.Fatalf("a refused workspace changed the chat: %q", got.Session.Workspace)
	}

	// A chosen folder becomes the chat's and the next new chat's.
	sess, err := svc.Chats().SetSessionWorkspace(ctx, first.ID, project+"/")
	if err != nil || sess.Workspace != project {
		t.Fatalf("set workspace: %+v %v", sess, err)
	}
	if next, _ := svc.Chats().NewSession(ctx); next.Workspace != project {
		t.Fatalf("the next chat works in %q, want the last chosen %q", next.Workspace, project)
	}
	// Settings' default: applied, and the folder new chats start in.
	other := filepath.Join(home, "other")
	os.MkdirAll(other, 0o755)
	if p, err := svc.Chats().SetDefaultWorkspace(ctx, other); err != nil || p != other {
		t.Fatalf("set default: %q %v", p, err)
	}
	if st, _ := svc.Settings().GetSettings(ctx); st.Workspace != other {
		t.Fatalf("settings' workspace %q, want %q", st.Workspace, other)
	}
	if next, _ := svc.Chats().NewSession(ctx); next.Workspace != other {
		t.Fatalf("a chat after the default changed works in %q, want %q", next.Workspace, other)
	}
}

// TestRelativeDataDir (issue 26, item 8): a relative --data-dir names the folder under
// the working folder at start, and stays that folder for everything that runs later in
// other working folders (the sidecar, the agents): the service holds it absolute.
func TestRelativeDataDir(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: "data", DefaultWorkspace: filepath.Join(cwd, "ws"), Version: "test", Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	want := filepath.Join(cwd, "data")
	if got := svc.Paths.DataDir; got != want {
		t.Fatalf("the data folder is %q, want %q (absolute)", got, want)
	}
	for _, p := range []string{svc.Paths.LogDir, svc.Paths.CacheDir} {
		if !filepath.IsAbs(p) || !strings.HasPrefix(p, want) {
			t.Fatalf("a folder of the data folder is %q, want it absolute under %q", p, want)
		}
	}
	if _, err := os.Stat(filepath.Join(want, "talaria.db")); err != nil {
		t.Fatalf("the database is not in %s: %v", want, err)
	}
}

// TestDefaultWorkspaceMadeWhenNeeded (issue 26, item 9c): the default workspace
// (~/Talaria) is not created by starting the app, reading Settings or opening a chat;
// the first turn, which works there, creates it.
func TestDefaultWorkspaceMadeWhenNeeded(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	st, err := h.Svc.Settings().GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def := st.Workspace
	sid := h.NewSession()
	if got, _ := h.Svc.Chats().GetSession(ctx, sid); got.Session.Workspace != def {
		t.Fatalf("a new chat works in %q, want the default %q", got.Session.Workspace, def)
	}
	if _, err := os.Stat(def); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the default workspace %s exists before any turn (%v)", def, err)
	}
	h.Provider.Enqueue(providertest.TextTurn("done"))
	stream := h.Start(sid, "hello")
	h.CheckFrames(stream, h.WaitEnd(stream), protocol.EvDone)
	if fi, err := os.Stat(def); err != nil || !fi.IsDir() {
		t.Fatalf("the turn did not create the default workspace %s: %v", def, err)
	}
}

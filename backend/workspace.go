package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"talaria/backend/store"
)

// Workspaces: each chat works in one folder (sessions.workspace), chosen when the chat
// starts (the last one used, else Settings' default, else a per-user "Talaria" folder)
// and changeable from the chat header. A folder that contains the app's data folder,
// or lies inside it, is refused: the agent could otherwise rewrite the app's own
// settings (turn approvals off, point the provider elsewhere).

// keyWorkspaceLast is the settings key of the workspace chosen last for a chat.
const keyWorkspaceLast = "workspace.last"

// DefaultWorkspaceName is the folder under the home folder new chats work in by default.
const DefaultWorkspaceName = "Talaria"

// WorkspaceError says why a folder cannot be a workspace and what to do.
type WorkspaceError struct{ Path, Message string }

func (e *WorkspaceError) Error() string { return e.Message }

// defaultWorkspace is the folder chats work in when nothing else is chosen:
// Options.DefaultWorkspace, else ~/Talaria.
func (s *Service) defaultWorkspace() string {
	if s.opts.DefaultWorkspace != "" {
		return s.opts.DefaultWorkspace
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, DefaultWorkspaceName)
	}
	return filepath.Join(filepath.Dir(s.Paths.DataDir), DefaultWorkspaceName)
}

// CheckWorkspace returns the clean absolute form of path if it can be a workspace: an
// existing folder that neither contains the data folder nor lies inside it. The default
// folder (~/Talaria) passes before it exists: it is created only when a workspace is
// needed (useWorkspace: a turn, an agent session, an MCP server), never merely because
// a chat was opened or Settings read (issue 26, item 9c). Errors: *WorkspaceError with
// what to do.
func (area *ChatsArea) CheckWorkspace(path string) (string, error) {
	s := area.s
	p := strings.TrimSpace(path)
	if p == "" {
		return "", &WorkspaceError{Message: "no workspace folder is chosen: pick one in the chat header or in Settings"}
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		return "", &WorkspaceError{Path: path, Message: fmt.Sprintf("%q is not an absolute folder path: choose a folder", path)}
	}
	p = filepath.Clean(p)
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist) && p == s.defaultWorkspace():
		// Made when needed (useWorkspace).
	case errors.Is(err, os.ErrNotExist):
		return "", &WorkspaceError{Path: p, Message: fmt.Sprintf("the folder %s does not exist: create it or choose another one", p)}
	case err != nil:
		return "", &WorkspaceError{Path: p, Message: fmt.Sprintf("the folder %s cannot be used (%v): choose another one", p, err)}
	case !st.IsDir():
		return "", &WorkspaceError{Path: p, Message: fmt.Sprintf("%s is not a folder: choose a folder", p)}
	}
	if overlaps(p, s.Paths.DataDir) {
		inside := "contains"
		if within(real(p), real(s.Paths.DataDir)) {
			inside = "lies inside"
		}
		return "", &WorkspaceError{Path: p, Message: fmt.Sprintf(
			"%s %s Talaria's data folder (%s): the agent could change the app's own settings from there. Choose a folder of its own, such as %s",
			p, inside, s.Paths.DataDir, s.defaultWorkspace())}
	}
	return p, nil
}

// useWorkspace is CheckWorkspace for a folder about to be worked in: the default
// folder is created now when it does not exist yet. Errors: *WorkspaceError.
func (s *Service) useWorkspace(path string) (string, error) {
	p, err := s.Chats().CheckWorkspace(path)
	if err != nil {
		return "", err
	}
	if p == s.defaultWorkspace() {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return "", &WorkspaceError{Path: p, Message: fmt.Sprintf("the workspace folder %s cannot be created (%v): choose another one", p, err)}
		}
	}
	return p, nil
}

// real resolves symbolic links where it can.
func real(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or lies inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// overlaps reports whether a and b are the same folder or one contains the other, by
// name and with symbolic links resolved.
func overlaps(a, b string) bool {
	ra, rb := real(a), real(b)
	ca, cb := filepath.Clean(a), filepath.Clean(b)
	return within(ra, rb) || within(rb, ra) || within(ca, cb) || within(cb, ca)
}

// initialWorkspace is the workspace a new chat starts in: the one chosen last, else
// Settings' default (else ~/Talaria), as long as it can be one.
func (s *Service) initialWorkspace(ctx context.Context) string {
	if last, _ := s.core.Setting(ctx, keyWorkspaceLast, ""); last != "" {
		if p, err := s.Chats().CheckWorkspace(last); err == nil {
			return p
		}
	}
	st, err := s.Settings().GetSettings(ctx)
	if err == nil {
		if p, err := s.Chats().CheckWorkspace(st.Workspace); err == nil {
			return p
		}
	}
	if p, err := s.Chats().CheckWorkspace(s.defaultWorkspace()); err == nil {
		return p
	}
	return ""
}

// SetSessionWorkspace sets the folder a chat works in (from its next turn) and makes
// it the one new chats start in. Errors: *WorkspaceError; store.ErrNotFound.
func (area *ChatsArea) SetSessionWorkspace(ctx context.Context, sessionID, path string) (store.Session, error) {
	s := area.s
	p, err := s.Chats().CheckWorkspace(path)
	if err != nil {
		return store.Session{}, err
	}
	if err := s.Store.SetSessionWorkspace(ctx, sessionID, p); err != nil {
		return store.Session{}, err
	}
	if err := s.Store.SetSetting(ctx, keyWorkspaceLast, p); err != nil {
		s.Log.Warn("remembering the last workspace", "err", err)
	}
	s.Log.Info("workspace changed", "session", sessionID)
	s.core.SessionsChanged()
	return s.Store.GetSession(ctx, sessionID)
}

// sessionWorkspace is the folder a turn of sess works in: its own, else Settings'
// default. Errors: *WorkspaceError when it cannot be one (the turn does not start).
func (s *Service) sessionWorkspace(ctx context.Context, sess store.Session, settingsDefault string) (string, error) {
	ws := sess.Workspace
	if ws == "" && sess.ParentID != "" {
		if parent, err := s.Store.GetSession(ctx, sess.ParentID); err == nil {
			ws = parent.Workspace
		}
	}
	if ws == "" {
		ws = settingsDefault
	}
	return s.useWorkspace(ws)
}

// SetDefaultWorkspace sets Settings' default workspace (the folder new chats start in,
// and the one chats without their own use) and returns it cleaned. Errors:
// *WorkspaceError.
func (area *ChatsArea) SetDefaultWorkspace(ctx context.Context, path string) (string, error) {
	s := area.s
	p, err := s.Chats().CheckWorkspace(path)
	if err != nil {
		return "", err
	}
	for _, k := range []string{keyWorkspace, keyWorkspaceLast} {
		if err := s.Store.SetSetting(ctx, k, p); err != nil {
			return "", err
		}
	}
	return p, nil
}

package app

import (
	"strings"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend"
	"talaria/backend/bus"
)

// About is bound to the window: the app itself. About and licenses, start at login,
// diagnostics and activity, the data and logs folders, the window's own lifecycle calls
// (WindowPainted, SetWindowFocused, launch actions) and its dialogs and links.
type About struct{ app *App }

// GetAutostart reports whether Talaria starts at login (into the tray).
func (ab *About) GetAutostart() backend.Autostart { return ab.app.service().About().GetAutostart() }

// SetAutostart turns starting at login (into the tray) on or off; the error says which
// file (or registry value) could not be written.
func (ab *About) SetAutostart(on bool) (backend.Autostart, error) {
	st, err := ab.app.service().About().SetAutostart(on)
	return st, userError(err)
}

// GetAbout returns the version, commit, build date, paths and bundled libraries.
func (ab *About) GetAbout() backend.About { return lists(ab.app.service().About().About()) }

// GetLicenseText returns the licence text of a bundled library.
func (ab *About) GetLicenseText(ecosystem, name string) (string, error) {
	return ab.app.service().About().LicenseText(ecosystem, name)
}

// OpenDataFolder opens the data folder (database, logs, cache) in the file manager.
func (ab *About) OpenDataFolder() error { return openFolder(ab.app.service().Paths.DataDir) }

// OpenSession asks the window to show session id.
func (ab *About) OpenSession(id string) {
	if ab.app.ctx != nil {
		runtime.EventsEmit(ab.app.ctx, EventOpenSession, bus.OpenSessionData{SessionID: id})
	}
}

// OpenURL opens url in the system browser (http, https and mailto only).
func (ab *About) OpenURL(url string) error {
	if !(strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "mailto:")) {
		return invalid("only web and mail links can be opened")
	}
	runtime.BrowserOpenURL(ab.app.bg(), url)
	return nil
}

// TakeLaunchActions returns what launches asked of the window since the last call,
// oldest first (LaunchNewChat), and forgets them, so each is done exactly once.
func (ab *About) TakeLaunchActions() []string {
	ab.app.launchMu.Lock()
	out := ab.app.launchActions
	ab.app.launchActions = nil
	ab.app.launchMu.Unlock()
	if len(out) > 0 {
		ab.app.service().Log.Info("launch actions taken by the window", "actions", out)
	}
	return lists(out)
}

// SetWindowFocused tells the app whether the window has the keyboard focus; the window
// calls it on focus and blur. While it is unfocused or hidden, approvals, questions and
// finished turns raise desktop notifications.
func (ab *About) SetWindowFocused(focused bool) {
	ab.app.life.mu.Lock()
	ab.app.life.unfocused = !focused
	if focused {
		ab.app.life.hidden = false
	}
	ab.app.life.mu.Unlock()
}

// WindowPainted tells the app that the window has painted its first screen (the
// window calls it after the sidebar is shown; 3 s after the page loaded the app does
// it itself): what was held back so the window starts fast starts now, the agent's
// sidecar (backend.Options.HoldSidecar) and the tray icon (tray.Tray.RegisterLater).
// Later calls do nothing.
func (ab *About) WindowPainted() {
	ab.app.life.paintedOnce.Do(func() {
		ab.app.service().WindowShown()
		if ab.app.life.tray != nil {
			ab.app.life.tray.RegisterLater()
		}
	})
}

// SaveFirstScreen keeps what the window shows (page: the inner HTML of its #app, at
// width CSS pixels, showing chat sessionID at its end) as the picture the next start
// paints before the app has run, when sessionID is the chat that start opens first
// (App.saveFirstScreen). Errors: the data folder's, or that the page is too large.
func (ab *About) SaveFirstScreen(sessionID string, width int, page string) error {
	return userError(ab.app.saveFirstScreen(sessionID, width, page))
}

// GetActivity returns what runs and what waits for the user (the `activity` event
// carries the same shape whenever it changes).
func (ab *About) GetActivity() backend.Activity {
	return lists(ab.app.service().About().Activity(ab.app.bg()))
}

// GetDiagnostics returns the agent's and the app's diagnostics: versions, runtime,
// Python, protocol, uptime, restarts, the sidecar's last stderr lines and the paths.
func (ab *About) GetDiagnostics() backend.Diagnostics {
	return lists(ab.app.service().About().Diagnostics(ab.app.bg()))
}

// OpenLogsFolder opens the folder with talaria.log and sidecar.log in the file manager.
func (ab *About) OpenLogsFolder() error { return openFolder(ab.app.service().Paths.LogDir) }

// ChooseFolder asks the user for a folder (starting at start); "" when cancelled.
func (ab *About) ChooseFolder(title, start string) (string, error) {
	if ab.app.ctx == nil {
		return "", errNotReady
	}
	return runtime.OpenDirectoryDialog(ab.app.ctx, runtime.OpenDialogOptions{Title: title, DefaultDirectory: start, CanCreateDirectories: true})
}

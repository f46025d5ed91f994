package app

import "talaria/backend"

// GetAutostart reports whether Talaria starts at login (into the tray).
func (a *App) GetAutostart() backend.Autostart { return a.svc.GetAutostart() }

// SetAutostart turns starting at login (into the tray) on or off; the error says which
// file (or registry value) could not be written.
func (a *App) SetAutostart(on bool) (backend.Autostart, error) {
	st, err := a.svc.SetAutostart(on)
	return st, userError(err)
}

package app

import "talaria/backend"

// GetAutostart reports whether Talaria starts at login (into the tray).
func (a *App) GetAutostart() backend.Autostart { return a.service().GetAutostart() }

// SetAutostart turns starting at login (into the tray) on or off; the error says which
// file (or registry value) could not be written.
func (a *App) SetAutostart(on bool) (backend.Autostart, error) {
	st, err := a.service().SetAutostart(on)
	return st, userError(err)
}

// GetAbout returns the version, commit, build date, paths and bundled libraries.
func (a *App) GetAbout() backend.About { return a.service().About() }

// GetLicenseText returns the licence text of a bundled library.
func (a *App) GetLicenseText(ecosystem, name string) (string, error) {
	return a.service().LicenseText(ecosystem, name)
}

// OpenDataFolder opens the data folder (database, logs, cache) in the file manager.
func (a *App) OpenDataFolder() error { return openFolder(a.service().Paths.DataDir) }

package backend

import (
	"path/filepath"

	"talaria/backend/autostart"
	"talaria/backend/core"
)

// Autostart is the "Start Talaria at login" setting: whether the login entry exists,
// where it lives and what it runs. The entry is the setting (see package autostart).
type Autostart struct {
	autostart.State
	Error string `json:"error"` // why the state could not be read, "" when it could
}

// GetAutostart reports whether Talaria starts at login.
func (area *AboutArea) GetAutostart() Autostart {
	st, err := autostart.Get()
	out := Autostart{State: st}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

// SetAutostart writes (on) or removes (off) the login entry. The entry starts this
// program with --hidden, so the app opens into the tray, and with --data-dir when this
// app runs on another data folder than the per-user default. The error says which file
// could not be written.
func (area *AboutArea) SetAutostart(on bool) (Autostart, error) {
	s := area.s
	var st autostart.State
	var err error
	if on {
		var exe string
		if exe, err = autostart.Executable(); err == nil {
			st, err = autostart.Enable(autostart.Command{Exe: exe, Args: s.autostartArgs()})
		}
	} else {
		st, err = autostart.Disable()
	}
	if err != nil {
		s.Log.Warn("autostart", "on", on, "err", err)
		return s.About().GetAutostart(), err
	}
	s.Log.Info("autostart", "on", on, "where", st.Where)
	return Autostart{State: st}, nil
}

func (s *Service) autostartArgs() []string {
	args := []string{"--hidden"}
	def, err := core.UserDataDir()
	if err != nil || filepath.Clean(def) != filepath.Clean(s.Paths.DataDir) {
		args = append(args, "--data-dir", s.Paths.DataDir)
	}
	return args
}

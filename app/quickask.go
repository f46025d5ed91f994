package app

import (
	"context"
	"errors"
	"sync"

	"talaria/app/hotkey"
	"talaria/backend"
)

// Quick ask: a small always-on-top window to ask one question without the main window
// (docs/decisions.md, "Quick ask"). Wails v2 has one window per process, so the main
// window itself switches into quick-ask mode: its size and place are remembered, it
// becomes small, centred and kept above other windows, and the page shows only the
// question and the streamed answer. "Open in Talaria" (or Esc) puts it back. It opens
// from the tray menu, a global shortcut where the desktop allows one (X11), and
// `talaria --quick-ask` (for a shortcut bound in the desktop's own settings, the way
// on Wayland).

// LaunchQuickAsk asks the window to show quick ask (TakeLaunchActions).
const LaunchQuickAsk = "quick_ask"

// Quick-ask window size (pixels) and the smallest size it allows.
const (
	quickAskWidth  = 600
	quickAskHeight = 440
	quickAskMinW   = 420
	quickAskMinH   = 260
	// The main window's minimum size (main.go's options), restored on leaving.
	mainMinW = 720
	mainMinH = 480
)

// DefaultQuickAskShortcut is the global shortcut quick ask has until the user sets
// another (or turns it off).
const DefaultQuickAskShortcut = "Ctrl+Alt+Space"

type quickAsk struct {
	mu sync.Mutex
	// active: the window is in quick-ask mode; the fields after it are the main
	// window as it was before.
	active           bool
	wasHidden        bool
	maximised        bool
	w, h, x, y       int
	stopShortcut     func()
	shortcut         string
	shortcutErr      string
	shortcutRegister func(hotkey.Shortcut, func()) (func(), error)
}

// QuickAskStatus is what Settings and the quick-ask view show (backend.QuickAskStatus).
type QuickAskStatus = backend.QuickAskStatus

// keyQuickAskShortcut is the setting of quick ask's shortcut ("off": none; unset:
// DefaultQuickAskShortcut).
const keyQuickAskShortcut = "quickask.shortcut"

// startQuickAsk takes the shortcut of the settings once the window runs.
func (a *App) startQuickAsk(ctx context.Context) {
	v, ok, err := a.service().Store.Setting(ctx, keyQuickAskShortcut)
	switch {
	case err != nil:
		a.service().Log.Warn("reading the quick ask shortcut", "err", err)
		return
	case !ok:
		v = DefaultQuickAskShortcut
	case v == "off":
		v = ""
	}
	a.takeShortcut(v)
}

// takeShortcut releases the current global shortcut and takes text ("" none).
func (a *App) takeShortcut(text string) {
	q := &a.quick
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopShortcut != nil {
		q.stopShortcut()
		q.stopShortcut = nil
	}
	q.shortcut, q.shortcutErr = text, ""
	if text == "" {
		return
	}
	s, err := hotkey.Parse(text)
	if err == nil {
		register := q.shortcutRegister
		if register == nil {
			register = hotkey.Register
		}
		q.stopShortcut, err = register(s, a.services().Turns.QuickAsk)
	}
	if err != nil {
		q.shortcutErr = err.Error()
		level := a.service().Log.Warn
		if errors.Is(err, hotkey.ErrWayland) || errors.Is(err, hotkey.ErrUnsupported) {
			level = a.service().Log.Info
		}
		level("the quick ask shortcut is not available", "shortcut", text, "reason", err)
		return
	}
	a.service().Log.Info("quick ask shortcut taken", "shortcut", text)
}

// stopQuickAsk releases the global shortcut (shutdown).
func (a *App) stopQuickAsk() {
	q := &a.quick
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopShortcut != nil {
		q.stopShortcut()
		q.stopShortcut = nil
	}
}

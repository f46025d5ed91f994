//go:build !bindings

package main

import (
	"context"
	"runtime"

	"talaria/app"
	"talaria/app/tray"
	"talaria/backend"
)

// The tray and Wails share GTK's main loop, which must run on the process's main
// thread: keep the main goroutine there from the start (see PLATFORM.md).
func init() { runtime.LockOSThread() }

// registerTray makes Talaria's tray icon. now registers it at once, which must then be
// on the main thread before wails.Run (a window started hidden needs its icon from the
// start); otherwise it appears once the window has painted (app.About.WindowPainted).
// Without a display there is no tray, and closing the window quits. It reports whether
// there is a tray.
func registerTray(a *app.App, now bool) bool {
	t := tray.New(app.TrayActions(a))
	if t == nil {
		return false
	}
	if now {
		t.Register()
	}
	app.AttachTray(a, t)
	return true
}

// openBackend opens the data folder's backend (backend.Open).
func openBackend(ctx context.Context, opts backend.Options) (*backend.Service, error) {
	return backend.Open(ctx, opts)
}

// claimInstance makes this process the only Talaria on dataDir (see app.ClaimInstance).
func claimInstance(dataDir string) (*app.Instance, error) { return app.ClaimInstance(dataDir) }

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

// registerTray puts Talaria's icon in the system tray. It must run on the main thread
// before wails.Run, which then owns GTK's main loop. Without a display there is no tray,
// and closing the window quits. It reports whether the icon was registered.
func registerTray(a *app.App) bool {
	t := tray.Register(app.TrayActions(a))
	if t != nil {
		app.AttachTray(a, t)
	}
	return t != nil
}

// openBackend opens the data folder's backend (backend.Open).
func openBackend(ctx context.Context, opts backend.Options) (*backend.Service, error) {
	return backend.Open(ctx, opts)
}

// claimInstance makes this process the only Talaria on dataDir (see app.ClaimInstance).
func claimInstance(dataDir string) (*app.Instance, error) { return app.ClaimInstance(dataDir) }

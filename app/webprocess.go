package app

import (
	"fmt"
	"runtime"

	"talaria/backend/crashlog"
)

// recordWebProcessEnd files the end of the window's web process (watchWebProcess) as
// a crash report, which the Diagnostics view shows as the newest crash, and logs it.
func (a *App) recordWebProcessEnd(reason string, reloaded bool) {
	svc := a.service()
	if svc == nil {
		return
	}
	after := "The window was loaded again."
	if !reloaded {
		after = "The window may stay blank: quit Talaria (tray menu, Quit) and start it again."
	}
	text := fmt.Sprintf("webview: the window's web process %s\n\n"+
		"The web process that draws Talaria's window (WebKitGTK's WebKitWebProcess) %s; the app went on. %s\n\n"+
		"Talaria %s, %s/%s\n", reason, reason, after, svc.Version, runtime.GOOS, runtime.GOARCH)
	path, err := crashlog.Record(svc.Paths.CrashDir(), text)
	if err != nil {
		svc.Log.Error("the window's web process ended; its crash report was not saved", "reason", reason, "err", err)
		return
	}
	svc.Log.Error("the window's web process ended", "reason", reason, "reloaded", reloaded, "report", path)
}

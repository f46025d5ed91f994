package app

import (
	"io"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// EventLaunchAction tells the window that a launch asked something of it (no payload):
// the window then calls TakeLaunchActions. It also calls it once after its start, so
// an action queued before the window listened is not lost.
const EventLaunchAction = "launch_action"

// Launch actions (TakeLaunchActions).
const (
	// LaunchNewChat opens a new chat, as the sidebar's New chat button does (the
	// desktop entry's "New chat" action, `talaria --new-chat`).
	LaunchNewChat = "new_chat"
)

// ApplyCommandLine applies what the first launch asked: --new-chat queues a new chat
// for the window; --hidden (with hidden true: main starts the window hidden only where
// a tray icon was registered) keeps the window in the tray unless no tray host shows
// up in time (see watchHiddenStart). Call it before wails.Run.
func ApplyCommandLine(a *App, cl CommandLine, hidden bool) {
	if cl.NewChat {
		a.queueLaunchAction(LaunchNewChat)
	}
	if cl.QuickAsk {
		a.quickAskAtStart = true
	}
	if hidden {
		a.life.mu.Lock()
		a.life.hidden = true
		a.life.startedHidden = true
		a.life.mu.Unlock()
	}
}

// activate handles a second launch on this data folder: its arguments are parsed like
// the first launch's; the window is shown unless it asked for --hidden (a second
// autostart), and --new-chat opens a new chat.
func (a *App) activate(args []string) {
	if a.opened() != nil {
		a.focusWindow() // it shows why Talaria cannot start
		return
	}
	cl, _, done := ParseCommandLine(args, BuildInfo{}, io.Discard, io.Discard)
	if done { // --help, --version or a bad option: just show the window
		cl = CommandLine{}
	}
	a.service().Log.Info("second launch on this data folder", "new_chat", cl.NewChat, "hidden", cl.Hidden, "quick_ask", cl.QuickAsk)
	if cl.QuickAsk {
		a.services().Turns.QuickAsk()
		return
	}
	if cl.NewChat {
		a.queueLaunchAction(LaunchNewChat)
	}
	if !cl.Hidden || cl.NewChat {
		a.focusWindow()
	}
}

func (a *App) queueLaunchAction(action string) {
	a.launchMu.Lock()
	a.launchActions = append(a.launchActions, action)
	a.launchMu.Unlock()
	if a.ctx != nil {
		runtime.EventsEmit(a.ctx, EventLaunchAction)
	}
}

// hiddenStartWait is how long a --hidden start waits for a tray host before it shows
// the window: at login the panel may start after Talaria.
var hiddenStartWait = 30 * time.Second

// watchHiddenStart runs once the window is ready, after a --hidden start: while no tray
// host shows Talaria's icon the window could not be reached, so after hiddenStartWait
// without one the window is shown.
func (a *App) watchHiddenStart() {
	deadline := time.Now().Add(hiddenStartWait)
	for {
		if hostAvailable() {
			a.service().Log.Info("started hidden in the tray")
			return
		}
		if time.Now().After(deadline) || a.life.quitting.Load() {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if a.life.quitting.Load() {
		return
	}
	a.service().Log.Warn("started with --hidden but no tray host showed up; showing the window", "waited", hiddenStartWait.String())
	a.focusWindow()
}

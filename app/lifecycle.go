package app

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/esiqveland/notify"
	"github.com/gen2brain/beeep"
	"github.com/godbus/dbus/v5"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/app/tray"
	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// lifecycle is the window's life beside the tray: hidden or shown, focused or not,
// quitting or not, and the desktop notifications that depend on it.
type lifecycle struct {
	tray     *tray.Tray // nil when no tray was registered (bindings build, no display)
	instance *Instance

	mu        sync.Mutex
	hidden    bool
	unfocused bool // as the window reports through SetWindowFocused
	toldTray  bool // the "still running in the tray" notice was shown
	// startedHidden: started with --hidden into the tray (launch.go).
	startedHidden bool
	lastSent      map[string]time.Time

	quitting     atomic.Bool
	shuttingDown atomic.Bool
	dialogOpen   atomic.Bool
	domReady     chan struct{}
	readyOnce    sync.Once
	paintedOnce  sync.Once // WindowPainted
	sigs         chan os.Signal

	stop     []func()
	notifier *desktopNotifier
}

// hostAvailable says whether closing the window may hide it (tray.HostAvailable;
// replaced in tests).
var hostAvailable = tray.HostAvailable

// AttachTray connects a registered tray to a: its icon follows the backend's activity.
// Call it before wails.Run. A nil t means there is no tray: closing the window quits.
func AttachTray(a *App, t *tray.Tray) { a.life.tray = t }

// AttachInstance makes a second launch on the same data folder show a's window.
func AttachInstance(a *App, in *Instance) {
	a.life.instance = in
	if in != nil {
		in.OnActivate(a.activate)
	}
}

// TrayActions are the tray menu's actions for a: show the window, open a session,
// restart the agent, open the logs folder, and quit through the window (so shutdown
// drains turns and stops the sidecar).
func TrayActions(a *App) tray.Actions {
	return tray.Actions{
		Show:     a.focusWindow,
		QuickAsk: a.services().Turns.QuickAsk,
		OpenSession: func(id string) {
			a.focusWindow()
			a.services().About.OpenSession(id)
		},
		RestartAgent: func() { a.service().Agents().RestartAgent() },
		OpenLogs: func() {
			if err := a.services().About.OpenLogsFolder(); err != nil {
				a.service().Log.Warn("open logs folder", "err", err)
			}
		},
		Quit: a.quit,
	}
}

// startLifecycle runs in startup, before the backend starts: it publishes the activity,
// feeds the tray and notifications, and turns SIGINT/SIGTERM into a clean quit.
func (a *App) startLifecycle(ctx context.Context) {
	l := &a.life
	l.readyOnce.Do(func() { l.domReady = make(chan struct{}) })
	l.notifier = newDesktopNotifier(a.service().Log, func(sessionID string) {
		a.focusWindow()
		if sessionID != "" {
			a.services().About.OpenSession(sessionID)
		}
	})
	unsub := a.service().Bus.Subscribe(func(ev bus.Event) {
		switch ev.Name {
		case backend.EventActivity:
			if act, ok := ev.Payload.(backend.Activity); ok && l.tray != nil {
				l.tray.Update(act)
			}
		case bus.EventFrame:
			if f, ok := ev.Payload.(turn.Frame); ok {
				a.maybeNotify(f)
			}
		}
	})
	l.stop = append(l.stop, unsub, a.service().About().WatchActivity(0))
	a.watchSignals()
	go func() {
		select {
		case <-l.domReady:
			// If the page never reports its first paint, what waits for it goes anyway.
			time.AfterFunc(3*time.Second, a.services().About.WindowPainted)
			a.service().Log.Info("window ready", "tray", l.tray != nil, "tray_host", hostAvailable())
			l.mu.Lock()
			hiddenStart := l.startedHidden
			l.mu.Unlock()
			if hiddenStart {
				a.watchHiddenStart()
			}
		case <-time.After(60 * time.Second):
		}
	}()
}

// watchSignals makes SIGINT and SIGTERM quit cleanly. Wails itself answers the first
// one with a quit (which comes to beforeClose); here it is marked as a quit, not a
// close, and repeated if Wails' quit came before GTK's main loop ran and was lost. A
// second signal exits at once.
func (a *App) watchSignals() {
	l := &a.life
	l.sigs = make(chan os.Signal, 4)
	signal.Notify(l.sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		var fallback <-chan time.Time
		for n := 0; ; {
			select {
			case s := <-l.sigs:
				if n++; n > 1 {
					a.service().Log.Warn("second signal while quitting; exiting at once", "signal", s.String())
					os.Exit(1)
				}
				l.quitting.Store(true)
				a.service().Log.Info("signal received; quitting", "signal", s.String())
				fallback = time.After(3 * time.Second)
			case <-fallback:
				fallback = nil
				<-l.domReady
				if !l.shuttingDown.Load() {
					a.quit()
				}
			}
		}
	}()
}

// lifecycleDomReady marks the window (and so GTK's main loop) as running.
func (a *App) lifecycleDomReady() {
	l := &a.life
	l.readyOnce.Do(func() { l.domReady = make(chan struct{}) })
	select {
	case <-l.domReady:
	default:
		close(l.domReady)
	}
}

// stopLifecycle runs first in shutdown. Signals stay watched until the process ends.
func (a *App) stopLifecycle() {
	a.life.quitting.Store(true)
	a.life.shuttingDown.Store(true)
	for i := len(a.life.stop) - 1; i >= 0; i-- {
		a.life.stop[i]()
	}
	a.life.stop = nil
	if a.life.notifier != nil {
		a.life.notifier.close()
	}
}

// Quit quits a without asking, as the tray's Quit does (app/drivers ends its runs with
// it). A function, not a method, so Wails does not bind it.
func Quit(a *App) { a.quit() }

// quit quits the app without asking: shutdown then stops the turns (partial text
// kept) and the sidecar. The tray's Quit, signals and the drivers use it.
func (a *App) quit() {
	a.life.quitting.Store(true)
	if a.ctx != nil {
		runtime.Quit(a.ctx)
	}
}

// beforeClose is Wails' OnBeforeClose: the window's close button and runtime.Quit both
// come here. It returns true to keep the app running.
func (a *App) beforeClose(ctx context.Context) (prevent bool) {
	// A close while the backend was still opening (the close button, or Wails' quit on
	// SIGINT/SIGTERM, whose handler is not listening yet) is a quit, once it is open.
	early := !a.isOpen()
	if a.opened() != nil {
		return false // the window showed why Talaria cannot start; nothing runs
	}
	l := &a.life
	if early {
		l.quitting.Store(true)
		return false
	}
	if l.quitRequested() {
		return false
	}
	time.Sleep(30 * time.Millisecond) // a signal may be on its way to watchSignals
	if l.quitRequested() {
		return false
	}
	if l.tray != nil && hostAvailable() {
		a.hideWindow()
		return true
	}
	// No tray host: a hidden window could never be found again, so closing quits.
	if n := len(a.service().About().Activity(ctx).Running); n > 0 {
		if !l.dialogOpen.CompareAndSwap(false, true) {
			return true // the question is already on screen
		}
		answer, err := runtime.MessageDialog(ctx, runtime.MessageDialogOptions{
			Type:          runtime.QuestionDialog,
			Title:         "Quit Talaria?",
			Message:       confirmQuitText(n),
			Buttons:       []string{"Yes", "No"},
			DefaultButton: "No",
			CancelButton:  "No",
		})
		l.dialogOpen.Store(false)
		if err != nil || answer != "Yes" {
			return true
		}
	}
	l.quitting.Store(true)
	return false
}

// quitRequested reports whether the app is quitting (tray Quit, a signal, the
// self-test) rather than the window being closed.
func (l *lifecycle) quitRequested() bool {
	if len(l.sigs) > 0 { // Wails got SIGINT/SIGTERM before watchSignals did
		l.quitting.Store(true)
	}
	return l.quitting.Load()
}

// confirmQuitText asks whether to quit while n turns run (a Yes/No question; GTK
// treats it as a format string, so it holds no user text).
func confirmQuitText(n int) string {
	what := "A turn is still running. Quit Talaria and stop it?"
	if n > 1 {
		what = fmt.Sprintf("%d turns are still running. Quit Talaria and stop them?", n)
	}
	return what + " Partial answers are kept.\n\nThere is no system tray here to keep Talaria running in the background."
}

// hideWindow hides the window to the tray; turns go on.
func (a *App) hideWindow() {
	l := &a.life
	l.mu.Lock()
	l.hidden = true
	first := !l.toldTray
	l.toldTray = true
	l.mu.Unlock()
	runtime.WindowHide(a.ctx)
	if first {
		go l.notifier.send(backend.Notice{Title: "Talaria is still running",
			Body: "Turns go on in the background. Use the tray icon to open Talaria or quit."})
	}
}

// focusWindow shows the window and brings it to the front (tray, second launch,
// notification click).
func (a *App) focusWindow() {
	a.life.mu.Lock()
	a.life.hidden = false
	a.life.mu.Unlock()
	if a.ctx == nil {
		return
	}
	runtime.WindowShow(a.ctx)
	runtime.WindowUnminimise(a.ctx)
}

// away reports whether nobody is looking at the window: it is hidden, or the window
// said it lost focus.
func (a *App) away() bool {
	a.life.mu.Lock()
	defer a.life.mu.Unlock()
	return a.life.hidden || a.life.unfocused
}

// openFolder opens dir in the desktop's file manager.
func openFolder(dir string) error {
	var cmd *exec.Cmd
	switch goruntime.GOOS {
	case "darwin":
		cmd = exec.Command("open", dir)
	case "windows":
		cmd = exec.Command("explorer", dir)
	default:
		cmd = exec.Command("xdg-open", dir)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot open %s: %w", dir, err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// noticeGap is the shortest time between two notifications of the same kind for one
// session.
const noticeGap = 5 * time.Second

// maybeNotify raises a desktop notification for f when nobody looks at the window
// (backend.NoticeForFrame: approvals, questions, finished or failed turns and
// background tasks). It runs inside a bus callback, so the work happens in a goroutine.
func (a *App) maybeNotify(f turn.Frame) {
	switch f.Event {
	case protocol.EvApproval, protocol.EvClarify, protocol.EvDone, protocol.EvAppError:
	default:
		return
	}
	if a.life.quitting.Load() || !a.away() {
		return
	}
	key := f.SessionID + "\x00" + f.Event
	a.life.mu.Lock()
	if a.life.lastSent == nil {
		a.life.lastSent = map[string]time.Time{}
	}
	if t, ok := a.life.lastSent[key]; ok && time.Since(t) < noticeGap {
		a.life.mu.Unlock()
		return
	}
	a.life.lastSent[key] = time.Now()
	a.life.mu.Unlock()
	go func() {
		// A background task's frames are told as the task's and open its parent session.
		if n, ok := a.service().About().NoticeForFrame(context.Background(), f); ok {
			a.life.notifier.send(n)
		}
	}()
}

// desktopNotifier sends notifications through org.freedesktop.Notifications with a
// default action that opens the session, and falls back to beeep (notify-send, macOS,
// Windows). Failures are logged once and otherwise ignored: no notification server is
// a normal setup.
type desktopNotifier struct {
	log    interface{ Warn(string, ...any) }
	onOpen func(sessionID string)

	sessions sync.Map // notification id (uint32) -> session id

	mu     sync.Mutex
	conn   *dbus.Conn
	n      notify.Notifier
	failed bool
	closed bool
}

func newDesktopNotifier(log interface{ Warn(string, ...any) }, onOpen func(string)) *desktopNotifier {
	beeep.AppName = "Talaria"
	return &desktopNotifier{log: log, onOpen: onOpen}
}

func (d *desktopNotifier) send(n backend.Notice) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	err := d.sendDBus(n)
	if err != nil {
		if berr := beeep.Notify(n.Title, n.Body, ""); berr == nil {
			err = nil
		} else {
			err = fmt.Errorf("%v; %v", err, berr)
		}
	}
	if err != nil && !d.failed {
		d.failed = true
		d.log.Warn("desktop notifications are unavailable (shown once)", "err", err)
	}
}

func (d *desktopNotifier) sendDBus(n backend.Notice) error {
	if d.n == nil {
		conn, err := dbus.ConnectSessionBus()
		if err != nil {
			return err
		}
		nt, err := notify.New(conn, notify.WithLogger(log.New(io.Discard, "", 0)),
			notify.WithOnAction(func(s *notify.ActionInvokedSignal) {
				if id, ok := d.sessions.LoadAndDelete(s.ID); ok && d.onOpen != nil {
					go d.onOpen(id.(string))
				}
			}),
			notify.WithOnClosed(func(s *notify.NotificationClosedSignal) { d.sessions.Delete(s.ID) }))
		if err != nil {
			conn.Close()
			return err
		}
		d.conn, d.n = conn, nt
	}
	id, err := d.n.SendNotification(notify.Notification{
		AppName: "Talaria", AppIcon: "talaria", Summary: n.Title, Body: n.Body,
		Actions:       []notify.Action{{Key: "default", Label: "Open"}},
		Hints:         map[string]dbus.Variant{"desktop-entry": dbus.MakeVariant("talaria")},
		ExpireTimeout: 10 * time.Second,
	})
	if err != nil {
		return err
	}
	d.sessions.Store(id, n.SessionID)
	return nil
}

func (d *desktopNotifier) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.n != nil {
		_ = d.n.Close()
		_ = d.conn.Close()
		d.n, d.conn = nil, nil
	}
}

package tray

/*
#cgo pkg-config: glib-2.0 x11
void tray_schedule(void);
int tray_x_display(void);
int tray_xembed_owner(void);
*/
import "C"

import (
	"sync"
	"time"

	"github.com/getlantern/systray"
	"github.com/godbus/dbus/v5"
)

// HostAvailable reports whether a tray host shows icons now: a StatusNotifierItem host
// (the org.kde.StatusNotifierWatcher on the session bus with a host registered: KDE,
// GNOME's AppIndicator extension, most panels) or an XEmbed tray (an owner of the
// _NET_SYSTEM_TRAY_S<screen> selection: XFCE, MATE, trayer, stalonetray). It takes a
// few milliseconds; call it when it matters (e.g. when the window is closed), since
// hosts come and go. The X11 check runs on the GTK main thread, so the main loop must
// be running; it gives up after 2 s and then reports no XEmbed tray.
func HostAvailable() bool {
	return sniHost() || xembedTray()
}

func sniHost() bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return false
	}
	const watcher = "org.kde.StatusNotifierWatcher"
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, watcher).Store(&has); err != nil || !has {
		return false
	}
	v, err := conn.Object(watcher, "/StatusNotifierWatcher").GetProperty(watcher + ".IsStatusNotifierHostRegistered")
	if err != nil {
		return true // a watcher that cannot say: trust it
	}
	registered, ok := v.Value().(bool)
	return !ok || registered
}

func xembedTray() bool {
	res := make(chan bool, 1)
	runOnMain(func() { res <- C.tray_xembed_owner() == 1 })
	select {
	case ok := <-res:
		return ok
	case <-time.After(2 * time.Second):
		return false
	}
}

// displayAvailable reports whether GTK will be able to open the X display (main sets
// GDK_BACKEND=x11, which the tray's XEmbed fallback needs).
func displayAvailable() bool { return C.tray_x_display() == 1 }

var (
	queueMu sync.Mutex
	queue   []func()
)

// onMainLoop runs fn on the GTK main loop's thread (see runOnMain).
func onMainLoop(fn func()) { runOnMain(fn) }

// runOnMain runs fn on the GTK main loop's thread, in order with other such calls.
func runOnMain(fn func()) {
	queueMu.Lock()
	queue = append(queue, fn)
	queueMu.Unlock()
	C.tray_schedule()
}

//export trayRunQueued
func trayRunQueued() {
	queueMu.Lock()
	q := queue
	queue = nil
	queueMu.Unlock()
	for _, fn := range q {
		fn()
	}
}

// setTitle sets the label beside the icon. systray's SetTitle calls appindicator
// directly, so it is moved onto the GTK thread here.
func setTitle(s string) { runOnMain(func() { systray.SetTitle(s) }) }

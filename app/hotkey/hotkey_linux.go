//go:build linux && !bindings

package hotkey

/*
#cgo LDFLAGS: -lX11
#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

static int hk_error;
static int hk_on_error(Display *d, XErrorEvent *e) { hk_error = e->error_code; return 0; }

// hk_grab grabs keycode with mods on the root window, also with Num Lock and Caps Lock
// (or the key would not fire while they are on). It returns 0, or the X error code
// (BadAccess: another client holds it). The error handler is ours only during the
// grab, and the previous one (GDK's) is put back.
static int hk_grab(Display *d, int keycode, unsigned int mods) {
	Window root = DefaultRootWindow(d);
	unsigned int extra[] = {0, LockMask, Mod2Mask, LockMask | Mod2Mask};
	XSync(d, False);
	hk_error = 0;
	XErrorHandler prev = XSetErrorHandler(hk_on_error);
	for (int i = 0; i < 4; i++) {
		XGrabKey(d, keycode, mods | extra[i], root, True, GrabModeAsync, GrabModeAsync);
	}
	XSync(d, False);
	XSetErrorHandler(prev);
	if (hk_error != 0) {
		for (int i = 0; i < 4; i++) {
			XUngrabKey(d, keycode, mods | extra[i], root);
		}
		XSync(d, False);
	}
	return hk_error;
}

static void hk_ungrab(Display *d, int keycode, unsigned int mods) {
	Window root = DefaultRootWindow(d);
	unsigned int extra[] = {0, LockMask, Mod2Mask, LockMask | Mod2Mask};
	for (int i = 0; i < 4; i++) {
		XUngrabKey(d, keycode, mods | extra[i], root);
	}
	XSync(d, False);
}

// hk_wait waits for a key press of the grabbed key or a byte on stopfd. It returns 1
// for a press, 0 when stopped, -1 when the connection broke.
static int hk_wait(Display *d, int keycode, int stopfd) {
	struct pollfd fds[2] = {{ConnectionNumber(d), POLLIN, 0}, {stopfd, POLLIN, 0}};
	for (;;) {
		while (XPending(d) > 0) {
			XEvent ev;
			XNextEvent(d, &ev);
			if (ev.type == KeyPress && ev.xkey.keycode == (unsigned int)keycode) {
				return 1;
			}
		}
		if (poll(fds, 2, -1) < 0) {
			continue;
		}
		if (fds[1].revents) {
			return 0;
		}
		if (fds[0].revents & (POLLERR | POLLHUP)) {
			return -1;
		}
	}
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// Register grabs s for the whole X11 session and calls fn (in its own goroutine) on
// every press, until stop is called. Errors: ErrWayland in a Wayland session (the
// grab would only work while one of Talaria's windows has the focus); *TakenError when
// another program holds the shortcut; an error when there is no X display or the key
// name is unknown.
func Register(s Shortcut, fn func()) (stop func(), err error) {
	if os.Getenv("WAYLAND_DISPLAY") != "" {
		return nil, ErrWayland
	}
	type started struct {
		err error
	}
	ready := make(chan started, 1)
	var stopW *os.File
	stopR, stopWr, perr := os.Pipe()
	if perr != nil {
		return nil, perr
	}
	stopW = stopWr
	go func() {
		runtime.LockOSThread() // one connection, used by this thread only
		defer runtime.UnlockOSThread()
		defer stopR.Close()
		d := C.XOpenDisplay(nil)
		if d == nil {
			ready <- started{fmt.Errorf("global shortcuts need an X display (DISPLAY=%q)", os.Getenv("DISPLAY"))}
			return
		}
		defer C.XCloseDisplay(d)
		name := C.CString(s.Key)
		sym := C.XStringToKeysym(name)
		C.free(unsafe.Pointer(name))
		if sym == C.NoSymbol {
			ready <- started{fmt.Errorf("%q is not a key this system knows", s.Key)}
			return
		}
		code := C.XKeysymToKeycode(d, sym)
		if code == 0 {
			ready <- started{fmt.Errorf("the keyboard has no %s key", s.Key)}
			return
		}
		var mods C.uint
		if s.Ctrl {
			mods |= C.ControlMask
		}
		if s.Alt {
			mods |= C.Mod1Mask
		}
		if s.Shift {
			mods |= C.ShiftMask
		}
		if s.Super {
			mods |= C.Mod4Mask
		}
		if e := C.hk_grab(d, C.int(code), mods); e != 0 {
			if e == C.BadAccess {
				ready <- started{&TakenError{Shortcut: s.String()}}
			} else {
				ready <- started{fmt.Errorf("taking the shortcut %s failed (X error %d)", s, int(e))}
			}
			return
		}
		ready <- started{}
		defer C.hk_ungrab(d, C.int(code), mods)
		for {
			switch C.hk_wait(d, C.int(code), C.int(stopR.Fd())) {
			case 1:
				go fn()
			default:
				return
			}
		}
	}()
	if st := <-ready; st.err != nil {
		stopW.Close()
		return nil, st.err
	}
	var once sync.Once
	return func() { once.Do(func() { stopW.Write([]byte{1}); stopW.Close() }) }, nil
}

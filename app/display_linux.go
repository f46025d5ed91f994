package app

/*
#cgo pkg-config: gtk+-3.0
#include <gtk/gtk.h>

static int talaria_gtk_init(void) { return gtk_init_check(NULL, NULL) ? 1 : 0; }
*/
import "C"

import (
	"fmt"
	"os"
	"time"
)

// OpenDisplay initialises GTK (gtk_init_check), trying again every 100 ms for up to
// timeout while the display cannot be opened. Wails initialises GTK itself and panics
// ("failed to init GTK") on the first failure; after a success here its own call
// returns at once. A display can refuse a connection for a moment: an X server just
// starting (a session's autostart, e.g. "start at login", can run before it is
// ready) or a loaded one (on the CI machines about one XOpenDisplay in 50 fails).
// Call it on the main thread (main locks it: desktop.go), before wails.Run. The error
// names the display and says what to do.
func OpenDisplay(timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); ; {
		if C.talaria_gtk_init() == 1 {
			return nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	display := os.Getenv("WAYLAND_DISPLAY")
	if os.Getenv("GDK_BACKEND") == "x11" || display == "" {
		display = os.Getenv("DISPLAY")
	}
	if display == "" {
		return fmt.Errorf("no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset): start Talaria from a desktop session")
	}
	return fmt.Errorf("cannot open the display %q (tried for %v): start Talaria from a desktop session, or check that its display server runs", display, timeout)
}

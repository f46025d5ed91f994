#include <stdio.h>
#include <glib.h>
#include <X11/Xlib.h>

extern void trayRunQueued(void);

static gboolean tray_idle(gpointer data) {
	trayRunQueued();
	return G_SOURCE_REMOVE;
}

// tray_schedule runs trayRunQueued on the GTK main loop's thread.
void tray_schedule(void) {
	g_idle_add(tray_idle, NULL);
}

// tray_x_display returns 1 when an X display can be opened. A loaded X server refuses
// a connection now and then (about one in 50 on the CI machines): it tries 10 times,
// 50 ms apart, before it says there is none.
int tray_x_display(void) {
	for (int i = 0; i < 10; i++) {
		Display *d = XOpenDisplay(NULL);
		if (d != NULL) {
			XCloseDisplay(d);
			return 1;
		}
		g_usleep(50 * 1000);
	}
	return 0;
}

// tray_xembed_owner returns 1 when an XEmbed system tray (the owner of the
// _NET_SYSTEM_TRAY_S<screen> selection) runs, 0 when none does, -1 without a display.
int tray_xembed_owner(void) {
	Display *d = XOpenDisplay(NULL);
	if (d == NULL) {
		return -1;
	}
	char name[64];
	snprintf(name, sizeof name, "_NET_SYSTEM_TRAY_S%d", DefaultScreen(d));
	Atom sel = XInternAtom(d, name, False);
	Window owner = XGetSelectionOwner(d, sel);
	XCloseDisplay(d);
	return owner != None ? 1 : 0;
}

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

// tray_x_display returns 1 when an X display can be opened.
int tray_x_display(void) {
	Display *d = XOpenDisplay(NULL);
	if (d == NULL) {
		return 0;
	}
	XCloseDisplay(d);
	return 1;
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

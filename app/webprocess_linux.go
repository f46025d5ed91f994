package app

/*
#cgo !webkit2_41 pkg-config: gtk+-3.0 webkit2gtk-4.0
#cgo webkit2_41 pkg-config: gtk+-3.0 webkit2gtk-4.1
#include <gtk/gtk.h>
#include <webkit2/webkit2.h>

extern void talariaWebProcessTerminated(int reason, int reloaded);

static int talaria_reloads = 0;

// A crashed or killed web process leaves the window blank: load the page again (at most
// 3 times a run, so a page that kills its process on load does not loop).
static void talaria_on_terminated(WebKitWebView *view, WebKitWebProcessTerminationReason reason, gpointer data) {
	int reload = (reason == WEBKIT_WEB_PROCESS_CRASHED || reason == WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT) && talaria_reloads < 3;
	if (reload) talaria_reloads++;
	talariaWebProcessTerminated((int)reason, reload);
	if (reload) webkit_web_view_reload(view);
}

static void talaria_watch_widget(GtkWidget *w) {
	if (WEBKIT_IS_WEB_VIEW(w)) {
		if (!g_object_get_data(G_OBJECT(w), "talaria-watched")) {
			g_object_set_data(G_OBJECT(w), "talaria-watched", GINT_TO_POINTER(1));
			g_signal_connect(w, "web-process-terminated", G_CALLBACK(talaria_on_terminated), NULL);
		}
		return;
	}
	if (GTK_IS_CONTAINER(w)) {
		GList *kids = gtk_container_get_children(GTK_CONTAINER(w));
		for (GList *l = kids; l != NULL; l = l->next) talaria_watch_widget(GTK_WIDGET(l->data));
		g_list_free(kids);
	}
}

static gboolean talaria_watch_all(gpointer data) {
	GList *tops = gtk_window_list_toplevels();
	for (GList *l = tops; l != NULL; l = l->next) talaria_watch_widget(GTK_WIDGET(l->data));
	g_list_free(tops);
	return G_SOURCE_REMOVE;
}

// Runs on GTK's main loop, where widgets may be touched.
static void talaria_watch_webviews(void) { g_idle_add(talaria_watch_all, NULL); }
*/
import "C"

import "sync/atomic"

// webProcessEnded is called (on its own goroutine) with why the window's web process
// ended and whether the page is being loaded again; nil until watchWebProcess.
var webProcessEnded atomic.Pointer[func(reason string, reloaded bool)]

//export talariaWebProcessTerminated
func talariaWebProcessTerminated(reason C.int, reloaded C.int) {
	f := webProcessEnded.Load()
	if f == nil {
		return
	}
	why := "ended"
	switch reason {
	case C.WEBKIT_WEB_PROCESS_CRASHED:
		why = "crashed"
	case C.WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT:
		why = "exceeded its memory limit"
	}
	go (*f)(why, reloaded != 0) // never block GTK's main loop
}

// watchWebProcess makes on hear of the end of the web process behind the window's
// WebKitWebView (WebKitGTK's web-process-terminated signal, which Wails v2 does not
// handle): its render process crashing or being killed for memory. The page is loaded
// again then (at most 3 times a run; reloaded says so). The window's GTK widgets must
// exist: Wails v2 makes them before it calls OnStartup (internal/frontend/desktop/linux,
// NewFrontend), and the walk that finds them runs on GTK's main loop. A web view is
// watched once however often this is called.
func watchWebProcess(on func(reason string, reloaded bool)) {
	webProcessEnded.Store(&on)
	C.talaria_watch_webviews()
}

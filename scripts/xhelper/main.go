// Command xhelper does what headless desktop checks under Xvfb need and no installed
// tool does (scripts/orphan.sh, scripts/traycheck.sh):
//
//	xhelper wmclose <window id>...      ask windows to close as a window manager's close
//	                                    button does (WM_DELETE_WINDOW); no WM runs there
//	xhelper seed --data-dir D --base-url U [--model M]
//	                                    write provider settings into a data folder
//	xhelper autostart EXE               write the login entry for EXE as Settings' "Start
//	                                    Talaria at login" does for the default data folder
//	xhelper notifyd [--click TEXT]      a stand-in notification server on the session
//	                                    bus: prints each notification as a NOTIFY line and
//	                                    clicks (default action) those whose summary
//	                                    contains TEXT, after 1 s
package main

/*
#cgo pkg-config: x11
#include <X11/Xlib.h>

static int wm_close(Display *d, Window w) {
	XEvent ev = {0};
	ev.xclient.type = ClientMessage;
	ev.xclient.window = w;
	ev.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = XInternAtom(d, "WM_DELETE_WINDOW", False);
	ev.xclient.data.l[1] = CurrentTime;
	Status st = XSendEvent(d, w, False, NoEventMask, &ev);
	XFlush(d);
	return st != 0;
}
*/
import "C"

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"talaria/backend"
	"talaria/backend/autostart"
	"talaria/backend/vault"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "wmclose":
		os.Exit(wmclose(os.Args[2:]))
	case "seed":
		os.Exit(seed(os.Args[2:]))
	case "notifyd":
		os.Exit(notifyd(os.Args[2:]))
	case "autostart":
		os.Exit(autostartOn(os.Args[2:]))
	}
	usage()
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: xhelper wmclose <window id>... | seed --data-dir D --base-url U [--model M] | notifyd [--click TEXT] | autostart EXE")
	os.Exit(2)
}

func wmclose(ids []string) int {
	if len(ids) == 0 {
		usage()
	}
	d := C.XOpenDisplay(nil)
	if d == nil {
		fmt.Fprintln(os.Stderr, "xhelper wmclose: cannot open the display")
		return 1
	}
	defer C.XCloseDisplay(d)
	rc := 0
	for _, a := range ids {
		id, err := strconv.ParseUint(a, 0, 32)
		if err != nil {
			fmt.Fprintf(os.Stderr, "xhelper wmclose: %q is not a window id\n", a)
			rc = 2
			continue
		}
		if C.wm_close(d, C.Window(id)) == 0 {
			fmt.Fprintf(os.Stderr, "xhelper wmclose: could not send to window %s\n", a)
			rc = 1
		}
	}
	return rc
}

func autostartOn(args []string) int {
	if len(args) != 1 {
		usage()
	}
	st, err := autostart.Enable(autostart.Command{Exe: args[0], Args: []string{"--hidden"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "xhelper autostart:", err)
		return 1
	}
	fmt.Println(st.Where)
	return 0
}

func seed(args []string) int {
	fs := flag.NewFlagSet("seed", flag.ExitOnError)
	dir := fs.String("data-dir", "", "the app's data folder")
	url := fs.String("base-url", "", "OpenAI-compatible base URL")
	model := fs.String("model", "scripted-model", "model id")
	_ = fs.Parse(args)
	if *dir == "" || *url == "" {
		usage()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := backend.Open(ctx, backend.Options{DataDir: *dir, Version: "seed", Keyring: vault.NewMemoryKeyring()})
	if err == nil {
		_, err = svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: *url, Model: *model})
		if cerr := svc.Close(ctx); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xhelper seed:", err)
		return 1
	}
	return 0
}

type notifyServer struct {
	conn  *dbus.Conn
	click string
	mu    sync.Mutex
	id    uint32
}

func (s *notifyServer) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s.mu.Lock()
	s.id++
	id := s.id
	s.mu.Unlock()
	fmt.Printf("NOTIFY id=%d app=%q summary=%q body=%q actions=%q\n", id, app, summary, body, actions)
	if s.click != "" && strings.Contains(summary, s.click) {
		go func() {
			time.Sleep(time.Second)
			_ = s.conn.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", id, "default")
			fmt.Printf("CLICKED id=%d\n", id)
		}()
	}
	return id, nil
}

func (s *notifyServer) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"body", "actions"}, nil
}

func (s *notifyServer) CloseNotification(id uint32) *dbus.Error { return nil }

func (s *notifyServer) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "xhelper", "talaria", "1", "1.2", nil
}

func notifyd(args []string) int {
	fs := flag.NewFlagSet("notifyd", flag.ExitOnError)
	click := fs.String("click", "", "click notifications whose summary contains this")
	_ = fs.Parse(args)
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		fmt.Fprintln(os.Stderr, "xhelper notifyd:", err)
		return 1
	}
	s := &notifyServer{conn: conn, click: *click}
	if err := conn.Export(s, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		fmt.Fprintln(os.Stderr, "xhelper notifyd:", err)
		return 1
	}
	r, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		fmt.Fprintln(os.Stderr, "xhelper notifyd: the name is taken", err)
		return 1
	}
	fmt.Println("READY")
	select {}
}

// Package app is the Wails shell: one small service per area is bound to the window
// (Services: Chats, Turns, Approvals, Settings, Agents, MCP, Tasks, About, Imports,
// Remotes), and backend bus events are forwarded to it as runtime events. It holds no
// behaviour of its own; everything is in backend/.
package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/app/uifont"
	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/firstscreen"
	"talaria/backend/store"
	"talaria/backend/turn"
)

// EventOpenSession asks the window to show a session (payload bus.OpenSessionData);
// the self-test and the tray use it.
const EventOpenSession = bus.EventOpenSession

// App is the window's shell: the backend (opened beside the window), Wails' lifecycle
// hooks, the tray and quick ask. It has no exported methods, so it is not bound to the
// window: its bound services are (ServicesOf). Every bound method returns a
// *backend.UserError, whose message is meant for the user.
type App struct {
	// svc is set once the backend is open (ready closed, NewOpening); openErr when it
	// could not be. ready is nil when svc was given (New).
	svc     *backend.Service
	openErr error
	ready   chan struct{}
	ctx     context.Context
	// startMu orders startup's start of the backend and shutdown's close of it (a
	// window closed while the backend was opening must not be started after).
	startMu sync.Mutex
	stopped bool

	unsubscribe func()
	onReady     func(ctx context.Context)

	life lifecycle // window, tray and notifications: lifecycle.go

	launchMu      sync.Mutex
	launchActions []string // launch.go

	quick quickAsk // quick-ask mode and its global shortcut: quickask.go
	// quickAskAtStart: the first launch asked for --quick-ask (opened at DOM ready).
	quickAskAtStart bool

	// uiFont is the family fontconfig gives `system-ui` (boot.go), looked up beside the
	// window's creation; uiFontReady is closed once it is known (nil: no lookup).
	uiFont      string
	uiFontReady chan struct{}

	// firstScreenStore keeps the window's first-screen picture (boot.go firstScreen).
	firstScreenOnce  sync.Once
	firstScreenStore *firstscreen.Store

	// closers run at shutdown before the backend closes (Imports ends its import).
	closers []func(context.Context)

	// bound are the services bound to the window (services.go).
	bound services
}

// New wraps svc. onReady, when set, runs in its own goroutine once the window's DOM is
// ready (the self-test uses it).
func New(svc *backend.Service, onReady func(ctx context.Context)) *App {
	return &App{svc: svc, onReady: onReady}
}

// NewOpening is New for a backend that open opens now, in its own goroutine, while
// wails.Run creates the window: the window does not wait for the database (issue 16).
// Every way into the App first waits for open to return: Wails' hooks, the boot page
// (BootMiddleware; the page's bound calls come after it), a second launch. When open
// fails, the window shows its error instead of the app (see BootMiddleware) and
// Backend returns it.
// It also asks fontconfig, in another goroutine, which family `system-ui` is (the boot
// page names it; see uiFontStyle).
func NewOpening(open func() (*backend.Service, error), onReady func(ctx context.Context)) *App {
	a := &App{onReady: onReady, ready: make(chan struct{}), uiFontReady: make(chan struct{})}
	go func() {
		defer close(a.ready)
		a.svc, a.openErr = open()
	}()
	go func() {
		defer close(a.uiFontReady)
		a.uiFont = uifont.SystemUI()
	}()
	return a
}

// Backend waits until a's backend is open and returns it, or nil and why it could not be
// opened. (A function, not a method: App's methods are bound to the window.)
func Backend(a *App) (*backend.Service, error) {
	err := a.opened()
	return a.svc, err
}

// service returns the backend once its open is over (nil when it failed): the bound
// methods and the hooks reach the backend through it, so every read of svc comes after
// its write in an order Go can see (a closed channel), not only because the page is
// served after the open.
func (a *App) service() *backend.Service {
	if a.ready != nil {
		<-a.ready
	}
	return a.svc
}

// isOpen reports, without waiting, whether the backend's open is over.
func (a *App) isOpen() bool {
	if a.ready == nil {
		return true
	}
	select {
	case <-a.ready:
		return true
	default:
		return false
	}
}

// opened waits for the backend's open and returns its error. An App made by New (or as
// a literal) has no open to wait for.
func (a *App) opened() error {
	if a.ready != nil {
		<-a.ready
	}
	return a.openErr
}

// Hooks are the window lifecycle callbacks for wails.Run. They are not methods of App,
// so Wails does not bind them to the window.
type Hooks struct {
	Startup     func(ctx context.Context)
	DomReady    func(ctx context.Context)
	BeforeClose func(ctx context.Context) (prevent bool)
	Shutdown    func(ctx context.Context)
}

// HooksFor returns a's lifecycle callbacks.
func HooksFor(a *App) Hooks {
	return Hooks{Startup: a.startup, DomReady: a.domReady, BeforeClose: a.beforeClose, Shutdown: a.shutdown}
}

// startup is Wails' OnStartup: it starts the backend and forwards bus events.
func (a *App) startup(ctx context.Context) {
	a.ctx = ctx
	// The window's render process dying is a crash too (Diagnostics shows it): watched
	// from the start, not from the first finished load, so a web process that dies
	// while the page is still loading (or a load that never finishes) is seen too.
	watchWebProcess(a.recordWebProcessEnd)
	if err := a.opened(); err != nil {
		// The window shows the error (BootMiddleware); a self-test has no one to read it,
		// so it quits. OnStartup runs before GTK's main loop, which drops a quit asked for
		// before it runs: it is asked again until it takes.
		if a.onReady != nil {
			go func() {
				for {
					runtime.Quit(ctx)
					time.Sleep(500 * time.Millisecond)
				}
			}()
		}
		return
	}
	a.startMu.Lock()
	defer a.startMu.Unlock()
	if a.stopped {
		return // the window closed while the backend was opening
	}
	// A streaming answer's text frames reach the window in batches (bus.Batcher): Wails
	// evaluates a script in the web process per event.
	batcher := bus.NewBatcher(bus.FrameBatchInterval, turn.StreamingFrame, func(ev bus.Event) {
		if ev.Payload == nil {
			runtime.EventsEmit(ctx, ev.Name)
			return
		}
		runtime.EventsEmit(ctx, ev.Name, ev.Payload)
	})
	unsubscribe := a.service().Bus.Subscribe(batcher.Publish)
	a.unsubscribe = func() { unsubscribe(); batcher.Stop() }
	a.startLifecycle(ctx)
	// MCP sign-ins open the user's browser (backend/mcp_oauth.go).
	a.service().OpenBrowser = func(url string) error { runtime.BrowserOpenURL(ctx, url); return nil }
	if err := a.service().Start(ctx); err != nil {
		a.service().Log.Error("backend start", "err", err)
	}
}

// domReady is Wails' OnDomReady.
func (a *App) domReady(ctx context.Context) {
	if a.opened() != nil {
		return
	}
	a.lifecycleDomReady()
	// Again, for a web view made after start-up (each is watched once).
	watchWebProcess(a.recordWebProcessEnd)
	go a.startQuickAsk(ctx)
	if a.quickAskAtStart {
		a.quickAskAtStart = false
		go a.services().Turns.QuickAsk()
	}
	if a.onReady != nil {
		go a.onReady(ctx)
	}
}

// shutdown is Wails' OnShutdown: running turns are stopped and settled, the sidecar is
// shut down, the store closed (at most 10 s).
func (a *App) shutdown(ctx context.Context) {
	if a.opened() != nil {
		return // nothing was started
	}
	a.startMu.Lock()
	a.stopped = true
	a.startMu.Unlock()
	a.stopLifecycle()
	a.stopQuickAsk()
	if a.unsubscribe != nil {
		a.unsubscribe()
	}
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range a.closers {
		c(cctx)
	}
	if err := a.service().Close(cctx); err != nil {
		a.service().Log.Error("shutdown", "err", err)
	}
}

func (a *App) bg() context.Context {
	if a.ctx != nil {
		return a.ctx
	}
	return context.Background()
}

// userError is what a bound method returns for err: a *backend.UserError (a stable
// code, a message, a hint) the window decides on by code; nil for nil. A missing
// session says so in words.
func userError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, store.ErrNotFound) && !isUserError(err) {
		return backend.NewUserError(backend.CodeNotFound, "that session no longer exists", "").WithCause(err)
	}
	return backend.ErrorOf(err)
}

func isUserError(err error) bool {
	var ue *backend.UserError
	return errors.As(err, &ue)
}

// FormatError is Wails' ErrorFormatter: every error a bound method returns reaches the
// window as {code, message, hint, field}, whatever produced it.
func FormatError(err error) any { return backend.ErrorOf(err) }

// invalid is a CodeInvalid error with message msg.
func invalid(msg string) error { return backend.NewUserError(backend.CodeInvalid, msg, "") }

// errNotReady is returned by methods that need the window before it exists.
var errNotReady = backend.NewUserError(backend.CodeNotReady, "the window is not ready yet: try again", "")

// fileError is a CodeFile error: a file the user chose could not be read or written.
func fileError(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return backend.NewUserError(backend.CodeFile, err.Error(), "").WithCause(err)
}

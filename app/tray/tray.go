// Package tray is Talaria's system tray icon and menu (github.com/getlantern/systray).
// The icon shows the backend's Activity: idle, working, needs you, agent down; the menu
// offers Show Talaria, Quick ask, the running turns (a click opens the session), the agent's
// status with Restart agent, Open logs folder and Quit.
//
// New makes the tray; its icon appears with Register (on the main OS thread before
// wails.Run, which then owns the GTK main loop; see PLATFORM.md) or, once that loop
// runs, with RegisterLater, which the app calls after its window has painted: the
// icon's registration (GTK widgets and an AppIndicator on D-Bus) cost ~50 ms of a
// ~480 ms cold start (issue 16). systray.Quit is never called, since it would end the
// loop. Everything else is safe from any goroutine, before registration too.
package tray

import (
	_ "embed"
	"sync"

	"github.com/getlantern/systray"

	"talaria/backend"
)

var (
	//go:embed icons/idle.png
	iconIdle []byte
	//go:embed icons/working.png
	iconWorking []byte
	//go:embed icons/needs-you.png
	iconNeedsYou []byte
	//go:embed icons/down.png
	iconDown []byte
)

func iconFor(s backend.ActivityState) []byte {
	switch s {
	case backend.ActivityWorking:
		return iconWorking
	case backend.ActivityNeedsYou:
		return iconNeedsYou
	case backend.ActivityDown:
		return iconDown
	}
	return iconIdle
}

// Actions are what the menu's items do. Each runs in its own goroutine; nil ones are
// left out of the menu.
type Actions struct {
	Show         func()                 // Show Talaria
	QuickAsk     func()                 // Quick ask…
	OpenSession  func(sessionID string) // a running turn's line
	RestartAgent func()
	OpenLogs     func()
	Quit         func() // must go through the window's quit (runtime.Quit), never systray.Quit
}

// Tray is the registered tray icon.
type Tray struct {
	actions Actions

	mu      sync.Mutex
	ready   bool
	latest  *backend.Activity
	shown   *view // what the menu shows now
	slotIDs [Slots]string
	kick    chan struct{}
	once    sync.Once // the registration

	items struct {
		show, quick, header, more, agent, restart, logs, quit *systray.MenuItem
		slots                                                 [Slots]*systray.MenuItem
	}
}

// New returns the tray for actions, not yet registered, or nil when there is no
// display to put an icon on (the window will fail on its own then).
func New(actions Actions) *Tray {
	if !displayAvailable() {
		return nil
	}
	return &Tray{actions: actions, kick: make(chan struct{}, 1)}
}

// Register creates the tray icon and its menu now. Call it on the main OS thread:
// before wails.Run, or from the GTK main loop. The icon is registered even when no
// tray host runs yet; HostAvailable says whether one does. Only the first of Register
// and RegisterLater does anything.
func (t *Tray) Register() {
	t.once.Do(func() { systray.Register(t.onReady, nil) })
}

// RegisterLater registers the icon on the GTK main loop's thread, from any goroutine,
// once wails.Run has started that loop (see Register).
func (t *Tray) RegisterLater() { onMainLoop(t.Register) }

// Update shows a; it never blocks (only the latest activity is drawn).
func (t *Tray) Update(a backend.Activity) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.latest = &a
	t.mu.Unlock()
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *Tray) onReady() {
	systray.SetIcon(iconIdle)
	systray.SetTooltip("Talaria")
	it := &t.items
	it.show = systray.AddMenuItem("Show Talaria", "Open the Talaria window")
	it.quick = systray.AddMenuItem("Quick ask…", "Ask one question in a small window")
	systray.AddSeparator()
	it.header = systray.AddMenuItem("Nothing running", "Running turns and background tasks")
	it.header.Disable()
	for i := range it.slots {
		it.slots[i] = systray.AddMenuItem("", "Open this chat")
		it.slots[i].Hide()
	}
	it.more = systray.AddMenuItem("", "")
	it.more.Disable()
	it.more.Hide()
	systray.AddSeparator()
	it.agent = systray.AddMenuItem("Agent: starting…", "The agent process")
	it.agent.Disable()
	it.restart = systray.AddMenuItem("Restart agent", "Stop the agent process and start it again")
	it.logs = systray.AddMenuItem("Open logs folder", "Open the folder with Talaria's logs")
	systray.AddSeparator()
	it.quit = systray.AddMenuItem("Quit Talaria", "Stop running turns and quit")

	t.on(it.show, t.actions.Show)
	t.on(it.quick, t.actions.QuickAsk)
	t.on(it.restart, t.actions.RestartAgent)
	t.on(it.logs, t.actions.OpenLogs)
	t.on(it.quit, t.actions.Quit)
	for i := range it.slots {
		i := i
		t.on(it.slots[i], func() {
			t.mu.Lock()
			id := t.slotIDs[i]
			t.mu.Unlock()
			if id != "" && t.actions.OpenSession != nil {
				t.actions.OpenSession(id)
			}
		})
	}
	for _, m := range []*systray.MenuItem{it.show, it.quick, it.restart, it.logs, it.quit} {
		if m != nil && t.actionFor(m) == nil {
			m.Hide()
		}
	}

	t.mu.Lock()
	t.ready = true
	t.mu.Unlock()
	go t.drawLoop()
	t.Update(t.current())
}

func (t *Tray) current() backend.Activity {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.latest != nil {
		return *t.latest
	}
	return backend.Activity{State: backend.ActivityIdle}
}

func (t *Tray) actionFor(m *systray.MenuItem) func() {
	switch m {
	case t.items.show:
		return t.actions.Show
	case t.items.quick:
		return t.actions.QuickAsk
	case t.items.restart:
		return t.actions.RestartAgent
	case t.items.logs:
		return t.actions.OpenLogs
	case t.items.quit:
		return t.actions.Quit
	}
	return nil
}

// on runs fn for every click of m, one at a time.
func (t *Tray) on(m *systray.MenuItem, fn func()) {
	if fn == nil {
		return
	}
	go func() {
		for range m.ClickedCh {
			fn()
		}
	}()
}

func (t *Tray) drawLoop() {
	for range t.kick {
		t.draw(viewOf(t.current()))
	}
}

// draw changes only what differs from the shown view. systray shows an item again
// whenever it is updated, so hidden items are never updated.
func (t *Tray) draw(v view) {
	old := t.shown
	it := &t.items
	if old == nil || old.icon != v.icon {
		systray.SetIcon(iconFor(v.icon))
	}
	if old == nil || old.title != v.title {
		setTitle(v.title)
	}
	if old == nil || old.tooltip != v.tooltip {
		systray.SetTooltip(v.tooltip)
	}
	if old == nil || old.header != v.header {
		it.header.SetTitle(v.header)
	}
	t.mu.Lock()
	for i := range it.slots {
		t.slotIDs[i] = ""
		if i < len(v.slots) {
			t.slotIDs[i] = v.slots[i].sessionID
		}
	}
	t.mu.Unlock()
	for i, m := range it.slots {
		was := old != nil && i < len(old.slots)
		switch {
		case i < len(v.slots) && (!was || old.slots[i].label != v.slots[i].label):
			m.SetTitle(v.slots[i].label) // also shows it
		case i >= len(v.slots) && (was || old == nil):
			m.Hide()
		}
	}
	switch {
	case v.more != "" && (old == nil || old.more != v.more):
		it.more.SetTitle(v.more)
	case v.more == "" && (old == nil || old.more != ""):
		it.more.Hide()
	}
	if old == nil || old.agent != v.agent {
		it.agent.SetTitle(v.agent)
	}
	t.shown = &v
}

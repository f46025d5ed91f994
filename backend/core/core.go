// Package core is what every area of the backend shares: the session store, the event
// bus, the vault, the turn runner, the background tasks, and the pool of supervised
// sidecars, one per agent runtime (runtimes.go). The areas (backend/chats, turns,
// approvals, sandbox, settings, attachments, agents, mcp, activity, about) are each
// built over one Core and over the areas below them; backend.Service builds them all
// (docs/architecture.md). Core itself holds no area's behaviour.
package core

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/tasks"
	"talaria/backend/turn"
	"talaria/backend/vault"
)

// Config is what New needs: what backend.Open opened and decided.
type Config struct {
	Paths   Paths
	Version string // the app version (sent in rpc.hello, shown in About)
	// Commit and BuildDate (UTC, RFC 3339) say which build this is; "" when unknown.
	Commit, BuildDate string
	Log               *slog.Logger
	Store             *store.Store
	Vault             *vault.Vault
	// Sidecar is the built-in runtime's supervisor configuration; every other
	// runtime's sidecar starts from it (runtimes.go).
	Sidecar supervisor.Config
	// DefaultWorkspace is the folder chats work in when nothing else is chosen ("":
	// ~/Talaria; backend/sandbox).
	DefaultWorkspace string
	// ApprovalTimeout and ClarifyTimeout override how long the agent waits for an
	// answer (the runtime's defaults when zero; whole seconds).
	ApprovalTimeout, ClarifyTimeout time.Duration
}

// Core is the shared part of one app process's backend. Its fields are set by New and
// by the wiring (Runner, Tasks) before any area is used, and never change after.
type Core struct {
	Paths   Paths
	Version string
	// Commit and BuildDate: see Config.
	Commit, BuildDate string
	Log               *slog.Logger
	Store             *store.Store
	Bus               *bus.Bus
	Vault             *vault.Vault
	// Sidecar is the built-in runtime's sidecar, started with the app.
	Sidecar *supervisor.Supervisor
	// Runner runs every turn (set by the wiring: its configuration comes from the areas).
	Runner *turn.Runner
	// Tasks runs background tasks and side questions (set by the wiring).
	Tasks            *tasks.Manager
	DefaultWorkspace string
	// ApprovalTimeout, ClarifyTimeout: see Config.
	ApprovalTimeout, ClarifyTimeout time.Duration

	sidecarConfig supervisor.Config
	runtimes      runtimePool

	mu      sync.Mutex
	started time.Time
}

// New builds the Core of cfg: its bus, the built-in runtime's (stopped) sidecar
// supervisor, whose status is published on the bus, and an empty runtime pool.
func New(cfg Config) *Core {
	c := &Core{Paths: cfg.Paths, Version: cfg.Version, Commit: cfg.Commit, BuildDate: cfg.BuildDate, Log: cfg.Log,
		Store: cfg.Store, Bus: bus.New(), Vault: cfg.Vault, DefaultWorkspace: cfg.DefaultWorkspace,
		ApprovalTimeout: cfg.ApprovalTimeout, ClarifyTimeout: cfg.ClarifyTimeout, sidecarConfig: cfg.Sidecar,
		runtimes: runtimePool{kinds: map[string]RuntimeKind{}, entries: map[string]*poolEntry{}}}
	scfg := cfg.Sidecar
	scfg.RuntimeID = store.RuntimeBuiltin
	c.Sidecar = supervisor.New(scfg, cfg.Log.With("component", "supervisor"))
	c.Sidecar.OnStatus(func(status supervisor.Status) {
		c.Bus.Publish(bus.Event{Name: bus.EventSidecarStatus, Payload: status})
	})
	return c
}

// MarkStarted records that the app started now (backend.Service.Start).
func (c *Core) MarkStarted() {
	c.mu.Lock()
	c.started = time.Now()
	c.mu.Unlock()
}

// Started is when the app started (MarkStarted); the zero time before.
func (c *Core) Started() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// UptimeS is how long ago the app started, in seconds (0 before it did).
func (c *Core) UptimeS() float64 {
	if t := c.Started(); !t.IsZero() {
		return time.Since(t).Seconds()
	}
	return 0
}

// SidecarConfig is the built-in runtime's supervisor configuration (a copy), the base
// of every other sidecar (and of an ACP agent's test start).
func (c *Core) SidecarConfig() supervisor.Config { return c.sidecarConfig }

// Setting reads the setting key from the store, def when it is not set. Errors: the
// store's.
func (c *Core) Setting(ctx context.Context, key, def string) (string, error) {
	v, ok, err := c.Store.Setting(ctx, key)
	if err != nil {
		return "", err
	}
	if !ok {
		return def, nil
	}
	return v, nil
}

// SessionsChanged tells the window that what the sidebar shows changed
// (bus.EventSessionsChanged): every action that changes a session publishes it after it
// succeeded.
func (c *Core) SessionsChanged() { c.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged}) }

package app

import "sync"

// Services are the window's bound services, one per area of the app: each is a small
// type of its own, bound beside the others (main.go binds Services.Bound), whose
// exported methods the window calls as window.go.app.<Type>.<Method>. App itself binds
// nothing: it holds the lifecycle (Wails' hooks, the tray, quick ask) the services share.
type Services struct {
	Chats     *Chats
	Turns     *Turns
	Approvals *Approvals
	Settings  *Settings
	Agents    *Agents
	ACP       *ACP
	MCP       *MCP
	Tasks     *Tasks
	About     *About
	Imports   *Imports
	Remotes   *Remotes
}

// services holds a's Services, made on first use (an App made as a literal, as tests
// do, gets them too).
type services struct {
	once sync.Once
	s    *Services
}

// ServicesOf returns a's bound services, made once: main.go binds them, the drivers
// call them as the window would. (A function, not a method: App's methods would be
// bound.)
func ServicesOf(a *App) *Services { return a.services() }

func (a *App) services() *Services {
	a.bound.once.Do(func() {
		a.bound.s = &Services{
			Chats:     &Chats{app: a},
			Turns:     &Turns{app: a},
			Approvals: &Approvals{app: a},
			Settings:  &Settings{app: a},
			Agents:    &Agents{app: a},
			ACP:       &ACP{app: a},
			MCP:       &MCP{app: a},
			Tasks:     &Tasks{app: a},
			About:     &About{app: a},
			Imports:   NewImports(a),
			Remotes:   NewRemotes(a),
		}
	})
	return a.bound.s
}

// Bound lists the services for wails.Run's Bind option, in a fixed order.
func (s *Services) Bound() []any {
	return []any{s.Chats, s.Turns, s.Approvals, s.Settings, s.Agents, s.ACP, s.MCP, s.Tasks, s.About, s.Imports, s.Remotes}
}

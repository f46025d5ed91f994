package app

import (
	"talaria/backend/remote"
)

// Remotes is bound to the window beside App: the user's remote hosts, whose agents run
// there through their own ssh (backend/remote; docs/remote.md). Chats choose a host's
// runtimes in the runtime pickers (ListRuntimes).
type Remotes struct{ app *App }

// NewRemotes returns the Remotes of a (bound in main.go's Bind list).
func NewRemotes(a *App) *Remotes { return &Remotes{app: a} }

// ListRemoteHosts returns the saved hosts with what each one's last Test found.
func (r *Remotes) ListRemoteHosts() ([]remote.HostRecord, error) {
	hosts, err := r.app.service().Remote.Hosts(r.app.bg())
	return lists(hosts), userError(err)
}

// SaveRemoteHost adds a host (previous "") or replaces the one named previous
// (renaming it when the name changed). Errors: a field's (code invalid, field named),
// e.g. a name another host has.
func (r *Remotes) SaveRemoteHost(h remote.Host, previous string) (remote.HostRecord, error) {
	rec, err := r.app.service().Remote.SaveHost(r.app.bg(), h, previous)
	return lists(rec), userError(err)
}

// DeleteRemoteHost forgets the host named name.
func (r *Remotes) DeleteRemoteHost(name string) error {
	return userError(r.app.service().Remote.DeleteHost(r.app.bg(), name))
}

// TestRemoteHost connects to the host, reports what it has and installs the sidecar
// there. Errors say what ssh or the host said and what to do.
func (r *Remotes) TestRemoteHost(name string) (remote.HostRecord, error) {
	rec, err := r.app.service().Remote.Test(r.app.bg(), name)
	return lists(rec), userError(err)
}

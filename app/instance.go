package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/wailsapp/wails/v2/pkg/options"
)

// ErrAlreadyRunning is returned by ClaimInstance when another Talaria process runs on
// the same data folder; that process was asked to bring its window to the front.
var ErrAlreadyRunning = errors.New("Talaria is already running on this data folder; its window was brought to the front")

// Instance is this process's claim to be the only Talaria on its data folder (one
// instance per database). On Linux the claim is a well-known name on the D-Bus session
// bus, taken before the database is opened; Wails' own lock (used where there is no
// session bus: macOS, Windows) only starts after the window's startup hook has run,
// which would let a second process open and settle the first one's database.
type Instance struct {
	id   string // unique per data folder, usable as a D-Bus name element
	conn *dbus.Conn

	mu       sync.Mutex
	activate func(args []string)
	pending  [][]string // activations (their arguments) that arrived before a handler was set
}

const (
	instanceNamePrefix = "io.talaria.Desktop.i"
	instancePath       = dbus.ObjectPath("/io/talaria/Desktop")
	instanceIface      = "io.talaria.Desktop"
)

// InstanceID is the single-instance id of dataDir: the same folder always gives the
// same id, so a self-test or test run on a temporary folder never meets the user's app.
func InstanceID(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(filepath.Clean(dataDir)))
	return "talaria_" + hex.EncodeToString(sum[:8])
}

// ClaimInstance claims dataDir for this process. When another process holds it, that
// process is asked to show its window and ErrAlreadyRunning is returned; when it holds
// it but does not answer within 5 s, another error says so. Without a D-Bus session bus
// the claim falls to Wails (see WailsLock) and ClaimInstance succeeds.
func ClaimInstance(dataDir string) (*Instance, error) {
	in := &Instance{id: InstanceID(dataDir)}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return in, nil
	}
	name := instanceNamePrefix + in.id[len("talaria_"):]
	if err := conn.Export(instanceHandler{in}, instancePath, instanceIface); err != nil {
		conn.Close()
		return in, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue)
		if err != nil {
			conn.Close()
			return in, nil
		}
		if reply == dbus.RequestNameReplyPrimaryOwner || reply == dbus.RequestNameReplyAlreadyOwner {
			in.conn = conn
			return in, nil
		}
		call := conn.Object(name, instancePath).CallWithContext(ctx, instanceIface+".Activate", 0, os.Args[1:])
		if call.Err == nil {
			conn.Close()
			return nil, ErrAlreadyRunning
		}
		// The holder left the bus between the claim and the call (it was quitting: the
		// bus drops a process's name when it sees its connection end, which may come
		// after the process is gone): the folder is free, claim it again.
		if holderLeft(call.Err) && ctx.Err() == nil {
			continue
		}
		conn.Close()
		return nil, fmt.Errorf("another Talaria process holds %s but does not answer (%v); close it or end it, then start Talaria again", dataDir, call.Err)
	}
}

// holderLeft reports whether err, the answer to Activate, says the name's holder is no
// longer on the bus: it disconnected without replying, or the name has no owner now.
func holderLeft(err error) bool {
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
			return true
		}
	}
	return false
}

// OnActivate sets what a second launch does (show the window, open a new chat); fn
// gets that launch's arguments (without the program name). Activations that arrived
// earlier run fn at once, in order.
func (in *Instance) OnActivate(fn func(args []string)) {
	in.mu.Lock()
	in.activate = fn
	var run [][]string
	if fn != nil {
		run, in.pending = in.pending, nil
	}
	in.mu.Unlock()
	if len(run) > 0 {
		go func() {
			for _, args := range run {
				fn(args)
			}
		}()
	}
}

func (in *Instance) activated(args []string) {
	in.mu.Lock()
	fn := in.activate
	if fn == nil {
		in.pending = append(in.pending, args)
	}
	in.mu.Unlock()
	if fn != nil {
		go fn(args)
	}
}

// WailsLock is the Wails single-instance option to use: nil when the D-Bus claim is
// held, else Wails' own lock keyed by the same id (macOS, Windows).
func (in *Instance) WailsLock() *options.SingleInstanceLock {
	if in == nil || in.conn != nil {
		return nil
	}
	return &options.SingleInstanceLock{UniqueId: in.id, OnSecondInstanceLaunch: func(d options.SecondInstanceData) { in.activated(d.Args) }}
}

// Release gives the claim up (the bus also drops it when the process dies).
func (in *Instance) Release() {
	if in != nil && in.conn != nil {
		_ = in.conn.Close()
		in.conn = nil
	}
}

type instanceHandler struct{ in *Instance }

// Activate is the D-Bus method a second launch calls; args are its arguments.
func (h instanceHandler) Activate(args []string) *dbus.Error {
	h.in.activated(args)
	return nil
}

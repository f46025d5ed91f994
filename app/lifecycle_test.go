package app

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/godbus/dbus/v5"

	"talaria/backend"
	"talaria/internal/testwait"
)

// privateBus starts a dbus-daemon of its own and points the session bus at it.
func privateBus(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
}

func TestInstanceID(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if InstanceID(a) != InstanceID(a+"/") || InstanceID(a) != InstanceID(filepath.Join(a, "x", "..")) {
		t.Fatal("one folder gives different ids")
	}
	if InstanceID(a) == InstanceID(b) {
		t.Fatal("two folders share an id")
	}
	if id := InstanceID(a); !strings.HasPrefix(id, "talaria_") || strings.ContainsAny(id, "-./") {
		t.Fatalf("id %q is not usable as a D-Bus name element", id)
	}
}

func TestClaimInstanceOnePerFolder(t *testing.T) {
	privateBus(t)
	dir := t.TempDir()
	first, err := ClaimInstance(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	if first.WailsLock() != nil {
		t.Fatal("the D-Bus claim is held, yet Wails' lock is asked for too")
	}
	shown := make(chan []string, 4)
	first.OnActivate(func(args []string) { shown <- args })

	if _, err := ClaimInstance(dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second claim: %v, want ErrAlreadyRunning", err)
	}
	if args := testwait.Recv(t, shown, "the first instance to be asked to show its window"); !slices.Equal(args, os.Args[1:]) {
		t.Fatalf("the first instance got the arguments %q, want the second launch's %q", args, os.Args[1:])
	}

	other, err := ClaimInstance(t.TempDir())
	if err != nil {
		t.Fatalf("another folder: %v", err)
	}
	other.Release()

	first.Release()
	again, err := ClaimInstance(dir)
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	again.Release()
}

func TestClaimInstanceActivationBeforeHandler(t *testing.T) {
	privateBus(t)
	dir := t.TempDir()
	first, err := ClaimInstance(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	if _, err := ClaimInstance(dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second claim: %v", err)
	}
	shown := make(chan struct{}, 1)
	first.OnActivate(func([]string) { shown <- struct{}{} })
	testwait.Recv(t, shown, "an activation that came before the handler (lost?)")
}

// quittingHolder holds an instance's name and, asked to activate, leaves the bus
// without replying: a Talaria that was quitting when a new launch asked it.
type quittingHolder struct {
	asked, left chan struct{}
}

func (q quittingHolder) Activate(args []string) *dbus.Error {
	close(q.asked)
	<-q.left // the connection is closed: this reply is never sent
	return nil
}

// A launch that meets a holder of its folder which quits meanwhile (it disconnects
// without answering the activation: the bus may drop its name only after its process
// is gone) claims the folder itself instead of failing with "does not answer".
func TestClaimInstanceAfterTheHolderQuits(t *testing.T) {
	privateBus(t)
	dir := t.TempDir()
	holder, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	q := quittingHolder{asked: make(chan struct{}), left: make(chan struct{})}
	if err := holder.Export(q, instancePath, instanceIface); err != nil {
		t.Fatal(err)
	}
	name := instanceNamePrefix + InstanceID(dir)[len("talaria_"):]
	if r, err := holder.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatal(r, err)
	}
	go func() {
		<-q.asked
		holder.Close()
		close(q.left)
	}()
	in, err := ClaimInstance(dir)
	if err != nil {
		t.Fatalf("the holder quit while asked, yet: %v", err)
	}
	defer in.Release()
	testwait.Done(t, q.left, "the holder to be asked and leave")
	if in.WailsLock() != nil {
		t.Fatal("the folder was not claimed on the bus")
	}
	if _, err := ClaimInstance(dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("a launch after the claim: %v, want ErrAlreadyRunning", err)
	}
}

func TestClaimInstanceWithoutBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "none"))
	in, err := ClaimInstance(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lock := in.WailsLock()
	if lock == nil || lock.UniqueId != in.id || lock.OnSecondInstanceLaunch == nil {
		t.Fatalf("without a bus Wails' lock must take over: %+v", lock)
	}
}

// fakeNotifications is an org.freedesktop.Notifications server on the private bus.
type fakeNotifications struct {
	conn *dbus.Conn
	mu   sync.Mutex
	got  []string // summary + "|" + body + "|" + actions
}

func (f *fakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, summary+"|"+body+"|"+strings.Join(actions, ","))
	return uint32(len(f.got)), nil
}

func (f *fakeNotifications) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"actions"}, nil
}

func (f *fakeNotifications) CloseNotification(uint32) *dbus.Error { return nil }

func (f *fakeNotifications) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "fake", "test", "1", "1.2", nil
}

type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logSink) Warn(msg string, args ...any) {
	l.mu.Lock()
	l.msgs = append(l.msgs, msg)
	l.mu.Unlock()
}

func TestDesktopNotifierOpensTheSessionOnClick(t *testing.T) {
	privateBus(t)
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fake := &fakeNotifications{conn: conn}
	if err := conn.Export(fake, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if r, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatal(r, err)
	}
	opened := make(chan string, 1)
	log := &logSink{}
	d := newDesktopNotifier(log, func(id string) { opened <- id })
	defer d.close()
	d.send(backend.Notice{Title: "Turn finished", Body: "The agent finished in “Chat”.", SessionID: "s-42"})
	fake.mu.Lock()
	got := append([]string(nil), fake.got...)
	fake.mu.Unlock()
	if len(got) != 1 || got[0] != "Turn finished|The agent finished in “Chat”.|default,Open" {
		t.Fatalf("notifications = %q", got)
	}
	if err := conn.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", uint32(1), "default"); err != nil {
		t.Fatal(err)
	}
	if id := testwait.Recv(t, opened, "clicking the notification to open its session"); id != "s-42" {
		t.Fatalf("opened %q", id)
	}
	if len(log.msgs) != 0 {
		t.Fatalf("logged %q", log.msgs)
	}
}

func TestDesktopNotifierFailsQuietly(t *testing.T) {
	privateBus(t) // a bus without a notification server
	t.Setenv("PATH", t.TempDir())
	log := &logSink{}
	d := newDesktopNotifier(log, nil)
	defer d.close()
	for i := 0; i < 3; i++ {
		d.send(backend.Notice{Title: "Turn finished", Body: "x"})
	}
	if len(log.msgs) != 1 {
		t.Fatalf("want one warning, got %q", log.msgs)
	}
}

func TestConfirmQuitText(t *testing.T) {
	one, many := confirmQuitText(1), confirmQuitText(3)
	if !strings.Contains(one, "A turn is still running") || !strings.Contains(many, "3 turns are still running") {
		t.Fatalf("texts: %q / %q", one, many)
	}
	if strings.Contains(one+many, "%") {
		t.Fatal("GTK reads the text as a format: no % allowed")
	}
}

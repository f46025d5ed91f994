package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// KindSSH is the id prefix of remote runtimes ("ssh:<host>...").
const KindSSH = core.KindRemote

// KeyHosts is the settings key of the saved hosts (a JSON list of HostRecord).
const KeyHosts = "remote.hosts"

// startTimeout is how long a remote runtime may take to answer rpc.hello: the
// connection, the sidecar's start, and for Hermes its gateway's.
const startTimeout = 2 * time.Minute

// Agent is an ACP agent Test looks for on a host's PATH.
type Agent struct {
	ID      string   // e.g. "opencode"
	Name    string   // shown to the user, e.g. "OpenCode"
	Command string   // the executable, e.g. "opencode"
	Args    []string // the words that start its ACP server, e.g. ["acp"]
}

// HostRecord is a saved host with what its last Test found.
type HostRecord struct {
	Host
	Probe    *Probe `json:"probe"`     // nil before the first Test
	ProbedAt int64  `json:"probed_at"` // when, in Unix milliseconds
}

// Kind is the runtime kind of remote hosts (core.RuntimeKind). Set its fields, then
// register it with Core.RegisterRuntimeKind.
type Kind struct {
	Store   *store.Store
	SSH     SSH
	Binary  string  // this app's own binary: what is copied to the hosts
	Version string  // this app's version: the install folder's name there
	Agents  []Agent // the ACP agents Test looks for
	Log     *slog.Logger
	// Removed, when set, is called with a deleted host's name: its runtimes' sidecars
	// are stopped (their link would otherwise keep connecting to it).
	Removed func(host string)

	mu        sync.Mutex
	clock     func() time.Time     // SetClock; time.Now when nil
	installed map[string]installed // Host.key() -> the build last found or put there
	staged    map[string]string    // Host.key()|sha256 -> the file's path there
}

// Kind is KindSSH.
func (k *Kind) Kind() string { return KindSSH }

// Hosts returns the saved hosts in the order they were added. Errors: the store's.
func (k *Kind) Hosts(ctx context.Context) ([]HostRecord, error) {
	v, ok, err := k.Store.Setting(ctx, KeyHosts)
	if err != nil || !ok {
		return []HostRecord{}, err
	}
	var out []HostRecord
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("the saved remote hosts are unreadable (%v); remove and add them again in Settings", err)
	}
	return out, nil
}

func (k *Kind) host(ctx context.Context, name string) (HostRecord, bool, error) {
	hosts, err := k.Hosts(ctx)
	if err != nil {
		return HostRecord{}, false, err
	}
	for _, h := range hosts {
		if h.Name == name {
			return h, true, nil
		}
	}
	return HostRecord{}, false, nil
}

func (k *Kind) saveHosts(ctx context.Context, hosts []HostRecord) error {
	b, err := json.Marshal(hosts)
	if err != nil {
		return err
	}
	return k.Store.SetSetting(ctx, KeyHosts, string(b))
}

// SaveHost adds h (previous "") or replaces the saved host named previous with it,
// renaming it when h.Name differs; what its last Test found is kept only when the
// connection settings did not change. A renamed host's runtimes are stopped (chats on
// the old name say their runtime is gone). Errors: *FieldError (field "name" when
// another host has that name, or previous is not saved); the store's.
func (k *Kind) SaveHost(ctx context.Context, h Host, previous string) (HostRecord, error) {
	h.Name, h.Target, h.IdentityFile, h.Hermes = strings.TrimSpace(h.Name), strings.TrimSpace(h.Target),
		strings.TrimSpace(h.IdentityFile), strings.TrimSpace(h.Hermes)
	if err := h.Validate(); err != nil {
		return HostRecord{}, err
	}
	hosts, err := k.Hosts(ctx)
	if err != nil {
		return HostRecord{}, err
	}
	if h.Name != previous && slices.ContainsFunc(hosts, func(o HostRecord) bool { return o.Name == h.Name }) {
		return HostRecord{}, &FieldError{Field: "name", Message: "another host is named " + h.Name + "; choose another name, or edit that host"}
	}
	rec := HostRecord{Host: h}
	if previous == "" {
		hosts = append(hosts, rec)
	} else {
		i := slices.IndexFunc(hosts, func(o HostRecord) bool { return o.Name == previous })
		if i < 0 {
			return HostRecord{}, &FieldError{Field: "name", Message: "the host " + previous + " is no longer saved; add it again"}
		}
		if hosts[i].Host == h {
			rec = hosts[i]
		}
		hosts[i] = rec
	}
	if err := k.saveHosts(ctx, hosts); err != nil {
		return HostRecord{}, err
	}
	if previous != "" && previous != h.Name && k.Removed != nil {
		k.Removed(previous)
	}
	return rec, nil
}

// startCheck runs the copied sidecar (%s: its path from the home) and, when it does
// not start, prints its last lines to stderr and exits 4.
const startCheck = `out=$(./%s sidecar --help 2>&1) || { printf 'the copied sidecar does not start there: %%s\n' "$(printf '%%s\n' "$out" | tail -n 3)" >&2; exit 4; }
`

// Test's limits: looking at what a host has, and copying the sidecar there (about
// 20 MB; a slow link takes minutes).
const (
	ProbeTimeout   = 90 * time.Second
	InstallTimeout = 10 * time.Minute
)

// timedOut is err, or a *Error saying that step on host took longer than limit when
// ctx ran out.
func timedOut(err error, ctx context.Context, host, step string, limit time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Host: host, Code: CodeUnreachable, Detail: fmt.Sprintf("%s took longer than %s", step, limit)}
	}
	return err
}

// DeleteHost forgets the host named name (chats on it say their runtime is gone).
// Errors: the store's.
func (k *Kind) DeleteHost(ctx context.Context, name string) error {
	hosts, err := k.Hosts(ctx)
	if err != nil {
		return err
	}
	if err := k.saveHosts(ctx, slices.DeleteFunc(hosts, func(o HostRecord) bool { return o.Name == name })); err != nil {
		return err
	}
	if k.Removed != nil {
		k.Removed(name)
	}
	return nil
}

// OfHost reports whether runtime id runs on host name ("ssh:<name>" and
// "ssh:<name>:...").
func OfHost(id, name string) bool {
	prefix := KindSSH + ":" + name
	return id == prefix || strings.HasPrefix(id, prefix+":")
}

func (k *Kind) agentCommands() map[string]string {
	m := make(map[string]string, len(k.Agents))
	for _, a := range k.Agents {
		m[a.ID] = a.Command
	}
	return m
}

// Test connects to the saved host name, looks at what it has (Probe), copies the
// sidecar there when it is missing or outdated, and saves what it found. Errors:
// *Error (what ssh or the host said, with Hint); *FieldError ("name") for a host no longer saved.
func (k *Kind) Test(ctx context.Context, name string) (HostRecord, error) {
	rec, ok, err := k.host(ctx, name)
	if err != nil {
		return HostRecord{}, err
	}
	if !ok {
		return HostRecord{}, &FieldError{Field: "name", Message: "no host is named " + name + " any more (it was removed); add it again"}
	}
	sum, err := FileSum(k.Binary)
	if err != nil {
		return HostRecord{}, &Error{Host: name, Code: CodeRemote, Detail: "cannot read this app's own binary: " + err.Error()}
	}
	pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	p, err := k.SSH.Probe(pctx, rec.Host, k.Version, sum, k.agentCommands())
	cancel()
	if err != nil {
		return HostRecord{}, timedOut(err, pctx, rec.Name, "looking at what it has", ProbeTimeout)
	}
	if p.Supported() {
		ictx, cancel := context.WithTimeout(ctx, InstallTimeout)
		err := k.SSH.Install(ictx, rec.Host, p, k.Binary, k.Version, sum)
		cancel()
		if err != nil {
			return HostRecord{}, timedOut(err, ictx, rec.Name, "copying Talaria's sidecar there", InstallTimeout)
		}
		p.Sidecar = "current"
		// The copy must start there (a build that links libraries the host lacks
		// would not).
		vctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
		_, err = k.SSH.Run(vctx, rec.Host, fmt.Sprintf(startCheck, SidecarPath(k.Version)), nil)
		cancel()
		if err != nil {
			return HostRecord{}, timedOut(err, vctx, rec.Name, "starting the copied sidecar", ProbeTimeout)
		}
		k.markInstalled(rec.Host, sum)
	} else {
		p.Notes = append(p.Notes, fmt.Sprintf("This host runs %s %s; Talaria runs agents only on %s %s hosts (it copies its own program there).",
			p.OS, p.Arch, runtime.GOOS, runtime.GOARCH))
	}
	if rec.Hermes != "" && p.HermesPython == "" {
		p.Notes = append(p.Notes, "No Hermes Agent was found at "+rec.Hermes+" (its path in this host's settings): give the Python of its venv or its hermes launcher, or leave it empty to look in ~/.hermes and on the PATH.")
	}
	rec.Probe, rec.ProbedAt = &p, time.Now().UnixMilli()
	hosts, err := k.Hosts(ctx)
	if err != nil {
		return HostRecord{}, err
	}
	for i := range hosts {
		if hosts[i].Name == name && hosts[i].Host == rec.Host {
			hosts[i] = rec
		}
	}
	return rec, k.saveHosts(ctx, hosts)
}

func (h Host) key() string {
	b, _ := json.Marshal(h)
	return string(b)
}

// installed is a build of the sidecar found or put on a host, and when.
type installed struct {
	sum string
	at  time.Time
}

// trustInstalled is how long a sidecar found or put on a host is taken to be there
// without looking again: a start soon after Test or another start does not probe
// again, a restart after a failure (the copy deleted there) does.
const trustInstalled = 30 * time.Second

// SetClock replaces the clock that ages what ensure trusts (tests); nil is time.Now.
func (k *Kind) SetClock(now func() time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.clock = now
}

func (k *Kind) nowLocked() time.Time {
	if k.clock != nil {
		return k.clock()
	}
	return time.Now()
}

func (k *Kind) markInstalled(h Host, sum string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.installed == nil {
		k.installed = map[string]installed{}
	}
	k.installed[h.key()] = installed{sum: sum, at: k.nowLocked()}
}

// ensure makes sure this build's sidecar is on h: unless it was found or put there in
// the last trustInstalled, it probes and copies when needed.
func (k *Kind) ensure(ctx context.Context, h Host) error {
	sum, err := FileSum(k.Binary)
	if err != nil {
		return &Error{Host: h.Name, Code: CodeRemote, Detail: "cannot read this app's own binary: " + err.Error()}
	}
	k.mu.Lock()
	in := k.installed[h.key()]
	done := in.sum == sum && k.nowLocked().Sub(in.at) < trustInstalled
	k.mu.Unlock()
	if done {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	p, err := k.SSH.Probe(pctx, h, k.Version, sum, nil)
	cancel()
	if err != nil {
		return timedOut(err, pctx, h.Name, "looking at what it has", ProbeTimeout)
	}
	ictx, cancel := context.WithTimeout(ctx, InstallTimeout)
	err = k.SSH.Install(ictx, h, p, k.Binary, k.Version, sum)
	cancel()
	if err != nil {
		return timedOut(err, ictx, h.Name, "copying Talaria's sidecar there", InstallTimeout)
	}
	k.markInstalled(h, sum)
	return nil
}

// Runtimes lists each saved host's runtimes: the built-in one always, Hermes and the
// ACP agents its last Test found.
func (k *Kind) Runtimes(ctx context.Context) ([]core.RuntimeOption, error) {
	hosts, err := k.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	var out []core.RuntimeOption
	for _, h := range hosts {
		base := KindSSH + ":" + h.Name
		opt := core.RuntimeOption{ID: base, Label: "Built-in on " + h.Name, Available: true,
			Detail: "Talaria's own agent, running on " + h.Target + " over ssh"}
		if h.Probe == nil {
			opt.Available, opt.Problem, opt.Hint = false, "Not tested yet.", "Use Test in Settings, Remote hosts."
		} else if !h.Probe.Supported() {
			e := &Error{Host: h.Name, Code: CodeUnsupported, Detail: h.Probe.OS + " " + h.Probe.Arch}
			opt.Available, opt.Problem, opt.Hint = false, e.Error(), e.Hint()
		}
		out = append(out, opt)
		if h.Probe == nil || !h.Probe.Supported() {
			continue
		}
		if h.Probe.HermesPython != "" {
			out = append(out, core.RuntimeOption{ID: base + ":" + protocol.RuntimeHermes, Label: "Hermes Agent on " + h.Name,
				Detail: "Hermes Agent " + h.Probe.HermesVersion + " · " + h.Target, Available: true})
		}
		for _, a := range k.Agents {
			if path := h.Probe.Agents[a.ID]; path != "" {
				out = append(out, core.RuntimeOption{ID: base + ":" + protocol.RuntimeACP + ":" + a.ID,
					Label: a.Name + " on " + h.Name, Detail: path + " · " + h.Target, Available: true})
			}
		}
	}
	return out, nil
}

// Spec returns how to start runtime id on its host. Errors:
// *core.RuntimeUnavailableError (unknown host or agent, not tested, not found there).
func (k *Kind) Spec(ctx context.Context, id string) (core.RuntimeSpec, error) {
	rest := strings.TrimPrefix(id, KindSSH+":")
	name, inner, _ := strings.Cut(rest, ":")
	rec, ok, err := k.host(ctx, name)
	if err != nil {
		return core.RuntimeSpec{}, err
	}
	if !ok {
		return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id,
			Message: fmt.Sprintf("The remote host %q of this chat was removed from Settings.", name),
			Hint:    "Add it again in Settings, Remote hosts, or choose another runtime for the chat."}
	}
	t := &transport{kind: k, host: rec.Host}
	spec := core.RuntimeSpec{ID: id, Transport: t, ReadyWait: startTimeout, HelloTimeout: startTimeout}
	kind, agent, _ := strings.Cut(inner, ":")
	switch kind {
	case "":
		spec.Kind, spec.Label = protocol.RuntimeBuiltin, "Built-in on "+name
		return spec, nil
	case protocol.RuntimeHermes:
		if rec.Probe == nil || rec.Probe.HermesPython == "" {
			return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id,
				Message: "No Hermes Agent was found on " + name + " when it was last tested.",
				Hint:    "Install Hermes Agent there (or give its path in Settings, Remote hosts), then use Test."}
		}
		spec.Kind, spec.Label = protocol.RuntimeHermes, "Hermes Agent on "+name
		spec.Args = []string{"--runtime", protocol.RuntimeHermes, "--hermes-python", rec.Probe.HermesPython,
			"--hermes-home", rec.Probe.HermesHome, "--hermes-start-timeout", "90s"}
		return spec, nil
	case protocol.RuntimeACP:
		i := slices.IndexFunc(k.Agents, func(a Agent) bool { return a.ID == agent })
		path := ""
		if rec.Probe != nil {
			path = rec.Probe.Agents[agent]
		}
		if i < 0 || path == "" {
			return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id,
				Message: fmt.Sprintf("The agent %q was not found on %s when it was last tested.", agent, name),
				Hint:    "Install it there, then use Test in Settings, Remote hosts."}
		}
		a := k.Agents[i]
		spec.Kind, spec.Label = protocol.RuntimeACP, a.Name+" on "+name
		spec.Args = append([]string{"--runtime", protocol.RuntimeACP, "--agent-name", a.Name, "--", path}, a.Args...)
		return spec, nil
	}
	return core.RuntimeSpec{}, &core.RuntimeUnavailableError{RuntimeID: id,
		Message: fmt.Sprintf("This chat uses the remote runtime %q, which this version of Talaria does not know.", id),
		Hint:    "Choose another runtime for the chat, or update Talaria."}
}

// transport runs a sidecar on a host through ssh (core.Transport).
type transport struct {
	kind *Kind
	host Host
}

func (t *transport) Key() string { return t.host.key() + "|" + strings.Join(t.kind.SSH.Options, " ") }

// WorkspaceDir is the folder, relative to the login's home, that chats on a host work
// in (created when the sidecar starts there).
const WorkspaceDir = "Talaria"

// GiveUp is how long a remote sidecar's link keeps connecting again after the
// connection drops (laptop sleep, Wi-Fi) before the turn there is given up.
const GiveUp = 15 * time.Minute // sidecar/link.DefaultGiveUp, passed as --give-up

// Command is this binary's `talaria sidecar link`, which runs ssh running `env K=V...
// ~/.cache/talaria/<version>/talaria sidecar attach -- <argv[1:]...>` on the host, from
// the login's home, after creating ~/Talaria there. The sidecar runs there as a daemon
// that outlives a dropped connection; the link connects again and resends what either
// side missed (package sidecar/link).
func (t *transport) Command(argv, env []string) (string, []string) {
	var words []string
	if len(env) > 0 {
		words = append(append(words, "env"), env...)
	}
	words = append(words, "./"+SidecarPath(t.kind.Version), "sidecar", "attach", "--")
	if len(argv) > 0 && argv[0] == "sidecar" {
		argv = argv[1:]
	}
	words = append(words, argv...)
	line, err := Quote(words)
	if err != nil {
		// A NUL byte cannot come from settings (they are validated); run something that
		// fails with the reason rather than a truncated command.
		line = "echo 'talaria: a sidecar argument cannot be passed to the remote shell' >&2; exit 2"
	}
	// From the login's home whatever its login script did.
	line = "cd && mkdir -p " + WorkspaceDir + " && exec " + line
	args := []string{"sidecar", "link", "--give-up", GiveUp.String(), "--", t.kind.SSH.program()}
	return t.kind.Binary, append(args, t.kind.SSH.Argv(t.host, line)...)
}

// CallWait is how long a call may wait for its answer (core.Patient): a call made while
// the connection is down is answered once it is back, up to GiveUp.
func (t *transport) CallWait() time.Duration { return GiveUp + time.Minute }

// ExplainExit is ssh's reason when the connection failed before the sidecar answered
// (status 255: ssh's own; 127: the sidecar's copy is missing there), as an *Error with
// what to do (core.Explainer); nil for the sidecar's own exits, whose answer says why.
func (t *transport) ExplainExit(status int, stderr string) error {
	if status != 255 && status != 127 {
		return nil
	}
	return Classify(t.host, status, stderr)
}

// Lost is what a turn cut short by the end of the connection says (core.Loser): the
// link gave up after GiveUp, or the sidecar there was gone when it came back.
func (t *transport) Lost() (string, string) {
	return "the connection to " + t.host.Name + " was lost for more than " + fmtMinutes(GiveUp) + " (or the agent's process there stopped); the turn there was stopped",
		"Check that " + t.host.Name + " is reachable; Talaria connects again by itself. Send your message again (its partial answer is kept)."
}

func fmtMinutes(d time.Duration) string {
	return strconv.Itoa(int(d.Minutes())) + " minutes"
}

// Workspace is ~/Talaria on the host (core.Workspacer): the home its last Test found.
// Errors: *core.RuntimeUnavailableError when the host was never tested.
func (t *transport) Workspace(ctx context.Context) (string, error) {
	rec, ok, err := t.kind.host(ctx, t.host.Name)
	if err != nil {
		return "", err
	}
	if !ok || rec.Probe == nil || rec.Probe.Home == "" {
		return "", &core.RuntimeUnavailableError{RuntimeID: KindSSH + ":" + t.host.Name,
			Message: "Talaria does not know the home folder on " + t.host.Name + " yet.",
			Hint:    "Use Test in Settings, Remote hosts, then send again."}
	}
	return strings.TrimRight(rec.Probe.Home, "/") + "/" + WorkspaceDir, nil
}

// stageCheck prints the staged file's path when it is there with the right sum.
const stageCheck = shSum256 + `f="$HOME/.cache/talaria/files/%[1]s"
if [ -f "$f" ] && [ "$(sum256 "$f")" = %[1]s ]; then printf '%%s
' "$f"; fi
`

// stageCopy writes stdin there through a temporary file checked by its sum.
const stageCopy = shSum256 + `set -e
d="$HOME/.cache/talaria/files"; mkdir -p "$d"; chmod 700 "$d"; t="$d/.%[1]s.$$"
trap 'rm -f "$t"' EXIT
(umask 077; cat > "$t")
s=$(sum256 "$t")
if [ "$s" != %[1]s ]; then echo "the copied file's checksum is $s, not %[1]s (damaged in transit or the disk is full)" >&2; exit 3; fi
mv -f "$t" "$d/%[1]s"; trap - EXIT
printf '%%s
' "$d/%[1]s"
`

var sumRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// stagedPath is the line of out naming the staged file of sum (a login script may
// print other lines before it), "" when none does.
func stagedPath(out []byte, sum string) string {
	path := ""
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "/") && strings.HasSuffix(l, "/.cache/talaria/files/"+sum) {
			path = l
		}
	}
	return path
}

// Stage copies a file (an image a message carries) to ~/.cache/talaria/files/<sha256>
// on the host, once per host and content (core.Stager), and returns its path there.
// Errors: *Error; a sum that is not 64 lowercase hex digits.
func (t *transport) Stage(ctx context.Context, localPath, sum string) (string, error) {
	if !sumRe.MatchString(sum) {
		return "", fmt.Errorf("not a SHA-256 sum: %q", sum)
	}
	key := t.host.key() + "|" + sum
	t.kind.mu.Lock()
	path, done := t.kind.staged[key]
	t.kind.mu.Unlock()
	if done {
		return path, nil
	}
	out, err := t.kind.SSH.Run(ctx, t.host, fmt.Sprintf(stageCheck, sum), nil)
	if err != nil {
		return "", err
	}
	if path = stagedPath(out, sum); path == "" {
		f, err := os.Open(localPath)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if out, err = t.kind.SSH.Run(ctx, t.host, fmt.Sprintf(stageCopy, sum), f); err != nil {
			return "", err
		}
		if path = stagedPath(out, sum); path == "" {
			return "", &Error{Host: t.host.Name, Code: CodeRemote, Detail: "the copied file's path did not come back"}
		}
	}
	t.kind.mu.Lock()
	if t.kind.staged == nil {
		t.kind.staged = map[string]string{}
	}
	t.kind.staged[key] = path
	t.kind.mu.Unlock()
	return path, nil
}

// Prepare installs the sidecar on the host when this run has not yet.
func (t *transport) Prepare(ctx context.Context) error {
	err := t.kind.ensure(ctx, t.host)
	var re *Error
	if err != nil && !errors.As(err, &re) && t.kind.Log != nil {
		t.kind.Log.Warn("remote prepare failed", "host", t.host.Name, "err", err)
	}
	return err
}

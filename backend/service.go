// Package backend wires Talaria's behaviour together: the session store, the sidecar
// supervisor, the turn runner, the vault and settings. It imports neither Wails nor
// systray; app/ binds a thin wrapper around Service to the window.
package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"talaria/backend/attachments"
	"talaria/backend/bus"
	"talaria/backend/core"
	"talaria/backend/remote"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/tasks"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/sidecar/protocol/redact"
)

// Options configure a Service.
type Options struct {
	// DataDir holds the database, logs and cache; DefaultDataDir() when empty.
	DataDir string
	// Version is the app version (recorded in the database, sent in rpc.hello).
	Version string
	// Commit and BuildDate (UTC, RFC 3339) say which build this is (the About view);
	// "" when the build did not set them.
	Commit, BuildDate string
	// License is the app's own licence as an SPDX id ("MIT") and LicenseText its text
	// (the repository's LICENSE), both shown by About; "" when the build did not give
	// them.
	License, LicenseText string
	// SidecarCommand and SidecarArgs start the sidecar; when empty, talaria-sidecar
	// beside the running executable (remote.SidecarBinary), else the executable
	// itself, with ["sidecar"].
	SidecarCommand string
	SidecarArgs    []string
	SidecarEnv     []string
	// Keyring is the OS keyring; vault.OSKeyring{} when nil.
	Keyring vault.Keyring
	// KeyringTimeout bounds every keyring call (vault.KeyringTimeout when 0).
	KeyringTimeout time.Duration
	// LogToStderr also writes the app log to stderr.
	LogToStderr bool
	// Supervisor, when set, adjusts the supervisor's configuration (tests shorten timings).
	Supervisor func(*supervisor.Config)
	// Coalesce overrides the text-frame coalescing window (turn.DefaultCoalesce).
	Coalesce time.Duration
	// DefaultWorkspace is the folder chats work in when nothing else is chosen (default
	// ~/Talaria, created when first used).
	DefaultWorkspace string
	// ApprovalTimeout and ClarifyTimeout override how long the agent waits for an
	// answer (the runtime's defaults, 300 s and 3600 s, when zero; whole seconds).
	ApprovalTimeout, ClarifyTimeout time.Duration
	// IntegrityCheckDelay overrides how long after Start the background database check
	// waits (IntegrityCheckDelay when zero; tests shorten it).
	IntegrityCheckDelay time.Duration
	// HoldSidecar, when above zero, holds the built-in sidecar's first launch at Start
	// until WindowShown is called, a call needs the sidecar, or this long has passed
	// (supervisor.StartHeld). The desktop app sets it so the window paints first.
	HoldSidecar time.Duration
	// RemoteSSH is how remote runtimes run ssh (backend/remote); the system client
	// with the user's own configuration when zero. Tests point it at their sshd.
	RemoteSSH remote.SSH
	// LocalServers are the addresses CheckProvider tries on the first run when the
	// configured endpoint does not answer (DefaultLocalServers when nil; tests give
	// their scripted provider's).
	LocalServers []LocalServer
}

// Service is the backend of one app process. Its first fields are the shared core's
// (backend/core), for the shell and the tests.
type Service struct {
	Paths   core.Paths
	Version string
	Log     *slog.Logger
	Store   *store.Store
	Bus     *bus.Bus
	Sidecar *supervisor.Supervisor
	Runner  *turn.Runner
	Vault   *vault.Vault
	Tasks   *tasks.Manager // background tasks and side questions

	// The areas, each over the core (docs/architecture.md).
	Attachments *attachments.Service // the composer's files
	Remote      *remote.Kind         // remote hosts and their runtimes (ssh)

	// OpenBrowser opens a URL in the user's browser (the app sets it: Wails'
	// BrowserOpenURL); nil when there is none, and MCP sign-ins then fail saying so.
	OpenBrowser func(url string) error

	core    *core.Core
	logFile io.Closer
	// shown is closed by WindowShown: the held sidecar launch goes.
	shown     chan struct{}
	shownOnce sync.Once
	acp       *acpKind     // the ACP agents (acp.go)
	allowed   sessionAllow // patterns allowed "for this session"
	opts      Options
	lock      *os.File       // the data folder's lock, released by Close
	meta      modelMetaCache // what providers publish about their models (models.go)
	mcpAuth   mcpAuthKeeper  // MCP sign-ins' failures and the one under way (mcp_oauth.go)

	checkDue  bool   // the background integrity check runs after Start (integrity.go)
	checkStop func() // stops it; nil when none runs
	pruneStop func() // stops the journal's pruning (retention.go); nil before Start
}

// Open prepares the data directory, opens the store and builds the services. Nothing
// runs until Start. Errors: the data directory cannot be created, or the store cannot
// be opened (see store.Open's typed errors).
func Open(ctx context.Context, opts Options) (*Service, error) {
	if opts.DataDir == "" {
		d, err := core.DefaultDataDir()
		if err != nil {
			return nil, err
		}
		opts.DataDir = d
	}
	// A relative folder (--data-dir=data, TALARIA_HOME=.talaria) is made absolute now:
	// the sidecar and the agents run in other working folders, where it would name
	// another folder (issue 26, item 8: every turn then failed as "not configured").
	abs, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the data folder %q: %w; give an absolute path", opts.DataDir, err)
	}
	opts.DataDir = abs
	paths := core.Layout(opts.DataDir)
	for _, d := range []string{paths.DataDir, paths.LogDir, paths.CacheDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("cannot create %s: %w; check that the folder is writable or set TALARIA_HOME to another folder", d, err)
		}
	}
	lock, err := lockDataDir(paths.DataDir)
	if err != nil {
		return nil, err
	}
	// Logs and cache of an older version's data folder move to their places now.
	moveProblems := moveToLayout(paths)
	lf := &lumberjack.Logger{Filename: paths.AppLog, MaxSize: 5, MaxBackups: 3}
	var w io.Writer = lf
	if opts.LogToStderr {
		w = io.MultiWriter(lf, os.Stderr)
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, p := range moveProblems {
		log.Warn("moving the logs and cache out of the data folder", "problem", p)
	}

	// No whole-file check before the window opens (integrity.go); a file that cannot be
	// opened at all is checked and recovered first.
	st, unclean, err := openStore(ctx, paths, log, func() { checkStore(ctx, paths.DBPath, log) })
	if err != nil {
		lf.Close()
		closeLock(lock)
		return nil, err
	}
	if opts.Keyring == nil {
		opts.Keyring = vault.OSKeyring{}
	}
	cmd, args := opts.SidecarCommand, opts.SidecarArgs
	if cmd == "" {
		exe, err := os.Executable()
		if err != nil {
			st.Close()
			lf.Close()
			closeLock(lock)
			return nil, fmt.Errorf("cannot find the running executable to start the agent: %w", err)
		}
		// talaria-sidecar beside the app when it is there (the release: it loads none
		// of the window's libraries), else the app's own binary.
		cmd, args = remote.SidecarBinary(exe), []string{"sidecar"}
	}
	scfg := supervisor.Config{Command: cmd, Args: args, Env: opts.SidecarEnv, LogPath: paths.SidecarLog, HostVersion: opts.Version}
	if opts.Supervisor != nil {
		opts.Supervisor(&scfg)
	}
	c := core.New(core.Config{Paths: paths, Version: opts.Version, Commit: opts.Commit, BuildDate: opts.BuildDate,
		Log: log, Store: st, Vault: vault.NewWithTimeout(opts.Keyring, opts.KeyringTimeout), Sidecar: scfg, DefaultWorkspace: opts.DefaultWorkspace,
		ApprovalTimeout: opts.ApprovalTimeout, ClarifyTimeout: opts.ClarifyTimeout})
	s := &Service{Paths: paths, Version: opts.Version, Log: log, Store: st, Bus: c.Bus, Vault: c.Vault, Sidecar: c.Sidecar,
		core: c, logFile: lf, opts: opts, lock: lock, shown: make(chan struct{})}
	s.Runner = turn.New(st, s.Sidecar, s.Bus, s.configFor, log.With("component", "turn"))
	c.Runner = s.Runner
	s.Attachments = attachments.New(c)
	s.Runner.Coalesce = opts.Coalesce
	s.Runner.Redact = s.Vault.Redact
	s.Runner.Secrets = s.Vault.Secrets
	s.Runner.Audit = s.recordAudit
	s.useFingerprints()
	s.Runner.VaultStatus = s.vaultStatus
	s.Runner.Parts = s.Attachments.MessageParts
	s.Tasks = tasks.New(st, s.Runner, s.Bus, log.With("component", "tasks"))
	c.Tasks = s.Tasks
	s.checkDue = s.integrityDue(ctx, unclean)
	if unclean {
		log.Info("the last run did not shut down cleanly; the database will be checked in the background")
	}
	// The user's own Hermes Agent, discovered (docs/hermes.md); tests and packaged
	// setups register a fixed install over it with RegisterHermes.
	s.Agents().RegisterHermes(HermesConfig{})
	// The ACP agents configured in Settings (acp.go).
	s.ACP().RegisterACP()
	// Runtimes on the user's other machines, through their ssh (docs/remote.md).
	s.Remote = &remote.Kind{Store: st, SSH: opts.RemoteSSH, Binary: remote.SidecarBinary(cmd), Version: opts.Version,
		Agents: remoteAgents(), Log: log.With("component", "remote")}
	s.Remote.Removed = func(host string) {
		for _, sup := range s.core.Supervisors() {
			if id := sup.Status().RuntimeID; remote.OfHost(id, host) {
				s.core.StopRuntime(id)
			}
		}
	}
	s.Agents().RegisterRuntimeKind(s.Remote)
	return s, nil
}

// Start launches the sidecar, settles the turns a previous process left running, fails
// the background tasks that were running then and starts the queued ones.
func (s *Service) Start(ctx context.Context) error {
	s.core.MarkStarted()
	if s.opts.HoldSidecar > 0 {
		s.Sidecar.StartHeld(context.Background(), s.shown, s.opts.HoldSidecar)
	} else {
		s.Sidecar.Start(context.Background())
	}
	n, err := s.Runner.SettleInterrupted(ctx)
	if err != nil {
		return fmt.Errorf("settling interrupted turns: %w", err)
	}
	if n > 0 {
		s.Log.Info("settled turns interrupted by the last exit", "count", n)
	}
	if err := s.Tasks.Resume(ctx); err != nil {
		return fmt.Errorf("resuming background tasks: %w", err)
	}
	s.discardEmptySessions(ctx)
	// Attachment files left by a crash between a delete and its sweep.
	go func() {
		if n, err := s.Attachments.SweepAttachments(context.Background(), time.Hour); err != nil {
			s.Log.Warn("start-up attachment sweep failed", "err", err)
		} else if n > 0 {
			s.Log.Info("attachment files no chat names removed", "count", n)
		}
	}()
	delay := s.opts.IntegrityCheckDelay
	if delay <= 0 {
		delay = IntegrityCheckDelay
	}
	s.startIntegrityCheck(delay)
	s.startJournalPrune()
	s.Log.Info("talaria started", "version", s.Version, "data_dir", s.Paths.DataDir)
	return nil
}

// WindowShown tells the service that the window has painted its first screen: a
// sidecar launch held by Options.HoldSidecar goes now. Safe to call more than once.
func (s *Service) WindowShown() { s.shownOnce.Do(func() { close(s.shown) }) }

// Close stops every turn (partial text kept), shuts the sidecar down and closes the
// store. It waits at most until ctx ends for the turns and the sidecar.
func (s *Service) Close(ctx context.Context) error {
	var errs []error
	s.Tasks.Closing() // tasks stopped by quitting stay "running": the next start fails them
	if err := s.Runner.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping turns: %w", err))
	}
	if err := s.Tasks.Wait(ctx); err != nil {
		errs = append(errs, fmt.Errorf("ending side questions: %w", err))
	}
	if err := s.core.CloseRuntimes(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping the agents: %w", err))
	}
	if err := s.Sidecar.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping the agent: %w", err))
	}
	if s.checkStop != nil {
		s.checkStop()
	}
	if s.pruneStop != nil {
		s.pruneStop()
	}
	// The fingerprints' load reads and writes the store: over before it closes (its
	// keyring reads are bounded by vault.KeyringTimeout).
	select {
	case <-s.Vault.Loaded():
	case <-ctx.Done():
	}
	if err := s.Store.Close(); err != nil {
		errs = append(errs, err)
	} else if err := os.Remove(runningMarker(s.Paths)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("removing the running marker: %w", err))
	}
	s.Log.Info("talaria stopped")
	_ = s.logFile.Close()
	closeLock(s.lock)
	return errors.Join(errs...)
}

// configFor is the runner's ConfigFunc: the settings' Config, adjusted for hidden
// sessions (no model-made title; a side question's copy gets no tools).
func (s *Service) configFor(ctx context.Context, sess store.Session) (turn.Config, error) {
	cfg, err := s.turnConfig(ctx, sess)
	if err == nil {
		s.Tasks.AdjustConfig(sess, &cfg)
	}
	return cfg, err
}

// useFingerprints makes redaction outlive the app: fingerprints of known secrets are
// kept in the store under a key in the OS keyring (docs/sandbox.md, "Secrets"). The key
// is read in the background: a locked keyring (an unlock prompt) or a stuck Secret
// Service answers after vault.KeyringTimeout, and the window's first screen does not
// wait for it; redaction does (vault.UseFingerprintsInBackground), and so does Close.
func (s *Service) useFingerprints() {
	load := func(keyID string) ([]redact.Fingerprint, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rows, err := s.Store.Fingerprints(ctx, keyID)
		out := make([]redact.Fingerprint, len(rows))
		for i, r := range rows {
			out[i] = redact.Fingerprint{Length: r.Length, Roll: r.Roll, MAC: r.MAC}
		}
		return out, err
	}
	persist := func(keyID string, fps []redact.Fingerprint) {
		rows := make([]store.Fingerprint, len(fps))
		for i, f := range fps {
			rows[i] = store.Fingerprint{MAC: f.MAC, KeyID: keyID, Length: f.Length, Roll: f.Roll}
		}
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Store.AddFingerprints(wctx, rows); err != nil {
			s.Log.Error("keeping redaction fingerprints", "err", err)
		}
	}
	s.Vault.UseFingerprintsInBackground(load, persist, func(err error) {
		if err != nil {
			s.Log.Error("loading redaction fingerprints", "err", err)
		}
		if !s.Vault.RedactionPersistent() {
			s.Log.Warn("no usable keyring: secrets are redacted only until the app quits")
		}
	})
}

func closeLock(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}

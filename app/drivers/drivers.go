// Package drivers runs the app for tests and benchmarks in place of a user: the
// self-test (`--selftest`), the screenshot scenarios (`--selftest --scenario NAME
// --screenshot FILE`) and the window benchmarks (`--scenario bench-start|bench-window`).
// Each drives the real window and backend against the scripted provider
// (sidecar/providertest) through the bound methods, to a state worth a screenshot or a
// measurement, and checks the state was reached.
//
// It is linked only into talaria-drivers: main built with the build tag `drivers`
// (main's drivers.go; `make build-drivers`). The release binary has none of it: no
// option, no scripted provider, no scenario (issue 25).
package drivers

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"talaria/app"
	"talaria/backend"
	"talaria/backend/vault"
	"talaria/sidecar/providertest"
)

// Scenarios are the scripted runs of `talaria-drivers --selftest --scenario NAME`.
var Scenarios = []string{"chat", "approval", "vault", "background", "diagnostics", "about", "mcp", "hermes", "sandbox", "acp-opencode", "acp-hermes", "bench-start", "bench-window"}

// Options are the drivers' command-line options, parsed with the app's own.
type Options struct {
	Selftest   bool   // --selftest: drive the app instead of waiting for a user
	Screenshot string // --screenshot: where to save a screenshot of the screen ("" none)
	Scenario   string // --scenario: which of Scenarios to drive (default "chat")
}

// AddFlags adds the drivers' options to fs (the app's command line,
// app.ParseCommandLine) and returns where their values land once fs is parsed.
func AddFlags(fs *flag.FlagSet) *Options {
	o := &Options{}
	fs.BoolVar(&o.Selftest, "selftest", false, "run one scripted turn through the real window and backend with a built-in scripted model, then exit 0 if the answer was saved")
	fs.StringVar(&o.Screenshot, "screenshot", "", "with --selftest: save a screenshot of the screen as `FILE` (needs ImageMagick's import)")
	fs.StringVar(&o.Scenario, "scenario", "chat", "with --selftest: the scenario `NAME` to drive, one of "+strings.Join(Scenarios, ", "))
	return o
}

// Driver returns the run o asks for, nil without --selftest.
func (o *Options) Driver() *Selftest {
	if !o.Selftest {
		return nil
	}
	return &Selftest{opts: *o, result: make(chan error, 1)}
}

// Selftest is one driven run of the app: a scripted provider, a throw-away data folder
// (unless --data-dir names one), an in-memory keyring, the settings pointed at the
// provider, one scenario once the window is ready, then a quit; Exit says how it went.
type Selftest struct {
	opts     Options
	provider *providertest.Server
	result   chan error
}

// Prepare adjusts the backend's options before it opens: the app's log also goes to
// stderr, secrets stay in memory, and the data folder is a temporary one when none was
// given. It starts the scripted provider. cleanup stops the provider and removes the
// temporary folder. Errors: the folder cannot be made.
func (d *Selftest) Prepare(opts *backend.Options) (cleanup func(), err error) {
	opts.LogToStderr = true
	opts.Keyring = vault.NewMemoryKeyring()
	d.provider = providertest.Start()
	dir := ""
	if opts.DataDir == "" {
		if dir, err = os.MkdirTemp("", "talaria-selftest-"); err != nil {
			d.provider.Close()
			return nil, fmt.Errorf("selftest: %w", err)
		}
		opts.DataDir = dir
	}
	return func() {
		d.provider.Close()
		if dir != "" {
			os.RemoveAll(dir)
		}
	}, nil
}

// Opened points the open backend's settings at the scripted provider. Errors: the
// settings cannot be saved.
func (d *Selftest) Opened(ctx context.Context, svc *backend.Service) error {
	if _, err := svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: d.provider.BaseURL(), Model: "scripted-model"}); err != nil {
		return fmt.Errorf("selftest: settings: %w", err)
	}
	return nil
}

// Run drives the scenario once the window's DOM is ready (Wails' context ctx), then
// quits the app; the outcome is kept for Exit.
func (d *Selftest) Run(ctx context.Context, a *app.App) {
	svc, err := app.Backend(a)
	if err == nil {
		s := &scenario{bound: app.ServicesOf(a), svc: svc, ctx: ctx, p: d.provider}
		err = s.run(d.opts.Scenario, d.opts.Screenshot)
	}
	d.result <- err
	app.Quit(a)
}

// Exit prints the outcome and returns the process's exit code: 0 when the scenario
// reached its state, 1 when it failed or the window closed before it finished.
func (d *Selftest) Exit() int {
	select {
	case err := <-d.result:
		if err != nil {
			fmt.Fprintln(os.Stderr, "selftest FAILED:", err)
			return 1
		}
		fmt.Println("selftest passed: the answer was streamed, shown and saved")
		return 0
	default:
		fmt.Fprintln(os.Stderr, "selftest FAILED: the window closed before the test finished")
		return 1
	}
}

// scenario is the state one scenario drives: the app's bound services (called as the
// window calls them), its backend, Wails' context and the scripted provider.
type scenario struct {
	bound *app.Services
	svc   *backend.Service
	ctx   context.Context
	p     *providertest.Server
}

// run runs scenario name (see Scenarios); screenshot is where to save the screen.
func (s *scenario) run(name, screenshot string) error {
	ctx, p := s.ctx, s.p
	switch name {
	case "", "chat":
		return s.selftest(ctx, "You said: "+SelftestMessage, screenshot, 60*time.Second)
	case "approval":
		return s.scenarioApproval(ctx, p, screenshot)
	case "vault":
		return s.scenarioVault(ctx, p, screenshot)
	case "background":
		return s.scenarioBackground(ctx, p, screenshot)
	case "diagnostics":
		return s.scenarioDiagnostics(ctx, screenshot)
	case "about":
		return s.scenarioAbout(ctx, screenshot)
	case "mcp":
		return s.scenarioMCP(ctx, p, screenshot)
	case "hermes":
		return s.scenarioHermes(ctx, p, screenshot)
	case "sandbox":
		return s.scenarioSandbox(ctx, p, screenshot)
	case "acp-opencode", "acp-hermes":
		return s.scenarioACP(ctx, p, name[len("acp-"):], screenshot)
	case "bench-start": // bench.go
		return s.scenarioBenchStart(ctx)
	case "bench-window":
		return s.scenarioBenchWindow(ctx, p)
	}
	return fmt.Errorf("unknown scenario %q (have %v)", name, Scenarios)
}

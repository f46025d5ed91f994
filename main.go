// Command talaria is the Talaria Desktop app. `talaria sidecar` runs the built-in
// agent runtime on stdin/stdout (the app starts it itself); anything else opens the
// window. main only wires: behaviour lives in backend/, the window shell in app/.
package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"

	"talaria/app"
	"talaria/backend"
	"talaria/backend/vault"
	"talaria/sidecar"
	"talaria/sidecar/providertest"
)

// The build sets these with -ldflags "-X main.version=... -X main.commit=... -X
// main.buildDate=..." (see the Makefile): the release version, the git commit and the
// UTC build time (RFC 3339).
var (
	version   = "0.1.0-dev"
	commit    = ""
	buildDate = ""
)

//go:embed all:frontend/dist
var assets embed.FS

func main() {
	sidecar.Version = version
	if len(os.Args) > 1 && os.Args[1] == "sidecar" {
		os.Exit(sidecar.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	build := app.BuildInfo{Version: version, Commit: commit, Date: buildDate}
	cl, code, done := app.ParseCommandLine(args, build, os.Stdout, os.Stderr)
	if done {
		return code
	}
	dataDir, selftest, screenshot, scenario := &cl.DataDir, &cl.Selftest, &cl.Screenshot, &cl.Scenario
	if os.Getenv("GDK_BACKEND") == "" {
		os.Setenv("GDK_BACKEND", "x11") // the tray's XEmbed fallback needs X11
	}

	ctx := context.Background()
	opts := backend.Options{DataDir: *dataDir, Version: version, Commit: commit, BuildDate: buildDate, LogToStderr: *selftest}
	// The sidecar starts once the window has painted (App.WindowPainted), at the latest
	// after 3 s (a window started hidden never paints: see below).
	opts.HoldSidecar = 3 * time.Second
	var provider *providertest.Server
	if *selftest {
		provider = providertest.Start()
		defer provider.Close()
		if opts.DataDir == "" {
			d, err := os.MkdirTemp("", "talaria-selftest-")
			if err != nil {
				fmt.Fprintln(os.Stderr, "selftest:", err)
				return 1
			}
			defer os.RemoveAll(d)
			opts.DataDir = d
		}
		opts.Keyring = vault.NewMemoryKeyring()
	}
	if opts.DataDir == "" {
		d, err := backend.DefaultDataDir()
		if err != nil {
			fmt.Fprintln(os.Stderr, "talaria:", err)
			return 1
		}
		opts.DataDir = d
	}
	// One app per data folder: a second launch shows the first one's window and exits
	// before it opens the database.
	inst, err := claimInstance(opts.DataDir)
	if errors.Is(err, app.ErrAlreadyRunning) {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		return 1
	}
	defer inst.Release()
	// The backend opens beside the window's creation (app.NewOpening): the window does
	// not wait for the database. What needs it waits for it.
	open := func() (*backend.Service, error) {
		svc, err := openBackend(ctx, opts)
		if err != nil || !*selftest {
			return svc, err
		}
		if _, err := svc.SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: provider.BaseURL(), Model: "scripted-model"}); err != nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_ = svc.Close(cctx)
			return nil, fmt.Errorf("selftest: settings: %w", err)
		}
		return svc, nil
	}
	var onReady func(context.Context)
	result := make(chan error, 1)
	var a *app.App
	if *selftest {
		onReady = func(ctx context.Context) {
			app.RunScenario(a, ctx, *scenario, provider, *screenshot, result)
		}
	}
	a = app.NewOpening(open, onReady)
	app.AttachInstance(a, inst)
	// --hidden keeps the window in the tray; without a tray icon it could never be
	// found again, so then the window opens as usual. A hidden start registers the icon
	// now (before wails.Run, on the main thread: see desktop.go), a shown window once it
	// has painted.
	// GTK first, waiting a moment for a display that refuses (app.OpenDisplay): the
	// tray's check and Wails' own init would otherwise fail (Wails panics) on it.
	if err := app.OpenDisplay(3 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		return 1
	}
	wantHidden := cl.Hidden && !*selftest
	trayed := registerTray(a, wantHidden)
	hidden := wantHidden && trayed
	if hidden {
		// No window to wait for, and no window to show an error in: wait for the open.
		svc, err := app.Backend(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "talaria:", err)
			return 1
		}
		svc.WindowShown()
	}
	app.ApplyCommandLine(a, cl, hidden)
	hooks := app.HooksFor(a)

	err = wails.Run(&options.App{
		Title:            "Talaria",
		StartHidden:      hidden,
		Width:            1180,
		Height:           780,
		MinWidth:         720,
		MinHeight:        480,
		AssetServer:      &assetserver.Options{Assets: assets, Middleware: app.BootMiddleware(a)},
		BackgroundColour: &options.RGBA{R: 250, G: 250, B: 249, A: 255},
		OnStartup:        hooks.Startup,
		OnDomReady:       hooks.DomReady,
		OnBeforeClose:    hooks.BeforeClose,
		OnShutdown:       hooks.Shutdown,
		// nil where the D-Bus claim above holds; Wails' lock elsewhere (macOS, Windows).
		SingleInstanceLock: inst.WailsLock(),
		Bind:               []any{a, app.NewImports(a)},
		// Every bound method rejects with {code, message, hint, field} (backend.UserError).
		ErrorFormatter: app.FormatError,
		Linux:          &linux.Options{ProgramName: "talaria", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		return 1
	}
	if _, err := app.Backend(a); err != nil {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		return 1
	}
	if *selftest {
		select {
		case err := <-result:
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
	return 0
}

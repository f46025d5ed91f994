// Command talaria is the Talaria Desktop app. `talaria sidecar` runs the built-in
// agent runtime on stdin/stdout (sidecar.go: the release binary hands it to
// talaria-sidecar beside it, which the app starts itself); anything else opens the
// window. main only wires: behaviour lives in backend/, the window shell in app/.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"

	"talaria/app"
	"talaria/backend"
	"talaria/backend/core"
	"talaria/backend/crashlog"
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
	if len(os.Args) > 1 && os.Args[1] == "sidecar" {
		os.Exit(runSidecar(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:]))
}

// A driver runs the app for a test or a benchmark in place of a user: the self-test,
// the screenshot scenarios and the window benchmarks (app/drivers). Only talaria-drivers
// has one (main built with the build tag drivers: drivers.go); in the release binary
// driverOptions adds no option and asks for none (nodrivers.go).
type driver interface {
	// Prepare adjusts the backend's options before anything opens; cleanup undoes what
	// it started.
	Prepare(opts *backend.Options) (cleanup func(), err error)
	// Opened runs on the open backend before the window uses it.
	Opened(ctx context.Context, svc *backend.Service) error
	// Run drives the app once the window's DOM is ready, then quits it.
	Run(ctx context.Context, a *app.App)
	// Exit reports the outcome and returns the process's exit code.
	Exit() int
}

func run(args []string) int {
	build := app.BuildInfo{Version: version, Commit: commit, Date: buildDate}
	var asked func() driver
	cl, code, done := app.ParseCommandLine(args, build, os.Stdout, os.Stderr, func(fs *flag.FlagSet) { asked = driverOptions(fs) })
	if done {
		return code
	}
	drv := asked()
	if os.Getenv("GDK_BACKEND") == "" {
		os.Setenv("GDK_BACKEND", "x11") // the tray's XEmbed fallback needs X11
	}

	ctx := context.Background()
	opts := backend.Options{DataDir: cl.DataDir, Version: version, Commit: commit, BuildDate: buildDate,
		License: licenseID, LicenseText: licenseText}
	// The sidecar starts once the window has painted (About.WindowPainted), at the latest
	// after 3 s (a window started hidden never paints: see below).
	opts.HoldSidecar = 3 * time.Second
	// Remote hosts' ssh reads this ssh_config file instead of ~/.ssh/config when set
	// (docs/remote.md).
	if f := os.Getenv("TALARIA_SSH_CONFIG"); f != "" {
		opts.RemoteSSH.Options = []string{"-F", f}
	}
	if drv != nil {
		cleanup, err := drv.Prepare(&opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "talaria:", err)
			return 1
		}
		defer cleanup()
	}
	if opts.DataDir == "" {
		d, err := core.DefaultDataDir()
		if err != nil {
			fmt.Fprintln(os.Stderr, "talaria:", err)
			return 1
		}
		opts.DataDir = d
	}
	// A relative --data-dir names the folder from where Talaria was started: made
	// absolute once, so the instance lock and the backend agree on one folder.
	if abs, err := filepath.Abs(opts.DataDir); err == nil {
		opts.DataDir = abs
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
	// This process's fatal panics and runtime errors are kept in the logs folder too
	// (backend/crashlog), for the Diagnostics view, as sidecar.log keeps the agent's.
	if rec, err := crashlog.Install(core.Layout(opts.DataDir).CrashDir()); err != nil {
		fmt.Fprintln(os.Stderr, "talaria: crashes will not be kept:", err)
	} else {
		defer rec.Close()
	}
	// The backend opens beside the window's creation (app.NewOpening): the window does
	// not wait for the database. What needs it waits for it.
	open := func() (*backend.Service, error) {
		svc, err := openBackend(ctx, opts)
		if err != nil || drv == nil {
			return svc, err
		}
		if err := drv.Opened(ctx, svc); err != nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_ = svc.Close(cctx)
			return nil, err
		}
		return svc, nil
	}
	var onReady func(context.Context)
	var a *app.App
	if drv != nil {
		onReady = func(ctx context.Context) { drv.Run(ctx, a) }
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
	wantHidden := cl.Hidden && drv == nil
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
		Bind:               app.ServicesOf(a).Bound(),
		// Every bound method rejects with {code, message, hint, field} (backend.UserError).
		ErrorFormatter: app.FormatError,
		Linux:          &linux.Options{ProgramName: "talaria", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		// On Windows a GUI program has no console: a message box says it (with a missing
		// WebView2 Runtime, what to install) instead of a silent exit.
		app.ShowStartupError(err)
		return 1
	}
	if _, err := app.Backend(a); err != nil {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		return 1
	}
	if drv != nil {
		return drv.Exit()
	}
	return 0
}

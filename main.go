// Command talaria is the Talaria Desktop app. `talaria sidecar` runs the built-in
// agent runtime on stdin/stdout (the app starts it itself); anything else opens the
// window. main only wires: behaviour lives in backend/, the window shell in app/.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"os"

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

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

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
	fs := flag.NewFlagSet("talaria", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "folder for the database, logs and cache (default: $TALARIA_HOME or the per-user data folder)")
	selftest := fs.Bool("selftest", false, "run one scripted turn through the real window and backend, then exit 0 if the answer was saved")
	screenshot := fs.String("screenshot", "", "with --selftest: save a screenshot of the screen here (needs ImageMagick's import)")
	scenario := fs.String("scenario", "chat", "with --selftest: what to drive (chat, approval, vault, background, diagnostics)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Println("talaria", version)
		return 0
	}
	if os.Getenv("GDK_BACKEND") == "" {
		os.Setenv("GDK_BACKEND", "x11") // the tray's XEmbed fallback needs X11
	}

	ctx := context.Background()
	opts := backend.Options{DataDir: *dataDir, Version: version, LogToStderr: *selftest}
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
	svc, err := openBackend(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "talaria:", err)
		return 1
	}
	var onReady func(context.Context)
	result := make(chan error, 1)
	var a *app.App
	if *selftest {
		if _, err := svc.SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: provider.BaseURL(), Model: "scripted-model"}); err != nil {
			fmt.Fprintln(os.Stderr, "selftest: settings:", err)
			return 1
		}
		onReady = func(ctx context.Context) {
			app.RunScenario(a, ctx, *scenario, provider, *screenshot, result)
		}
	}
	a = app.New(svc, onReady)
	app.AttachInstance(a, inst)
	registerTray(a) // before wails.Run, on the main thread (see desktop.go)
	hooks := app.HooksFor(a)

	err = wails.Run(&options.App{
		Title:            "Talaria",
		Width:            1180,
		Height:           780,
		MinWidth:         720,
		MinHeight:        480,
		AssetServer:      &assetserver.Options{Assets: assets},
		BackgroundColour: &options.RGBA{R: 250, G: 250, B: 249, A: 255},
		OnStartup:        hooks.Startup,
		OnDomReady:       hooks.DomReady,
		OnBeforeClose:    hooks.BeforeClose,
		OnShutdown:       hooks.Shutdown,
		// nil where the D-Bus claim above holds; Wails' lock elsewhere (macOS, Windows).
		SingleInstanceLock: inst.WailsLock(),
		Bind:               []any{a},
		Linux:              &linux.Options{ProgramName: "talaria", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	})
	if err != nil {
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

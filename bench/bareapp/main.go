// Command bareapp is the baseline of the window benchmarks (bench/webkit): a bare Wails
// v2 app like `wails init -t vanilla`'s, built with the same toolchain, tags and window
// options as Talaria, with one bound method and a page of plain HTML. Its page reports
// when it first painted through the event "bench:painted" (epoch ms); the app prints
// it as `BENCH {"event":"painted","t":...}` on stdout, then the web process's resident
// memory two seconds later, and quits; with BAREAPP_IDLE_S=N it first stays N seconds
// more and prints the CPU it and its web process spent meanwhile (`idle`).
//
//	go build -tags desktop,production -o build/bin/bareapp ./bench/bareapp
package main

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/bench/procstat"
)

//go:embed all:frontend
var assets embed.FS

// App is the bound struct, as in the template.
type App struct{ ctx context.Context }

// Greet returns a greeting for name (the template's one bound method).
func (a *App) Greet(name string) string { return "Hello " + name + ", it's show time!" }

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println("BENCH " + string(b))
}

// idle prints the CPU seconds this app and its web process (wp) spend over secs seconds
// with nothing happening: the baseline of Talaria's idle row (app/drivers benchQuiet).
// The *_run_s figures are the same from the threads' schedstat (ns; procstat.Threads).
func idle(wp, secs int) {
	app0, _ := procstat.Read(os.Getpid())
	web0, _ := procstat.Read(wp)
	appT0, _ := procstat.Threads(os.Getpid())
	webT0, _ := procstat.Threads(wp)
	time.Sleep(time.Duration(secs) * time.Second)
	app1, _ := procstat.Read(os.Getpid())
	web1, _ := procstat.Read(wp)
	appT1, _ := procstat.Threads(os.Getpid())
	webT1, _ := procstat.Threads(wp)
	emit(map[string]any{"event": "idle", "seconds": secs, "app_cpu_s": (app1.CPU - app0.CPU).Seconds(), "web_cpu_s": (web1.CPU - web0.CPU).Seconds(),
		"app_run_s": procstat.RunBetween(appT0, appT1).Seconds(), "web_run_s": procstat.RunBetween(webT0, webT1).Seconds()})
}

func main() {
	if os.Getenv("GDK_BACKEND") == "" {
		os.Setenv("GDK_BACKEND", "x11") // as Talaria does
	}
	a := &App{}
	err := wails.Run(&options.App{
		Title:            "bare",
		Width:            1180,
		Height:           780,
		AssetServer:      &assetserver.Options{Assets: assets},
		BackgroundColour: &options.RGBA{R: 250, G: 250, B: 249, A: 255},
		OnStartup: func(ctx context.Context) {
			a.ctx = ctx
			runtime.EventsOn(ctx, "bench:painted", func(data ...any) {
				ms, _ := data[0].(float64)
				ev := map[string]any{"event": "painted", "t": int64(ms)}
				// The page's navigation start (epoch ms), for the host/page split.
				if len(data) > 1 {
					if origin, ok := data[1].(float64); ok {
						ev["origin"] = int64(origin)
					}
				}
				emit(ev)
				go func() {
					time.Sleep(2 * time.Second)
					if wp, err := procstat.WebProcess(os.Getpid(), 5*time.Second); err == nil {
						if s, err := procstat.Read(wp); err == nil {
							emit(map[string]any{"event": "memory", "webview_rss": s.RSS})
						}
						if secs, _ := strconv.Atoi(os.Getenv("BAREAPP_IDLE_S")); secs > 0 {
							idle(wp, secs)
						}
					}
					runtime.Quit(ctx)
				}()
			})
		},
		Bind:  []any{a},
		Linux: &linux.Options{ProgramName: "bareapp", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareapp:", err)
		os.Exit(1)
	}
}

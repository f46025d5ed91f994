// Package sidecar is the entry point of `talaria sidecar`: the agent process the app
// starts and supervises, speaking docs/protocol.md on stdin/stdout with the built-in
// runtime (package builtin). stdout carries protocol lines only; logs go to stderr.
package sidecar

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"talaria/sidecar/builtin"
	"talaria/sidecar/server"
)

// Version is rpc.hello's sidecar_version. Builds may set it with
// -ldflags "-X talaria/sidecar.Version=1.2.3"; "" reports the module's build version.
var Version = ""

// Main runs the sidecar until stdin reaches EOF, rpc.shutdown is received, or the
// process gets SIGINT/SIGTERM; then it drains (every live run is cancelled and replies)
// and returns the exit code: 0 after a clean drain, 1 when serving failed or the drain
// timed out, 2 for bad flags.
//
// Flags (args excludes the "sidecar" word): --log-level debug|info|warn|error
// (default info). Logs are slog text lines on stderr, never message text or API keys.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("talaria sidecar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "talaria sidecar: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(strings.TrimSpace(*level))); err != nil {
		fmt.Fprintf(stderr, "talaria sidecar: bad --log-level %q: %v\n", *level, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})).With("component", "sidecar")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rt := builtin.New(builtin.Options{Log: log.With("runtime", builtin.RuntimeName)})
	srv := &server.Server{Runtime: rt, Log: log, SidecarVersion: Version}
	log.Info("sidecar started", "pid", os.Getpid(), "runtime", builtin.RuntimeName, "agent_version", builtin.AgentVersion)
	err := srv.Serve(ctx, stdin, stdout)
	switch {
	case errors.Is(err, server.ErrDrainTimeout):
		log.Error("sidecar stopped with runs still live", "err", err)
		return 1
	case err == nil:
		log.Info("sidecar stopped")
		return 0
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		log.Info("sidecar stopped by signal")
		return 0
	default:
		log.Error("sidecar failed", "err", err)
		return 1
	}
}

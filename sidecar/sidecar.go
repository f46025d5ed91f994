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
	"time"

	"talaria/sidecar/acp"
	"talaria/sidecar/builtin"
	"talaria/sidecar/hermes"
	"talaria/sidecar/link"
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
// (default info); --retry-delays, the back-off before each retry of a failed model
// call, comma-separated Go durations (default "1s,2s,4s"; "none" turns retries off);
// --retry-max-wait, the longest wait a provider may ask for before the runtime gives up
// (default 60s); --runtime builtin|hermes|acp (default builtin) and the Hermes
// runtime's flags (hermesFlags); for acp, the agent's command line after "--" and
// --agent-dir, the folder the agent runs in (default: the sidecar's). Logs are slog
// text lines on stderr, never message text or API keys.
//
// `talaria sidecar acp-guard -- <command>` is the ACP runtime's guard process
// (acp.GuardMain), not a runtime.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "acp-guard":
			return acp.GuardMain(args[1:])
		case "link", "attach", "daemon":
			return linkMain(args[0], args[1:], stdin, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("talaria sidecar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	retryDelays := fs.String("retry-delays", "", `back-off before each retry of a failed model call, e.g. "1s,2s,4s" (the default); "none": no retries`)
	maxWait := fs.Duration("retry-max-wait", builtin.DefaultMaxRetryWait, "the longest wait a provider may ask for before giving up")
	runtimeName := fs.String("runtime", builtin.RuntimeName, "the agent runtime: builtin, hermes, or acp (the agent's command follows --)")
	agentDir := fs.String("agent-dir", "", "acp: the folder the agent process runs in (default: the sidecar's)")
	agentName := fs.String("agent-name", "", "acp: the agent's name as Settings shows it, for messages (default: its command's file name)")
	var secretEnv []string
	fs.Func("secret-env", "acp: the name of an environment variable whose value is a secret (repeatable): it is redacted from the agent's output the sidecar logs or quotes", func(name string) error {
		secretEnv = append(secretEnv, name)
		return nil
	})
	var hf hermesFlags
	hf.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case *runtimeName == acp.RuntimeName && fs.NArg() == 0:
		fmt.Fprintln(stderr, "talaria sidecar: --runtime acp needs the agent's command after --, e.g. --runtime acp -- opencode acp")
		return 2
	case *runtimeName != acp.RuntimeName && fs.NArg() > 0:
		fmt.Fprintf(stderr, "talaria sidecar: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(strings.TrimSpace(*level))); err != nil {
		fmt.Fprintf(stderr, "talaria sidecar: bad --log-level %q: %v\n", *level, err)
		return 2
	}
	delays, err := parseDelays(*retryDelays)
	if err != nil || *maxWait <= 0 {
		fmt.Fprintf(stderr, "talaria sidecar: bad --retry-delays %q or --retry-max-wait %s\n", *retryDelays, *maxWait)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})).With("component", "sidecar")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// One runtime per process, chosen by --runtime; each speaks docs/protocol.md.
	var rt server.Runtime
	switch *runtimeName {
	case builtin.RuntimeName:
		rt = builtin.New(builtin.Options{Log: log.With("runtime", builtin.RuntimeName), RetryDelays: delays, MaxRetryWait: *maxWait})
	case hermes.RuntimeName:
		opts, err := hf.options(log.With("runtime", hermes.RuntimeName))
		if err != nil {
			fmt.Fprintf(stderr, "talaria sidecar: %v\n", err)
			return 2
		}
		rt = hermes.New(opts)
	case acp.RuntimeName:
		opts := acp.Options{Agent: acp.Command{Name: *agentName, Path: fs.Arg(0), Args: fs.Args()[1:], Dir: *agentDir},
			Log: log.With("runtime", acp.RuntimeName), Stderr: stderr, ClientVersion: Version}
		for _, name := range secretEnv {
			if v := os.Getenv(name); v != "" {
				opts.Secrets = append(opts.Secrets, v)
			}
		}
		if path := os.Getenv("TALARIA_ACP_TRANSCRIPT"); path != "" {
			// Recording test fixtures (sidecar/acp/testdata): every ACP line, message text included.
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				fmt.Fprintf(stderr, "talaria sidecar: TALARIA_ACP_TRANSCRIPT: %v\n", err)
				return 2
			}
			defer f.Close()
			opts.Transcript = f
		}
		a := acp.New(opts)
		a.Start()
		rt = a
	default:
		fmt.Fprintf(stderr, "talaria sidecar: unknown --runtime %q (want builtin, hermes or acp)\n", *runtimeName)
		return 2
	}
	srv := &server.Server{Runtime: rt, Log: log, SidecarVersion: Version}
	log.Info("sidecar started", "pid", os.Getpid(), "runtime", *runtimeName)
	err = srv.Serve(ctx, stdin, stdout)
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

// linkMain runs the parts of a sidecar on another machine (package link):
//
//	talaria sidecar link [--give-up 15m] -- <command...>  here: the protocol on stdio, through command
//	talaria sidecar attach -- <sidecar flags...>          there: one connection to the daemon
//	talaria sidecar daemon --id <hex> [--idle 20m] -- <sidecar flags...>  there: the sidecar itself
func linkMain(verb string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("talaria sidecar "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	giveUp := fs.Duration("give-up", link.DefaultGiveUp, "link: how long to keep connecting again after a drop")
	id := fs.String("id", "", "daemon: the daemon's id (hex)")
	idle := fs.Duration("idle", link.DefaultIdle, "daemon: how long to wait for a connection before stopping the sidecar")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch verb {
	case "link":
		return link.Link(link.Options{Command: fs.Args(), GiveUp: *giveUp}, stdin, stdout, stderr)
	case "attach":
		return link.Attach(stdin, stdout, fs.Args())
	default:
		rest := fs.Args()
		return link.Daemon(*id, *idle, func(in io.Reader, out, errw io.Writer) int { return Main(rest, in, out, errw) })
	}
}

// parseDelays reads --retry-delays: "" is the default (nil), "none" no retries.
func parseDelays(v string) ([]time.Duration, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "":
		return nil, nil
	case "none", "0":
		return []time.Duration{}, nil
	}
	var out []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("bad delay %q", part)
		}
		out = append(out, d)
	}
	return out, nil
}

package sidecar

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"talaria/sidecar/hermes"
)

// hermesFlags are the flags of `talaria sidecar --runtime hermes`:
//
//	--hermes-python PATH     the interpreter whose `import hermes_cli` works (required)
//	--hermes-prefix JSON     words run before it, a JSON array (e.g. a bubblewrap command
//	                         for a Hermes in another folder system); default none
//	--hermes-home DIR        HERMES_HOME for the gateway (default: Hermes's own)
//	--hermes-profile NAME    the Hermes profile to use (default: the home's default)
//	--hermes-start-timeout D how long the gateway may take to start (default 90s)
type hermesFlags struct {
	python, prefix, home, profile string
	startTimeout                  time.Duration
}

func (h *hermesFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.python, "hermes-python", "", "hermes runtime: the Python whose `import hermes_cli` works")
	fs.StringVar(&h.prefix, "hermes-prefix", "", `hermes runtime: words run before the Python, a JSON array (e.g. ["bwrap","--bind","/x","/","--"])`)
	fs.StringVar(&h.home, "hermes-home", "", "hermes runtime: HERMES_HOME (default: Hermes's own)")
	fs.StringVar(&h.profile, "hermes-profile", "", "hermes runtime: the Hermes profile (default: the home's default)")
	fs.DurationVar(&h.startTimeout, "hermes-start-timeout", hermes.DefaultStartTimeout, "hermes runtime: how long the gateway may take to start")
}

func (h *hermesFlags) options(log *slog.Logger) (hermes.Options, error) {
	if h.python == "" {
		return hermes.Options{}, errors.New("--runtime hermes needs --hermes-python")
	}
	var prefix []string
	if h.prefix != "" {
		if err := json.Unmarshal([]byte(h.prefix), &prefix); err != nil {
			return hermes.Options{}, fmt.Errorf("bad --hermes-prefix (want a JSON array of strings): %v", err)
		}
	}
	if h.startTimeout <= 0 {
		return hermes.Options{}, errors.New("--hermes-start-timeout must be positive")
	}
	opts := hermes.Options{Python: h.python, Prefix: prefix, Home: h.home, Profile: h.profile,
		StartTimeout: h.startTimeout, Log: log}
	// Tests record the gateway's traffic (raw: it may hold secrets) to the file named by
	// TALARIA_HERMES_TRACE, one line each, prefixed "> " (to the gateway) or "< ".
	if path := os.Getenv("TALARIA_HERMES_TRACE"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return hermes.Options{}, fmt.Errorf("TALARIA_HERMES_TRACE: %v", err)
		}
		var mu sync.Mutex
		opts.Trace = func(out bool, line []byte) {
			prefix := "< "
			if out {
				prefix = "> "
			}
			mu.Lock()
			f.Write(append(append([]byte(prefix), line...), '\n')) //nolint:errcheck // best effort
			mu.Unlock()
		}
	}
	return opts, nil
}

// Package hermesprobe asks an interpreter whether it runs a Hermes Agent Talaria can
// drive, and says in the user's terms what is wrong when it does not. Both ends use it:
// the host when it looks for Hermes (Settings, the runtime picker) and the Hermes
// runtime before it starts Hermes's gateway (rpc.hello), so the window shows the same
// words either way. It runs `<prefix> <python> -c <script>` and reads three lines:
// Python's version, hermes_cli.__version__ and whether tui_gateway.entry exists
// (docs/hermes.md, "Processes").
package hermesprobe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"talaria/sidecar/protocol"
)

// Versions the probe judges by (docs/hermes.md, "Versions checked").
const (
	// MinVersion is the first Hermes release with the stdio gateway (tui_gateway).
	MinVersion = "0.11.0"
	// KnownDialectA is the dialect-A release the tests run.
	KnownDialectA = "0.19.0"
	// MinPython is hermes-agent's requires-python floor (0.19.0: >=3.11,<3.14).
	MinPython = "3.11"
)

// Hints: what the user can do, by what went wrong.
const (
	InstallHint = "Install Hermes Agent (https://hermes-agent.nousresearch.com/docs/getting-started/installation, " +
		"or `python3 -m venv ~/.hermes/hermes-agent/venv && ~/.hermes/hermes-agent/venv/bin/pip install hermes-agent`), " +
		"or set the path of its Python or of the `hermes` command in Settings > Hermes Agent. The built-in runtime keeps working meanwhile."
	WrongPythonHint = "Choose the Python of Hermes's own virtualenv in Settings > Hermes Agent (usually " +
		"~/.hermes/hermes-agent/venv/bin/python: the interpreter on the first line of the `hermes` command), or give " +
		"the `hermes` command itself. The built-in runtime keeps working meanwhile."
	SlowStartHint = "A first start of Hermes can be slow (it builds its caches). Restart the agent to try again; " +
		"if it keeps failing, check that `hermes` works in a terminal (its output is in Diagnostics)."
	UpdateHint = "Update Hermes Agent (`hermes update`, or pip install --upgrade hermes-agent in its venv)."
)

const script = "import sys, importlib.util as u\n" +
	"print(sys.version.split()[0], flush=True)\n" +
	"import hermes_cli\n" +
	"print(getattr(hermes_cli, '__version__', '') or '')\n" +
	"print('gateway' if u.find_spec('tui_gateway') and u.find_spec('tui_gateway.entry') else 'none')\n"

// Result is what a usable interpreter reported.
type Result struct {
	HermesVersion string // "" when hermes_cli has no __version__
	PythonVersion string // e.g. "3.11.2"
}

// Probe runs `<prefix...> python -c <script>` with env added to this process's
// environment, in dir ("" for the current one), bounded by ctx (say in timeout how
// long that is, for the message). Errors are *protocol.Error with a hint: condition
// agent_unavailable for no interpreter at the path or a file that cannot be run, one
// that is not Python, a Python without Hermes or older than MinPython, no answer in
// time; agent_incompatible for a Hermes older than MinVersion (no stdio gateway).
func Probe(ctx context.Context, prefix []string, python string, env []string, dir string, timeout time.Duration) (Result, error) {
	argv := append(append(slices.Clone(prefix), python), "-c", script)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	unusable := func(msg, hint string) (Result, error) {
		e := protocol.NewError(0, protocol.CondAgentUnavailable, msg)
		e.Data.Hint = hint
		return Result{}, e
	}
	if runErr != nil || len(lines) < 3 {
		if ctx.Err() != nil {
			return unusable(fmt.Sprintf("Hermes Agent did not answer within %s (%s was asked for its version)", timeout, python), SlowStartHint)
		}
		detail := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(detail, "\n"); i >= 0 {
			detail = detail[i+1:]
		}
		py := ""
		if first := strings.TrimSpace(lines[0]); first != "" && first[0] >= '0' && first[0] <= '9' {
			py = first // the interpreter is Python: its version came before the import
		}
		var pathErr *os.PathError
		switch {
		case errors.As(runErr, &pathErr) || errors.Is(runErr, exec.ErrNotFound):
			return unusable(fmt.Sprintf("Hermes Agent's Python %s cannot be run: %v", python, runErr), InstallHint)
		case py != "" && VersionLess(py, MinPython):
			return unusable(fmt.Sprintf("%s is Python %s; Hermes Agent needs Python %s or newer (%s)", python, py, MinPython, orNothing(detail)), WrongPythonHint)
		case py != "" && strings.Contains(detail, "hermes_cli"):
			return unusable(fmt.Sprintf("%s (Python %s) has no Hermes Agent installed: %s", python, py, detail), WrongPythonHint)
		case py == "":
			if detail == "" && runErr != nil {
				detail = runErr.Error()
			}
			return unusable(fmt.Sprintf("%s did not answer as a Python interpreter (%s)", python, orNothing(detail)), WrongPythonHint)
		}
		if detail == "" && runErr != nil {
			detail = runErr.Error()
		}
		return unusable(fmt.Sprintf("Hermes Agent is not usable with %s: %s", python, orNothing(detail)), InstallHint)
	}
	res := Result{PythonVersion: strings.TrimSpace(lines[0]), HermesVersion: strings.TrimSpace(lines[1])}
	if strings.TrimSpace(lines[2]) != "gateway" || (res.HermesVersion != "" && VersionLess(res.HermesVersion, MinVersion)) {
		e := protocol.NewError(0, protocol.CondAgentIncompatible, fmt.Sprintf(
			"Hermes Agent %s at %s is too old for Talaria: it has no stdio gateway (tui_gateway), which Talaria needs (Hermes %s or newer; checked with %s and the newest release).",
			OrUnknown(res.HermesVersion), python, MinVersion, KnownDialectA))
		e.Data.Hint = UpdateHint
		return Result{}, e
	}
	return res, nil
}

func orNothing(detail string) string {
	if detail == "" {
		return "it printed nothing"
	}
	return detail
}

// OrUnknown is v, or "(unknown version)" when it is empty.
func OrUnknown(v string) string {
	if v == "" {
		return "(unknown version)"
	}
	return v
}

// VersionLess compares dotted versions numerically ("0.9.1" < "0.11.0"); a part's
// non-numeric tail is ignored ("2.post1" is 2).
func VersionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		na, nb := 0, 0
		if i < len(pa) {
			na = leadingInt(pa[i])
		}
		if i < len(pb) {
			nb = leadingInt(pb[i])
		}
		if na != nb {
			return na < nb
		}
	}
	return false
}

func leadingInt(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

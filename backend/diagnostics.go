package backend

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"talaria/backend/core"
	"talaria/backend/crashlog"
	"talaria/backend/supervisor"
	"talaria/sidecar/protocol"
)

// Diagnostics is what the Diagnostics view shows: the agent process, the app, and
// where the data lives. Nothing in it is secret.
type Diagnostics struct {
	AppVersion     string           `json:"app_version"`
	HostProtocol   int              `json:"host_protocol"`   // the protocol version this app speaks
	State          supervisor.State `json:"state"`           // the agent's state
	Runtime        string           `json:"runtime"`         // "builtin" or "hermes", "" until the first hello
	SidecarVersion string           `json:"sidecar_version"` // from rpc.hello
	AgentVersion   string           `json:"agent_version"`
	Protocol       int              `json:"protocol"`       // the protocol the sidecar speaks, 0 before hello
	PythonPath     string           `json:"python_path"`    // the bridge's Python, "" for the built-in runtime
	PythonVersion  string           `json:"python_version"` // e.g. "Python 3.11.2", "" when unknown
	PID            int              `json:"pid"`            // the sidecar's process id, 0 when none runs
	SidecarUptimeS float64          `json:"sidecar_uptime_s"`
	UptimeS        float64          `json:"uptime_s"` // seconds since the app started
	Restarts       int              `json:"restarts"` // sidecar restarts since the app started
	Attempt        int              `json:"attempt"`
	NextRetryS     float64          `json:"next_retry_s"`
	Error          string           `json:"error"` // the last failure
	Hint           string           `json:"hint"`
	StderrTail     []string         `json:"stderr_tail"` // the sidecar's last stderr lines, at most 500, oldest first
	Paths          core.Paths       `json:"paths"`       // database, logs and cache
	// Dialect and Features are the agent's as rpc.hello reported them (Hermes: its
	// gateway dialect, A or B, and what the runtime offers), empty for the built-in one.
	Dialect   string   `json:"dialect"`
	Features  []string `json:"features"`
	GoVersion string   `json:"go_version"`
	Platform  string   `json:"platform"` // GOOS/GOARCH
	// Runtimes are the started runtimes other than the built-in one (whose figures
	// are the fields above), by runtime id.
	Runtimes []RuntimeDiagnostics `json:"runtimes"`
	// LastCrash is the app process's newest crash report (Paths.CrashDir(); Path ""
	// when it never crashed), as sidecar.log is the agent's.
	LastCrash crashlog.Crash `json:"last_crash"`
}

// RuntimeDiagnostics is one started runtime other than the built-in one (a Hermes
// profile, an ACP agent): its sidecar's status (the agent's version, Hermes's gateway
// dialect and features, the last error and its hint) and its last stderr lines, at
// most 500, oldest first (for Hermes they hold the gateway's own output, which the
// runtime logs as `hermes gateway stderr=...`).
type RuntimeDiagnostics struct {
	Status     supervisor.Status `json:"status"`
	StderrTail []string          `json:"stderr_tail"`
}

// Diagnostics gathers the agent's and the app's diagnostics. Asking the bridge's Python
// for its version takes at most 3 s the first time and is remembered per path.
func (area *AboutArea) Diagnostics(ctx context.Context) Diagnostics {
	s := area.s
	st := s.Agents().GetStatus(ctx)
	d := Diagnostics{
		AppVersion: s.Version, HostProtocol: protocol.Version, State: st.Sidecar.State,
		Runtime: st.Sidecar.Runtime, SidecarVersion: st.Sidecar.SidecarVersion, AgentVersion: st.Sidecar.AgentVersion,
		Protocol: st.Sidecar.Protocol, PID: st.Sidecar.PID, UptimeS: st.UptimeS, Restarts: st.Sidecar.Restarts,
		Attempt: st.Sidecar.Attempt, NextRetryS: st.Sidecar.NextRetryS, Error: st.Sidecar.Error, Hint: st.Sidecar.Hint,
		StderrTail: st.StderrTail, Paths: st.Paths, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	d.Dialect, d.Features = st.Sidecar.Dialect, st.Sidecar.Features
	if d.Features == nil {
		d.Features = []string{}
	}
	if d.StderrTail == nil {
		d.StderrTail = []string{}
	}
	if st.Sidecar.StartedAt > 0 {
		d.SidecarUptimeS = time.Since(time.UnixMilli(st.Sidecar.StartedAt)).Seconds()
	}
	d.PythonPath, d.PythonVersion = pythonInfo(ctx, st.Sidecar.Python)
	d.LastCrash, _ = crashlog.Latest(s.Paths.CrashDir())
	d.Runtimes = []RuntimeDiagnostics{}
	for _, sup := range s.core.Supervisors() {
		if sup == s.Sidecar {
			continue
		}
		rd := RuntimeDiagnostics{Status: sup.Status(), StderrTail: sup.StderrTail()}
		if rd.StderrTail == nil {
			rd.StderrTail = []string{}
		}
		d.Runtimes = append(d.Runtimes, rd)
	}
	return d
}

var pythonVersions sync.Map // path -> version

// pythonInfo splits what rpc.hello reported as "python": an executable's path is asked
// for its version (once); anything else is taken as a version.
func pythonInfo(ctx context.Context, python string) (path, version string) {
	python = strings.TrimSpace(python)
	if python == "" {
		return "", ""
	}
	if !filepath.IsAbs(python) {
		return "", python
	}
	if v, ok := pythonVersions.Load(python); ok {
		return python, v.(string)
	}
	if fi, err := os.Stat(python); err != nil || fi.IsDir() {
		return python, ""
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, python, "--version").CombinedOutput()
	v := strings.TrimSpace(string(out))
	if err != nil || len(v) > 100 {
		v = ""
	}
	pythonVersions.Store(python, v)
	return python, v
}

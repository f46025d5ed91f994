package hermes

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setProcessGroup starts the gateway in its own process group (so its tools' processes
// can be killed with it) and asks Linux to SIGKILL it when the sidecar dies (prctl
// PR_SET_PDEATHSIG, prctl(2)): no Hermes outlives a SIGKILLed sidecar.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup SIGKILLs the gateway's whole process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// termGroup sends SIGTERM to the gateway's process group.
func termGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}

// killLeftovers SIGKILLs every process of this user whose environment holds TMPDIR set
// to a gateway's private folder dir (read from /proc/PID/environ, proc_pid_environ(5)):
// what the gateway left running. Hermes starts its terminal tool's commands and
// background processes in sessions of their own (subprocess start_new_session,
// tools/environments/local.py and tools/process_registry.py of Hermes 0.19.0), outside
// the gateway's process group, so the group's kill does not reach them, and once the
// gateway is gone they are no longer its children; they do inherit its TMPDIR, a
// folder named for this sidecar and made for that gateway alone. A process that set a
// TMPDIR of its own is not found. It returns how many it killed; a process that starts
// during a pass is caught by the next (up to three).
func killLeftovers(dir string) int {
	want := []byte("TMPDIR=" + dir)
	self := os.Getpid()
	killed := 0
	for range 3 {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return killed
		}
		n := 0
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil {
				continue // gone, or another user's
			}
			for _, kv := range bytes.Split(env, []byte{0}) {
				if bytes.Equal(kv, want) {
					if syscall.Kill(pid, syscall.SIGKILL) == nil {
						n++
					}
					break
				}
			}
		}
		killed += n
		if n == 0 {
			break
		}
	}
	return killed
}

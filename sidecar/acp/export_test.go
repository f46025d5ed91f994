package acp

import (
	"fmt"
	"os"
	"time"
)

// SetWaits sets how long rpc.hello waits for the agent's first start (helloWait) and
// how long a dead agent's exit status is waited for (exitWait), for the sidecar the
// test binary plays.
func SetWaits(d time.Duration) { helloWait, exitWait = d, d }

// SetSilenceNotice sets how long an agent may send nothing before a turn says so.
func SetSilenceNotice(d time.Duration) { silenceNotice = d }

// HoldForTest plays the sidecar for the guard tests: it starts `sh -c cmd` under the
// guard (this test binary, TALARIA_ACP_GUARD=1), prints the agent's pid and blocks
// until killed.
func HoldForTest(cmd string) int {
	p, err := startProcess(Command{Path: "/bin/sh", Args: []string{"-c", cmd}}, []string{os.Args[0]}, []string{"TALARIA_ACP_GUARD=1"}, os.Stderr, nil)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("pid", p.pid)
	select {}
}

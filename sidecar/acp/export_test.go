package acp

import (
	"fmt"
	"os"
)

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

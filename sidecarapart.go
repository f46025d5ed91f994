//go:build production && !drivers

package main

import (
	"fmt"
	"os"

	"talaria/backend/remote"
)

// runSidecar hands `talaria sidecar ARGS` to talaria-sidecar, the agent process built
// on its own (cmd/talaria-sidecar: no cgo, so it loads none of the window's GTK and
// WebKit libraries), found beside this binary as remote.SidecarBinary finds it. The
// release binary does not link the sidecar: the app starts talaria-sidecar itself
// (backend.Open), and this keeps `talaria sidecar` working for scripts. Returns 2,
// saying what to do, when talaria-sidecar is missing.
func runSidecar(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "talaria: cannot find the running executable:", err)
		return 2
	}
	bin := remote.SidecarBinary(exe)
	if bin == exe {
		fmt.Fprintf(os.Stderr, "talaria: talaria-sidecar, the agent process, is not beside %s: reinstall Talaria\n", exe)
		return 2
	}
	return handOver(bin, append([]string{"sidecar"}, args...))
}

// Command talaria-sidecar is `talaria sidecar` on its own: the agent process without
// the window, built with CGO_ENABLED=0, so it links no library (no GTK, WebKit nor libc)
// and runs on any Linux of its processor. It is what Talaria copies to a remote host
// (backend/remote; docs/remote.md): a headless server has none of the window's
// libraries. `talaria-sidecar sidecar <args>` and `talaria-sidecar <args>` are the same.
package main

import (
	"os"

	"talaria/sidecar"
)

// version is set by the build (-ldflags "-X main.version=..."), as the app's is.
var version = "0.1.0-dev"

func main() {
	sidecar.Version = version
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "sidecar" {
		args = args[1:]
	}
	os.Exit(sidecar.Main(args, os.Stdin, os.Stdout, os.Stderr))
}

//go:build !production || drivers

package main

import (
	"os"

	"talaria/sidecar"
)

// runSidecar runs `talaria sidecar ARGS` in this process. Only the builds other than
// the release link the sidecar in: `wails dev`'s and talaria-drivers (smoke, bench,
// pkgtest), which have no talaria-sidecar beside them. The release binary hands the
// command to talaria-sidecar (sidecarapart.go).
func runSidecar(args []string) int {
	sidecar.Version = version
	return sidecar.Main(args, os.Stdin, os.Stdout, os.Stderr)
}

//go:build tools

// Package tools pins govulncheck (golang.org/x/vuln), which `make lint` runs, and the
// Go vulnerability database it reads: golang.org/x/vulndb's OSV reports, turned into a
// local v1 database by that module's own indexdb command (scripts/vulndb.sh). These
// machines cannot reach vuln.go.dev, but they reach the Go module proxy that carries
// golang.org/x/vulndb.
package tools

import (
	_ "golang.org/x/vuln/cmd/govulncheck"
	_ "golang.org/x/vulndb/cmd/indexdb"
)

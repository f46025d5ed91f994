//go:build tools

// Package tools pins staticcheck (honnef.co/go/tools), the Go linter `make test` runs
// (`make lint`); scripts/setup.sh builds it into tools/bin from this module.
package tools

import _ "honnef.co/go/tools/cmd/staticcheck"

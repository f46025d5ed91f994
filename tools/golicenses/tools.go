//go:build tools

// Package tools pins go-licenses, which lists the Go modules linked into talaria and
// their licences for the third-party notice (`make notices`). Build with:
// go build -o ../bin/go-licenses github.com/google/go-licenses/v2
package tools

import _ "github.com/google/go-licenses/v2"

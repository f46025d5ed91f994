//go:build tools

// Package tools pins the wails CLI. Its own module lets it use a golang.org/x/tools
// that compiles on Go 1.26 (the CLI's pinned v0.17.0 does not; see
// ../../docs/decisions.md). Build with: go build -o ../bin/wails github.com/wailsapp/wails/v2/cmd/wails
package tools

import _ "github.com/wailsapp/wails/v2/cmd/wails"

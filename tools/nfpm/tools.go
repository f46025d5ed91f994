//go:build tools

// Package tools pins nfpm, which builds the .deb (`make package`). Its own module keeps
// nfpm's dependencies out of the app's go.mod. Build with:
// go build -o ../bin/nfpm github.com/goreleaser/nfpm/v2/cmd/nfpm
package tools

import _ "github.com/goreleaser/nfpm/v2/cmd/nfpm"

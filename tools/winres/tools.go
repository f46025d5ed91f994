//go:build tools

// Package tools pins go-winres, which turns the app icon and the version into the
// Windows resource (.syso) linked into talaria.exe (`make windows`). Build with:
// go build -o ../bin/go-winres github.com/tc-hib/go-winres
package tools

import _ "github.com/tc-hib/go-winres"

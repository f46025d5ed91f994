package app

import (
	"embed"
	goruntime "runtime"
)

// baked holds the picture of a fresh data folder's first screen taken when this binary
// was built (app/baked/README.md), if the build made one.
//
//go:embed all:baked
var baked embed.FS

// bakedFirstScreen returns that picture's file (backend/firstscreen's format), or nil
// when the build made none. It is taken on Linux (under Xvfb), so it is used there only:
// another system's window may draw its first screen otherwise (its shortcuts' names).
// A variable: tests set their own.
var bakedFirstScreen = func() []byte {
	if goruntime.GOOS != "linux" {
		return nil
	}
	b, err := baked.ReadFile("baked/first-screen.html")
	if err != nil {
		return nil
	}
	return b
}

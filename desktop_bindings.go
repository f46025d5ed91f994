//go:build bindings

package main

import (
	"context"

	"talaria/app"
	"talaria/backend"
)

// The bindings build (`wails generate module`) runs main only to list the bound
// methods: it must not touch GTK (no display there), meet a running app, nor open a
// database (whose schema may be newer than this tree's).

func registerTray(*app.App, bool) bool { return false }

func claimInstance(string) (*app.Instance, error) { return nil, nil }

func openBackend(context.Context, backend.Options) (*backend.Service, error) { return nil, nil }

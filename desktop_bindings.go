//go:build bindings

package main

import "talaria/app"

// The bindings build (`wails generate module`) runs main only to list the bound
// methods: it must not touch GTK (no display there) nor meet a running app.

func registerTray(*app.App) bool { return false }

func claimInstance(string) (*app.Instance, error) { return nil, nil }

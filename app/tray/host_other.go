//go:build !linux

package tray

import "github.com/getlantern/systray"

// HostAvailable reports whether a tray host shows icons: always on macOS and Windows,
// whose menu bar and notification area are part of the desktop.
func HostAvailable() bool { return true }

func displayAvailable() bool { return true }

func setTitle(s string) { systray.SetTitle(s) }

// onMainLoop runs fn now: on macOS and Windows systray keeps its own thread.
func onMainLoop(fn func()) { fn() }

//go:build !linux

package app

// watchWebProcess does nothing outside Linux. On Windows Wails' own frontend handles a
// failing WebView2 process (a message box when the browser process exits; a render
// process is recreated); macOS is not watched.
func watchWebProcess(on func(reason string, reloaded bool)) {}

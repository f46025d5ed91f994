//go:build windows

package app

import (
	"github.com/wailsapp/go-webview2/webviewloader"
	"golang.org/x/sys/windows"
)

// ShowStartupError tells the user, in a message box, that the window could not open
// and why (a GUI program on Windows has no console for the error): with the WebView2
// Runtime missing, what to install (startupErrorText). It returns when the box is
// closed.
func ShowStartupError(err error) {
	version, verr := webviewloader.GetAvailableCoreWebView2BrowserVersionString("")
	if verr != nil {
		version = ""
	}
	text, _ := windows.UTF16PtrFromString(startupErrorText(err, version))
	title, _ := windows.UTF16PtrFromString("Talaria")
	_, _ = windows.MessageBox(0, text, title, windows.MB_OK|windows.MB_ICONERROR|windows.MB_SETFOREGROUND)
}

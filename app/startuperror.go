package app

import "strings"

// WebView2Download is where Microsoft offers the WebView2 Runtime (the Evergreen
// Bootstrapper and the standalone installers) that the window needs on Windows.
const WebView2Download = "https://developer.microsoft.com/microsoft-edge/webview2/"

// startupErrorText is what the message box of a window that could not open says: the
// error, and, when the WebView2 Runtime is missing (webView2Version "", as
// webviewloader reports it), what to install. Wails' own check offers to download the
// runtime first (its default "download" strategy); this box is what the user sees when
// that was declined or failed, instead of a silent exit (issue 26, item 9e).
func startupErrorText(err error, webView2Version string) string {
	var b strings.Builder
	b.WriteString("Talaria could not open its window")
	if err != nil {
		b.WriteString(": " + strings.TrimSpace(err.Error()))
	}
	b.WriteString(".\n\n")
	if webView2Version == "" {
		b.WriteString("The window needs the Microsoft Edge WebView2 Runtime, which is not installed on this computer. " +
			"Install the Evergreen Bootstrapper from " + WebView2Download + " (or ask your administrator to), then start Talaria again.")
	} else {
		b.WriteString("If this repeats, see the log in the logs folder (talaria.log) and report it.")
	}
	return b.String()
}

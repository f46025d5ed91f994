package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SeatbeltProfile returns the macOS sandbox profile (SBPL, the language of
// sandbox-exec(1) and sandbox_init(3)) that confines a command under p, with tmp as its
// private temporary folder (the caller makes one per command and passes it as TMPDIR).
// It is the macOS design of docs/sandbox.md, generated and tested on every platform but
// not used yet: until it is verified on a Mac, Check reports no sandbox on macOS and
// every command asks. Later rules win over earlier ones in SBPL, so the hidden paths
// are denied after everything that is allowed. Errors: *PolicyError for relative paths
// or an unknown mode (the workspace is not checked for existence here).
//
// Shape:
//
//	(version 1)
//	(deny default)                                  ; confined modes; full access: (allow default)
//	(allow process-exec process-fork process-info* signal (target same-sandbox)) ...
//	(allow file-read*)
//	(allow file-write* (subpath WS) (subpath TMP) (literal "/dev/null") ...) ; read-only: no WS
//	(allow network*)                                ; only with Network
//	(deny file-read* file-write* (subpath HIDDEN)) ... ; every mode
func SeatbeltProfile(p Policy, tmp string) (string, error) {
	if !p.mode().Valid() {
		return "", &PolicyError{Message: fmt.Sprintf("unknown sandbox mode %q (read-only, workspace-write or full-access)", p.Mode)}
	}
	for _, path := range append([]string{p.Workspace, tmp}, append(p.Writable, p.Hidden...)...) {
		if !filepath.IsAbs(path) {
			return "", &PolicyError{Message: fmt.Sprintf("the path %q is not absolute", path)}
		}
	}
	var b strings.Builder
	b.WriteString("(version 1)\n")
	if !p.Confined() {
		// No confinement but the app's own data folder, as under bubblewrap.
		b.WriteString("(allow default)\n")
	} else {
		b.WriteString("(deny default)\n")
		b.WriteString("(allow process-exec process-fork process-info* sysctl-read)\n")
		b.WriteString("(allow signal (target same-sandbox))\n")
		// The services command-line tools need; not com.apple.SecurityServer (the
		// Keychain) nor the pasteboard.
		b.WriteString("(allow mach-lookup (global-name \"com.apple.system.logger\" \"com.apple.system.notification_center\"" +
			" \"com.apple.system.opendirectoryd.libinfo\" \"com.apple.coreservices.launchservicesd\" \"com.apple.trustd.agent\"))\n")
		b.WriteString("(allow file-read*)\n")
		b.WriteString("(allow file-ioctl (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n")
		writable := []string{tmp}
		if p.mode() == ModeWorkspaceWrite {
			writable = append(append(writable, p.Workspace), p.Writable...)
		}
		b.WriteString("(allow file-write*")
		for _, w := range writable {
			fmt.Fprintf(&b, " (subpath %s)", sbplString(w))
		}
		b.WriteString(" (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\") (regex #\"^/dev/ttys[0-9]+$\"))\n")
		if p.Network {
			b.WriteString("(allow network*)\n")
		}
	}
	for _, h := range p.hidden() {
		fmt.Fprintf(&b, "(deny file-read* file-write* (subpath %s))\n", sbplString(h))
	}
	return b.String(), nil
}

// sbplString quotes s as an SBPL string literal.
func sbplString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

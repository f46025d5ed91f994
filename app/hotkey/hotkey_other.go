//go:build !linux || bindings

package hotkey

// Register is not available in this build: ErrUnsupported.
func Register(s Shortcut, fn func()) (stop func(), err error) { return nil, ErrUnsupported }

//go:build !linux

package uifont

// SystemUI returns "" outside Linux: macOS's and Windows' webviews resolve `system-ui`
// themselves, without fontconfig.
func SystemUI() string { return "" }

//go:build !linux && !windows

package mcp

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}

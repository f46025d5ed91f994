package acp

import "os"

// exitOf is a process's exit code.
func exitOf(st *os.ProcessState) (int, string) { return st.ExitCode(), "" }

// Package crashtest holds the crash-safety test of the session store and the turn
// runner: a child process running the real backend.Service (store, turn runner, real
// sidecar process, scripted provider) is killed with SIGKILL at random points while
// turns stream and settle, and after every kill the database is checked. See
// crash_test.go; bench/crash-soak.sh runs it longer.
package crashtest

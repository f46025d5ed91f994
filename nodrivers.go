//go:build !drivers

package main

import "flag"

// driverOptions: the release binary has no drivers, so no option of theirs and none
// to run (talaria-drivers, built with the tag drivers, has them: drivers.go).
func driverOptions(*flag.FlagSet) func() driver { return func() driver { return nil } }

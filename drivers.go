//go:build drivers

package main

import (
	"flag"

	"talaria/app/drivers"
)

// driverOptions adds the drivers' options (--selftest, --scenario, --screenshot) to the
// command line and returns what gives the driver they ask for once it is parsed (nil
// without --selftest). Only talaria-drivers is built with this file (the build tag
// drivers; `make build-drivers`): the release binary links no driver (nodrivers.go).
func driverOptions(fs *flag.FlagSet) func() driver {
	o := drivers.AddFlags(fs)
	return func() driver {
		if d := o.Driver(); d != nil {
			return d
		}
		return nil
	}
}

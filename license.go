package main

import _ "embed"

// licenseText is Talaria's own licence (LICENSE, MIT), shown by About beside the
// bundled libraries' licences.
//
//go:embed LICENSE
var licenseText string

// licenseID is LICENSE's SPDX identifier (the package and the AppStream data say the
// same).
const licenseID = "MIT"

package backend

import (
	"runtime"

	"talaria/backend/about"
	"talaria/backend/core"
)

// About is what the About view shows: which build this is, its own licence, where its
// data and logs are, and the bundled third-party libraries (their licence texts come one at a time
// from LicenseText).
type About struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`     // "" when the build did not say
	BuildDate string `json:"build_date"` // UTC, RFC 3339; "" when the build did not say
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"` // GOOS/GOARCH
	// License is Talaria's own licence (an SPDX id, "MIT") and LicenseText its text;
	// "" when the build did not give them.
	License     string         `json:"license"`
	LicenseText string         `json:"license_text"`
	Paths       core.Paths     `json:"paths"`
	Libraries   []AboutLibrary `json:"libraries"`
	Error       string         `json:"error"` // the notice could not be read (a build defect)
}

// AboutLibrary is one bundled library without its licence text.
type AboutLibrary struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	License   string `json:"license"`
	Ecosystem string `json:"ecosystem"` // "go", "npm" or "c"
}

// About returns the build, the paths and the bundled libraries.
func (area *AboutArea) About() About {
	s := area.s
	out := About{Version: s.Version, Commit: s.opts.Commit, BuildDate: s.opts.BuildDate,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Paths: s.Paths,
		License: s.opts.License, LicenseText: s.opts.LicenseText,
		Libraries: []AboutLibrary{}}
	libs, err := about.Libraries()
	if err != nil {
		out.Error = "the third-party notice is unreadable: " + err.Error()
	}
	for _, l := range libs {
		out.Libraries = append(out.Libraries, AboutLibrary{Name: l.Name, Version: l.Version, License: l.License, Ecosystem: l.Ecosystem})
	}
	return out
}

// LicenseText returns the licence text of a bundled library (about.ErrUnknownLibrary
// for one that is not bundled).
func (area *AboutArea) LicenseText(ecosystem, name string) (string, error) {
	return about.Text(ecosystem, name)
}

// Command notices writes the third-party notice of what Talaria's binary bundles
// (backend/about/third_party.json, shown by the About view and shipped in the .deb):
//
//   - Go: every module linked into talaria and talaria-sidecar for Linux and for
//     Windows, as go-licenses
//     (github.com/google/go-licenses/v2, built into tools/bin) finds them, with the
//     text of the licence file it classified;
//   - npm: every package whose code is in the frontend bundle, as rollup-plugin-license
//     lists them (frontend/vite.notices.config.ts);
//   - what neither tool sees: the Go standard library, SQLite's C source inside
//     go-sqlite3, and the licences the tools could not classify (listed in `extra`
//     and `known` below, each with where the fact comes from).
//
// Usage (the Makefile's `make notices` and `make notices-check`):
//
//	go run ./scripts/notices [-check | -text FILE]
//
// -check regenerates into memory and fails, naming what changed, when the committed
// file differs. -text FILE only renders the committed notice as plain text (for the
// package).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Library is one bundled third-party component; the same shape is read by
// backend/about.
type Library struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	License   string `json:"license"`   // SPDX: "MIT", "MPL-2.0 OR Apache-2.0"; a list "A, B" when a file holds several and says not how
	Ecosystem string `json:"ecosystem"` // "go", "npm" or "c"
	Text      string `json:"text"`      // the licence text shipped with it
}

const (
	outFile  = "backend/about/third_party.json"
	template = `{{range .}}{{.Name}}	{{.Version}}	{{.LicenseName}}	{{.LicensePath}}
{{end}}`
)

// known are licences the classifier cannot find, with where they are stated.
var known = map[string]struct{ license, text string }{
	"github.com/leaanthony/u": {"MIT", "The module ships no licence file; its README.md says under \"License\": MIT.\n"},
}

func main() {
	check := flag.Bool("check", false, "fail when "+outFile+" is out of date instead of writing it")
	textOut := flag.String("text", "", "write the committed notice as plain text to this file (and do nothing else)")
	flag.Parse()
	if *textOut != "" && !*check {
		// Render the committed notice (packaging): no regeneration, no tools needed.
		var libs []Library
		data, err := os.ReadFile(outFile)
		if err == nil {
			err = json.Unmarshal(data, &libs)
		}
		if err == nil {
			err = os.WriteFile(*textOut, []byte(PlainText(libs)), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "notices:", err)
			os.Exit(1)
		}
		return
	}
	libs, err := collect()
	if err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
	data, err := json.MarshalIndent(libs, "", " ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
	data = append(data, '\n')
	if *check {
		old, err := os.ReadFile(outFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "notices:", err)
			os.Exit(1)
		}
		if !bytes.Equal(old, data) {
			fmt.Fprintf(os.Stderr, "notices: %s is out of date (the bundled libraries changed):\n%s"+
				"Run `make notices` and commit %s.\n", outFile, describeDrift(old, libs), outFile)
			os.Exit(1)
		}
		fmt.Printf("notices: ok, %s lists the %d bundled libraries\n", outFile, len(libs))
		return
	}
	if err := os.WriteFile(outFile, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
	fmt.Printf("notices: wrote %s (%d libraries)\n", outFile, len(libs))
}

func collect() ([]Library, error) {
	byName := map[string]*Library{}
	for _, goos := range []string{"linux", "windows"} {
		libs, err := goLibraries(goos)
		if err != nil {
			return nil, err
		}
		for _, l := range libs {
			if old, ok := byName[l.Name]; ok {
				if old.Version != l.Version {
					return nil, fmt.Errorf("%s is at %s for one system and %s for another", l.Name, old.Version, l.Version)
				}
				continue
			}
			byName[l.Name] = l
		}
	}
	npm, err := npmLibraries()
	if err != nil {
		return nil, err
	}
	for _, l := range npm {
		byName["npm:"+l.Name] = l
	}
	for _, l := range extra() {
		byName[l.Ecosystem+":"+l.Name] = l
	}
	out := make([]Library, 0, len(byName))
	for _, l := range byName {
		if l.License == "" || l.License == "Unknown" || strings.TrimSpace(l.Text) == "" {
			return nil, fmt.Errorf("no licence found for %s %s (%s): add what its authors state to `known` in scripts/notices", l.Name, l.Version, l.Ecosystem)
		}
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Ecosystem != out[j].Ecosystem {
			return out[i].Ecosystem < out[j].Ecosystem
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// goLibraries runs go-licenses on the packages the release ships, as built for goos:
// the app (main) and the agent process beside it (cmd/talaria-sidecar).
func goLibraries(goos string) ([]*Library, error) {
	tpl, err := os.CreateTemp("", "notices-*.tpl")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tpl.Name())
	if _, err := tpl.WriteString(template); err != nil {
		return nil, err
	}
	tpl.Close()
	cmd := exec.Command("tools/bin/go-licenses", "report", ".", "./cmd/talaria-sidecar", "--ignore", "talaria", "--template", tpl.Name())
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "GOFLAGS=-tags=desktop,production,sqlite_fts5", "CGO_ENABLED=1")
	if goos == "windows" {
		cmd.Env = append(cmd.Env, "CC=x86_64-w64-mingw32-gcc")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go-licenses for %s: %v\n%s", goos, err, stderr.String())
	}
	merged := map[string]*Library{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			continue
		}
		name, version, license, path := f[0], f[1], f[2], f[3]
		l, ok := merged[name]
		if !ok {
			l = &Library{Name: name, Version: version, Ecosystem: "go"}
			merged[name] = l
			order = append(order, name)
			if k, ok := known[name]; ok && (license == "Unknown" || path == "Unknown") {
				l.License, l.Text = k.license, k.text
				continue
			}
			if path != "Unknown" {
				text, err := os.ReadFile(path)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				l.Text = string(text)
			}
		}
		// go-licenses lists one line per licence found in the file; whether they
		// apply together or as a choice only the file says (its SPDX line, if any).
		if license != "Unknown" && !strings.Contains(", "+l.License+", ", ", "+license+", ") {
			if l.License != "" {
				l.License += ", "
			}
			l.License += license
		}
	}
	for _, l := range merged {
		if expr := spdxLine(l.Text); expr != "" {
			l.License = expr
		}
	}
	libs := make([]*Library, 0, len(order))
	for _, n := range order {
		libs = append(libs, merged[n])
	}
	return libs, nil
}

// spdxLine is the expression of a "SPDX-License-Identifier:" line in text, or "".
func spdxLine(text string) string {
	const tag = "SPDX-License-Identifier:"
	for _, line := range strings.Split(text, "\n") {
		if _, expr, ok := strings.Cut(line, tag); ok {
			return strings.TrimSpace(expr)
		}
	}
	return ""
}

// npmLibraries builds the frontend bundle once more with rollup-plugin-license.
func npmLibraries() ([]*Library, error) {
	dir, err := os.MkdirTemp("", "notices-npm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("npx", "vite", "build", "-c", "vite.notices.config.ts", "--logLevel", "error")
	cmd.Dir = "frontend"
	cmd.Env = append(os.Environ(), "TALARIA_NOTICES_OUT="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("vite build with rollup-plugin-license: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "npm.json"))
	if err != nil {
		return nil, err
	}
	var libs []*Library
	if err := json.Unmarshal(data, &libs); err != nil {
		return nil, fmt.Errorf("npm.json: %w", err)
	}
	for _, l := range libs {
		l.Ecosystem = "npm"
		l.License = strings.TrimSuffix(strings.TrimPrefix(l.License, "("), ")")
		if l.Name == "@wailsapp/runtime" && l.Text == "" {
			// frontend/wailsjs/runtime is generated by Wails and ships without a licence
			// file; its package.json says MIT, and it is part of Wails (same licence).
			text, err := wailsLicense()
			if err != nil {
				return nil, err
			}
			l.Text = text
		}
	}
	return libs, nil
}

func goModDir(module string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func wailsLicense() (string, error) {
	dir, err := goModDir("github.com/wailsapp/wails/v2")
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
	return string(b), err
}

// extra are the bundled parts no tool lists.
func extra() []*Library {
	var libs []*Library
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if text, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "LICENSE")); err == nil {
			libs = append(libs, &Library{Name: "Go standard library and runtime", License: "BSD-3-Clause", Ecosystem: "go", Text: string(text)})
		}
	}
	if dir, err := goModDir("github.com/mattn/go-sqlite3"); err == nil {
		if v, text, err := sqliteNotice(filepath.Join(dir, "sqlite3-binding.c")); err == nil {
			libs = append(libs, &Library{Name: "SQLite", Version: v, License: "blessing", Ecosystem: "c", Text: text})
		}
	}
	return libs
}

// sqliteNotice reads the SQLite version and the author's public-domain dedication from
// the amalgamation that go-sqlite3 compiles in.
func sqliteNotice(path string) (version, text string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	s := string(b)
	const vk = "#define SQLITE_VERSION "
	if i := strings.Index(s, vk); i >= 0 {
		version = strings.Trim(strings.TrimSpace(strings.SplitN(s[i+len(vk):], "\n", 2)[0]), `"`)
	}
	i := strings.Index(s, "The author disclaims copyright")
	if i < 0 {
		return "", "", errors.New("no dedication found in " + path)
	}
	block := s[i:]
	if j := strings.Index(block, "*****"); j > 0 {
		block = block[:j]
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		lines = append(lines, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "**")))
	}
	return version, strings.TrimSpace(strings.Join(lines, "\n")) + "\n", nil
}

// PlainText renders libs as a text notice.
func PlainText(libs []Library) string {
	var b strings.Builder
	b.WriteString("Talaria bundles the following third-party software.\n")
	for _, l := range libs {
		fmt.Fprintf(&b, "\n%s\n%s", strings.Repeat("=", 78), l.Name)
		if l.Version != "" {
			fmt.Fprintf(&b, " %s", l.Version)
		}
		fmt.Fprintf(&b, " (%s, %s)\n%s\n\n%s", l.Ecosystem, l.License, strings.Repeat("-", 78), strings.TrimRight(l.Text, "\n")+"\n")
	}
	return b.String()
}

// describeDrift lists the libraries added, removed or changed against the old file.
func describeDrift(old []byte, now []Library) string {
	var before []Library
	_ = json.Unmarshal(old, &before)
	key := func(l Library) string { return l.Ecosystem + " " + l.Name }
	was := map[string]Library{}
	for _, l := range before {
		was[key(l)] = l
	}
	var b strings.Builder
	for _, l := range now {
		o, ok := was[key(l)]
		switch {
		case !ok:
			fmt.Fprintf(&b, "  + %s %s (%s)\n", key(l), l.Version, l.License)
		case o.Version != l.Version || o.License != l.License || o.Text != l.Text:
			fmt.Fprintf(&b, "  ~ %s %s -> %s (%s)\n", key(l), o.Version, l.Version, l.License)
		}
		delete(was, key(l))
	}
	for k, l := range was {
		fmt.Fprintf(&b, "  - %s %s\n", k, l.Version)
	}
	return b.String()
}

package autostart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EntryPath is the LaunchAgent: ~/Library/LaunchAgents/io.talaria.Desktop.plist, which
// launchd loads at the next login (launchd.plist(5): RunAtLoad).
func EntryPath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("autostart: cannot find the home folder (set HOME)")
	}
	return filepath.Join(home, "Library", "LaunchAgents", "io.talaria.Desktop.plist"), nil
}

// Entry is the property list that starts cmd at login.
func Entry(cmd Command) string {
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	b.WriteString("\t<key>Label</key>\n\t<string>io.talaria.Desktop</string>\n")
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	for _, a := range append([]string{cmd.Exe}, cmd.Args...) {
		b.WriteString("\t\t<string>")
		_ = xml.EscapeText(&b, []byte(a))
		b.WriteString("</string>\n")
	}
	b.WriteString("\t</array>\n")
	b.WriteString("\t<key>RunAtLoad</key>\n\t<true/>\n")
	b.WriteString("\t<key>ProcessType</key>\n\t<string>Interactive</string>\n")
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

func get() (State, error) {
	path, err := EntryPath()
	if err != nil {
		return State{}, err
	}
	st := State{Where: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: cannot read %s: %w", path, err)
	}
	st.Enabled = true
	st.Command = programArguments(data)
	return st, nil
}

// programArguments joins the <string>s of the ProgramArguments array for display.
func programArguments(data []byte) string {
	d := xml.NewDecoder(bytes.NewReader(data))
	var args []string
	var lastKey, text string
	inArgs := false
	for {
		tok, err := d.Token()
		if err != nil {
			return strings.Join(args, " ")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			text = ""
			if t.Name.Local == "array" && lastKey == "ProgramArguments" {
				inArgs = true
			}
		case xml.CharData:
			text += string(t)
		case xml.EndElement:
			switch {
			case t.Name.Local == "key":
				lastKey = text
			case t.Name.Local == "string" && inArgs:
				args = append(args, text)
			case t.Name.Local == "array" && inArgs:
				return strings.Join(args, " ")
			}
		}
	}
}

func enable(cmd Command) (State, error) {
	path, err := EntryPath()
	if err != nil {
		return State{}, err
	}
	if err := writeFile(path, []byte(Entry(cmd))); err != nil {
		return State{Where: path}, fmt.Errorf("autostart: %w", err)
	}
	return get()
}

func disable() (State, error) {
	path, err := EntryPath()
	if err != nil {
		return State{}, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return State{Where: path, Enabled: true}, fmt.Errorf("autostart: cannot remove %s: %w", path, err)
	}
	return State{Where: path}, nil
}

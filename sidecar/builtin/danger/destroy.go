package danger

import (
	"regexp"
	"strings"
)

// What the table's destructive patterns look at: recursive deletes of the root, the
// home folder or system folders, disk devices and their formatters, the processes a
// kill names, and the files a command overwrites or edits in place.

// rootTargets are what delete_root refuses to delete recursively (after normPath).
var rootTargets = func() map[string]bool {
	m := set("/", "/*", "/.*", "~", "~/*", "~/.*", ".*/..", "~/..")
	for _, d := range systemDirs {
		m[d] = true
		m[d+"/*"] = true
	}
	return m
}()

// systemDirs are top-level directories of Linux and macOS systems.
var systemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt", "/opt",
	"/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var",
	"/Applications", "/Library", "/System", "/Users", "/Volumes", "/private", "/cores",
}

// systemWriteDirs are where write_system_file looks.
var systemWriteDirs = []string{"/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/System", "/Library", "/private/etc"}

var blockDeviceRE = regexp.MustCompile(`^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme[0-9]|mmcblk[0-9]|disk[0-9]|rdisk[0-9]|md[0-9]|dm-[0-9]|mapper/|loop[0-9]|nbd[0-9]|sr[0-9]|zram[0-9]|mtdblock|root$|block/)`)

func isBlockDevice(p string) bool { return blockDeviceRE.MatchString(p) }

func isFormatter(name string) bool {
	return name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs" || name == "mkswap" ||
		name == "wipefs" || name == "newfs" || strings.HasPrefix(name, "newfs_") || name == "mkdosfs" || name == "mkntfs" || name == "blkdiscard"
}

// broad is a path a recursive chmod or chown must not touch without asking: the root,
// the home directory, a top-level system directory or anything under one (but not
// under /home or /Users, where users keep their projects).
func broad(p, home string) bool {
	p = normPath(p, home)
	if rootTargets[p] {
		return true
	}
	for _, d := range systemDirs {
		if d == "/home" || d == "/Users" || d == "/Volumes" || d == "/mnt" || d == "/media" {
			continue
		}
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

func recursiveOnBroad(args []string, home string) bool {
	if !hasFlag(args, "R", "--recursive") {
		return false
	}
	for _, op := range operands(args) {
		if broad(op, home) {
			return true
		}
	}
	return false
}

// killTargets returns the pids (or job specs) of a kill command: the signal option
// (-9, -KILL, -s KILL, -n 9) comes first and is not a pid.
func killTargets(args []string) []string {
	i := 0
	if i < len(args) {
		switch a := args[i]; {
		case a == "-s" || a == "-n" || a == "--signal":
			i += 2
		case a == "-l" || a == "-L" || a == "--list" || a == "--table":
			return nil
		case a == "--":
		case strings.HasPrefix(a, "-") && len(a) > 1:
			i++
		}
	}
	if i < len(args) && args[i] == "--" {
		i++
	}
	if i > len(args) {
		return nil
	}
	return args[i:]
}

// writtenTargets are the paths a command writes: its write redirections, tee's files,
// the destination of cp/mv/install/ln/rsync, the files of an in-place sed or perl,
// truncate's and shred's files, dd's of=.
func writtenTargets(c *command) []string {
	var out []string
	for _, r := range c.redirects {
		if r.writes() && r.target != "" && !strings.HasPrefix(r.op, "<") {
			out = append(out, r.target)
		}
	}
	switch c.name {
	case "tee", "truncate", "shred":
		out = append(out, operands(c.args)...)
	case "cp", "mv", "install", "ln", "rsync":
		for i, a := range c.args {
			if (a == "-t" || a == "--target-directory") && i+1 < len(c.args) {
				out = append(out, c.args[i+1])
			} else if v, ok := strings.CutPrefix(a, "--target-directory="); ok {
				out = append(out, v)
			}
		}
		if ops := operands(c.args); len(ops) >= 2 {
			out = append(out, ops[len(ops)-1])
		}
	case "sed", "perl":
		inPlace := false
		for _, a := range c.args {
			if a == "--" {
				break
			}
			if strings.HasPrefix(a, "--in-place") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i")) {
				inPlace = true
			}
		}
		if inPlace {
			out = append(out, operands(c.args)...)
		}
	case "dd":
		for _, a := range c.args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// hasLongPrefix reports whether args hold one of the long options, or a prefix of it
// at least minLen bytes long (git, GNU tar and rsync accept unambiguous abbreviations:
// git reset --har is --hard).
func hasLongPrefix(args []string, minLen int, long ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		for _, l := range long {
			if name == l || len(name) >= minLen && strings.HasPrefix(l, name) {
				return true
			}
		}
	}
	return false
}

// inPlace reports whether sed, perl or ruby edit files in place (-i, -pi, -i.bak,
// --in-place).
func inPlace(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "--in-p") {
			return true
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			flags := a[1:]
			if i := strings.IndexAny(flags, "eEs"); i >= 0 {
				flags = flags[:i] // -e's script follows
			}
			if strings.Contains(flags, "i") {
				return true
			}
		}
	}
	return false
}

package danger

import (
	"regexp"
	"strings"
)

// The dangerous-command table. Each pattern has a key (what approval frames, session
// grants and the host's allowlist name), a description (what the approval card says),
// an example it matches and a near miss it does not (both checked by the tests, and
// listed in docs/protocol.md). Hardline patterns are refused outright: no approval, no
// YOLO, no allowlist lets them run.
var table = []Pattern{
	// Hardline.
	{
		Key: "delete_root", Hardline: true,
		Description: "recursively deletes the root directory, the home directory or a top-level system directory",
		Example:     "rm -rf /", NearMiss: "rm -rf ./build",
		cmd: func(c *command, home string) bool {
			if c.name != "rm" || !hasFlag(c.args, "rR", "--recursive") {
				return false
			}
			for _, a := range c.args {
				if a == "--no-preserve-root" {
					return true
				}
			}
			for _, op := range operands(c.args) {
				if rootTargets[normPath(op, home)] {
					return true
				}
			}
			return false
		},
	},
	{
		Key: "fork_bomb", Hardline: true,
		Description: "a fork bomb: starts processes until the machine stops responding",
		Example:     ":(){ :|:& };:", NearMiss: "f(){ echo hi; }; f | cat",
		text: isForkBomb,
	},
	{
		Key: "format_disk", Hardline: true,
		Description: "creates a filesystem on (or wipes) a disk device",
		Example:     "mkfs.ext4 /dev/sda1", NearMiss: "mkfs.ext4 ./disk.img",
		cmd: func(c *command, home string) bool {
			if !isFormatter(c.name) {
				return false
			}
			for _, op := range operands(c.args) {
				if isBlockDevice(op) {
					return true
				}
			}
			return false
		},
	},
	{
		Key: "disk_overwrite", Hardline: true,
		Description: "writes raw data to a disk device",
		Example:     "dd if=/dev/zero of=/dev/sda", NearMiss: "dd if=/dev/zero of=./zeros.bin bs=1M count=1",
		cmd: func(c *command, home string) bool {
			for _, t := range writtenTargets(c) {
				if isBlockDevice(t) {
					return true
				}
			}
			return false
		},
	},

	// Ask first.
	{
		Key:         "recursive_delete",
		Description: "deletes files and directories recursively",
		Example:     "rm -fr node_modules", NearMiss: "rm -f file.txt",
		cmd: func(c *command, home string) bool {
			return c.name == "rm" && hasFlag(c.args, "rR", "--recursive")
		},
	},
	{
		Key:         "find_delete",
		Description: "deletes every file a find matches",
		Example:     "find . -name '*.log' -delete", NearMiss: "find . -name '*.log' -print",
		cmd: func(c *command, home string) bool {
			if c.name != "find" {
				return false
			}
			for i, a := range c.args {
				if a == "-delete" {
					return true
				}
				if (a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir") && i+1 < len(c.args) {
					switch base(c.args[i+1]) {
					case "rm", "unlink", "shred", "rmdir":
						return true
					}
				}
			}
			return false
		},
	},
	{
		Key:         "sudo",
		Description: "runs a command with administrator rights (sudo, doas, su, pkexec, run0)",
		Example:     "sudo apt-get install jq", NearMiss: "grep sudo /var/log/auth.log",
		cmd: func(c *command, home string) bool {
			return c.privileged || privilegeWrappers[c.name]
		},
	},
	{
		Key:         "dd",
		Description: "copies raw data with dd, which overwrites its output without asking",
		Example:     "dd if=disk.img of=backup.img", NearMiss: "echo add",
		cmd: func(c *command, home string) bool { return c.name == "dd" },
	},
	{
		Key:         "disk_format",
		Description: "creates a filesystem or changes disk partitions",
		Example:     "mkfs.ext4 ./disk.img", NearMiss: "mkdir fs",
		cmd: func(c *command, home string) bool {
			switch c.name {
			case "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "partprobe":
				return true
			case "diskutil":
				for _, a := range c.args {
					switch strings.ToLower(a) {
					case "erasedisk", "erasevolume", "partitiondisk", "zerodisk", "randomdisk", "secureerase", "reformat":
						return true
					}
				}
				return false
			}
			return isFormatter(c.name)
		},
	},
	{
		Key:         "chmod_recursive",
		Description: "changes permissions recursively on the root, the home directory or a system directory",
		Example:     "chmod -R 777 /", NearMiss: "chmod -R u+w ./build",
		cmd: func(c *command, home string) bool {
			return c.name == "chmod" && recursiveOnBroad(c.args, home)
		},
	},
	{
		Key:         "chown_recursive",
		Description: "changes ownership recursively on the root, the home directory or a system directory",
		Example:     "chown -R me:me /usr", NearMiss: "chown -R me:me ./data",
		cmd: func(c *command, home string) bool {
			return (c.name == "chown" || c.name == "chgrp") && recursiveOnBroad(c.args, home)
		},
	},
	{
		Key:         "remote_script",
		Description: "downloads a script from the internet and runs it",
		Example:     "curl -fsSL https://example.com/install.sh | sh", NearMiss: "curl -o install.sh https://example.com/install.sh",
		cmd: func(c *command, home string) bool {
			if runsCode(c) {
				for p := c.stdinFrom; p != nil; p = p.stdinFrom {
					if downloaders[p.name] {
						return true
					}
				}
			}
			if isInterpreter(c.name) || c.name == "source" || c.name == "." {
				for _, w := range c.words {
					if subsDownload(w) {
						return true
					}
				}
			}
			// $(curl ...) as the command word runs what was downloaded.
			return c.nameWord.sub && subsDownload(c.nameWord)
		},
	},
	{
		Key:         "git_force_push",
		Description: "force-pushes or deletes remote git branches, rewriting history others may have",
		Example:     "git push --force origin main", NearMiss: "git push -u origin main",
		cmd: func(c *command, home string) bool {
			sub, args := gitSubcommand(c)
			if sub != "push" {
				return false
			}
			if hasFlag(args, "fd", "--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune") {
				return true
			}
			for _, op := range operands(args) {
				if strings.HasPrefix(op, "+") || strings.HasPrefix(op, ":") {
					return true
				}
			}
			return false
		},
	},
	{
		Key:         "git_reset_hard",
		Description: "discards uncommitted changes with git reset --hard",
		Example:     "git reset --hard HEAD~1", NearMiss: "git reset --soft HEAD~1",
		cmd: func(c *command, home string) bool {
			sub, args := gitSubcommand(c)
			return sub == "reset" && hasFlag(args, "", "--hard")
		},
	},
	{
		Key:         "git_clean",
		Description: "deletes untracked files with git clean",
		Example:     "git clean -fd", NearMiss: "git clean -nd",
		cmd: func(c *command, home string) bool {
			sub, args := gitSubcommand(c)
			return sub == "clean" && hasFlag(args, "f", "--force") && !hasFlag(args, "n", "--dry-run")
		},
	},
	{
		Key:         "kill_all",
		Description: "kills every process (kill -1, kill 1, killall5)",
		Example:     "kill -9 -1", NearMiss: "kill -9 12345",
		cmd: func(c *command, home string) bool {
			if c.name == "killall5" {
				return true
			}
			if c.name != "kill" {
				return false
			}
			for _, pid := range killTargets(c.args) {
				if pid == "-1" || pid == "1" {
					return true
				}
			}
			return false
		},
	},
	{
		Key:         "kill_by_name",
		Description: "kills every process whose name or command line matches (killall, pkill)",
		Example:     "pkill -f node", NearMiss: "pgrep -f node",
		cmd: func(c *command, home string) bool { return c.name == "killall" || c.name == "pkill" },
	},
	{
		Key:         "shutdown",
		Description: "shuts down, reboots or suspends the machine",
		Example:     "shutdown -h now", NearMiss: "systemctl status nginx",
		cmd: func(c *command, home string) bool {
			switch c.name {
			case "shutdown", "reboot", "halt", "poweroff":
				return true
			case "init", "telinit":
				ops := operands(c.args)
				return len(ops) > 0 && (ops[0] == "0" || ops[0] == "6")
			case "systemctl", "loginctl":
				for _, op := range operands(c.args) {
					switch op {
					case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "rescue", "emergency", "soft-reboot":
						return true
					}
				}
			}
			return false
		},
	},
	{
		Key:         "write_shell_profile",
		Description: "changes a shell startup file (.bashrc, .zshrc, .profile ...)",
		Example:     "echo 'export PATH=$PATH:/opt/x' >> ~/.bashrc", NearMiss: "cat ~/.bashrc",
		cmd: func(c *command, home string) bool {
			for _, t := range writtenTargets(c) {
				p := normPath(t, home)
				if shellProfiles[p] || strings.HasPrefix(p, "~/.config/fish/") {
					return true
				}
			}
			return false
		},
	},
	{
		Key:         "write_system_file",
		Description: "writes to a system file (under /etc, /boot, /usr, /bin, /sbin or /lib)",
		Example:     "echo '127.0.0.1 x' >> /etc/hosts", NearMiss: "echo hi > ./etc/hosts",
		cmd: func(c *command, home string) bool {
			for _, t := range writtenTargets(c) {
				p := normPath(t, home)
				for _, d := range systemWriteDirs {
					if p == d || strings.HasPrefix(p, d+"/") {
						return true
					}
				}
			}
			return false
		},
	},
}

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

var shellProfiles = set("~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile",
	"~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.zlogout", "~/.kshrc", "~/.mkshrc", "~/.cshrc",
	"~/.tcshrc", "~/.login", "~/.xprofile", "~/.xsessionrc", "~/.inputrc")

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

var downloaders = set("curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lwp-request", "GET")

var interpreters = set("python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "deno", "bun", "lua", "Rscript", "osascript")

func isInterpreter(name string) bool {
	return isShell(name) || interpreters[name] || strings.HasPrefix(name, "python3.")
}

// runsCode reports whether c runs the code it reads on stdin: a shell with no -c and
// no script file (or with -s), or an interpreter with no inline code, module or file.
func runsCode(c *command) bool {
	if isShell(c.name) {
		for _, a := range c.args {
			if a == "--" || a == "-" {
				return true
			}
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
				if strings.Contains(a, "c") {
					return false
				}
				if strings.Contains(a, "s") {
					return true
				}
				continue
			}
			if strings.HasPrefix(a, "--") || strings.HasPrefix(a, "+") {
				continue
			}
			return false // a script file
		}
		return true
	}
	if !isInterpreter(c.name) {
		return false
	}
	for _, a := range c.args {
		switch {
		case a == "-":
			return true
		case a == "-c" || a == "-m" || a == "-e" || a == "-E" || a == "-r" || a == "--eval" || a == "-p" || a == "--print":
			return false
		case strings.HasPrefix(a, "-"):
		default:
			return false
		}
	}
	return true
}

// subsDownload reports whether a word's substitutions run a downloader.
func subsDownload(w word) bool {
	for _, s := range w.subs {
		a := analyse(s)
		for _, c := range a.cmds {
			if downloaders[c.name] {
				return true
			}
		}
	}
	return false
}

// gitSubcommand returns git's subcommand and its arguments, skipping git's own options
// (-C dir, -c key=value, --git-dir=...).
func gitSubcommand(c *command) (string, []string) {
	if c.name != "git" {
		return "", nil
	}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--exec-path" || a == "--config-env":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, c.args[i+1:]
		}
	}
	return "", nil
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

var (
	funcDefRE    = regexp.MustCompile(`(?:^|[\s;&|(){}])(?:function\s+)?([A-Za-z_:.][A-Za-z0-9_:.-]*)\s*\(\s*\)\s*\{`)
	funcKwRE     = regexp.MustCompile(`function\s+([A-Za-z_:.][A-Za-z0-9_:.-]*)\s*\{`)
	perlForkRE   = regexp.MustCompile(`fork\s*while\s*fork|fork\s*\)?\s*while\s*\(?\s*(1|true)`)
	loopForkRE   = regexp.MustCompile(`(?i)while\s*\(?\s*(1|true)\s*\)?\s*[:{]?\s*(?:do\s+)?[^\n]{0,60}?\bfork\s*\(\s*\)`)
	whitespaceRE = regexp.MustCompile(`\s+`)
)

// isForkBomb finds a shell function that pipes itself into itself (:(){ :|:& };:),
// and the perl and python loops of fork().
func isForkBomb(src string) bool {
	if perlForkRE.MatchString(src) || loopForkRE.MatchString(src) {
		return true
	}
	compact := whitespaceRE.ReplaceAllString(src, "")
	for _, re := range []*regexp.Regexp{funcDefRE, funcKwRE} {
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			name := m[1]
			if strings.Contains(compact, name+"|"+name) {
				return true
			}
		}
	}
	return false
}

package danger

import "strings"

// What the table's lasting-effect patterns look at: git commands that discard work or
// rewrite shared history, uploads of local files, and what sets up something that runs
// later.

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

// gitDiscards is the git_discard pattern.
func gitDiscards(c *command, x *scope) bool {
	sub, args := gitSubcommand(c)
	ops := operands(args)
	switch sub {
	case "checkout":
		if hasFlag(args, "f", "--force") || hasLongPrefix(args, 5, "--force", "--overwrite-ignore") {
			return true
		}
		for i, a := range args {
			if a == "--" && i+1 < len(args) {
				return true
			}
		}
		for _, o := range ops {
			if o == "." || o == "*" || o == ":/" {
				return true
			}
		}
	case "restore":
		staged := hasFlag(args, "S", "--staged") || hasLongPrefix(args, 5, "--staged")
		worktree := hasFlag(args, "W", "--worktree") || hasLongPrefix(args, 5, "--worktree")
		return !staged || worktree
	case "switch":
		return hasFlag(args, "f", "--force", "--discard-changes") || hasLongPrefix(args, 5, "--discard-changes", "--force")
	case "stash":
		return len(ops) > 0 && (ops[0] == "drop" || ops[0] == "clear")
	case "branch":
		return hasFlag(args, "D") || (hasFlag(args, "d", "--delete") || hasLongPrefix(args, 5, "--delete")) && (hasFlag(args, "f", "--force") || hasLongPrefix(args, 5, "--force"))
	case "reflog":
		return len(ops) > 0 && (ops[0] == "expire" || ops[0] == "delete")
	case "gc", "prune":
		for _, a := range args {
			if strings.HasPrefix(a, "--prune=") && a != "--prune=never" || strings.HasPrefix(a, "--expire=") {
				return true
			}
		}
	case "filter-branch", "filter-repo":
		return true
	case "update-ref":
		return hasFlag(args, "d")
	case "worktree":
		return len(ops) > 0 && ops[0] == "remove" && (hasFlag(args, "f", "--force") || hasLongPrefix(args, 5, "--force"))
	}
	return false
}

// uploads is the upload_data pattern.
func uploads(c *command, x *scope) bool {
	switch c.name {
	case "curl":
		for i, a := range c.args {
			switch {
			case a == "-T" || hasLongPrefix([]string{a}, 8, "--upload-file"):
				return true
			case (a == "-d" || a == "-F" || hasLongPrefix([]string{a}, 6, "--data", "--data-binary", "--data-raw", "--data-urlencode", "--form", "--json")) && i+1 < len(c.args):
				if strings.Contains(c.args[i+1], "@") || a == "-F" || strings.HasPrefix(a, "--form") {
					return true
				}
			case strings.HasPrefix(a, "-d@") || strings.HasPrefix(a, "-F") || strings.HasPrefix(a, "--data=@") || strings.HasPrefix(a, "--data-binary=@"):
				return true
			}
		}
		return c.stdinFrom != nil && (slices2(c.args, "-d", "--data-binary", "-T") || strings.Contains(strings.Join(c.args, " "), "@-"))
	case "wget":
		return hasLongPrefix(c.args, 7, "--post-file", "--body-file") || slices2(c.args, "--method=PUT", "--method=POST")
	case "scp", "sftp", "rclone":
		return true
	case "rsync":
		for _, o := range operands(c.args) {
			if strings.Contains(o, ":") && !strings.HasPrefix(o, "./") {
				return true
			}
		}
	case "nc", "ncat", "netcat", "socat", "telnet", "openssl":
		if c.name == "openssl" && !slices2(c.args, "s_client") {
			return false
		}
		if c.stdinFrom != nil {
			return true
		}
		for _, r := range c.redirects {
			if r.op == "<" || r.op == "<<<" {
				return true
			}
		}
	case "ssh":
		return c.stdinFrom != nil
	}
	// /dev/tcp redirections: bash opens a socket.
	for _, r := range c.redirects {
		if strings.HasPrefix(r.target, "/dev/tcp/") || strings.HasPrefix(r.target, "/dev/udp/") {
			return true
		}
	}
	return false
}

// persists is the persistence pattern.
func persists(c *command, x *scope) bool {
	switch c.name {
	case "crontab":
		return !hasFlag(c.args, "l", "--list") || len(operands(c.args)) > 0
	case "at", "batch":
		return !hasFlag(c.args, "l", "d", "r")
	case "systemctl":
		for _, o := range operands(c.args) {
			if o == "enable" || o == "link" || o == "preset" || o == "set-default" || o == "edit" {
				return true
			}
		}
	case "systemd-run":
		return hasLongPrefix(c.args, 6, "--on-calendar", "--on-boot", "--on-active", "--on-startup", "--on-unit-active", "--timer-property")
	case "launchctl":
		for _, o := range operands(c.args) {
			if o == "load" || o == "bootstrap" || o == "enable" || o == "submit" {
				return true
			}
		}
	}
	for _, t := range writtenTargets(c) {
		p := normPath(t, x.home)
		for _, d := range []string{"~/.config/autostart", "~/.config/systemd/user", "~/Library/LaunchAgents", "/etc/cron", "/var/spool/cron",
			"/etc/systemd", "/Library/LaunchAgents", "/Library/LaunchDaemons", "/etc/init.d", "/etc/rc.local"} {
			if p == d || strings.HasPrefix(p, d) {
				return true
			}
		}
	}
	return false
}

package danger

import "strings"

// What the table's path patterns look at: a command that names a secret store, a shell
// profile or a protected path, in any of the ways of writing it.

var shellProfiles = set("~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile",
	"~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.zlogout", "~/.kshrc", "~/.mkshrc", "~/.cshrc",
	"~/.tcshrc", "~/.login", "~/.xprofile", "~/.xsessionrc", "~/.inputrc")

// readers only read the files they name (or print text): naming a file with them
// changes nothing.
var readers = set("cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "wc", "diff", "cmp", "stat",
	"ls", "file", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "echo", "printf", "test", "[", "bat",
	"realpath", "readlink", "dirname", "basename", "du", "find", "locate", "which", "type", "od", "hexdump", "xxd", "strings")

// targetWriters write only the files writtenTargets finds (their other operands are
// read).
var targetWriters = set("cp", "mv", "install", "ln", "rsync", "tee", "truncate", "shred", "dd", "sed", "gsed", "perl", "scp")

// commandTexts are the texts a command names: its words (the command word included)
// and its redirection targets.
func commandTexts(c *command) []string {
	out := make([]string, 0, len(c.args)+len(c.redirects)+1)
	if c.nameWord.text != "" {
		out = append(out, c.nameWord.text)
	}
	out = append(out, c.args...)
	out = append(out, c.assigns...)
	for _, r := range c.redirects {
		if r.op != "<<" && r.op != "<<-" {
			out = append(out, r.target)
		}
	}
	return out
}

// pathForms are the ways a path under home may be written: ~/x, $HOME/x, ${HOME}/x and
// the absolute path.
func pathForms(p, home string) []string {
	p = normPath(p, home)
	forms := []string{p}
	if rest, ok := strings.CutPrefix(p, "~"); ok {
		forms = append(forms, "$HOME"+rest, "${HOME}"+rest)
		if home != "" && home != "/" {
			forms = append(forms, home+rest)
		}
	}
	return forms
}

// containsPath reports whether t holds path f as a whole path (not as the start of a
// longer name: /data does not match /data-old).
func containsPath(t, f string) bool {
	for i := 0; ; {
		j := strings.Index(t[i:], f)
		if j < 0 {
			return false
		}
		end := i + j + len(f)
		if end == len(t) || !isNameByte(t[end]) || strings.HasSuffix(f, "/") {
			return true
		}
		i += j + 1
	}
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// mentionsPath reports whether any text of c names a path (given by its forms) or
// something inside it.
func mentionsPath(c *command, forms []string, home string) bool {
	for _, t := range commandTexts(c) {
		n := normPath(t, home)
		for _, f := range forms {
			if n == f || strings.HasPrefix(n, f+"/") || containsPath(t, f) {
				return true
			}
		}
	}
	return false
}

// secretDirs are secret stores under the home folder; secretAnywhere name one under any
// user's home or the system.
var (
	secretDirs = []string{".ssh", ".gnupg", ".pki", ".password-store", ".netrc", ".git-credentials", ".aws", ".azure",
		".config/gcloud", ".kube", ".docker/config.json", ".npmrc", ".pypirc", ".config/gh/hosts.yml", ".cargo/credentials",
		".local/share/keyrings", ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
		".vault-token", ".terraform.d/credentials.tfrc.json", "Library/Keychains"}
	secretAnywhere = []string{"/.ssh/", "/.gnupg/", "/.aws/credentials", "/etc/shadow", "/etc/gshadow", "/etc/sudoers",
		"/.local/share/keyrings", "/.password-store", "id_rsa", "id_ed25519", "id_ecdsa", "authorized_keys"}
)

func mentionsSecret(t string, x *scope) bool {
	if t == "" {
		return false
	}
	n := normPath(t, x.home)
	for _, forms := range x.secretForms {
		for _, f := range forms {
			if n == f || strings.HasPrefix(n, f+"/") || containsPath(t, f) {
				return true
			}
		}
	}
	for _, s := range secretAnywhere {
		if strings.Contains(t, s) || strings.HasSuffix(t, strings.TrimSuffix(s, "/")) && strings.HasPrefix(s, "/.") {
			return true
		}
	}
	return false
}

func mentionsProfile(t string, x *scope) bool {
	for _, forms := range x.profileForms {
		for _, f := range forms {
			if containsPath(t, f) {
				return true
			}
		}
	}
	return false
}

package danger

import (
	"slices"
	"strings"
	"testing"
)

const testHome = "/home/alice"

func keys(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Key)
	}
	return out
}

// TestTableExamples: every pattern's example matches it and its near miss matches
// nothing; keys are unique; hardline patterns come first.
func TestTableExamples(t *testing.T) {
	seen := map[string]bool{}
	hardlineDone := false
	for _, p := range Patterns() {
		if seen[p.Key] {
			t.Errorf("duplicate key %s", p.Key)
		}
		seen[p.Key] = true
		if p.Description == "" || p.Example == "" || p.NearMiss == "" {
			t.Errorf("%s: empty description, example or near miss", p.Key)
		}
		if !p.Hardline {
			hardlineDone = true
		} else if hardlineDone {
			t.Errorf("%s: hardline pattern after an ordinary one", p.Key)
		}
		if got := keys(check(p.Example, testHome)); !slices.Contains(got, p.Key) {
			t.Errorf("%s: example %q matched %v", p.Key, p.Example, got)
		}
		// A near miss never matches its pattern; for an ordinary pattern it matches nothing
		// (a hardline pattern's near miss may still ask, e.g. rm -rf ./build).
		if got := keys(check(p.NearMiss, testHome)); slices.Contains(got, p.Key) || (!p.Hardline && len(got) != 0) {
			t.Errorf("%s: near miss %q matched %v", p.Key, p.NearMiss, got)
		}
		if !Known(p.Key) || IsHardline(p.Key) != p.Hardline {
			t.Errorf("%s: Known/IsHardline disagree", p.Key)
		}
	}
	if Known("nope") || IsHardline("nope") {
		t.Error("unknown key known")
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		cmd  string
		want string // comma-separated keys in table order; "" for none
	}{
		// delete_root (hardline) and recursive_delete.
		{"rm -rf /", "delete_root,recursive_delete"},
		{"rm -fr /", "delete_root,recursive_delete"},
		{"rm -r -f /", "delete_root,recursive_delete"},
		{"rm --recursive --force /", "delete_root,recursive_delete"},
		{"rm -Rf /*", "delete_root,recursive_delete"},
		{"rm -rf ~", "delete_root,recursive_delete"},
		{"rm -rf ~/", "delete_root,recursive_delete"},
		{"rm -rf $HOME", "delete_root,recursive_delete"},
		{`rm -rf "${HOME}/"`, "delete_root,recursive_delete"},
		{"rm -rf /home/alice", "delete_root,recursive_delete"},
		{"rm -rf /home/alice/*", "delete_root,recursive_delete"},
		{"rm -rf //", "delete_root,recursive_delete"},
		{"rm -rf /./", "delete_root,recursive_delete"},
		{"rm -rf /etc", "delete_root,recursive_delete"},
		{"rm -rf /usr/*", "delete_root,recursive_delete"},
		{"rm -r --no-preserve-root /tmp/x", "delete_root,recursive_delete"},
		{`"rm" -rf '/'`, "delete_root,recursive_delete"},
		{`r\m -rf /`, "delete_root,recursive_delete"},
		{"/bin/rm -rf /", "delete_root,recursive_delete"},
		{`\rm -rf /`, "delete_root,recursive_delete"},
		{"sudo rm -rf /", "delete_root,recursive_delete,sudo"},
		{"cd /tmp && rm -rf /", "delete_root,recursive_delete"},
		{"ls; rm -rf ~", "delete_root,recursive_delete"},
		{"true || rm -rf /", "delete_root,recursive_delete"},
		{"echo $(rm -rf /)", "delete_root,recursive_delete"},
		{"echo `rm -rf /`", "delete_root,recursive_delete"},
		{`echo "$(rm -rf ~)"`, "delete_root,recursive_delete"},
		{`bash -c 'rm -rf /'`, "delete_root,recursive_delete"},
		{`sh -ec "cd / && rm -rf *"`, "recursive_delete"},
		{`eval "rm -rf /"`, "delete_root,recursive_delete"},
		{strings.Repeat("eval ", 50) + "rm -rf /", "delete_root,recursive_delete"},
		{`echo "rm -rf /" | sh`, "delete_root,recursive_delete"},
		{`nohup env FOO=1 timeout 5 rm -rf / &`, "delete_root,recursive_delete"},
		{`FOO=bar rm -rf /`, "delete_root,recursive_delete"},
		{`find / -maxdepth 0 | xargs rm -rf`, "recursive_delete,bulk_delete"},
		{`su -c "rm -rf /"`, "delete_root,recursive_delete,sudo"},
		{"rm -rf -- /", "delete_root,recursive_delete"},
		{`rm -rf "$HOME"/*`, "delete_root,recursive_delete"},
		{"sudo -i", "sudo"},
		{"git push origin main --force", "git_force_push"},
		{"chmod -R 755 ~/", "chmod_recursive"},
		{"rm -rf node_modules", "recursive_delete"},
		{"rm -r build", "recursive_delete"},
		{"rm -vrf dist", "recursive_delete"},
		{"rm -rf .", "recursive_delete"},
		{"rm -rf /tmp/build", "recursive_delete"},
		{"rm -rf ~/projects/old", "recursive_delete"},
		{"find . -type d -exec rm -rf {} +", "recursive_delete,find_delete"},
		// Near misses of deletion.
		{"rm file.txt", ""},
		{"rm -f file.txt", ""},
		{"rm -- -r", ""},
		{"rm -i a b", ""},
		{"grep -r foo .", ""},
		{"grep -rf patterns.txt .", ""},
		{`echo "rm -rf /"`, ""},
		{`echo 'rm -rf /' > notes.txt`, ""},
		{`git commit -m "rm -rf build; cleanup"`, ""},
		{`printf '%s\n' "rm -rf /"`, ""},
		{"ls -R /", ""},
		{"cp -r src dst", ""},
		{"# rm -rf /", ""},
		{"rmdir emptydir", ""},
		// fork bombs.
		{":(){ :|:& };:", "fork_bomb"},
		{":(){:|:&};:", "fork_bomb,unparsed_command"},
		{"bomb() { bomb | bomb & }; bomb", "fork_bomb"},
		{"function f { f|f & }; f", "fork_bomb"},
		{`perl -e "fork while fork"`, "fork_bomb"},
		{`python3 -c "import os
while True: os.fork()"`, "fork_bomb"},
		{"f(){ echo hi; }; f | cat", ""},
		{"git log --oneline | head", ""},
		// disks.
		{"mkfs.ext4 /dev/sda1", "format_disk,disk_format"},
		{"sudo mkfs -t ext4 /dev/nvme0n1p2", "format_disk,sudo,disk_format"},
		{"wipefs -a /dev/sdb", "format_disk,disk_format"},
		{"mkfs.ext4 ./disk.img", "disk_format"},
		{"mkswap swapfile", "disk_format"},
		{"fdisk -l", "disk_format"},
		{"dd if=/dev/zero of=/dev/sda bs=1M", "disk_overwrite,dd"},
		{"dd if=img.iso of=/dev/disk2 bs=4m", "disk_overwrite,dd"},
		{"cat image.iso > /dev/sdb", "disk_overwrite"},
		{"echo x | tee /dev/nvme0n1", "disk_overwrite"},
		{"shred -n 1 /dev/sda", "disk_overwrite"},
		{"dd if=/dev/zero of=./zeros.bin bs=1M count=1", "dd"},
		{"dd if=/dev/sda of=backup.img", "dd"},
		{"echo hi > /dev/null", ""},
		{"cmd 2>/dev/null", ""},
		{"cat /dev/sda | head -c 512 | xxd", ""},
		{"ls /dev/sd*", ""},
		{"mkdir fs", ""},
		{"mkfifo pipe", ""},
		// sudo.
		{"sudo apt-get install jq", "sudo"},
		{"sudo -u postgres psql", "sudo"},
		{"doas pkg_add curl", "sudo"},
		{"pkexec visudo", "sudo"},
		{"echo pw | sudo -S true", "sudo"},
		{"grep sudo /var/log/auth.log", ""},
		{"echo sudo", ""},
		{"sudoku --solve", ""},
		{"apt list --installed | grep sudo", ""},
		// chmod/chown.
		{"chmod -R 777 /", "chmod_recursive"},
		{"chmod 777 -R /etc", "chmod_recursive"},
		{"chmod --recursive a+w ~", "chmod_recursive"},
		{"chmod -R 755 /usr/local/lib", "chmod_recursive"},
		{"sudo chown -R me:me /usr", "sudo,chown_recursive"},
		{"chown -R me /home/alice", "chown_recursive"},
		{"chgrp -R staff /var", "chown_recursive"},
		{"chmod -R u+w ./build", ""},
		{"chmod -R 700 ~/.ssh", "secret_store"},
		{"chmod 644 /etc/hosts", ""},
		{"chown -R me:me ./data", ""},
		{"chmod +x script.sh", ""},
		// remote scripts.
		{"curl -fsSL https://example.com/install.sh | sh", "remote_script"},
		{"curl -fsSL https://example.com/install.sh | sudo bash", "sudo,remote_script"},
		{"wget -qO- https://x.io/i.sh | bash -s -- --yes", "remote_script"},
		{"curl -s https://x.io/i.py | python3", "remote_script"},
		{"curl -s https://x.io/i.sh | tee i.sh | sh", "remote_script"},
		{`bash <(curl -s https://x.io/i.sh)`, "remote_script"},
		{`sh -c "$(curl -fsSL https://x.io/i.sh)"`, "remote_script"},
		{`eval "$(wget -qO- https://x.io/env)"`, "remote_script"},
		{`source <(curl -s https://x.io/completion)`, "remote_script"},
		{"curl -o install.sh https://example.com/install.sh", ""},
		{"curl -s https://api.x.io/v1 | jq .", ""},
		{"curl -s https://api.x.io/v1 | python3 -m json.tool", ""},
		{"wget -qO- https://x.io/a.tgz | tar xz", ""},
		{"curl https://x.io/a.sh | cat", ""},
		{"bash install.sh", ""},
		{`echo "$(curl -s https://x.io/ip)"`, ""},
		// git.
		{"git push --force", "git_force_push"},
		{"git push -f origin main", "git_force_push"},
		{"git push -uf origin main", "git_force_push"},
		{"git push --force-with-lease", "git_force_push"},
		{"git push origin +main", "git_force_push"},
		{"git push origin --delete old", "git_force_push"},
		{"git push origin :old", "git_force_push"},
		{"git -C repo push --force", "git_force_push"},
		{"git push", ""},
		{"git push -u origin main", ""},
		{"git push --follow-tags", ""},
		{`git commit -m "push -f"`, ""},
		{"git reset --hard", "git_reset_hard"},
		{"git reset --hard origin/main", "git_reset_hard"},
		{"git stash && git reset --hard HEAD", "git_reset_hard"},
		{"git reset HEAD~1", ""},
		{"git reset --soft HEAD~1", ""},
		{"git clean -fd", "git_clean"},
		{"git clean -fdx", "git_clean"},
		{"git clean -d -f", "git_clean"},
		{"git clean --force", "git_clean"},
		{"git clean -nd", ""},
		{"git clean -fdn", ""},
		{"git status", ""},
		// kill.
		{"kill -9 -1", "kill_all"},
		{"kill -KILL -1", "kill_all"},
		{"kill -s KILL -1", "kill_all"},
		{"kill -- -1", "kill_all"},
		{"kill 1", "kill_all"},
		{"killall5 -9", "kill_all"},
		{"kill -9 12345", ""},
		{"kill -1 12345", ""},
		{"kill %1", ""},
		{"kill -l", ""},
		{"killall node", "kill_by_name"},
		{"pkill -f 'vite'", "kill_by_name"},
		{"pgrep -f node", ""},
		// shutdown.
		{"shutdown -h now", "shutdown"},
		{"sudo reboot", "sudo,shutdown"},
		{"systemctl poweroff", "shutdown"},
		{"init 0", "shutdown"},
		{"systemctl status nginx", ""},
		{"systemctl restart nginx", ""},
		{"echo reboot", ""},
		// profiles and system files.
		{"echo 'export PATH=$PATH:/opt/x' >> ~/.bashrc", "write_shell_profile"},
		{"echo x > $HOME/.zshrc", "write_shell_profile"},
		{"cat snippet >> /home/alice/.profile", "write_shell_profile"},
		{"echo x | tee -a ~/.bash_profile", "write_shell_profile"},
		{"cp dotfiles/zshrc ~/.zshrc", "write_shell_profile"},
		{"sed -i 's/a/b/' ~/.bashrc", "in_place_edit,write_shell_profile"},
		{"echo 'set -o vi' >> ~/.config/fish/config.fish", "write_shell_profile"},
		{"cat ~/.bashrc", ""},
		{"grep PATH ~/.zshrc", ""},
		{"cp ~/.bashrc backup/bashrc", ""},
		{"sed 's/a/b/' ~/.bashrc", ""},
		{"echo '127.0.0.1 x' >> /etc/hosts", "write_system_file"},
		{"echo x | sudo tee /etc/apt/sources.list.d/x.list", "sudo,write_system_file"},
		{"cp my.conf /etc/nginx/nginx.conf", "write_system_file"},
		{"mv tool /usr/bin/tool", "write_system_file"},
		{"echo hi > ./etc/hosts", ""},
		{"cat /etc/hosts", ""},
		{"cp /etc/hosts hosts.bak", ""},
		{"ls /usr/bin > bins.txt", ""},
		{"wc -l < /etc/passwd", ""},
		// Ordinary work.
		{"go test ./...", ""},
		{"npm install && npm run build", ""},
		{"ls -la | grep foo > out.txt 2>&1", ""},
		{"python3 -m pytest -q", ""},
		{"make -j4", ""},
		{"", ""},
		{"   ", ""},
		{`echo "unterminated`, "unparsed_command"},
	}
	for _, tt := range tests {
		got := strings.Join(keys(check(tt.cmd, testHome)), ",")
		if got != tt.want {
			t.Errorf("check(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func TestHardline(t *testing.T) {
	hard := []string{"rm -rf /", "rm -rf ~", "rm -rf /*", ":(){ :|:& };:", "mkfs.ext4 /dev/sda", "dd if=/dev/zero of=/dev/sda",
		"sudo rm -rf --no-preserve-root /", "bash -c 'rm -rf ~/'"}
	for _, c := range hard {
		ms := check(c, testHome)
		if len(ms) == 0 || !ms[0].Hardline {
			t.Errorf("%q: want a hardline match first, got %+v", c, ms)
		}
	}
	for _, c := range []string{"rm -rf build", "sudo ls", "git push -f", "dd if=a of=b"} {
		for _, m := range check(c, testHome) {
			if m.Hardline {
				t.Errorf("%q: unexpected hardline %s", c, m.Key)
			}
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"rm -rf /", "a $(b `c` \"d $(e)\") | f", "x <(y) >(z)", "'", "\"", "$(", "`", "\\", "<<EOF\nx\nEOF", ":(){ :|:& };:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check(s, testHome)
	})
}

package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandSpellings runs deny(bash(git push*)) and deny(bash(rm -rf*))
// against the ways a shell program can spell those commands, and against
// programs that only look alike.
func TestCommandSpellings(t *testing.T) {
	p := mustPolicy(t, Rules{Deny: []string{"bash(git push*)", "Bash(rm -rf:*)"}}, "")
	denied := []string{
		"git push",
		"git  push",
		"\tgit\tpush origin main ",
		"git push\n",
		"FOO=1 git push",
		"FOO=1 BAR=2 git push --force",
		"sh -c 'git push'",
		"bash -c \"git push\"",
		"bash -lc 'git push'",
		"bash -e -c 'cd x && git push'",
		"/bin/sh -c 'sh -c \"git push\"'",
		"zsh -c 'git push'",
		"(git push)",
		"( ( git push ) )",
		"{ git push; }",
		"`git push`",
		"echo `git push`",
		"echo $(git push)",
		"x=$(git push)",
		"cat <(git push)",
		"diff <(true) >(git push)",
		"/usr/bin/git push",
		"./git push",
		"\\git push",
		"'git' push",
		"\"git\" \"push\"",
		"g''it pu\"\"sh",
		"gi\\t pu\\sh",
		"$'git' push",
		"git -C . push",
		"git -C /tmp/repo push origin",
		"git -c user.name=x push",
		"git -cuser.name=x push",
		"git --git-dir=.git push",
		"git --git-dir .git --work-tree . push",
		"git --no-pager -P push",
		"git --namespace ns push",
		"cd sub && git push",
		"true || git push",
		"true; git push",
		"ls | git push",
		"ls |& git push",
		"git status\ngit push",
		"if true; then git push; fi",
		"while false; do :; done; for i in 1; do git push; done",
		"case x in x) git push;; esac",
		"f() { git push; }; f",
		"function f { git push; }",
		"time git push",
		"! git push",
		"coproc git push",
		"git push &",
		"nohup git push &",
		"command git push",
		"builtin command git push",
		"exec git push",
		"exec -a name git push",
		"env git push",
		"env -i FOO=1 git push",
		"env -u HOME git push",
		"/usr/bin/env git push",
		"env -S 'git push'",
		"env --split-string='git push'",
		"nice git push",
		"nice -n 10 git push",
		"nice -n10 git push",
		"timeout 10 git push",
		"timeout -s KILL 5m git push",
		"timeout --signal=KILL 5m git push",
		"sudo git push",
		"sudo -u me -- git push",
		"doas -u me git push",
		"stdbuf -o0 git push",
		"ionice -c 3 git push",
		"setsid git push",
		"nohup nice timeout 1 env sudo git push",
		"xargs git push < remotes",
		"echo origin | xargs -n 1 git push",
		"echo push | xargs git",
		"find . -name x -exec git push \\;",
		"find . -execdir git push {} +",
		"su -c 'git push' me",
		"flock /tmp/l git push",
		"flock /tmp/l -c 'git push'",
		"watch git push",
		"watch -n 1 'git push'",
		"trap 'git push' EXIT",
		"alias p='git push'",
		"busybox sh -c 'git push'",
		"git push $REMOTE",
		"git push \"$(git remote)\"",
		"git $sub",
		"git ${sub:-push}",
		"git -C \"$dir\" push",
		"rm -rf /",
		"rm  -rf  build",
		"/bin/rm -rf x",
		"sudo rm -rf /",
		"find . -exec rm -rf {} +",
		"echo x | xargs rm -rf",
		"rm $FLAGS",
		// Undecidable: meets every deny rule.
		"eval 'git push'",
		"eval \"$CMD\"",
		"$cmd push",
		"${GIT:-git} push",
		"$(echo git) push",
		"`echo git` push",
		"\"$g\" push",
		"gi* push",
		"/usr/bin/gi? push",
		"{git,x} push",
		"sh -c \"$CMD\"",
		"bash -c \"$(cat script)\"",
		"echo 'git push' | sh",
		"echo 'git push' | bash -s",
		"bash < script.sh",
		"sh -",
		"bash <<'EOF'\ngit push\nEOF",
		"source <(echo git push)",
		". \"$f\"",
		"git -c alias.p=push p",
		"git -c alias.x='!git push' x",
		"sudo -s",
		"bash /dev/stdin <<< 'git push'",
		"sh /proc/self/fd/0 < cmds",
		". /dev/stdin",
		"bash <(echo git push)",
		"$SHELL -c 'git push'",
		"command eval 'git push'",
		"xargs -I{} git push {} < remotes",
		"nice -5 git push",
		"timeout -k5 10 git push",
		"env -S'git push'",
		"[[ -n $(git push) ]]",
		"declare -x A=$(git push)",
		"xargs $CMD",
		"git push 'unterminated",
		"if then fi (",
	}
	denied = append(denied, nested("git push", 3), nested("ls", maxShellDepth+2))
	for _, c := range denied {
		args, _ := json.Marshal(map[string]string{"command": c})
		if d := p.Decide("bash", args); d.Effect != Deny {
			t.Errorf("%q: %s; want deny", c, d.Effect)
		}
	}
	allowed := []string{
		"git pull",
		"git status && git log",
		"echo git push",
		"echo 'git push'",
		"printf '%s\\n' 'rm -rf /'",
		"git commit -m 'do not git push'",
		"cat README.md # git push",
		"grep -r 'git push' .",
		"mygit push",
		"git -C push status",
		"rm -r build",
		"rm -f x",
		"echo $HOME",
		"ls \"$dir\"",
		"FOO=$(date) make",
		"bash script.sh",
		"sh ./build.sh --fast",
		"env FOO=1 make test",
		"timeout 5 go test ./...",
		"xargs -n1 echo < list",
		"find . -name '*.go' -exec gofmt -l {} +",
		"sudo -u me make",
		"git --version",
		"alias ll='ls -l'",
		"trap 'rm -f lock' EXIT",
		"",
		nested("ls", 3),
		nested("git pull", maxShellDepth),
	}
	for _, c := range allowed {
		args, _ := json.Marshal(map[string]string{"command": c})
		if d := p.Decide("bash", args); d.Effect != Allow {
			t.Errorf("%q: %s by %v on %q; want allow", c, d.Effect, d.Rule, d.Subject)
		}
	}
}

// nested wraps cmd in n levels of sh -c.
func nested(cmd string, n int) string {
	for range n {
		cmd = "sh -c '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
	}
	return cmd
}

// TestUndecidableOnlyOnItsTool: an undecidable program meets the deny and
// ask rules of its own tool, not those of other tools, and not allow rules.
func TestUndecidableOnlyOnItsTool(t *testing.T) {
	p := mustPolicy(t, Rules{Allow: []string{"bash(*)"}, Deny: []string{"other(git push*)"}}, "")
	d := p.Decide("bash", json.RawMessage(`{"command":"eval x"}`))
	if d.Effect != Allow || d.Rule != nil {
		t.Errorf("eval under an allow rule: %+v; want the default allow, no rule", d)
	}
	p = mustPolicy(t, Rules{Ask: []string{"bash(npm publish*)"}}, "")
	d = p.Decide("bash", json.RawMessage(`{"command":"$x"}`))
	if d.Effect != Ask {
		t.Errorf("undecidable under an ask rule: %s", d.Effect)
	}
}

// TestAllowNeedsEveryCommand: an allow rule covers a program only when it
// matches each of its commands.
func TestAllowNeedsEveryCommand(t *testing.T) {
	p := mustPolicy(t, Rules{Allow: []string{"bash(go test*)"}}, "")
	for c, want := range map[string]bool{
		"go test ./...":              true,
		"go  test ./...":             true,
		"go test ./... && rm -rf /":  false,
		"go test $(rm -rf /)":        false,
		"go test ./... | tee log":    false,
		"FOO=1 go test -run X ./...": true,
	} {
		args, _ := json.Marshal(map[string]string{"command": c})
		if got := p.Decide("bash", args).Rule != nil; got != want {
			t.Errorf("%q allowed by the rule: %v; want %v", c, got, want)
		}
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		g, s          string
		match, prefix bool
	}{
		{"git push*", "git push", true, true},
		{"git push*", "git push origin", true, true},
		{"git push*", "git ", false, true},
		{"git push*", "git pull", false, false},
		{"a?c", "abc", true, true},
		{"a?c", "ab", false, true},
		{"*x*", "", false, true},
		{"", "", true, true},
		{"", "a", false, false},
		{"a*b*c", "axxbyyc", true, true},
		{"a*b*c", "axxbyyd", false, true},
	}
	for _, tc := range cases {
		g := glob(tc.g)
		if m, pr := g.match(tc.s), g.matchPrefix(tc.s); m != tc.match || pr != tc.prefix {
			t.Errorf("glob %q on %q: match %v prefix %v; want %v %v", tc.g, tc.s, m, pr, tc.match, tc.prefix)
		}
	}
}

// TestClaudeRules: rules written in Claude Code's names and pattern
// meanings govern the Praxis tools Claude's rule would govern.
func TestClaudeRules(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("K=v"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(ws, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	p := mustPolicy(t, Rules{
		Deny: []string{"Read(./.env)", "Edit(/src/**)", "Bash(npm publish:*)", "Write(*.lock)", "Read(//etc/**)", "Read(~/.ssh/**)", "WebFetch"},
		Ask:  []string{"MultiEdit(docs/**)"},
	}, ws)
	cases := []struct {
		tool, args string
		want       Effect
	}{
		{"read_file", `{"path":".env"}`, Deny},
		{"read_file", `{"path":"./.env"}`, Deny},
		{"read_file", `{"path":"` + ws + `/.env"}`, Deny},
		{"read_file", `{"path":"innocent.txt"}`, Deny}, // a symbolic link to .env
		{"grep", `{"pattern":"K","path":".env"}`, Deny},
		{"read_file", `{"path":"sub/.env"}`, Allow}, // ./.env is the workspace's only
		{"read_file", `{"path":"/etc/passwd"}`, Deny},
		{"read_file", `{"path":"` + home + `/.ssh/id_ed25519"}`, Deny},
		{"read_file", `{"path":"etc/passwd"}`, Allow},
		{"edit_file", `{"path":"src/a/b.go"}`, Deny},
		{"write_file", `{"path":"src/new.go"}`, Deny},
		{"edit_file", `{"path":"lib/src/b.go"}`, Allow},
		{"write_file", `{"path":"deep/dir/yarn.lock"}`, Deny},
		{"edit_file", `{"path":"yarn.lock"}`, Allow}, // Write rules are write_file's
		{"edit_file", `{"path":"docs/x.md"}`, Ask},
		{"write_file", `{"path":"docs/x.md"}`, Allow}, // MultiEdit is edit_file alone
		{"bash", `{"command":"npm publish --tag next"}`, Deny},
		{"bash", `{"command":"cd pkg && npm  publish"}`, Deny},
		{"bash", `{"command":"npm run publish-docs"}`, Allow},
		{"read_file", `{"path":"README.md"}`, Allow},
	}
	for _, tc := range cases {
		if d := p.Decide(tc.tool, json.RawMessage(tc.args)); d.Effect != tc.want {
			t.Errorf("%s %s: %s by %v; want %s", tc.tool, tc.args, d.Effect, d.Rule, tc.want)
		}
	}
	unused := p.Unused([]string{"bash", "read_file", "grep", "edit_file", "write_file"})
	if len(unused) != 1 || !strings.Contains(unused[0], "WebFetch, a Claude Code tool Praxis does not have") {
		t.Errorf("Unused: %q; want one warning naming WebFetch", unused)
	}
	p = mustPolicy(t, Rules{Deny: []string{"bsah(rm*)", "LS"}}, "")
	if got := p.Unused([]string{"bash", "read_file"}); len(got) != 2 {
		t.Errorf("Unused: %q; want the misspelt rule and LS (list_dir is not in the session)", got)
	}
}

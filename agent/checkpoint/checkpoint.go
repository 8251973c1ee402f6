// Package checkpoint keeps an agent session's work in Git: the session
// works on its own branch, praxis/<session>, created from HEAD (or from a
// given commit, for a fork), and every step that changed files is
// committed with the step's summary and trailers naming the session and
// the step. The session's journal directory (.praxis) is never committed.
package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Mode says what to do with uncommitted changes when a session starts.
type Mode string

// The modes.
const (
	// Clean refuses to start on uncommitted changes (--git).
	Clean Mode = "clean"
	// Stash stashes them first, untracked files included (--git=stash).
	Stash Mode = "stash"
	// AllowDirty commits them on the session's branch as they are, before
	// the first step, so that each checkpoint holds its step's changes
	// only (--git=allow-dirty).
	AllowDirty Mode = "allow-dirty"
)

// ParseMode reads the value of --git: "" or "true" is Clean.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "true", string(Clean):
		return Clean, nil
	case string(Stash), string(AllowDirty):
		return Mode(s), nil
	}
	return "", fmt.Errorf("%q: want stash or allow-dirty (or nothing)", s)
}

// ErrDirty is a work tree with uncommitted changes under Clean.
var ErrDirty = errors.New("the work tree has uncommitted changes")

// ErrNotRepo is a workspace outside any Git work tree.
var ErrNotRepo = errors.New("the workspace is not in a Git work tree")

// Repo is a session's branch in the work tree of Dir.
type Repo struct {
	// Dir is the workspace: commands run there, and only the changes
	// under it are committed.
	Dir string
	// Session is the session's ID; Branch its branch.
	Session, Branch string
}

// exclude keeps the sessions' journals and Praxis's own files out.
var exclude = []string{"--", ".", ":(exclude).praxis"}

func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// The commits are Praxis's: a user without an identity still gets them.
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=Praxis", "GIT_AUTHOR_EMAIL=praxis@localhost",
		"GIT_COMMITTER_NAME=Praxis", "GIT_COMMITTER_EMAIL=praxis@localhost", "GIT_TERMINAL_PROMPT=0")
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// Start puts session on its branch praxis/<session>, created from from
// (a commit; HEAD when empty) and checked out in the work tree of dir. It
// refuses a workspace outside a Git work tree (ErrNotRepo) and, under
// Clean, uncommitted changes (ErrDirty).
func Start(ctx context.Context, dir, session string, mode Mode, from string) (*Repo, error) {
	r := &Repo{Dir: dir, Session: session, Branch: "praxis/" + session}
	if out, err := r.git(ctx, "rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return nil, ErrNotRepo
	}
	status, err := r.git(ctx, append([]string{"status", "--porcelain"}, exclude...)...)
	if err != nil {
		return nil, err
	}
	dirty := status != ""
	if dirty {
		switch mode {
		case Stash:
			if _, err := r.git(ctx, append([]string{"stash", "push", "--include-untracked", "-m", "praxis: before session " + session}, exclude...)...); err != nil {
				return nil, err
			}
		case AllowDirty:
		default:
			return nil, fmt.Errorf("%w (%d files); commit or stash them, or start with --git=stash or --git=allow-dirty", ErrDirty, strings.Count(status, "\n")+1)
		}
	}
	args := []string{"switch", "-c", r.Branch}
	if from != "" {
		args = append(args, from)
	}
	if _, err := r.git(ctx, args...); err != nil {
		return nil, err
	}
	if dirty && mode == AllowDirty {
		if _, err := r.commit(ctx, "praxis: the uncommitted changes before session "+session, 0); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Resume checks the work tree out on the session's branch, which must
// exist, for a session that goes on.
func Resume(ctx context.Context, dir, session string) (*Repo, error) {
	r := &Repo{Dir: dir, Session: session, Branch: "praxis/" + session}
	if out, err := r.git(ctx, "rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return nil, ErrNotRepo
	}
	if cur, _ := r.git(ctx, "branch", "--show-current"); cur == r.Branch {
		return r, nil
	}
	if _, err := r.git(ctx, "switch", r.Branch); err != nil {
		return nil, err
	}
	return r, nil
}

// Commit commits the changes of step under the workspace, with summary as
// the message's subject, and returns the commit's hash; "" when the step
// changed nothing.
func (r *Repo) Commit(ctx context.Context, step int, summary string) (string, error) {
	return r.commit(ctx, summary, step)
}

func (r *Repo) commit(ctx context.Context, summary string, step int) (string, error) {
	if _, err := r.git(ctx, append([]string{"add", "-A"}, exclude...)...); err != nil {
		return "", err
	}
	if _, err := r.git(ctx, "diff", "--cached", "--quiet"); err == nil {
		return "", nil // nothing staged
	}
	subject := strings.TrimSpace(summary)
	if i := strings.IndexByte(subject, '\n'); i >= 0 {
		subject = subject[:i]
	}
	if r := []rune(subject); len(r) > 72 {
		subject = string(r[:69]) + "..."
	}
	if subject == "" {
		subject = fmt.Sprintf("praxis: step %d", step)
	}
	msg := subject + "\n\nPraxis-Session: " + r.Session
	if step > 0 {
		msg += fmt.Sprintf("\nPraxis-Step: %d", step)
	}
	if _, err := r.git(ctx, "commit", "--no-verify", "-q", "-m", msg); err != nil {
		return "", err
	}
	return r.git(ctx, "rev-parse", "HEAD")
}

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/praxis-tools/praxis/sandbox"
)

// The Praxis config files, read in this order, each overriding the keys it
// names: the user's, the workspace's, then the one --config names. Their
// sandbox section sets the bash tool's policy (see sandbox.ApplyConfig);
// flags override them all. The workspace's file may only tighten the
// policy: it comes with the code, and the code's author is not the user;
// so a command that creates it cannot loosen the next session's policy
// either. The engine's file tools may not change any of
// them that lies in the workspace, and under bwrap commands see them
// read-only: an agent must not loosen its own sandbox.
const (
	userConfigName      = "praxis/config.yaml" // under os.UserConfigDir
	workspaceConfigName = ".praxis/config.yaml"
)

// configFlag is the --config flag. Once every flag is parsed it loads the
// config files into the engine flags' policy.
type configFlag struct{ ef *engineFlags }

func (c configFlag) String() string {
	if c.ef == nil {
		return ""
	}
	return c.ef.config
}

func (c configFlag) Set(s string) error {
	c.ef.config = s
	return nil
}

func (c configFlag) afterParse() error { return c.ef.loadPolicy() }

// userConfigPath returns the user's config file, or "" when the system
// names no config directory.
func userConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, filepath.FromSlash(userConfigName))
}

// loadPolicy builds the sandbox policy from the default, the config files
// and --sandbox, and the list of paths the engine must protect.
func (ef *engineFlags) loadPolicy() error {
	ws, err := filepath.Abs(ef.workspace)
	if err != nil {
		return err
	}
	p := sandbox.DefaultPolicy("") // the engine fills in its workspace
	files := []struct {
		path     string
		required bool
		tighten  bool // the file may only tighten the policy
	}{
		{userConfigPath(), false, false},
		// The workspace's file comes with the code, whoever wrote it.
		{filepath.Join(ws, filepath.FromSlash(workspaceConfigName)), false, true},
		{ef.config, true, false},
	}
	// The agent reads its hooks and rules from the workspace's Claude Code
	// settings: the model must not write its own.
	ef.protected = append([]string{workspaceConfigName}, claudeSettings...)
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if rel, ok := inside(ws, f.path); ok {
			ef.protected = append(ef.protected, rel)
		}
		data, err := os.ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) && !f.required {
			continue
		}
		if err != nil {
			return errors.New(fileProblem("the config file", err))
		}
		q := p
		if err := sandbox.ApplyConfig(&q, data); err != nil {
			return fmt.Errorf("config %s: %w", f.path, err)
		}
		if loose := p.Loosens(q); f.tighten && len(loose) > 0 {
			return fmt.Errorf("config %s: a workspace's config may only tighten the sandbox policy, but it loosens %s; "+
				"set those in your own config file or with --config", f.path, strings.Join(loose, ", "))
		}
		p = q
	}
	if ef.sandbox != "" { // checked when the flag was parsed
		p.Isolation = sandbox.Isolation(ef.sandbox)
	}
	ef.policy = &p
	return nil
}

// inside returns path relative to the workspace ws, if it lies inside.
func inside(ws, path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	for _, base := range []string{ws, realPath(ws)} {
		for _, p := range []string{abs, realPath(abs)} {
			if rel, err := filepath.Rel(base, p); err == nil && filepath.IsLocal(rel) {
				return filepath.ToSlash(rel), true
			}
		}
	}
	return "", false
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return p
}

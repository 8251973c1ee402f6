package praxis

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// protection knows the files the engine's writers must not change (the
// ones that set Praxis's own policy) by what they are, not by how a path
// spells them: a write is refused when the file it would replace or create
// resolves to a protected path (through symlinked directories, "..",
// trailing slashes, in any letter case) or is the very file (device and
// inode) that was protected when the engine started, wherever a rename has
// taken it since.
type protection struct {
	ws      *Workspace
	entries []protected
}

// protected is one protected path: a file, or with tree set a directory
// and everything in it.
type protected struct {
	rel  string      // workspace-relative, clean, slash-separated
	tree bool        // the path ended in "/"
	was  fs.FileInfo // what the path named when the engine started; nil if nothing
}

// newProtection records the protected paths of ws and the files they name
// now.
func newProtection(ws *Workspace, rels []string) *protection {
	p := &protection{ws: ws}
	for _, rel := range rels {
		tree := strings.HasSuffix(rel, "/")
		rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
		if rel == "" {
			rel = "."
		}
		entry := protected{rel: rel, tree: tree}
		if fi, err := os.Stat(filepath.Join(ws.real, filepath.FromSlash(rel))); err == nil {
			entry.was = fi
		}
		p.entries = append(p.entries, entry)
	}
	return p
}

// checkProtected refuses (E_POLICY) a write, creation or removal of the
// file rel under the directory dir (the workspace's real path, or the
// memory directory) when that file is protected. Every tool that changes
// files calls it before it touches anything, and the commit path calls it
// again for each file it replaces: see committer.allowed.
func (e *Engine) checkProtected(dir, rel string) error {
	p := e.protect
	if len(p.entries) == 0 {
		return nil
	}
	target := resolvedPath(filepath.Join(dir, filepath.FromSlash(rel)))
	// The file itself, if it exists: a hard link or a renamed original
	// is the same file under another name.
	fi, _ := os.Lstat(target)
	for _, entry := range p.entries {
		prot := resolvedPath(filepath.Join(p.ws.real, filepath.FromSlash(entry.rel)))
		hit := samePath(target, prot) || entry.tree && underPath(target, prot)
		now, _ := os.Stat(prot)
		for _, id := range []fs.FileInfo{entry.was, now} {
			switch {
			case id == nil || hit:
			case fi != nil && os.SameFile(fi, id):
				hit = true
			case entry.tree && id.IsDir():
				hit = insideDir(target, p.ws.real, id)
			}
		}
		if hit {
			return Errorf(EPolicy, "%s is protected: the engine's file tools may not change it", rel).
				WithDetail("It is, or is in, " + entry.rel + ", which sets Praxis's own policy; a person changes it by hand. " +
					"Protected: " + p.list() + ". Every other file in the workspace may be written.")
		}
	}
	return nil
}

// list names the protected paths for a message.
func (p *protection) list() string {
	names := make([]string, len(p.entries))
	for i, entry := range p.entries {
		names[i] = entry.rel
		if entry.tree {
			names[i] += "/"
		}
	}
	return strings.Join(names, ", ")
}

// resolvedPath returns the absolute path p with symlinks resolved as far
// as it exists; the missing rest is appended as spelt.
func resolvedPath(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// samePath compares resolved paths without regard to letter case, so that
// the protection holds on case-insensitive file systems; on others it
// refuses a few more names than it must.
func samePath(a, b string) bool { return strings.EqualFold(a, b) }

// underPath reports whether a lies inside the directory b.
func underPath(a, b string) bool {
	return len(a) > len(b) && a[len(b)] == filepath.Separator && strings.EqualFold(a[:len(b)], b)
}

// insideDir reports whether target, a resolved path in the workspace root,
// lies below the directory dir, found by identity among its ancestors.
func insideDir(target, root string, dir fs.FileInfo) bool {
	for d := filepath.Dir(target); underPath(d, root) || d == root; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && os.SameFile(fi, dir) {
			return true
		}
		if d == root {
			break
		}
	}
	return false
}

// checkWritable refuses writes to the engine's state directory and to
// protected files, whatever path reaches them (see checkProtected). Every
// file the workspace's committer writes, and every target of a recovered
// intent record, passes it.
func (e *Engine) checkWritable(rel string) error {
	if rel == StateDir || strings.HasPrefix(rel, StateDir+"/") {
		return Errorf(EPolicy, "%s is in %s, the engine's own state: the file tools may not change it", rel, StateDir)
	}
	return e.checkProtected(e.ws.real, rel)
}

// writeTarget resolves a caller's path to the file a write replaces:
// inside the workspace, neither the engine's state nor protected (see
// checkWritable), with symlinks followed.
func (e *Engine) writeTarget(p string) (string, error) {
	rel, err := e.ws.Rel(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", Errorf(EIsDir, "%s is the workspace root, a directory", p)
	}
	target, err := e.ws.resolveLinks(rel)
	if err != nil {
		return "", err
	}
	if err := e.checkWritable(target); err != nil {
		return "", err
	}
	return target, nil
}

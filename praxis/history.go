package praxis

import (
	"sync"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// history remembers, per file, the versions the engine has served and the
// edits it made between them, so that an anchor read from an earlier
// version still resolves while the engine's own later edits left its line
// alone. Memory is bounded: the oldest versions are forgotten first.
type history struct {
	mu     sync.Mutex
	budget int64
	used   int64
	seq    uint64
	files  map[string]*chain
}

const maxChainVersions = 32

// chain is one file's versions, oldest first. Every version but the last
// keeps its bytes and the hunks that turned it into the next one.
type chain struct {
	versions []histVersion
}

type histVersion struct {
	version string
	data    []byte
	hunks   []hashline.Hunk
	seq     uint64
}

func newHistory(budget int64) *history {
	return &history{budget: budget, files: make(map[string]*chain)}
}

// served records that version of path was shown to a caller. A version the
// chain does not end in means the file changed outside the engine: what
// came before is forgotten.
func (h *history) served(path, version string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.files[path]
	if c != nil && c.versions[len(c.versions)-1].version == version {
		return
	}
	h.drop(path)
	h.files[path] = &chain{versions: []histVersion{{version: version}}}
}

// edited records that the engine turned base (of version baseVersion) into
// newVersion through hunks.
func (h *history) edited(path string, base []byte, baseVersion string, hunks []hashline.Hunk, newVersion string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.files[path]
	if c == nil || c.versions[len(c.versions)-1].version != baseVersion {
		h.drop(path)
		c = &chain{versions: []histVersion{{version: baseVersion}}}
		h.files[path] = c
	}
	h.seq++
	last := &c.versions[len(c.versions)-1]
	last.data, last.hunks, last.seq = base, hunks, h.seq
	h.used += int64(len(base))
	c.versions = append(c.versions, histVersion{version: newVersion})
	if len(c.versions) > maxChainVersions {
		h.used -= int64(len(c.versions[0].data))
		c.versions = c.versions[1:]
	}
	h.evict()
}

// replaced records that path was overwritten whole: no earlier anchor
// survives.
func (h *history) replaced(path, version string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(path)
	h.files[path] = &chain{versions: []histVersion{{version: version}}}
}

func (h *history) drop(path string) {
	if c := h.files[path]; c != nil {
		for _, v := range c.versions {
			h.used -= int64(len(v.data))
		}
		delete(h.files, path)
	}
}

// evict forgets the oldest remembered versions until the budget holds.
func (h *history) evict() {
	for h.used > h.budget {
		var oldest *chain
		for _, c := range h.files {
			if len(c.versions) > 1 && (oldest == nil || c.versions[0].seq < oldest.versions[0].seq) {
				oldest = c
			}
		}
		if oldest == nil {
			return
		}
		h.used -= int64(len(oldest.versions[0].data))
		oldest.versions = oldest.versions[1:]
	}
}

// anchorOrigin is where an anchor that does not match the current content
// came from.
type anchorOrigin struct {
	found   bool // the anchor matches a remembered version
	line    int  // the line it names now, when unchanged
	changed bool // the engine's own later edits changed or removed that line
	from    int  // the line it named in that version
}

// resolve looks for a among the remembered versions of path, provided the
// chain ends in current. It returns where the anchored line is now.
func (h *history) resolve(path, current string, a hashline.Anchor) anchorOrigin {
	h.mu.Lock()
	c := h.files[path]
	if c == nil || c.versions[len(c.versions)-1].version != current {
		h.mu.Unlock()
		return anchorOrigin{}
	}
	versions := append([]histVersion(nil), c.versions...)
	h.mu.Unlock()

	for i := len(versions) - 2; i >= 0; i-- {
		v := versions[i]
		if v.data == nil {
			break
		}
		line := findAnchor(hashline.Parse(v.data), a)
		if line <= 0 {
			continue
		}
		o := anchorOrigin{found: true, from: line}
		for _, step := range versions[i : len(versions)-1] {
			var ok bool
			if line, ok = hashline.MapLine(line, step.hunks); !ok {
				o.changed = true
				return o
			}
		}
		o.line = line
		return o
	}
	return anchorOrigin{}
}

// findAnchor returns the line of d that a names, or 0 if none does, or -1
// if a bare tag names several lines.
func findAnchor(d *hashline.Doc, a hashline.Anchor) int {
	if a.Line > 0 {
		if a.Line <= d.Lines() && d.Sum(a.Line) == a.Sum {
			return a.Line
		}
		return 0
	}
	found := 0
	for n := 1; n <= d.Lines(); n++ {
		if d.Sum(n) == a.Sum {
			if found != 0 {
				return -1
			}
			found = n
		}
	}
	return found
}

package praxis

import (
	"sync"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// history remembers, per file, the chain of versions the engine served
// and the hunks of its own edits between them, so that a line of an
// earlier version can be followed exactly through those edits. The
// contents of the versions are in the version store. It holds at most
// maxHistoryFiles files (the least recently changed are forgotten) and
// maxChainVersions versions a file.
type history struct {
	mu    sync.Mutex
	seq   uint64
	files map[string]*chain
}

const (
	maxChainVersions = 32
	maxHistoryFiles  = 1024
)

// chain is one file's versions, oldest first: hunks[i] turned versions[i]
// into versions[i+1].
type chain struct {
	versions []string
	hunks    [][]hashline.Hunk
	seq      uint64 // when it last changed
}

func newHistory() *history {
	return &history{files: make(map[string]*chain)}
}

// served records that version of path was shown to a caller. A version the
// chain does not end in means the file changed outside the engine: what
// came before is forgotten.
func (h *history) served(path, version string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.files[path]; c != nil && c.versions[len(c.versions)-1] == version {
		return
	}
	h.start(path, version)
}

// edited records that the engine turned path from baseVersion into
// newVersion through hunks.
func (h *history) edited(path, baseVersion string, hunks []hashline.Hunk, newVersion string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.files[path]
	if c == nil || c.versions[len(c.versions)-1] != baseVersion {
		c = h.start(path, baseVersion)
	}
	c.versions = append(c.versions, newVersion)
	c.hunks = append(c.hunks, hunks)
	if len(c.versions) > maxChainVersions {
		c.versions, c.hunks = c.versions[1:], c.hunks[1:]
	}
}

// replaced records that path was overwritten whole: no earlier line
// survives.
func (h *history) replaced(path, version string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start(path, version)
}

// start begins path's chain anew at version. The caller holds mu.
func (h *history) start(path, version string) *chain {
	if _, ok := h.files[path]; !ok && len(h.files) >= maxHistoryFiles {
		var oldest string
		for p, c := range h.files {
			if oldest == "" || c.seq < h.files[oldest].seq {
				oldest = p
			}
		}
		delete(h.files, oldest)
	}
	h.seq++
	c := &chain{versions: []string{version}, seq: h.seq}
	h.files[path] = c
	return c
}

// since returns, for each earlier version of path in the chain that ends
// in current, the hunks of the engine's edits from it to current, in
// order; nil when the chain does not end in current.
func (h *history) since(path, current string) map[string][][]hashline.Hunk {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.files[path]
	if c == nil || c.versions[len(c.versions)-1] != current {
		return nil
	}
	out := make(map[string][][]hashline.Hunk, len(c.versions)-1)
	for i, v := range c.versions[:len(c.versions)-1] {
		out[v] = c.hunks[i:]
	}
	return out
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

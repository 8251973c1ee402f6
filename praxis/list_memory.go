package praxis

import (
	"context"
	"fmt"
	"strings"
)

// listMemoryInfo is list_memory's structured result.
type listMemoryInfo struct {
	Notes []MemoryNote `json:"notes"`

	text string
}

func (l listMemoryInfo) Text() string { return l.text }

func (e *Engine) listMemory(ctx context.Context, _ noArgs) (listMemoryInfo, error) {
	notes, err := e.MemoryKeys()
	if err != nil {
		return listMemoryInfo{}, err
	}
	if len(notes) == 0 {
		return listMemoryInfo{Notes: []MemoryNote{}, text: "# no memory notes yet; write_memory creates one"}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %d memory notes: key, size in bytes, first line\n", len(notes))
	for _, n := range notes {
		fmt.Fprintf(&b, "%s  %d  %s\n", n.Key, n.Size, n.FirstLine)
	}
	return listMemoryInfo{Notes: notes, text: b.String()}, nil
}

package praxis

import (
	"context"
	"fmt"
	"strings"
)

type searchMemoryArgs struct {
	Query string `json:"query" minLength:"1" jsonschema:"Words to find; a line matches when it holds all of them, in any case."`
}

// searchMemoryInfo is search_memory's structured result.
type searchMemoryInfo struct {
	Matches int `json:"matches"`
	Notes   int `json:"notes"`

	text string
}

func (s searchMemoryInfo) Text() string { return s.text }

func (e *Engine) searchMemory(ctx context.Context, a searchMemoryArgs) (searchMemoryInfo, error) {
	words := strings.Fields(strings.ToLower(a.Query))
	if len(words) == 0 {
		return searchMemoryInfo{}, Errorf(EInvalidArgs, "query holds no words")
	}
	root, err := e.memoryRoot(false)
	if err != nil {
		return searchMemoryInfo{}, err
	}
	var notes []MemoryNote
	if root != nil {
		defer root.Close()
		if notes, err = memoryNotes(root, false); err != nil {
			return searchMemoryInfo{}, err
		}
	}
	var body strings.Builder
	hits, files := 0, 0
	for _, n := range notes {
		if err := ctx.Err(); err != nil {
			return searchMemoryInfo{}, Errorf(ECancelled, "search_memory cancelled")
		}
		data, err := readNote(root, n.Key, e.maxMemoryBytes())
		if err != nil {
			continue // deleted meanwhile, or grown past the cap by hand
		}
		content := string(data)
		found := false
		for i, line := range strings.Split(content, "\n") {
			lower := strings.ToLower(line)
			all := true
			for _, w := range words {
				if !strings.Contains(lower, w) {
					all = false
					break
				}
			}
			if !all {
				continue
			}
			if hits < maxMemoryHits {
				fmt.Fprintf(&body, "%s:%d: %s\n", n.Key, i+1, clipText(strings.TrimRight(line, "\r"), memoryLineClip))
			}
			hits++
			found = true
		}
		if found {
			files++
		}
	}
	head := fmt.Sprintf("# %d matching lines in %d notes for %q\n", hits, files, a.Query)
	if hits > maxMemoryHits {
		body.WriteString(fmt.Sprintf("# truncated: showing %d of %d lines; use more words\n", maxMemoryHits, hits))
	}
	return searchMemoryInfo{Matches: hits, Notes: files, text: head + body.String()}, nil
}

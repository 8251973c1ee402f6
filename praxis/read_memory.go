package praxis

import (
	"context"
	"fmt"
)

// readMemoryInfo is read_memory's structured result; Size is set when the
// note exists.
type readMemoryInfo struct {
	Key    string `json:"key"`
	Exists bool   `json:"exists"`
	Size   *int   `json:"size,omitempty"`

	text string
}

func (r readMemoryInfo) Text() string { return r.text }

func (e *Engine) readMemory(ctx context.Context, a memoryKeyArgs) (readMemoryInfo, error) {
	content, err := e.ReadMemory(a.Key)
	if CodeOf(err) == ENotFound {
		keys, lerr := e.MemoryKeys()
		if lerr != nil {
			return readMemoryInfo{}, lerr
		}
		text := fmt.Sprintf("memory note %s does not exist.", a.Key)
		if len(keys) == 0 {
			text += " The memory store has no notes yet; write_memory creates one."
		} else {
			text += " Existing keys:"
			for _, k := range keys {
				text += "\n" + k.Key
			}
		}
		return readMemoryInfo{Key: a.Key, Exists: false, text: text}, nil
	}
	if err != nil {
		return readMemoryInfo{}, err
	}
	size := len(content)
	return readMemoryInfo{Key: a.Key, Exists: true, Size: &size, text: content}, nil
}

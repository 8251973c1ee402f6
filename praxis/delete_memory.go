package praxis

import (
	"context"
	"errors"
	"io/fs"
	"path"
)

// deleteMemoryInfo is delete_memory's structured result.
type deleteMemoryInfo struct {
	Key string `json:"key"`

	text string
}

func (d deleteMemoryInfo) Text() string { return d.text }

func (e *Engine) deleteMemory(ctx context.Context, a memoryKeyArgs) (deleteMemoryInfo, error) {
	if err := e.checkMemoryWritable(a.Key); err != nil {
		return deleteMemoryInfo{}, err
	}
	c, err := e.memoryCommitter(false)
	if err != nil {
		return deleteMemoryInfo{}, err
	}
	if c == nil {
		return deleteMemoryInfo{}, Errorf(ENotFound, "memory note %s does not exist; the memory store has no notes", a.Key)
	}
	root := c.root
	defer root.Close()
	release, err := c.lock.acquire(ctx)
	if err != nil {
		return deleteMemoryInfo{}, err
	}
	defer release()
	c.recover()
	if err := root.Remove(a.Key + memoryExt); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return deleteMemoryInfo{}, Errorf(ENotFound, "memory note %s does not exist", a.Key).WithDetail("list_memory shows the existing keys.")
		}
		return deleteMemoryInfo{}, Errorf(EIO, "deleting memory note %s: %v", a.Key, errors.Unwrap(err))
	}
	// Remove topic directories left empty; Remove fails on one that is not.
	for dir := path.Dir(a.Key); dir != "."; dir = path.Dir(dir) {
		if root.Remove(dir) != nil {
			break
		}
	}
	return deleteMemoryInfo{Key: a.Key, text: "deleted memory note " + a.Key}, nil
}

package praxis

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"unicode/utf8"
)

type writeMemoryArgs struct {
	Key     string `json:"key" minLength:"1" maxLength:"64" jsonschema:"Note name: letters, digits, _ and -, with / for topics (project/build)."`
	Content string `json:"content" jsonschema:"Markdown text."`
	Mode    string `json:"mode,omitempty" enum:"replace,append" default:"replace" jsonschema:"replace the note or append to it."`
}

// writeMemoryInfo is write_memory's structured result.
type writeMemoryInfo struct {
	Key     string `json:"key"`
	Size    int    `json:"size"`
	Created bool   `json:"created"`

	text string
}

func (w writeMemoryInfo) Text() string { return w.text }

func (e *Engine) writeMemory(ctx context.Context, a writeMemoryArgs) (writeMemoryInfo, error) {
	if err := e.checkMemoryWritable(a.Key); err != nil {
		return writeMemoryInfo{}, err
	}
	if !utf8.ValidString(a.Content) {
		return writeMemoryInfo{}, Errorf(EInvalidArgs, "content is not valid UTF-8")
	}
	c, err := e.memoryCommitter(true)
	if err != nil {
		return writeMemoryInfo{}, err
	}
	defer c.root.Close()
	root := c.root
	file := a.Key + memoryExt
	var data []byte
	created := false
	err = c.commit(ctx, func() ([]fileWrite, error) {
		var old []byte
		var err error
		if a.Mode == "append" {
			old, err = readNote(root, a.Key, e.maxMemoryBytes())
			created = CodeOf(err) == ENotFound
		} else {
			_, err = root.Lstat(file)
			if created = errors.Is(err, fs.ErrNotExist); !created && err != nil {
				err = Errorf(EIO, "reading memory note %s: %v", a.Key, errors.Unwrap(err))
			}
		}
		if err != nil && !created {
			return nil, err
		}
		data = []byte(a.Content)
		if a.Mode == "append" {
			data = make([]byte, 0, len(old)+len(a.Content)+2)
			data = append(data, old...)
			if len(old) > 0 && old[len(old)-1] != '\n' {
				data = append(data, '\n')
			}
			data = append(data, a.Content...)
			if len(a.Content) > 0 && a.Content[len(a.Content)-1] != '\n' {
				data = append(data, '\n')
			}
		}
		if limit := e.maxMemoryBytes(); int64(len(data)) > limit {
			return nil, Errorf(ETooLarge, "memory note %s would be %d bytes, over the limit of %d bytes", a.Key, len(data), limit).
				WithDetail("Nothing was written. Shorten the note, or split it into several keys (topic/part).")
		}
		if dir := path.Dir(file); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return nil, Errorf(EIO, "creating the topic directory of %s: %v", a.Key, err)
			}
		}
		// An append is made from the note as read: it must still hold that.
		return []fileWrite{{Path: file, Data: data, Perm: 0o644, Check: a.Mode == "append", Base: old, Absent: created}}, nil
	})
	if err != nil {
		if CodeOf(err) == EIO {
			err = prefixError(err, "writing memory note "+a.Key+": ")
		}
		return writeMemoryInfo{}, err
	}
	verb := "replaced"
	switch {
	case created:
		verb = "created"
	case a.Mode == "append":
		verb = "appended to"
	}
	return writeMemoryInfo{Key: a.Key, Size: len(data), Created: created,
		text: fmt.Sprintf("%s memory note %s: %d bytes", verb, a.Key, len(data))}, nil
}

package praxis

import (
	"context"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

type readArgs struct {
	Path   string `json:"path" jsonschema:"File path, relative to the workspace root or absolute inside it."`
	Offset int    `json:"offset,omitempty" jsonschema:"First line to show, 1-based." minimum:"1" default:"1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Number of lines to show." minimum:"1" default:"2000"`
}

func (e *Engine) readFile(ctx context.Context, a readArgs) (fileInfo, error) {
	rel, err := e.ws.Rel(a.Path)
	if err != nil {
		return fileInfo{}, err
	}
	doc, fi, version, err := e.loadText(rel)
	if err != nil {
		return fileInfo{}, err
	}
	e.served(rel, version, doc.Bytes())
	e.board.served(ctx, rel, version, doc.Bytes(), fi)

	total := doc.Lines()
	from, limit := a.Offset, a.Limit
	if total > 0 && from > total {
		return fileInfo{}, Errorf(EInvalidArgs, "offset %d is past the end of %s, which has %d lines", from, rel, total)
	}
	to := min(total, from+limit-1)
	if total == 0 {
		from = 0
	}
	info := fileInfo{
		Path: rel, Version: version, From: from, To: to, Total: total,
		EOL: doc.Style(), BOM: doc.BOM(), FinalNewline: doc.FinalNewline(), Size: fi.Size(),
	}
	// Room for every line shown: its content, and its number (no longer
	// than the last one's), ":", tag, "|" and "\n"; one allocation, which
	// becomes the result's text without a copy.
	perLine := len(strconv.Itoa(to)) + 1 + hashline.TagLen + 2
	buf := make([]byte, 0, len(doc.Bytes())+perLine*(to-from+1)+256)
	buf = info.appendHeader(buf)
	buf = doc.AppendRender(buf, max(from, 1), to, lineClip)
	if to < total {
		buf = fmt.Appendf(buf, "# %d more lines: read_file with offset=%d to continue\n", total-to, to+1)
	}
	info.text = unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is not used again
	return info, nil
}

// fileInfo is read_file's structured result and the source of its header.
type fileInfo struct {
	Path         string `json:"path"`
	Version      string `json:"version"`
	From         int    `json:"from"`
	To           int    `json:"to"`
	Total        int    `json:"total_lines"`
	EOL          string `json:"eol"`
	BOM          bool   `json:"bom"`
	FinalNewline bool   `json:"final_newline"`
	Size         int64  `json:"size"`

	text string // the header and the lines shown
}

func (f fileInfo) Text() string { return f.text }

func (f fileInfo) appendHeader(b []byte) []byte {
	b = append(b, "# "...)
	b = append(b, f.Path...)
	b = append(b, " version="...)
	b = append(b, f.Version...)
	if f.Total == 0 {
		b = append(b, " empty (0 lines)"...)
	} else {
		b = fmt.Appendf(b, " lines=%d-%d of %d", f.From, f.To, f.Total)
	}
	b = append(b, " eol="...)
	b = append(b, f.EOL...)
	if f.BOM {
		b = append(b, " bom"...)
	}
	if !f.FinalNewline {
		b = append(b, " no-final-newline"...)
	}
	return append(b, '\n')
}

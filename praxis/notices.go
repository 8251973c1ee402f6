package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// A Session is one client of the engine: an MCP connection or HTTP
// session, or one agent run. The engine remembers per session which files
// it showed the client and at which versions, so that when one of them
// changes on disk by anyone but this session's own writes (another
// session, another process, an editor), the session's next result carries
// a Notice. Front ends create a session per client, pass it to every call
// with WithSession, and Close it when the client goes. A session may use
// several engines. It is safe for concurrent use.
type Session struct {
	id string

	mu     sync.Mutex
	boards map[*noticeBoard]bool // the engines this session used
	closed bool
}

// NewSession returns a session; id names it in logs.
func NewSession(id string) *Session {
	return &Session{id: id, boards: make(map[*noticeBoard]bool)}
}

// ID returns the session's name.
func (s *Session) ID() string { return s.id }

// join records that s uses b. It reports false once s is closed.
func (s *Session) join(b *noticeBoard) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.boards[b] = true
	return true
}

func (s *Session) usedBoards() []*noticeBoard {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*noticeBoard, 0, len(s.boards))
	for b := range s.boards {
		out = append(out, b)
	}
	return out
}

// Notices checks every file the session was shown against the disk now
// (whether or not a watcher reported it) and returns the notices not yet
// delivered, which are then delivered. The agent loop calls it before each
// model request.
func (s *Session) Notices() []Notice {
	var out []Notice
	for _, b := range s.usedBoards() {
		out = append(out, b.collect(s, true)...)
	}
	return out
}

// Close ends the session: the engines forget it and stop watching files
// and subscriptions for it. Calls made with a closed session run as calls
// without one.
func (s *Session) Close() {
	s.mu.Lock()
	s.closed = true
	boards := s.boards
	s.boards = nil
	s.mu.Unlock()
	for b := range boards {
		b.leave(s)
	}
}

type sessionKey struct{}

// WithSession returns a context whose tool calls belong to s.
func WithSession(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionFrom returns the session of ctx, or nil.
func SessionFrom(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// NoticeKind says what happened to a file.
type NoticeKind string

// The kinds of notice.
const (
	// NoticeChanged: the file holds other text than the session saw.
	NoticeChanged NoticeKind = "changed"
	// NoticeDeleted: the file is gone.
	NoticeDeleted NoticeKind = "deleted"
	// NoticeReplaced: a directory or another non-regular file took the
	// file's place.
	NoticeReplaced NoticeKind = "replaced"
	// NoticeCreated: a file the session saw deleted exists again.
	NoticeCreated NoticeKind = "created"
	// NoticeUnreadable: the file changed and cannot be read now (too
	// large, no permission, binary).
	NoticeUnreadable NoticeKind = "unreadable"
)

// A Notice tells a session that a file it was shown changed on disk by
// someone else. Text is its one line, as the model reads it (see
// README.md, "Change notices").
type Notice struct {
	Path string     `json:"path"`
	Kind NoticeKind `json:"kind"`
	// OldVersion is the version the session last saw, NewVersion the one
	// on disk now; either is empty when there is no such file.
	OldVersion string `json:"old_version,omitempty"`
	NewVersion string `json:"new_version,omitempty"`
	// Changed are the ranges of lines of the new text that are not in the
	// old one, 1-based and inclusive; RemovedAfter the lines of the new
	// text after which more old lines were removed than new ones added, so
	// that the lines below moved up (0: at the start). Both are empty when
	// OldUnknown.
	Changed      [][2]int `json:"changed,omitempty"`
	RemovedAfter []int    `json:"removed_after,omitempty"`
	// OldUnknown reports that the old text is no longer kept, so the
	// changed lines are not known.
	OldUnknown bool `json:"old_unknown,omitempty"`
	// Why is the reason an unreadable file cannot be read, and what a
	// replaced file is now.
	Why  string `json:"why,omitempty"`
	Text string `json:"text"`
}

// maxNoticeRanges bounds the ranges a notice's text lists.
const maxNoticeRanges = 8

// newNotice builds the notice of path going from the state old to now,
// with the line ranges of the change when both texts are known (oldText
// nil: the old text is unknown).
func newNotice(path string, old, now fileState, oldText, newText []byte) Notice {
	n := Notice{Path: path, OldVersion: old.version, NewVersion: now.version}
	switch {
	case now.kind == stateAbsent:
		n.Kind = NoticeDeleted
		n.Text = fmt.Sprintf("notice: %s was deleted on disk (was %s)", path, old.version)
	case now.kind == stateOther:
		n.Kind, n.Why = NoticeReplaced, now.why
		n.Text = fmt.Sprintf("notice: %s was replaced on disk by %s (was %s)", path, now.why, orNone(old.version))
	case now.kind == stateUnreadable:
		n.Kind, n.Why = NoticeUnreadable, now.why
		n.Text = fmt.Sprintf("notice: %s changed on disk (was %s) and cannot be read now: %s", path, orNone(old.version), now.why)
	case old.kind != stateFile:
		n.Kind = NoticeCreated
		n.Text = fmt.Sprintf("notice: %s was created on disk (%s)", path, now.version)
	default:
		n.Kind = NoticeChanged
		head := fmt.Sprintf("notice: %s changed on disk (%s → %s)", path, old.version, now.version)
		if oldText == nil || newText == nil {
			n.OldUnknown = true
			n.Text = head + ": changed lines unknown (the old text is no longer kept)"
			break
		}
		n.Changed, n.RemovedAfter = changedRanges(oldText, newText)
		n.Text = head + ": " + describeRanges(n.Changed, n.RemovedAfter)
	}
	return n
}

func orNone(v string) string {
	if v == "" {
		return "absent"
	}
	return v
}

// changedRanges returns the ranges of lines of new that a line diff of
// old and new marks as added, and the lines of new after which lines of
// old were removed with fewer added in their place (so that the lines
// below moved up).
func changedRanges(old, new []byte) (changed [][2]int, removedAfter []int) {
	line := 0 // lines of new passed
	removed, added := 0, 0
	flush := func() {
		if removed > added {
			removedAfter = append(removedAfter, line)
		}
		removed, added = 0, 0
	}
	for _, l := range lineDiff(old, new) {
		switch l.op {
		case ' ':
			flush()
			line++
		case '-':
			removed++
		case '+':
			line++
			added++
			if k := len(changed); k > 0 && changed[k-1][1] == line-1 {
				changed[k-1][1] = line
			} else {
				changed = append(changed, [2]int{line, line})
			}
		}
	}
	flush()
	return changed, removedAfter
}

// describeRanges writes the ranges of a notice: "lines 10-14, 120
// changed; lines removed after line 30, 88".
func describeRanges(changed [][2]int, removedAfter []int) string {
	var parts []string
	if len(changed) > 0 {
		items := make([]string, len(changed))
		for i, r := range changed {
			items[i] = strconv.Itoa(r[0])
			if r[1] != r[0] {
				items[i] += "-" + strconv.Itoa(r[1])
			}
		}
		parts = append(parts, "lines "+clipList(items)+" changed")
	}
	if len(removedAfter) > 0 {
		items := make([]string, len(removedAfter))
		for i, n := range removedAfter {
			items[i] = strconv.Itoa(n)
		}
		parts = append(parts, "lines removed after line "+clipList(items))
	}
	if len(parts) == 0 {
		return "line ends changed"
	}
	return strings.Join(parts, "; ")
}

func clipList(items []string) string {
	if len(items) <= maxNoticeRanges {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:maxNoticeRanges], ", ") + fmt.Sprintf(" and %d more", len(items)-maxNoticeRanges)
}

// maxNoticeLines bounds the notices a text shows one per line; a branch
// switch that changes hundreds of files makes one more line naming the
// rest.
const maxNoticeLines = 20

// NoticeText returns the lines that tell ns to a model: one per notice, up
// to 20, then one line naming the other files.
func NoticeText(ns []Notice) string {
	var b strings.Builder
	for i, n := range ns[:min(len(ns), maxNoticeLines)] {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(n.Text)
	}
	if rest := ns[min(len(ns), maxNoticeLines):]; len(rest) > 0 {
		paths := make([]string, len(rest))
		for i, n := range rest {
			paths[i] = n.Path
		}
		fmt.Fprintf(&b, "\nnotice: %d more files changed on disk: %s", len(rest), clipList(paths))
	}
	return b.String()
}

// withNotices returns res carrying ns: in Notices, and in lines after its
// text (NoticeText).
func withNotices(res Result, ns []Notice) Result {
	text := res.Text
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	res.Text = text + NoticeText(ns)
	res.Notices = append(res.Notices, ns...)
	return res
}

// noticing wraps the handler of the engine's tool t: when the call
// belongs to a session, its result carries the session's pending notices.
// After an open-world tool (bash: a command may change any file) every
// file of the session is checked, so that its result tells what the
// command changed.
func (e *Engine) noticing(t Tool) Handler {
	h, all := t.Handler, t.Annotations.OpenWorld
	return func(ctx context.Context, args json.RawMessage) (Result, error) {
		res, err := h(ctx, args)
		s := SessionFrom(ctx)
		if s == nil {
			return res, err
		}
		ns := e.board.collect(s, all)
		if len(ns) == 0 {
			return res, err
		}
		if err != nil {
			res = handlerError(ctx, t.Name, err)
		}
		return withNotices(res, ns), nil
	}
}

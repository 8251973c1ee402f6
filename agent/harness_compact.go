package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/praxis-tools/praxis/internal/lazyre"
)

// DefaultMaxToolResult is the bound of a tool result's text when
// Harness.MaxToolResult is 0.
const DefaultMaxToolResult = 50000

const summarySystem = `You compact the history of a coding agent's session so that the agent can go on working with a shorter context.
Write a summary for the agent itself, in plain prose and short lists:
- the task and what "done" means;
- what has been done so far: files read, created and changed (with paths), commands run and what they showed;
- decisions taken and why; approaches that failed and must not be repeated;
- the current state and the next steps.
Keep exact names, paths, identifiers, error messages and numbers. Do not invent anything. Answer with the summary only.`

// beforeModel runs before each model call: when the conversation would
// exceed the compaction threshold, it summarises the older turns first.
// req is the request about to be sent; it gets the compacted conversation.
func (r *run) beforeModel(ctx context.Context, step int, req *Request) {
	hs := r.hs
	if hs == nil {
		return
	}
	defer func() {
		req.Messages = r.messages
		req.Compacted = hs.compacted
		hs.usageBefore = r.usage
	}()
	c := hs.h.Compaction
	if c.ContextWindow <= 0 {
		return
	}
	threshold := c.Threshold
	if threshold <= 0 || threshold > 1 {
		threshold = 0.8
	}
	before := r.estimate()
	if before <= int(float64(c.ContextWindow)*threshold) {
		return
	}
	if err := r.compact(ctx, step, before); err != nil && !errors.Is(err, errNothingToCompact) {
		r.cfg.Logger.Warn("compaction failed; the conversation is left as it is", "run", r.ev.runID, "err", err)
		r.ev.emit(Event{Type: EventCompacted, Step: step, Error: err.Error(), HarnessFields: HarnessFields{BeforeTokens: before}})
	}
}

var errNothingToCompact = errors.New("nothing to compact")

// estimate returns the conversation's size in tokens: the provider's count
// for the part it has seen, a token per four bytes for the rest.
func (r *run) estimate() int {
	hs := r.hs
	n := 0
	from := 0
	if hs.base > 0 && hs.baseLen <= len(r.messages) {
		n, from = hs.base, hs.baseLen
	} else {
		n = tokensOf(len(r.cfg.System))
		for _, t := range r.tools {
			n += tokensOf(len(t.Name) + len(t.Description) + len(t.InputSchema))
		}
	}
	for _, m := range r.messages[from:] {
		n += tokensOf(messageBytes(m))
	}
	return n
}

func tokensOf(bytes int) int { return (bytes + 3) / 4 }

func messageBytes(m Message) int {
	n := 8
	for _, b := range m.Content {
		n += 16 + len(b.Text) + len(b.Input) + len(b.Name) + len(b.ID)
	}
	return n
}

// compact replaces the conversation before the most recent turns with one
// message: the task as first given, a summary of what followed written by
// the provider, and the loaded skill text, verbatim.
func (r *run) compact(ctx context.Context, step, before int) error {
	hs := r.hs
	c := hs.h.Compaction
	keep := c.KeepRecent
	if keep <= 0 {
		keep = 4
	}
	msgs := r.messages
	// Cut before an assistant message, so that every tool result kept
	// follows its call.
	cut := -1
	for i := len(msgs) - keep; i >= 2; i-- {
		if msgs[i].Role == RoleAssistant {
			cut = i
			break
		}
	}
	if cut < 2 {
		return errNothingToCompact
	}
	if hs.preamble == "" {
		hs.preamble = msgs[0].Text()
	}
	pinned := append([]string(nil), hs.pinned...)
	pinTools := c.PinTools
	if pinTools == nil {
		pinTools = []string{"load_skill", "read_skill_file"}
	}
	names := map[string]string{}
	for _, m := range msgs[1:cut] {
		for _, b := range m.Content {
			switch b.Type {
			case BlockToolUse:
				names[b.ID] = b.Name
			case BlockToolResult:
				if !b.IsError && matchAny(pinTools, names[b.ID]) {
					pinned = append(pinned, b.Text)
				}
			}
		}
	}

	req := &Request{
		Model:     r.cfg.Model,
		System:    summarySystem,
		Messages:  []Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Text: renderForSummary(msgs[:cut], c.ContextWindow)}}}},
		MaxTokens: r.cfg.MaxTokens,
	}
	var resp *Response
	var err error
	if s, ok := r.cfg.Provider.(summarizer); ok {
		resp, err = s.summarize(req)
	} else {
		resp, err = r.cfg.Provider.Complete(ctx, req, nil)
	}
	if err != nil {
		return fmt.Errorf("summarising: %w", err)
	}
	usage := resp.Usage
	cost := r.spend(usage)
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return errors.New("summarising: the model returned no text")
	}
	folded := 0
	for _, m := range msgs[1:cut] {
		if m.Role == RoleAssistant {
			folded++
		}
	}
	text := compactedText(hs.preamble, summary, hs.compacted+folded, pinned)
	kept := len(msgs) - cut
	r.messages = compactMessages(msgs, text, kept)
	hs.compacted += folded
	hs.pinned = pinned
	hs.base, hs.baseLen = 0, 0
	r.ev.emit(Event{Type: EventCompacted, Step: step, Task: hs.preamble, Text: text, Usage: &usage, CostUSD: cost, HarnessFields: HarnessFields{
		BeforeTokens: before, AfterTokens: r.estimate(), Kept: kept, Folded: folded, Pinned: pinned,
	}})
	return nil
}

// compactedText is the first message of a compacted conversation.
func compactedText(preamble, summary string, folded int, pinned []string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(preamble, "\n"))
	fmt.Fprintf(&b, "\n\n---\nThis conversation was compacted: %d earlier model replies and their tool results are replaced by this summary of them.\n\n", folded)
	b.WriteString(summary)
	if len(pinned) > 0 {
		b.WriteString("\n\n---\nSkill text loaded earlier, kept verbatim:\n")
		for _, p := range pinned {
			b.WriteString("\n")
			b.WriteString(p)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// compactMessages returns the conversation after a compaction: the new
// first message, then the last kept messages of msgs as they are.
func compactMessages(msgs []Message, first string, kept int) []Message {
	kept = min(max(kept, 0), len(msgs))
	out := []Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Text: first}}}}
	return append(out, msgs[len(msgs)-kept:]...)
}

// renderForSummary renders messages as a transcript for the summariser,
// bounded to about half the context window.
func renderForSummary(msgs []Message, window int) string {
	var b strings.Builder
	b.WriteString("Here is the session so far. Summarise it as instructed.\n\n")
	for _, m := range msgs {
		for _, bl := range m.Content {
			switch bl.Type {
			case BlockText:
				fmt.Fprintf(&b, "%s: %s\n\n", strings.ToUpper(string(m.Role)), bl.Text)
			case BlockToolUse:
				fmt.Fprintf(&b, "ASSISTANT called %s %s\n\n", bl.Name, clip(string(bl.Input), 1000))
			case BlockToolResult:
				status := "result"
				if bl.IsError {
					status = "error"
				}
				fmt.Fprintf(&b, "TOOL %s: %s\n\n", status, clip(bl.Text, 2000))
			}
		}
	}
	s := b.String()
	if max := window * 2; window > 0 && len(s) > max { // window/2 tokens of four bytes
		s = cutMiddle(s, max, "\n[… the middle of the session is left out …]\n")
	}
	return s
}

// summarizer is a provider that summarises without a model call (the
// scripted provider).
type summarizer interface {
	summarize(req *Request) (*Response, error)
}

// summarize answers a compaction request of a scripted run: a
// deterministic summary listing the tool calls of the transcript it is
// given, so that tests can see what was summarised.
func (s *Scripted) summarize(req *Request) (*Response, error) {
	text := ""
	if len(req.Messages) > 0 {
		text = req.Messages[0].Text()
	}
	var calls []string
	for _, m := range scriptedCallLine.Get().FindAllStringSubmatch(text, -1) {
		calls = append(calls, m[1])
	}
	summary := fmt.Sprintf("Summary of the earlier session (scripted): %d tool calls: %s.", len(calls), strings.Join(calls, ", "))
	return &Response{
		Message:    Message{Role: RoleAssistant, Content: []Block{{Type: BlockText, Text: summary}}},
		StopReason: "end_turn",
		Usage:      Usage{InputTokens: tokensOf(len(text)), OutputTokens: tokensOf(len(summary))},
	}, nil
}

var scriptedCallLine = lazyre.New(`(?m)^ASSISTANT called (\S+)`)

// cutResult cuts a tool result longer than the bound: the model gets its
// beginning and end and the path of the full text, saved under the
// workspace's .praxis/tool-results/.
func (r *run) cutResult(c Block, text string) string {
	h := r.hs.h
	max := h.MaxToolResult
	if max <= 0 {
		max = DefaultMaxToolResult
	}
	if len(text) <= max {
		return text
	}
	where := "The full output could not be saved."
	if h.Workspace != "" {
		rel := path.Join(".praxis", "tool-results", safeName(r.ev.runID+"-"+c.ID)+".txt")
		err := saveInside(h.Workspace, rel, []byte(text))
		if err == nil {
			where = fmt.Sprintf("The full output is saved in %s: read the parts you need with read_file (offset and limit) or search it, rather than running the call again.", rel)
		} else {
			r.cfg.Logger.Warn("saving a cut tool result", "err", err)
		}
	}
	note := fmt.Sprintf("\n\n[… output cut: %d bytes in all, the middle is left out. %s …]\n\n", len(text), where)
	return cutMiddle(text, max, note)
}

// saveInside writes data to the file rel of the workspace dir, creating
// its directories; symbolic links may not lead outside the workspace.
func saveInside(dir, rel string, data []byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return err
	}
	return root.WriteFile(rel, data, 0o644)
}

// cutMiddle keeps the first three quarters and the last quarter of max
// bytes of s, on rune boundaries, with note between them.
func cutMiddle(s string, max int, note string) string {
	head, tail := max*3/4, max/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[:head] + note + s[start:]
}

var unsafeName = lazyre.New(`[^A-Za-z0-9._-]+`)

func safeName(s string) string {
	s = unsafeName.Get().ReplaceAllString(s, "_")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// matchAny reports whether name matches one of the globs.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

package agent

import (
	"fmt"
	"io"
	"strings"
)

// TranscriptHandler returns an event sink that renders a transcript to w:
// the loop's events as Transcript does, the harness controls' events
// (warnings, compactions, hooks, gates) as one line each, and the evidence
// of a doom loop after the closing line.
func TranscriptHandler(w io.Writer) func(Event) {
	t := NewTranscript(w)
	return func(ev Event) {
		if line := harnessLine(ev); line != "" {
			t.line(line)
			return
		}
		t.Handle(ev)
		if ev.Type == EventRunComplete {
			for _, f := range ev.Findings {
				t.line("  ⟳ " + string(f.Kind) + ": " + f.Evidence())
			}
		}
	}
}

// harnessLine renders an event of the harness controls, or returns "" for
// the others.
func harnessLine(ev Event) string {
	switch ev.Type {
	case EventMessage:
		switch ev.Kind {
		case MessageDoomWarning:
			return "  ⟳ loop warning: " + firstLine(strings.TrimPrefix(ev.Text, "You are repeating yourself:\n- "))
		case MessageGateFailed:
			return "  ✗ gate failed; the model goes on"
		case MessageStopHook:
			return "  ⏸ a Stop hook wants more: " + clip(firstLine(strings.TrimPrefix(ev.Text, "A Stop hook says the work is not done yet:\n")), 100)
		case MessageReminder:
			return "  ⏸ reminder: " + clip(firstLine(ev.Text), 100)
		case MessageNotice:
			return "  ! " + clip(firstLine(ev.Text), 120)
		default:
			return "  + context from a hook: " + clip(firstLine(ev.Text), 100)
		}
	case EventCompacted:
		if ev.Error != "" {
			return "  ⇣ compaction failed: " + ev.Error
		}
		return fmt.Sprintf("  ⇣ compacted: %d → %d tokens, %d replies summarised, %d messages kept", ev.BeforeTokens, ev.AfterTokens, ev.Folded, ev.Kept)
	case EventHook:
		if ev.Error != "" {
			return fmt.Sprintf("  ! %s hook %q failed: %s", ev.Kind, clip(ev.Hook, 60), ev.Error)
		}
		return fmt.Sprintf("  ! %s hook %s", ev.Kind, clip(ev.Text, 120))
	case EventGate:
		if ev.Gate != nil {
			return gateLine(*ev.Gate)
		}
	case EventCheckpoint:
		if ev.Error != "" {
			return "  ⎇ checkpoint failed: " + ev.Error
		}
		return fmt.Sprintf("  ⎇ checkpoint %.12s: %s", ev.Commit, clip(ev.Text, 80))
	}
	return ""
}

func gateLine(g GateResult) string {
	mark := "✓"
	if !g.Passed {
		mark = "✗"
	}
	return fmt.Sprintf("  %s gate %s (exit %d, %s)", mark, clip(g.Command, 60), g.ExitCode, millis(g.DurationMS))
}

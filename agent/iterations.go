package agent

import (
	"context"
	"fmt"
	"strings"
)

// CompleteMarker is the line with which a model declares a long task done
// in the iterations mode, at the end of its answer or in the progress file.
const CompleteMarker = "TASK COMPLETE"

// IterationPrompt is the task of session i (from 1) of at most n in the
// iterations mode: each session starts with a fresh context, reads the
// progress file, does one unit of work and updates the file.
func IterationPrompt(task, progressFile string, i, n int) string {
	return fmt.Sprintf(`You are working on a long task over several sessions; each starts with a fresh context and knows only what the files say. This is session %d of at most %d.

The task:
%s

How to work in this session:
1. First read the progress file %s (the first session creates it) and, if there are memory tools, the memory notes: they say what earlier sessions did and what comes next.
2. Do one unit of work: the next step of the task, leaving the workspace in a working state.
3. Before you end, update %s: what is done, what you learned, what the next step is.
4. Only when the whole task is done and checked, end your answer with a line saying %s (or write that line into the progress file). Otherwise just end; the next session goes on from the progress file.`,
		i, n, strings.TrimSpace(task), progressFile, progressFile, CompleteMarker)
}

// DeclaredComplete reports whether text has a line that says CompleteMarker
// (ignoring case, surrounding space and markdown emphasis).
func DeclaredComplete(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "*_`#> .!")
		if strings.EqualFold(line, CompleteMarker) {
			return true
		}
	}
	return false
}

// Iterations runs up to n sessions of the iterations mode. session runs
// session i with its prompt and returns its outcome and whether the
// progress file declares the task complete. It stops after a session that
// completed (gates passed) with the task declared complete, or one that
// ended for a reason another session cannot mend (timeout, cancellation,
// an error, a hook, the cost budget); after n sessions without that, the
// stop reason is StopMaxIterations. It returns the last outcome and the
// number of sessions run.
func Iterations(ctx context.Context, n int, task, progressFile string, session func(ctx context.Context, i int, prompt string) (Outcome, bool)) (Outcome, int) {
	var out Outcome
	for i := 1; i <= n; i++ {
		var declared bool
		out, declared = session(ctx, i, IterationPrompt(task, progressFile, i, n))
		switch out.StopReason {
		case StopCompleted:
			if declared || DeclaredComplete(out.Final) {
				return out, i
			}
		case StopTimeout, StopCancelled, StopError, StopHook, StopMaxCost:
			return out, i
		}
		if ctx.Err() != nil {
			out.StopReason = StopCancelled
			return out, i
		}
	}
	out.StopReason = StopMaxIterations
	out.Err = fmt.Errorf("%d sessions ran, the most allowed, and the task was not declared complete", n)
	return out, n
}

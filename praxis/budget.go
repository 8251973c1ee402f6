package praxis

// checkChangeBudget refuses a call that adds and removes more lines in all
// than --max-changed-lines allows (E_BUDGET_EXCEEDED); what names the call
// ("the patch", "writing a.txt").
func (e *Engine) checkChangeBudget(what string, added, removed int) error {
	limit := e.opts.MaxChangedLines
	if changed := added + removed; limit > 0 && changed > limit {
		return Errorf(EBudgetExceeded, "%s changes %d lines (%d added, %d removed), over the limit of %d",
			what, changed, added, removed, limit).
			WithDetail("Nothing was written. Split the change into smaller ones.")
	}
	return nil
}

// checkWriteBudget counts the lines that replacing rel's content old with
// new adds and removes, from their diff, against the change budget.
func (e *Engine) checkWriteBudget(rel string, old, new []byte) error {
	if e.opts.MaxChangedLines <= 0 {
		return nil
	}
	added, removed := changedLines(old, new)
	return e.checkChangeBudget("writing "+rel, added, removed)
}

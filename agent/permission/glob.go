package permission

// glob is a pattern in which '*' matches any run of characters and '?'
// any one character; every other character matches itself.
type glob []rune

// states returns the pattern positions reachable after reading s from
// the start, or nil when none is.
func (g glob) states(s string) []bool {
	cur := make([]bool, len(g)+1)
	next := make([]bool, len(g)+1)
	cur[0] = true
	g.close(cur)
	for _, c := range s {
		clear(next)
		alive := false
		for i, on := range cur[:len(g)] {
			if !on {
				continue
			}
			switch g[i] {
			case '*':
				next[i] = true
				alive = true
			case '?':
				next[i+1] = true
				alive = true
			default:
				if g[i] == c {
					next[i+1] = true
					alive = true
				}
			}
		}
		if !alive {
			return nil
		}
		g.close(next)
		cur, next = next, cur
	}
	return cur
}

// close adds the positions after each '*' reached, as '*' may match
// nothing.
func (g glob) close(st []bool) {
	for i := range g {
		if st[i] && g[i] == '*' {
			st[i+1] = true
		}
	}
}

// match reports whether the whole of s matches g.
func (g glob) match(s string) bool {
	st := g.states(s)
	return st != nil && st[len(g)]
}

// matchPrefix reports whether some string that starts with s matches g.
func (g glob) matchPrefix(s string) bool { return g.states(s) != nil }

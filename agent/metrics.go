package agent

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/praxis-tools/praxis/internal/lazyre"
)

// Metrics measure how a run went, to compare harness configurations on the
// same tasks: run_complete carries them, and "praxis sessions stats" sums
// them over sessions. They are computed from the run's events.
type Metrics struct {
	// StepsToFirstPass and ToolCallsToFirstPass count the steps and tool
	// calls up to the first gate attempt whose gates all passed; absent
	// when none did.
	StepsToFirstPass     *int `json:"steps_to_first_pass,omitempty"`
	ToolCallsToFirstPass *int `json:"tool_calls_to_first_pass,omitempty"`
	// GateAttempts counts the runs of the gates (each runs them all, in
	// order), GatePasses those that all passed; GatePassRate is their
	// ratio, absent without gates.
	GateAttempts int      `json:"gate_attempts"`
	GatePasses   int      `json:"gate_passes"`
	GatePassRate *float64 `json:"gate_pass_rate,omitempty"`
	// FilesChanged and LinesChanged count the files edit_file,
	// patch_file and write_file changed and their lines added and removed
	// (a whole file written counts its lines).
	FilesChanged int `json:"files_changed"`
	LinesChanged int `json:"lines_changed"`
	// LinesPerFile is LinesChanged over FilesChanged: how local the
	// changes were.
	LinesPerFile *float64 `json:"lines_per_file,omitempty"`
	// Edits counts the edit_file and patch_file calls that succeeded (a
	// patch_file dry run does not count), EditsInRead those whose anchors,
	// or the old lines of a unified diff's hunks, all lay within lines the
	// model had read of the file, and EditsInReadShare their ratio.
	Edits            int      `json:"edits"`
	EditsInRead      int      `json:"edits_in_read"`
	EditsInReadShare *float64 `json:"edits_in_read_share,omitempty"`
	// Errors counts the failed tool results by code, and how many of them
	// a later successful call of the same tool on the same target (path,
	// command) followed.
	Errors map[string]*ErrorCount `json:"errors,omitempty"`
	// ModelMS is the time spent waiting for the model, ToolMS the time
	// spent in tools.
	ModelMS int64 `json:"model_ms"`
	ToolMS  int64 `json:"tool_ms"`
	// CostUSD is the run's cost, when the model has a price.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// ErrorCount is how often an error code came back, and how often it was
// followed by a successful retry.
type ErrorCount struct {
	Count     int `json:"count"`
	Recovered int `json:"recovered"`
}

// metricsCollector builds a run's Metrics from its events.
type metricsCollector struct {
	m         Metrics
	toolCalls int
	gates     int         // gates per attempt, from run_start
	attempts  map[int]int // gate attempt -> gates passed
	files     map[string]bool
	read      map[string][][2]int // path -> line ranges read
	calls     map[string]Event    // call ID -> tool_start
	pending   map[string][]string // tool and target -> codes not yet recovered
}

func newMetricsCollector() *metricsCollector {
	return &metricsCollector{attempts: map[int]int{}, files: map[string]bool{}, read: map[string][][2]int{},
		calls: map[string]Event{}, pending: map[string][]string{}}
}

var (
	readHeader = lazyre.New(`(?m)^# (\S+) version=\S+ lines=(\d+)-(\d+) of \d+`)
	editedLine = lazyre.New(`(?m)^edited (\S+): version \S+ -> \S+, \+(\d+) -(\d+) lines`)
	wroteLine  = lazyre.New(`^(?:created (\S+)|replaced (\S+) \(was version \S+\)): version \S+, (\d+) lines`)
	// patchedLine is a file patch_file changed: its path, then the lines
	// added and removed in one of the four forms.
	patchedLine = lazyre.New(`(?m)^patched (\S+): (?:created, version \S+, \+(\d+) lines|deleted \(was version \S+, (\d+) lines\)|(?:renamed from \S+, )?version \S+ -> \S+, \+(\d+) -(\d+) lines)$`)
	// patchFile and patchHunk are a unified diff's old file and hunk
	// header.
	patchFile = lazyre.New(`^--- (?:a/)?(\S+)`)
	patchHunk = lazyre.New(`^@@ -(\d+)(?:,(\d+))? `)
)

func (c *metricsCollector) observe(ev Event) {
	switch ev.Type {
	case EventRunStart:
		if ev.Controls != nil {
			c.gates = len(ev.Controls.Gates)
		}
	case EventToolStart:
		c.calls[ev.CallID] = ev
	case EventToolResult:
		c.toolCalls++
		c.m.ToolMS += ev.DurationMS
		start := c.calls[ev.CallID]
		delete(c.calls, ev.CallID)
		c.result(ev, start)
	case EventGate:
		g := ev.Gate
		if g == nil {
			return
		}
		if _, seen := c.attempts[g.Attempt]; !seen {
			c.m.GateAttempts++
		}
		if !g.Passed {
			c.attempts[g.Attempt] = -1 // gates stop at the first that fails
			return
		}
		if c.attempts[g.Attempt]++; c.attempts[g.Attempt] == c.gates {
			c.m.GatePasses++
			if c.m.StepsToFirstPass == nil {
				s, n := ev.Step, c.toolCalls
				c.m.StepsToFirstPass, c.m.ToolCallsToFirstPass = &s, &n
			}
		}
	}
}

func (c *metricsCollector) result(ev, start Event) {
	key := ev.Tool + "\x00" + target(start.Input)
	if ev.IsError {
		if ev.Code != "" {
			if c.m.Errors == nil {
				c.m.Errors = map[string]*ErrorCount{}
			}
			ec := c.m.Errors[ev.Code]
			if ec == nil {
				ec = &ErrorCount{}
				c.m.Errors[ev.Code] = ec
			}
			ec.Count++
			c.pending[key] = append(c.pending[key], ev.Code)
		}
		return
	}
	for _, code := range c.pending[key] {
		c.m.Errors[code].Recovered++
	}
	delete(c.pending, key)
	for _, m := range readHeader.Get().FindAllStringSubmatch(ev.Output, -1) {
		from, _ := strconv.Atoi(m[2])
		to, _ := strconv.Atoi(m[3])
		c.read[m[1]] = append(c.read[m[1]], [2]int{from, to})
	}
	if ev.Tool == "edit_file" {
		for _, m := range editedLine.Get().FindAllStringSubmatch(ev.Output, -1) {
			a, _ := strconv.Atoi(m[2])
			r, _ := strconv.Atoi(m[3])
			c.changed(m[1], a+r)
		}
		c.m.Edits++
		if c.inRead(start.Input) {
			c.m.EditsInRead++
		}
	}
	if ev.Tool == "patch_file" {
		ms := patchedLine.Get().FindAllStringSubmatch(ev.Output, -1)
		for _, m := range ms {
			n := 0
			for _, g := range m[2:] {
				k, _ := strconv.Atoi(g)
				n += k
			}
			c.changed(m[1], n)
		}
		if len(ms) > 0 {
			c.m.Edits++
			if c.patchInRead(start.Input) {
				c.m.EditsInRead++
			}
		}
	}
	if m := wroteLine.Get().FindStringSubmatch(ev.Output); m != nil && ev.Tool == "write_file" {
		n, _ := strconv.Atoi(m[3])
		c.changed(m[1]+m[2], n)
	}
}

func (c *metricsCollector) changed(path string, lines int) {
	c.files[path] = true
	c.m.LinesChanged += lines
}

// target is what a tool call acts on: its path or command.
func target(input json.RawMessage) string {
	var in struct {
		Path    string `json:"path"`
		Command string `json:"command"`
		Files   []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	_ = json.Unmarshal(input, &in)
	if in.Path == "" && len(in.Files) > 0 {
		in.Path = in.Files[0].Path
	}
	return in.Path + in.Command
}

// inRead reports whether every anchor of an edit_file call lies within
// lines the model read of its file.
func (c *metricsCollector) inRead(input json.RawMessage) bool {
	type op struct {
		Tag      string `json:"tag"`
		StartTag string `json:"start_tag"`
		EndTag   string `json:"end_tag"`
	}
	type file struct {
		Path string `json:"path"`
		Ops  []op   `json:"ops"`
	}
	var in struct {
		file
		Files []file `json:"files"`
	}
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	files := in.Files
	if in.Path != "" {
		files = append(files, in.file)
	}
	anchors := 0
	for _, f := range files {
		for _, o := range f.Ops {
			for _, tag := range []string{o.Tag, o.StartTag, o.EndTag} {
				n, _, ok := strings.Cut(tag, ":")
				line, err := strconv.Atoi(n)
				if !ok || err != nil {
					continue
				}
				anchors++
				if !covered(c.read[f.Path], line) {
					return false
				}
			}
		}
	}
	return anchors > 0
}

// patchInRead reports whether the old lines of every hunk of a
// patch_file call's unified diff lie within lines the model read of their
// file. A patch in the envelope format names no lines: it is not.
func (c *metricsCollector) patchInRead(input json.RawMessage) bool {
	var in struct {
		Patch string `json:"patch"`
	}
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	file, hunks := "", 0
	for line := range strings.SplitSeq(in.Patch, "\n") {
		if m := patchFile.Get().FindStringSubmatch(line); m != nil {
			file = m[1]
			continue
		}
		m := patchHunk.Get().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		from, _ := strconv.Atoi(m[1])
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		hunks++
		for l := from; l < from+n; l++ {
			if !covered(c.read[file], l) {
				return false
			}
		}
	}
	return hunks > 0
}

func covered(ranges [][2]int, line int) bool {
	for _, r := range ranges {
		if line >= r[0] && line <= r[1] {
			return true
		}
	}
	return false
}

// metrics returns the run's metrics.
func (c *metricsCollector) metrics(modelMS int64, cost *float64) *Metrics {
	m := c.m
	if m.GateAttempts > 0 {
		r := float64(m.GatePasses) / float64(m.GateAttempts)
		m.GatePassRate = &r
	}
	m.FilesChanged = len(c.files)
	if m.FilesChanged > 0 {
		r := float64(m.LinesChanged) / float64(m.FilesChanged)
		m.LinesPerFile = &r
	}
	if m.Edits > 0 {
		r := float64(m.EditsInRead) / float64(m.Edits)
		m.EditsInReadShare = &r
	}
	m.ModelMS, m.CostUSD = modelMS, cost
	return &m
}

// Stats sum the metrics of many runs, so that two harness configurations
// can be compared on the same tasks. Add each run's run_complete, then
// call Finish for the ratios.
type Stats struct {
	Sessions int `json:"sessions"`
	// Runs counts the runs whose run_complete has metrics; the others
	// (journals older than metrics) count in Sessions only.
	Runs        int                `json:"runs"`
	StopReasons map[StopReason]int `json:"stop_reasons"`
	Steps       int                `json:"steps"`
	ToolCalls   int                `json:"tool_calls"`
	// RunsPassed counts the runs whose gates passed once; the means are
	// over them.
	RunsPassed               int                    `json:"runs_passed"`
	MeanStepsToFirstPass     *float64               `json:"mean_steps_to_first_pass,omitempty"`
	MeanToolCallsToFirstPass *float64               `json:"mean_tool_calls_to_first_pass,omitempty"`
	GateAttempts             int                    `json:"gate_attempts"`
	GatePasses               int                    `json:"gate_passes"`
	GatePassRate             *float64               `json:"gate_pass_rate,omitempty"`
	FilesChanged             int                    `json:"files_changed"`
	LinesChanged             int                    `json:"lines_changed"`
	LinesPerFile             *float64               `json:"lines_per_file,omitempty"`
	Edits                    int                    `json:"edits"`
	EditsInRead              int                    `json:"edits_in_read"`
	EditsInReadShare         *float64               `json:"edits_in_read_share,omitempty"`
	Errors                   map[string]*ErrorCount `json:"errors,omitempty"`
	ModelMS                  int64                  `json:"model_ms"`
	ToolMS                   int64                  `json:"tool_ms"`
	CostUSD                  *float64               `json:"cost_usd,omitempty"`

	stepsToPass, callsToPass int
}

// Add counts a run's run_complete event.
func (s *Stats) Add(ev Event) {
	if ev.Type != EventRunComplete || ev.Metrics == nil {
		return
	}
	m := ev.Metrics
	s.Runs++
	if s.StopReasons == nil {
		s.StopReasons = map[StopReason]int{}
	}
	s.StopReasons[ev.StopReason]++
	s.Steps += ev.Steps
	s.ToolCalls += ev.ToolCalls
	if m.StepsToFirstPass != nil {
		s.RunsPassed++
		s.stepsToPass += *m.StepsToFirstPass
		s.callsToPass += *m.ToolCallsToFirstPass
	}
	s.GateAttempts += m.GateAttempts
	s.GatePasses += m.GatePasses
	s.FilesChanged += m.FilesChanged
	s.LinesChanged += m.LinesChanged
	s.Edits += m.Edits
	s.EditsInRead += m.EditsInRead
	for code, e := range m.Errors {
		if s.Errors == nil {
			s.Errors = map[string]*ErrorCount{}
		}
		if s.Errors[code] == nil {
			s.Errors[code] = &ErrorCount{}
		}
		s.Errors[code].Count += e.Count
		s.Errors[code].Recovered += e.Recovered
	}
	s.ModelMS += m.ModelMS
	s.ToolMS += m.ToolMS
	if m.CostUSD != nil {
		c := *m.CostUSD
		if s.CostUSD != nil {
			c += *s.CostUSD
		}
		s.CostUSD = &c
	}
}

// Finish computes the ratios of what was added.
func (s *Stats) Finish() {
	ratio := func(a, b int) *float64 {
		if b == 0 {
			return nil
		}
		r := float64(a) / float64(b)
		return &r
	}
	s.MeanStepsToFirstPass = ratio(s.stepsToPass, s.RunsPassed)
	s.MeanToolCallsToFirstPass = ratio(s.callsToPass, s.RunsPassed)
	s.GatePassRate = ratio(s.GatePasses, s.GateAttempts)
	s.LinesPerFile = ratio(s.LinesChanged, s.FilesChanged)
	s.EditsInReadShare = ratio(s.EditsInRead, s.Edits)
}

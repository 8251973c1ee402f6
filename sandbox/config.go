package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// fileConfig is the "sandbox" section of the Praxis config file. A nil
// field was not given and leaves the policy as it was.
type fileConfig struct {
	Shell           *bool          `yaml:"shell"`
	Isolation       *Isolation     `yaml:"isolation"`
	Network         *onOff         `yaml:"network"`
	UnixSockets     *onOff         `yaml:"unix_sockets"`
	Env             *[]string      `yaml:"env"`
	Writable        *[]string      `yaml:"writable"`
	Hide            *[]string      `yaml:"hide"`
	Timeout         *time.Duration `yaml:"timeout"`
	MaxTimeout      *time.Duration `yaml:"max_timeout"`
	BackgroundAfter *time.Duration `yaml:"background_after"`
	OutputBytes     *quantity      `yaml:"output_bytes"`
	KillGrace       *time.Duration `yaml:"kill_grace"`
	Image           *string        `yaml:"image"`
	Engine          *string        `yaml:"engine"`
	Limits          struct {
		CPUSeconds   *quantity `yaml:"cpu_seconds"`
		AddressSpace *quantity `yaml:"address_space"`
		Processes    *quantity `yaml:"processes"`
		FileSize     *quantity `yaml:"file_size"`
		Memory       *quantity `yaml:"memory"`
		CPUs         *cpus     `yaml:"cpus"`
	} `yaml:"limits"`
}

// ApplyConfig sets the fields of p that the "sandbox" section of a Praxis
// config file (YAML) names, leaving the others as they are, so that several
// files can be applied in turn, each overriding the ones before. Other
// sections of the file are ignored. Unknown keys in the section and
// malformed values are errors. The policy itself is checked by New.
//
// The keys: shell (bool), isolation (auto, bwrap, docker, none), network
// (on, off), unix_sockets (on, off), env (list of names, or prefix patterns
// ending in *; an empty list passes nothing), writable and hide (lists of
// absolute paths; a leading ~/ is the home directory), timeout, max_timeout,
// background_after, kill_grace (durations such as 90s or 5m), output_bytes,
// image and engine (isolation docker), and under limits: cpu_seconds,
// address_space, processes, file_size, memory (a size) and cpus (a number).
// Sizes are a number of bytes or a number with a unit (KiB, MiB, GiB, KB,
// MB, GB); a limit may be "unlimited".
func ApplyConfig(p *Policy, data []byte) error {
	// Unknown keys in the section are refused (a misspelt key must not
	// silently leave a setting at its default); other sections are kept
	// aside, unread.
	var file struct {
		Sandbox *fileConfig    `yaml:"sandbox"`
		Others  map[string]any `yaml:",inline"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil && err != io.EOF {
		return err
	}
	if file.Sandbox == nil {
		return nil
	}
	c := file.Sandbox
	set := func(dst *time.Duration, src *time.Duration) {
		if src != nil {
			*dst = *src
		}
	}
	if c.Shell != nil {
		p.Shell = *c.Shell
	}
	if c.Isolation != nil {
		p.Isolation = *c.Isolation
	}
	if c.Network != nil {
		p.Network = Network(*c.Network)
	}
	if c.UnixSockets != nil {
		p.UnixSockets = Network(*c.UnixSockets) == NetworkOn
	}
	if c.Env != nil {
		p.Env = append([]string{}, *c.Env...)
	}
	if c.Writable != nil {
		p.Writable = p.Writable[:0:0]
		for _, w := range *c.Writable {
			if rest, ok := strings.CutPrefix(w, "~/"); ok {
				home, err := os.UserHomeDir()
				if err != nil {
					return fmt.Errorf("sandbox: writable %s: %w", w, err)
				}
				w = filepath.Join(home, rest)
			}
			p.Writable = append(p.Writable, w)
		}
	}
	if c.Hide != nil {
		p.Hide = append([]string{}, *c.Hide...)
	}
	set(&p.Timeout, c.Timeout)
	set(&p.MaxTimeout, c.MaxTimeout)
	set(&p.BackgroundAfter, c.BackgroundAfter)
	set(&p.KillGrace, c.KillGrace)
	if c.OutputBytes != nil {
		if *c.OutputBytes < 0 {
			return fmt.Errorf("sandbox: output_bytes cannot be unlimited")
		}
		p.OutputBytes = int(*c.OutputBytes)
	}
	if c.Image != nil {
		p.Image = *c.Image
	}
	if c.Engine != nil {
		p.Engine = *c.Engine
	}
	if c.Limits.CPUs != nil {
		p.Limits.CPUs = float64(*c.Limits.CPUs)
	}
	for _, l := range []struct {
		dst *int64
		src *quantity
	}{
		{&p.Limits.CPUSeconds, c.Limits.CPUSeconds},
		{&p.Limits.AddressSpace, c.Limits.AddressSpace},
		{&p.Limits.Processes, c.Limits.Processes},
		{&p.Limits.FileSize, c.Limits.FileSize},
		{&p.Limits.Memory, c.Limits.Memory},
	} {
		if l.src != nil {
			*l.dst = int64(*l.src)
		}
	}
	return nil
}

// onOff is a network setting: on or off (true, false, yes and no too).
type onOff Network

func (o *onOff) UnmarshalYAML(n *yaml.Node) error {
	switch strings.ToLower(n.Value) {
	case "on", "true", "yes":
		*o = onOff(NetworkOn)
	case "off", "false", "no":
		*o = onOff(NetworkOff)
	default:
		return fmt.Errorf("line %d: %q: want on or off", n.Line, n.Value)
	}
	return nil
}

// quantity is a count or a size: an integer, an integer with a unit, or
// "unlimited" (-1).
type quantity int64

var units = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

func (q *quantity) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	if s == "unlimited" {
		*q = -1
		return nil
	}
	num, factor := s, int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/factor {
		return fmt.Errorf("line %d: %q is not a count, a size such as 512MiB, or unlimited", n.Line, n.Value)
	}
	*q = quantity(v * factor)
	return nil
}

// cpus is a number of CPUs, such as 2 or 0.5, or "unlimited" (-1).
type cpus float64

func (c *cpus) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	if s == "unlimited" {
		*c = -1
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v > 1<<20 {
		return fmt.Errorf("line %d: cpus %q is not a positive number such as 2 or 0.5, or unlimited", n.Line, n.Value)
	}
	*c = cpus(v)
	return nil
}

package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write" yaml:"cache_write"`
}

// Cost returns what u costs at p. provider says how u counts: OpenAI's
// input tokens include the cached ones read, billed at CacheRead instead;
// Anthropic's exclude the cache reads and writes, billed apart.
func (p Price) Cost(provider string, u Usage) float64 {
	in := u.InputTokens
	if provider == "openai" {
		in = max(in-u.CacheReadTokens, 0)
	}
	return (float64(in)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}

// Prices maps model names to prices. A key matches the model of that name
// and its dated or suffixed versions (the key, a hyphen, anything:
// claude-sonnet-4-5 matches claude-sonnet-4-5-20250929); the longest
// matching key wins.
type Prices map[string]Price

// DefaultPrices returns the list prices of the current Anthropic and OpenAI
// models (standard tier; Anthropic's cache writes at the five-minute rate).
func DefaultPrices() Prices {
	return Prices{
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
		"claude-3-haiku":    {Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.3},
		"gpt-5.1":           {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano":        {Input: 0.05, Output: 0.4, CacheRead: 0.005},
		"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5},
		"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.1},
		"gpt-4.1-nano":      {Input: 0.1, Output: 0.4, CacheRead: 0.025},
		"gpt-4o":            {Input: 2.5, Output: 10, CacheRead: 1.25},
		"gpt-4o-mini":       {Input: 0.15, Output: 0.6, CacheRead: 0.075},
		"o1":                {Input: 15, Output: 60, CacheRead: 7.5},
		"gpt-5-pro":         {Input: 15, Output: 120},
		"o3":                {Input: 2, Output: 8, CacheRead: 0.5},
		"o3-pro":            {Input: 20, Output: 80},
		"o3-mini":           {Input: 1.1, Output: 4.4, CacheRead: 0.55},
		"o4-mini":           {Input: 1.1, Output: 4.4, CacheRead: 0.275},
	}
}

// Lookup returns the price of model.
func (p Prices) Lookup(model string) (Price, bool) {
	best, found := "", false
	for k := range p {
		if (model == k || strings.HasPrefix(model, k+"-")) && len(k) >= len(best) {
			best, found = k, true
		}
	}
	return p[best], found
}

// ApplyConfig sets the prices a config file's prices section names,
// keeping the others:
//
//	prices:
//	  my-model: {input: 1, output: 2, cache_read: 0.1, cache_write: 1.25}
//
// A file without the section changes nothing. Unknown keys in an entry and
// negative prices are errors.
func (p Prices) ApplyConfig(data []byte) error {
	var file struct {
		Prices map[string]map[string]float64 `yaml:"prices"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&file); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	for model, fields := range file.Prices {
		var pr Price
		for k, v := range fields {
			if v < 0 {
				return fmt.Errorf("prices: %s: %s cannot be negative", model, k)
			}
			switch k {
			case "input":
				pr.Input = v
			case "output":
				pr.Output = v
			case "cache_read":
				pr.CacheRead = v
			case "cache_write":
				pr.CacheWrite = v
			default:
				return fmt.Errorf("prices: %s: unknown key %q (want input, output, cache_read, cache_write)", model, k)
			}
		}
		p[model] = pr
	}
	return nil
}

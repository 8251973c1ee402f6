package agent

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ProviderOptions choose and configure a provider.
type ProviderOptions struct {
	// Name is "anthropic", "openai" or "scripted"; empty chooses from the
	// environment (see NewProvider).
	Name string
	// Model overrides the provider's default model.
	Model string
	// BaseURL overrides the API's base URL (and the *_BASE_URL variable).
	BaseURL string
	// Script is the script file of the scripted provider.
	Script string
	// Getenv reads the environment. Required.
	Getenv func(string) string
	// HTTPClient is used by the HTTP providers; nil means the default.
	HTTPClient *http.Client
	// IdleTimeout bounds the silence of a streamed reply (see
	// DefaultIdleTimeout); 0 is the default.
	IdleTimeout time.Duration
}

// ErrNoProvider is returned by NewProvider when nothing says which
// provider to use.
var ErrNoProvider = errors.New("no model provider: set ANTHROPIC_API_KEY (Anthropic) or OPENAI_API_KEY " +
	"(OpenAI; with OPENAI_BASE_URL for another OpenAI-compatible server), or name a script for the scripted provider")

// ErrNoScript is returned by NewProvider for the scripted provider without
// a script.
var ErrNoScript = errors.New("provider scripted: a script file is required")

// NewProvider returns the provider o describes and the model to ask for.
// Without a name, a script means scripted, then ANTHROPIC_API_KEY means
// anthropic, then OPENAI_API_KEY or OPENAI_BASE_URL means openai; with none
// of them the error is ErrNoProvider. The real providers read their key
// from ANTHROPIC_API_KEY or OPENAI_API_KEY and their base URL from
// ANTHROPIC_BASE_URL or OPENAI_BASE_URL unless o.BaseURL is set.
func NewProvider(o ProviderOptions) (Provider, string, error) {
	name := o.Name
	if name == "" {
		switch {
		case o.Script != "":
			name = "scripted"
		case o.Getenv("ANTHROPIC_API_KEY") != "":
			name = "anthropic"
		case o.Getenv("OPENAI_API_KEY") != "", o.Getenv("OPENAI_BASE_URL") != "":
			name = "openai"
		default:
			return nil, "", ErrNoProvider
		}
	}
	switch name {
	case "anthropic":
		key := o.Getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, "", errors.New("provider anthropic: ANTHROPIC_API_KEY is not set")
		}
		return &Anthropic{
			APIKey:      key,
			BaseURL:     cmp.Or(o.BaseURL, o.Getenv("ANTHROPIC_BASE_URL")),
			HTTPClient:  o.HTTPClient,
			IdleTimeout: o.IdleTimeout,
		}, cmp.Or(o.Model, AnthropicModel), nil
	case "openai":
		base := cmp.Or(o.BaseURL, o.Getenv("OPENAI_BASE_URL"))
		key := o.Getenv("OPENAI_API_KEY")
		if key == "" && base == "" {
			return nil, "", errors.New("provider openai: OPENAI_API_KEY is not set (a local server needs only its base URL)")
		}
		return &OpenAI{APIKey: key, BaseURL: base, HTTPClient: o.HTTPClient, IdleTimeout: o.IdleTimeout}, cmp.Or(o.Model, OpenAIModel), nil
	case "scripted":
		if o.Script == "" {
			return nil, "", ErrNoScript
		}
		s, err := LoadScript(o.Script)
		if err != nil {
			return nil, "", err
		}
		return s, cmp.Or(o.Model, "script"), nil
	default:
		return nil, "", fmt.Errorf("unknown provider %q (want anthropic, openai or scripted)", name)
	}
}

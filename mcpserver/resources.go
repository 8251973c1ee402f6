package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/praxis"
)

// mountNotes serves memory notes as memory://KEY resources: a template for
// reading any key, and one listed resource per note of the default
// workspace, listed afresh whenever a client lists resources.
func (s *Server) mountNotes() {
	if s.opts.Notes == nil {
		return
	}
	s.addTemplate(
		mcp.NewResourceTemplate("memory://{key}", "memory note",
			mcp.WithTemplateDescription("A memory note of the workspace, by key."),
			mcp.WithTemplateMIMEType("text/markdown")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			key, err := uriName(req.Params.URI, "memory://")
			if err != nil {
				return nil, err
			}
			return s.readNote(ctx, req.Params.URI, key)
		})
	// The notes are listed when a client lists resources, not here: the
	// server answers initialize before it reads any directory.
}

func (s *Server) readNote(ctx context.Context, uri, key string) ([]mcp.ResourceContents, error) {
	eng, release := s.engineFor(ctx)
	defer release()
	text, err := s.opts.Notes(eng).Read(ctx, key)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}, nil
}

// refreshNotes lists the default workspace's notes as resources.
func (s *Server) refreshNotes(ctx context.Context) {
	keys, err := s.opts.Notes(s.def).Keys(ctx)
	if err != nil {
		s.log.Warn("listing memory notes", "err", err)
		return
	}
	res := make([]ExtensionResource, len(keys))
	for i, k := range keys {
		uri := "memory://" + url.PathEscape(k)
		res[i] = ExtensionResource{
			Resource: mcp.NewResource(uri, k, mcp.WithMIMEType("text/markdown")),
			Read: func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return s.readNote(ctx, uri, k)
			},
		}
	}
	s.replaceListed(&s.listedNotes, res, nil)
}

// mountSkills serves skills as skill://NAME resources and as prompts named
// after the skill, refreshed whenever a client lists either.
func (s *Server) mountSkills() {
	if s.opts.Skills == nil {
		return
	}
	s.addTemplate(
		mcp.NewResourceTemplate("skill://{name}", "skill",
			mcp.WithTemplateDescription("A skill's instructions (its SKILL.md body), by name."),
			mcp.WithTemplateMIMEType("text/markdown")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			name, err := uriName(req.Params.URI, "skill://")
			if err != nil {
				return nil, err
			}
			return s.readSkill(ctx, req.Params.URI, name)
		})
	// Listed when a client lists resources or prompts, as the notes are.
}

func (s *Server) loadSkill(ctx context.Context, name string) (string, error) {
	eng, release := s.engineFor(ctx)
	defer release()
	return s.opts.Skills(eng).Load(ctx, name)
}

func (s *Server) readSkill(ctx context.Context, uri, name string) ([]mcp.ResourceContents, error) {
	text, err := s.loadSkill(ctx, name)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}, nil
}

// refreshSkills lists the default workspace's skills as resources and
// prompts.
func (s *Server) refreshSkills(ctx context.Context) {
	skills, err := s.opts.Skills(s.def).List(ctx)
	if err != nil {
		s.log.Warn("listing skills", "err", err)
		return
	}
	var res []ExtensionResource
	var prompts []ExtensionPrompt
	for _, sk := range skills {
		uri := "skill://" + url.PathEscape(sk.Name)
		res = append(res, ExtensionResource{
			Resource: mcp.NewResource(uri, sk.Name, mcp.WithResourceDescription(sk.Description), mcp.WithMIMEType("text/markdown")),
			Read: func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return s.readSkill(ctx, uri, sk.Name)
			},
		})
		prompts = append(prompts, ExtensionPrompt{
			Prompt: mcp.NewPrompt(sk.Name, mcp.WithPromptDescription(sk.Description)),
			Handler: func(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				text, err := s.loadSkill(ctx, sk.Name)
				if err != nil {
					return nil, err
				}
				return mcp.NewGetPromptResult(sk.Description, []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
				}), nil
			},
		})
	}
	s.replaceListed(&s.listedSkills, res, prompts)
}

// listed is what one source (notes or skills) has mounted.
type listed struct {
	resources map[string]bool // by URI
	prompts   map[string]bool // by name
}

// replaceListed mounts res and prompts in place of what l held: entries
// that disappeared are removed, the others added or replaced. The sessions
// are told when a list changed.
func (s *Server) replaceListed(l *listed, res []ExtensionResource, prompts []ExtensionPrompt) {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	reg := s.reg
	reg.mu.Lock()
	resChanged, promptsChanged := false, false
	uris := make(map[string]bool, len(res))
	for _, r := range res {
		uris[r.Resource.URI] = true
		if old, ok := reg.resources[r.Resource.URI]; !ok || !reflect.DeepEqual(old.resource, r.Resource) {
			resChanged = true
		}
		reg.resources[r.Resource.URI] = resourceEntry{resource: r.Resource, read: r.Read}
	}
	for uri := range l.resources {
		if !uris[uri] {
			delete(reg.resources, uri)
			resChanged = true
		}
	}
	names := make(map[string]bool, len(prompts))
	for _, p := range prompts {
		names[p.Prompt.Name] = true
		if old, ok := reg.prompts[p.Prompt.Name]; !ok || !reflect.DeepEqual(old.prompt, p.Prompt) {
			promptsChanged = true
		}
		reg.prompts[p.Prompt.Name] = promptEntry{prompt: p.Prompt, handler: p.Handler}
	}
	for name := range l.prompts {
		if !names[name] {
			delete(reg.prompts, name)
			promptsChanged = true
		}
	}
	reg.mu.Unlock()
	l.resources, l.prompts = uris, names
	if resChanged {
		s.broadcast(mcp.MethodNotificationResourcesListChanged)
	}
	if promptsChanged {
		s.broadcast(string(mcp.MethodNotificationPromptsListChanged))
	}
}

// addTemplate adds one of the server's own resource templates.
func (s *Server) addTemplate(t mcp.ResourceTemplate, read ResourceReader) {
	s.reg.mu.Lock()
	s.reg.templates = append(s.reg.templates, templateEntry{template: t, read: read})
	s.reg.mu.Unlock()
}

// uriName returns the name after prefix in uri, unescaped.
func uriName(uri, prefix string) (string, error) {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok || rest == "" {
		return "", fmt.Errorf("%w: %s", ErrResourceNotFound, uri)
	}
	name, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrResourceNotFound, uri)
	}
	return name, nil
}

// resourceError maps a missing note or skill to ErrResourceNotFound,
// which becomes the protocol's resource-not-found error.
func resourceError(uri string, err error) error {
	if praxis.CodeOf(err) == praxis.ENotFound {
		return fmt.Errorf("%w: %s", ErrResourceNotFound, uri)
	}
	return err
}

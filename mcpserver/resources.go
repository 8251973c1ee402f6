package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/praxis-tools/praxis/praxis"
)

// mountNotes serves memory notes as memory://KEY resources: a template for
// reading any key, and one listed resource per note of the default
// workspace.
func (s *Server) mountNotes() {
	if s.opts.Notes == nil {
		return
	}
	s.mcp.AddResourceTemplate(
		mcp.NewResourceTemplate("memory://{key}", "memory note",
			mcp.WithTemplateDescription("A memory note of the workspace, by key."),
			mcp.WithTemplateMIMEType("text/markdown")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			key, err := uriName(req.Params.URI, "memory://")
			if err != nil {
				return nil, err
			}
			eng, release := s.engineFor(ctx)
			defer release()
			text, err := s.opts.Notes(eng).Read(ctx, key)
			if err != nil {
				return nil, resourceError(req.Params.URI, err)
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}, nil
		})
	s.refreshNoteList(context.Background())
}

// refreshNoteList lists the default workspace's notes as resources.
func (s *Server) refreshNoteList(ctx context.Context) {
	keys, err := s.opts.Notes(s.def).Keys(ctx)
	if err != nil {
		s.log.Warn("listing memory notes", "err", err)
		return
	}
	res := make([]server.ServerResource, len(keys))
	for i, k := range keys {
		uri := "memory://" + url.PathEscape(k)
		res[i] = server.ServerResource{
			Resource: mcp.NewResource(uri, k, mcp.WithMIMEType("text/markdown")),
			Handler: func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				eng, release := s.engineFor(ctx)
				defer release()
				text, err := s.opts.Notes(eng).Read(ctx, k)
				if err != nil {
					return nil, resourceError(uri, err)
				}
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}, nil
			},
		}
	}
	s.mcp.AddResources(res...)
}

// mountSkills serves skills as skill://NAME resources and as prompts named
// after the skill.
func (s *Server) mountSkills() {
	if s.opts.Skills == nil {
		return
	}
	read := func(ctx context.Context, name string) (string, error) {
		eng, release := s.engineFor(ctx)
		defer release()
		return s.opts.Skills(eng).Load(ctx, name)
	}
	s.mcp.AddResourceTemplate(
		mcp.NewResourceTemplate("skill://{name}", "skill",
			mcp.WithTemplateDescription("A skill's instructions (its SKILL.md body), by name."),
			mcp.WithTemplateMIMEType("text/markdown")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			name, err := uriName(req.Params.URI, "skill://")
			if err != nil {
				return nil, err
			}
			text, err := read(ctx, name)
			if err != nil {
				return nil, resourceError(req.Params.URI, err)
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}, nil
		})
	skills, err := s.opts.Skills(s.def).List(context.Background())
	if err != nil {
		s.log.Warn("listing skills", "err", err)
		return
	}
	var res []server.ServerResource
	var prompts []server.ServerPrompt
	for _, sk := range skills {
		uri := "skill://" + url.PathEscape(sk.Name)
		res = append(res, server.ServerResource{
			Resource: mcp.NewResource(uri, sk.Name, mcp.WithResourceDescription(sk.Description), mcp.WithMIMEType("text/markdown")),
			Handler: func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				text, err := read(ctx, sk.Name)
				if err != nil {
					return nil, resourceError(uri, err)
				}
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}, nil
			},
		})
		prompts = append(prompts, server.ServerPrompt{
			Prompt: mcp.NewPrompt(sk.Name, mcp.WithPromptDescription(sk.Description)),
			Handler: func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				text, err := read(ctx, sk.Name)
				if err != nil {
					return nil, err
				}
				return mcp.NewGetPromptResult(sk.Description, []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
				}), nil
			},
		})
	}
	s.mcp.AddResources(res...)
	s.mcp.AddPrompts(prompts...)
}

// uriName returns the name after prefix in uri, unescaped.
func uriName(uri, prefix string) (string, error) {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok || rest == "" {
		return "", fmt.Errorf("%w: %s", server.ErrResourceNotFound, uri)
	}
	name, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("%w: %s", server.ErrResourceNotFound, uri)
	}
	return name, nil
}

// resourceError maps a missing note or skill to mcp-go's not-found error,
// which becomes the protocol's resource-not-found error.
func resourceError(uri string, err error) error {
	if praxis.CodeOf(err) == praxis.ENotFound {
		return fmt.Errorf("%w: %s", server.ErrResourceNotFound, uri)
	}
	return err
}

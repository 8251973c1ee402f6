package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/praxis-tools/praxis/praxis"
	"github.com/praxis-tools/praxis/skills"
)

// EngineNotes serves the engine's memory store (Engine.MemoryKeys and
// ReadMemory) as Notes. Use it as Options.Notes.
func EngineNotes(e *praxis.Engine) Notes { return engineNotes{e} }

type engineNotes struct{ e *praxis.Engine }

func (n engineNotes) Keys(context.Context) ([]string, error) {
	notes, err := n.e.MemoryKeys()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(notes))
	for i, note := range notes {
		keys[i] = note.Key
	}
	return keys, nil
}

func (n engineNotes) Read(_ context.Context, key string) (string, error) {
	return n.e.ReadMemory(key)
}

// EngineSkills serves the engine's skill catalog as Skills: a skill's
// instructions are its SKILL.md body. Use it as Options.Skills.
func EngineSkills(e *praxis.Engine) Skills { return engineSkills{e} }

type engineSkills struct{ e *praxis.Engine }

func (s engineSkills) List(ctx context.Context) ([]Skill, error) {
	c := s.e.Skills()
	if c == nil {
		return nil, nil
	}
	list, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Skill, len(list))
	for i, sk := range list {
		out[i] = Skill{Name: sk.Name, Description: sk.Description}
	}
	return out, nil
}

func (s engineSkills) Load(ctx context.Context, name string) (string, error) {
	c := s.e.Skills()
	if c == nil {
		return "", praxis.Errorf(praxis.ENotFound, "no skill %q", name)
	}
	l, err := c.Load(ctx, name)
	if errors.Is(err, skills.ErrUnknownSkill) {
		return "", praxis.Errorf(praxis.ENotFound, "no skill %q", name)
	}
	if err != nil {
		return "", fmt.Errorf("skill %s: %w", name, err)
	}
	return l.Body, nil
}

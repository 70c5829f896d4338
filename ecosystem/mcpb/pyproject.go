package mcpb

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/pelletier/go-toml/v2"
)

// ErrUnsupportedProject is a uv bundle's project that the sandbox cannot
// install as a client would (see PyProject).
var ErrUnsupportedProject = errors.New("uv project not supported")

// PyProject is what a uv bundle's pyproject.toml asks a client to install
// before it runs the entry point: `uv run` in the bundle's directory makes
// a venv with the project's dependencies and, by uv's default, its dev
// dependency group (MANIFEST.md, UV Runtime; uv's project documentation).
type PyProject struct {
	// Name, Version and RequiresPython are [project]'s.
	Name, Version, RequiresPython string
	// Requirements are [project].dependencies, then the dev group's
	// requirements, PEP 508 lines as written.
	Requirements []string
	// UVLock is set when the bundle ships a uv.lock.
	UVLock bool
}

// maxPyProject bounds pyproject.toml.
const maxPyProject = 1 << 20

// PyProject reads the bundle's pyproject.toml. A project uv would take
// some packages of from elsewhere than the index ([tool.uv.sources]), whose
// dependencies only its build backend knows (dynamic), that is itself a
// package (a [build-system], which uv installs as well), or whose dev group
// includes other groups, is ErrUnsupportedProject: installing only what the
// index gives would run another tree than a client's. A missing or
// malformed file is ErrMalformed.
func (b *Bundle) PyProject() (*PyProject, error) {
	var raw []byte
	p := &PyProject{}
	for _, e := range b.entries {
		switch {
		case e.dir:
		case e.name == "pyproject.toml":
			if e.size > maxPyProject {
				return nil, fmt.Errorf("%w: pyproject.toml is larger than %d KiB", ErrMalformed, maxPyProject>>10)
			}
			data, err := b.read(e)
			if err != nil {
				return nil, fmt.Errorf("%w: pyproject.toml: %v", ErrMalformed, err)
			}
			raw = data
		case e.name == "uv.lock":
			p.UVLock = true
		}
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: a uv bundle has no pyproject.toml at its root", ErrMalformed)
	}
	var doc struct {
		Project *struct {
			Name           string   `toml:"name"`
			Version        string   `toml:"version"`
			RequiresPython string   `toml:"requires-python"`
			Dependencies   []string `toml:"dependencies"`
			Dynamic        []string `toml:"dynamic"`
		} `toml:"project"`
		BuildSystem      map[string]any `toml:"build-system"`
		DependencyGroups map[string]any `toml:"dependency-groups"`
		Tool             struct {
			UV struct {
				Sources map[string]any `toml:"sources"`
				Package *bool          `toml:"package"`
			} `toml:"uv"`
		} `toml:"tool"`
	}
	if err := toml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: pyproject.toml: %v", ErrMalformed, err)
	}
	if doc.Project == nil || doc.Project.Name == "" {
		return nil, fmt.Errorf("%w: pyproject.toml has no [project] name", ErrMalformed)
	}
	pr := doc.Project
	p.Name, p.Version, p.RequiresPython = pr.Name, pr.Version, pr.RequiresPython
	switch {
	case slices.Contains(pr.Dynamic, "dependencies"):
		return nil, fmt.Errorf("%w: its dependencies are dynamic: only its build backend can list them", ErrUnsupportedProject)
	case len(doc.Tool.UV.Sources) > 0:
		return nil, fmt.Errorf("%w: [tool.uv.sources] takes %v from elsewhere than the package index", ErrUnsupportedProject, slices.Sorted(maps.Keys(doc.Tool.UV.Sources)))
	case doc.BuildSystem != nil && (doc.Tool.UV.Package == nil || *doc.Tool.UV.Package),
		doc.Tool.UV.Package != nil && *doc.Tool.UV.Package:
		return nil, fmt.Errorf("%w: the project is itself a package (a [build-system]), which uv builds and installs", ErrUnsupportedProject)
	}
	p.Requirements = slices.Clone(pr.Dependencies)
	if dev, ok := doc.DependencyGroups["dev"]; ok {
		list, _ := dev.([]any)
		for _, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("%w: the dev dependency group includes another group", ErrUnsupportedProject)
			}
			p.Requirements = append(p.Requirements, s)
		}
	}
	return p, nil
}

package mcpb

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

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
	// Dependencies are [project].dependencies, and Dev the dev group's
	// requirements (tool.uv.dev-dependencies, then [dependency-groups]
	// dev), PEP 508 lines as written.
	Dependencies, Dev []string
	// Package is set when the project is itself a package, which uv
	// builds and installs with its dependencies (a [build-system], unless
	// tool.uv.package is false; or tool.uv.package true). Its
	// dependencies are then its built metadata's, which may be dynamic.
	Package bool
	// UVLock is set when the bundle ships a uv.lock.
	UVLock bool
	// NoProject is set when pyproject.toml has no [project] table (a
	// Poetry project, say): uv then treats the directory as no project
	// and installs nothing before it runs the entry point (uv 0.13), so
	// there is nothing else here.
	NoProject bool
}

// maxPyProject bounds pyproject.toml.
const maxPyProject = 1 << 20

// PyProject reads the bundle's pyproject.toml. A project uv would take
// some packages of from elsewhere than the index ([tool.uv.sources]), that
// is no package but has dynamic dependencies (only a build backend could
// list them), that is a package with a dynamic version (its sdist is named
// by its version), or whose dev group includes other groups, is
// ErrUnsupportedProject: installing only what the index gives would run
// another tree than a client's. A missing or malformed file is
// ErrMalformed.
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
				// DevDependencies is uv's older form of the dev group,
				// which uv still installs with it.
				DevDependencies []string `toml:"dev-dependencies"`
			} `toml:"uv"`
		} `toml:"tool"`
	}
	if err := toml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: pyproject.toml: %v", ErrMalformed, err)
	}
	if doc.Project == nil {
		return &PyProject{NoProject: true, UVLock: p.UVLock}, nil
	}
	if doc.Project.Name == "" {
		return nil, fmt.Errorf("%w: pyproject.toml's [project] has no name", ErrMalformed)
	}
	pr := doc.Project
	p.Name, p.Version, p.RequiresPython = pr.Name, pr.Version, pr.RequiresPython
	uvPackage := doc.Tool.UV.Package
	p.Package = uvPackage != nil && *uvPackage || uvPackage == nil && doc.BuildSystem != nil
	switch {
	case len(doc.Tool.UV.Sources) > 0:
		return nil, fmt.Errorf("%w: [tool.uv.sources] takes %v from elsewhere than the package index", ErrUnsupportedProject, slices.Sorted(maps.Keys(doc.Tool.UV.Sources)))
	case !p.Package && slices.Contains(pr.Dynamic, "dependencies"):
		return nil, fmt.Errorf("%w: its dependencies are dynamic, and it is no package whose build could list them", ErrUnsupportedProject)
	case p.Package && (pr.Version == "" || slices.Contains(pr.Dynamic, "version")):
		return nil, fmt.Errorf("%w: the project is a package whose version is dynamic: only its build backend can say it", ErrUnsupportedProject)
	}
	p.Dependencies = slices.Clone(pr.Dependencies)
	p.Dev = slices.Clone(doc.Tool.UV.DevDependencies)
	if dev, ok := doc.DependencyGroups["dev"]; ok {
		list, _ := dev.([]any)
		for _, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("%w: the dev dependency group includes another group", ErrUnsupportedProject)
			}
			p.Dev = append(p.Dev, s)
		}
	}
	return p, nil
}

// Sdist writes the bundle's files as the source distribution of its
// project p (a package): a gzipped tar of every file under
// NAME-VERSION/, named as PEP 625 names an sdist. A build backend builds
// the project from it as uv builds it from the bundle's directory.
func (b *Bundle) Sdist(w io.Writer, p *PyProject) (filename string, err error) {
	base := strings.ToLower(sdistName.ReplaceAllString(p.Name, "_")) + "-" + p.Version
	zw := gzip.NewWriter(w)
	if err := b.WriteTar(zw, base, 0, 0); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base + ".tar.gz", nil
}

// sdistName is what PEP 625 folds to one '_' in an sdist's name.
var sdistName = regexp.MustCompile(`[-_.]+`)

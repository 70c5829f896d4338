package pypi

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Pylock is the part of a PEP 751 pylock.toml that verifymcp reads: the
// fields osv-scalibr's pylock extractor reads (name, version, vcs
// commit-id, directory path) and where a package without a version came
// from.
type Pylock struct {
	LockVersion string          `toml:"lock-version"`
	CreatedBy   string          `toml:"created-by"`
	Packages    []PylockPackage `toml:"packages"`
}

// PylockPackage is one package of a pylock.toml.
type PylockPackage struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	VCS     struct {
		Type   string `toml:"type"`
		URL    string `toml:"url"`
		Commit string `toml:"commit-id"`
	} `toml:"vcs"`
	Directory struct {
		Path string `toml:"path"`
	} `toml:"directory"`
	Archive struct {
		URL  string `toml:"url"`
		Path string `toml:"path"`
	} `toml:"archive"`
}

// Source says where a package without a version came from, for the
// reason a signal does not apply.
func (p PylockPackage) Source() string {
	switch {
	case p.VCS.URL != "" || p.VCS.Commit != "":
		return "a " + cmp.Or(p.VCS.Type, "vcs") + " checkout " + cmp.Or(p.VCS.URL, p.VCS.Commit)
	case p.Directory.Path != "":
		return "the directory " + p.Directory.Path
	case p.Archive.URL != "" || p.Archive.Path != "":
		return "the archive " + cmp.Or(p.Archive.URL, p.Archive.Path)
	}
	return "no source"
}

// Root reports whether p is the project the lock was made for, which
// osv-scalibr's extractor also leaves out: no version, installed from ".".
// `uv pip compile` writes no such entry; `uv export` does.
func (p PylockPackage) Root() bool {
	return p.Version == "" && p.Directory.Path == "."
}

// ParsePylock reads a pylock.toml. PEP 751 tells installers to refuse a
// lock-version whose major version they do not know, and so does this.
func ParsePylock(b []byte) (*Pylock, error) {
	var l Pylock
	if err := toml.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("parse pylock.toml: %w", err)
	}
	major, _, _ := strings.Cut(strings.TrimSpace(l.LockVersion), ".")
	if major != "1" {
		return nil, fmt.Errorf("pylock.toml lock-version %q is not a version 1 lock (PEP 751)", l.LockVersion)
	}
	return &l, nil
}

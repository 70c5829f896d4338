package report

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// SARIFOptions say where in the repository a SARIF file is uploaded for
// its results stand. GitHub code scanning reads every result's physical
// location as a path relative to the root of the repository and refuses
// an absolute one or a scheme it does not know (file:, pkg:), so no SARIF
// output carries either: a path on this machine is made relative to Root
// when it is under it, and anything else gets a stable stand-in path under
// .verifymcp/ (see docs/reports.md).
type SARIFOptions struct {
	// Root is the repository's checkout on this machine, absolute (the
	// commands pass their working directory). "" takes relative paths as
	// they are and places every absolute path outside the repository.
	Root string
	// Home is the user's home directory, for naming a configuration file
	// outside the repository by its place under it; "" for none.
	Home string
	// DeclaredIn is the file of the repository that declares the scanned
	// package (its package.json, its lockfile, a client configuration),
	// where a package report's results are placed; the zero value names
	// none, and each result stands at its package's stand-in path.
	DeclaredIn RepoLocation
}

// DefaultSARIFOptions are the options of a command run from the root of
// the repository's checkout, as a CI job is: the working directory and
// the user's home, each "" when it cannot be read.
func DefaultSARIFOptions() SARIFOptions {
	var o SARIFOptions
	if wd, err := os.Getwd(); err == nil {
		o.Root = wd
	}
	if home, err := os.UserHomeDir(); err == nil {
		o.Home = home
	}
	return o
}

// RepoLocation is a place in a file of the repository: a clean slash path
// relative to its root, and a line (0 for none).
type RepoLocation struct {
	Path string
	Line int
}

// ErrRepoLocation is the error of a place that is not a file of the
// repository by a relative path.
var ErrRepoLocation = errors.New("must be PATH[:LINE], PATH relative to the repository root")

// ParseRepoLocation reads PATH[:LINE]: PATH a file of the repository,
// relative to its root and written with /, LINE a line of it (1 or more).
// An absolute path, a URI (file:, pkg:, C:), a backslash, a directory or
// a path with a .. segment is refused, since GitHub code scanning can only
// place a result in a file of the repository by its relative path.
func ParseRepoLocation(s string) (RepoLocation, error) {
	p, line := s, 0
	if i := strings.LastIndexByte(s, ':'); i >= 0 && i < len(s)-1 && strings.Trim(s[i+1:], "0123456789") == "" {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 1 {
			return RepoLocation{}, fmt.Errorf("%w: line %q is not 1 or more", ErrRepoLocation, s[i+1:])
		}
		p, line = s[:i], n
	}
	first, _, _ := strings.Cut(p, "/")
	switch {
	case p == "":
		return RepoLocation{}, fmt.Errorf("%w: no path in %q", ErrRepoLocation, s)
	case strings.Contains(p, `\`):
		return RepoLocation{}, fmt.Errorf("%w, with / between directories: %q", ErrRepoLocation, s)
	case strings.HasPrefix(p, "/"):
		return RepoLocation{}, fmt.Errorf("%w, not absolute: %q", ErrRepoLocation, s)
	case strings.Contains(first, ":"):
		return RepoLocation{}, fmt.Errorf("%w, not a URI or a drive: %q", ErrRepoLocation, s)
	case strings.HasSuffix(p, "/"):
		return RepoLocation{}, fmt.Errorf("%w, a file, not a directory: %q", ErrRepoLocation, s)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return RepoLocation{}, fmt.Errorf("%w, inside it (no ..): %q", ErrRepoLocation, s)
		}
	}
	if p = path.Clean(p); p == "." {
		return RepoLocation{}, fmt.Errorf("%w: %q names no file", ErrRepoLocation, s)
	}
	return RepoLocation{Path: p, Line: line}, nil
}

// String is the location as ParseRepoLocation reads it.
func (l RepoLocation) String() string {
	if l.Line > 0 {
		return l.Path + ":" + strconv.Itoa(l.Line)
	}
	return l.Path
}

// inRepo is file, a path on this machine, as a slash path relative to
// root, and whether it is inside root: a relative file is taken as
// relative to root (or, root "", as it is), an absolute one must be under
// root.
func inRepo(root, file string) (string, bool) {
	if file == "" {
		return "", false
	}
	if !filepath.IsAbs(file) {
		if root == "" {
			rel := filepath.ToSlash(filepath.Clean(file))
			return rel, rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
		}
		file = filepath.Join(root, file)
	}
	if root == "" {
		return "", false
	}
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	return rel, rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}

// standInDir is the directory of the stand-in paths, which no repository
// is expected to hold.
const standInDir = ".verifymcp"

// standIn is a stand-in path under standInDir for something that is no
// file of the repository: the segments of each part, with "", "." and ".."
// made "_", "_." and "_..", so that no name (a package may name itself
// "../x") leaves the directory or reads as a scheme.
func standIn(parts ...string) string {
	segs := []string{standInDir}
	for _, part := range parts {
		for _, seg := range strings.Split(filepath.ToSlash(part), "/") {
			if seg == "" || seg == "." || seg == ".." {
				seg = "_" + seg
			}
			segs = append(segs, seg)
		}
	}
	return strings.Join(segs, "/")
}

// packageStandIn is the stand-in path of a package:
// .verifymcp/ECOSYSTEM/NAME, a scoped npm name as two directories
// (.verifymcp/npm/@scope/name). It has no version, so that a finding stays
// where it was when the package moves to another version.
func packageStandIn(t Target) string {
	return standIn(t.Ecosystem, t.Name)
}

// configStandIn is the stand-in path of a configuration file outside the
// repository: .verifymcp/config/home/REST for a file under home
// (~/.cursor/mcp.json is .verifymcp/config/home/.cursor/mcp.json), else
// .verifymcp/config/abs/ and the file's absolute path, its volume's colon
// dropped (C:\x is .verifymcp/config/abs/C/x).
func configStandIn(home, file string) string {
	if home != "" && filepath.IsAbs(file) {
		if rel, err := filepath.Rel(home, file); err == nil && rel != "." && rel != ".." &&
			!strings.HasPrefix(filepath.ToSlash(rel), "../") {
			return standIn("config", "home", rel)
		}
	}
	parts := []string{"config", "abs"}
	vol := filepath.VolumeName(file)
	if vol != "" {
		parts = append(parts, strings.TrimSuffix(vol, ":"))
	}
	return standIn(append(parts, strings.TrimLeft(filepath.ToSlash(file[len(vol):]), "/"))...)
}

// relativeURI is a relative slash path as a URI reference: each segment
// escaped, so that the reference has no scheme, no query and no fragment,
// and reads back as the path.
func relativeURI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

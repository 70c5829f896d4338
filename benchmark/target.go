package benchmark

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem/oci"
	"github.com/verifymcp/verifymcp/pkgspec"
)

// Target schemes a case may use.
const (
	// SchemeNPM is a published npm package: npm:NAME@VERSION.
	SchemeNPM = "npm"
	// SchemeFixture is a synthetic fixture of the corpus: fixture:ID@VERSION,
	// the sources in fixtures/ID/.
	SchemeFixture = "fixture"
	// SchemePyPI is a published Python package: pypi:NAME==VERSION (or
	// pkg:pypi/NAME@VERSION).
	SchemePyPI = "pypi"
	// SchemeCapture is a static capture of the corpus: capture:ID@VERSION,
	// the recorded listing in fixtures/ID/capture.json (see capture.go).
	SchemeCapture = "capture"
	// SchemeOCI is a published container image, by digest:
	// oci:REGISTRY/NAME@sha256:HEX (a tag moves).
	SchemeOCI = "oci"
	// SchemeMCPB is a published MCPB bundle, by its URL and digest:
	// mcpb:https://HOST/PATH.mcpb#sha256=HEX (the file at a URL can
	// change). Its name and version are the manifest's, known once read.
	SchemeMCPB = "mcpb"
)

// TargetRef is a parsed case target.
type TargetRef struct {
	Scheme  string // SchemeNPM, SchemePyPI, SchemeOCI, SchemeMCPB, SchemeFixture or SchemeCapture
	Name    string // package name as written, fixture id, or a bundle's URL
	Version string // exact version, or an image's or bundle's digest
}

// String returns the target as the scanner takes it: npm:NAME@VERSION,
// pypi:NAME==VERSION, fixture:ID@VERSION.
func (t TargetRef) String() string {
	switch t.Scheme {
	case SchemePyPI:
		return t.Scheme + ":" + t.Name + "==" + t.Version
	case SchemeMCPB:
		return t.Scheme + ":" + t.Name + "#sha256=" + strings.TrimPrefix(t.Version, "sha256:")
	}
	return t.Scheme + ":" + t.Name + "@" + t.Version
}

// PackageName is the name the scanned package has: the npm name, the
// PyPI project name normalised as PEP 503 says (lower case, each run of
// '-', '_', '.' one '-'), or verifymcp-case-ID for a fixture.
func (t TargetRef) PackageName() string {
	switch t.Scheme {
	case SchemeFixture, SchemeCapture:
		return FixturePackagePrefix + t.Name
	case SchemePyPI:
		return pkgspec.NormalizePyPIName(t.Name)
	}
	return t.Name
}

// FixturePackagePrefix starts the package.json name of every fixture.
const FixturePackagePrefix = "verifymcp-case-"

var (
	// semverPattern is a SemVer 2.0 version without build metadata, which
	// npm ignores and so cannot pin anything.
	semverPattern = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?$`)
	rangeChars    = regexp.MustCompile(`[\^~<>=*| ]|(^|\.)[xX](\.|$)|\s-\s`)
)

// ParseTarget parses a case target and refuses anything that does not pin
// one exact package version: a name with no version, a range, a dist-tag,
// a registry URL, a remote endpoint (another track), a local tarball,
// wheel or sdist (not reproducible by anyone else). PyPI targets are
// pypi:NAME==VERSION and pkg:pypi/NAME@VERSION, VERSION in its canonical
// PEP 440 form. Every error wraps ErrTarget.
func ParseTarget(s string) (TargetRef, error) {
	raw := s
	s = strings.TrimSpace(s)
	fail := func(format string, args ...any) (TargetRef, error) {
		return TargetRef{}, &flaw{ErrTarget, fmt.Errorf("%q: "+format, append([]any{raw}, args...)...)}
	}
	var scheme, rest string
	switch {
	case s == "":
		return TargetRef{}, &flaw{ErrTarget, errors.New("missing (want npm:NAME@VERSION or fixture:ID@VERSION)")}
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		if strings.Contains(s, "registry") {
			return fail("a registry URL names no version; pin one exact version as npm:NAME@VERSION")
		}
		return fail("a remote endpoint is another track with another rubric; this corpus holds packages only")
	case strings.HasPrefix(s, "pkg:pypi/"):
		return parsePyPIPurl(s, fail)
	case strings.HasPrefix(s, "pypi:"):
		return parsePyPI(strings.TrimPrefix(s, "pypi:"), fail)
	case strings.HasPrefix(s, "uvx:"):
		return fail("write the case's target as pypi:NAME==VERSION, the one exact release uvx would run")
	case strings.HasSuffix(s, ".tgz"), strings.HasSuffix(s, ".tar.gz"), strings.HasSuffix(s, ".whl"), strings.HasSuffix(s, ".zip"):
		return fail("a local tarball cannot be re-fetched by anyone else; name a published npm:NAME@VERSION or pypi:NAME==VERSION, or a fixture of this corpus")
	case strings.HasPrefix(s, SchemeOCI+":"), strings.HasPrefix(s, "docker:"), strings.HasPrefix(s, "docker-daemon:"), strings.HasPrefix(s, "oci-layout:"):
		return parseOCI(s, fail)
	case strings.HasPrefix(s, SchemeMCPB+":"), strings.HasSuffix(s, ".mcpb"), strings.HasSuffix(s, ".dxt"):
		return parseMCPB(s, fail)
	case strings.HasPrefix(s, SchemeNPM+":"):
		scheme, rest = SchemeNPM, strings.TrimPrefix(s, SchemeNPM+":")
	case strings.HasPrefix(s, SchemeFixture+":"):
		scheme, rest = SchemeFixture, strings.TrimPrefix(s, SchemeFixture+":")
	case strings.HasPrefix(s, SchemeCapture+":"):
		scheme, rest = SchemeCapture, strings.TrimPrefix(s, SchemeCapture+":")
	default:
		return fail("want npm:NAME@VERSION, pypi:NAME==VERSION, oci:NAME@sha256:DIGEST, mcpb:URL#sha256=DIGEST, fixture:ID@VERSION or capture:ID@VERSION")
	}
	at := strings.LastIndex(rest, "@")
	if at <= 0 {
		return fail("registry-only target: no version; pin one exact version (npm:NAME@1.2.3)")
	}
	name, version := rest[:at], rest[at+1:]
	switch {
	case version == "":
		return fail("registry-only target: no version; pin one exact version (npm:NAME@1.2.3)")
	case strings.Contains(version, "+"):
		return fail("version %q has build metadata, which npm ignores; pin the version alone", version)
	case rangeChars.MatchString(version):
		return fail("version %q is a range; pin one exact version", version)
	case !semverPattern.MatchString(version):
		if !strings.ContainsAny(version, "0123456789") {
			return fail("version %q is a dist-tag, which moves; pin one exact version", version)
		}
		return fail("version %q is not one exact version (MAJOR.MINOR.PATCH)", version)
	}
	switch scheme {
	case SchemeNPM:
		if pkgspec.ValidNPMName(name) != nil {
			return fail("%q is not a valid npm package name", name)
		}
	case SchemeFixture, SchemeCapture:
		if !idPattern.MatchString(name) {
			return fail("%q is not a fixture id (lower-case letters, digits and dashes)", name)
		}
	}
	return TargetRef{Scheme: scheme, Name: name, Version: version}, nil
}

// parseOCI reads an image case target: one image by its digest, in a
// registry anyone can pull it from.
func parseOCI(s string, fail func(string, ...any) (TargetRef, error)) (TargetRef, error) {
	ref, err := oci.ParseRef(s)
	switch {
	case err != nil:
		return fail("%v", err)
	case ref.Transport != oci.TransportRegistry:
		return fail("an image on one engine or in one directory cannot be fetched by anyone else; name it in its registry by digest")
	case ref.Digest == "":
		return fail("a tag moves; pin one image by its digest (oci:%s@sha256:...)", ref.Name)
	}
	return TargetRef{Scheme: SchemeOCI, Name: ref.Name, Version: ref.Digest}, nil
}

// parseMCPB reads a bundle case target: an https URL, which anyone can
// fetch again, pinned by the bundle's sha256.
func parseMCPB(s string, fail func(string, ...any) (TargetRef, error)) (TargetRef, error) {
	loc, frag, _ := strings.Cut(strings.TrimPrefix(s, SchemeMCPB+":"), "#")
	u, err := url.Parse(loc)
	switch {
	case err != nil || u.Scheme == "" || u.Host == "":
		return fail("a bundle file cannot be fetched by anyone else; name it by its https URL and digest (mcpb:https://HOST/PATH.mcpb#sha256=HEX)")
	case u.Scheme != "https":
		return fail("a bundle's URL must be https, not %s", u.Scheme)
	}
	hex, ok := strings.CutPrefix(frag, "sha256=")
	if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return fail("the file at a URL can change; pin the bundle by its digest (mcpb:%s#sha256=HEX, 64 lower-case hexadecimal digits)", loc)
	}
	return TargetRef{Scheme: SchemeMCPB, Name: loc, Version: "sha256:" + hex}, nil
}

// parsePyPI reads NAME==VERSION of a pypi: case target: the grammar is
// pkgspec's, the policy (one exact release, in its canonical form) and
// its words the corpus's.
func parsePyPI(rest string, fail func(string, ...any) (TargetRef, error)) (TargetRef, error) {
	rest = strings.TrimSpace(rest)
	name := pkgspec.PyPINameHead(rest)
	if name == "" {
		return fail("%q is not a valid PyPI project name", rest)
	}
	spec := strings.TrimSpace(rest[len(name):])
	switch {
	case spec == "":
		return fail("registry-only target: no version; pin one exact version (pypi:NAME==1.2.3)")
	case strings.HasPrefix(spec, "["):
		return fail("extras are not scanned; name the package alone, pypi:%s==VERSION", name)
	case strings.Contains(spec, ";"):
		return fail("environment markers are not scanned; name the package alone, pypi:%s==VERSION", name)
	case strings.HasPrefix(spec, "@"):
		return fail("NAME@... is a URL in a Python requirement; pin one exact version as pypi:%s==VERSION", name)
	case strings.HasPrefix(spec, "==="):
		return fail("=== is arbitrary string equality; pin one exact version with == (pypi:%s==VERSION)", name)
	case !strings.HasPrefix(spec, "=="):
		return fail("%q is not one exact version; pin one with == (pypi:%s==1.2.3)", spec, name)
	}
	return pypiRef(name, strings.TrimSpace(strings.TrimPrefix(spec, "==")), fail)
}

// parsePyPIPurl reads pkg:pypi/NAME@VERSION; a qualifier or subpath names
// something other than the release, and is refused.
func parsePyPIPurl(s string, fail func(string, ...any) (TargetRef, error)) (TargetRef, error) {
	rest := strings.TrimPrefix(s, "pkg:pypi/")
	if strings.ContainsAny(rest, "?#") {
		return fail("a purl qualifier or subpath names something other than one release; pin it as pkg:pypi/NAME@VERSION")
	}
	name, version, found, err := pkgspec.CutPurlVersion(rest)
	switch {
	case !found:
		return fail("registry-only target: no version; pin one exact version (pkg:pypi/NAME@1.2.3)")
	case err != nil:
		return fail("%v", err)
	}
	if pkgspec.PyPINameHead(name) != name {
		return fail("%q is not a valid PyPI project name", name)
	}
	return pypiRef(name, version, fail)
}

// pypiRef checks an exact PyPI version.
func pypiRef(name, version string, fail func(string, ...any) (TargetRef, error)) (TargetRef, error) {
	switch {
	case version == "":
		return fail("registry-only target: no version; pin one exact version (pypi:%s==1.2.3)", name)
	case strings.Contains(version, "+"):
		return fail("version %q has a local label, which the index does not serve; pin the public version", version)
	case strings.ContainsAny(version, "*,<>=~ "):
		return fail("version %q is a range; pin one exact version", version)
	case !pkgspec.CanonicalPublicVersion(version):
		return fail("version %q is not one exact version in its canonical PEP 440 form (1.2.3, 1.0rc1, 2.0.post1), as the index spells it", version)
	}
	return TargetRef{Scheme: SchemePyPI, Name: name, Version: version}, nil
}

// ScanTarget is what the scanner is given for a case.
type ScanTarget struct {
	// Arg is the target to hand to the scan pipeline (pipeline.ParseTarget):
	// npm:NAME@VERSION, pypi:NAME==VERSION, oci:NAME@sha256:DIGEST, or the
	// path of a packed fixture tarball.
	Arg string `json:"-"`
	// Ecosystem is the package's: npm (fixtures included), pypi or oci.
	Ecosystem string `json:"-"`
	// Name and Version identify the package the scan must report.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Integrity is the SRI sha512 of a packed fixture or of a static
	// capture's files; empty for a registry target, whose integrity the
	// registry states.
	Integrity string `json:"integrity,omitempty"`
	// Capture is the static capture of a capture:ID@VERSION target, scored
	// with no engine (see WithCaptures); nil for every other target.
	Capture *Capture `json:"-"`
}

// ResolveTarget turns the case's target into a scan target. A fixture is
// packed from corpusDir/fixtures/ID into tmpDir as a deterministic npm
// tarball; an npm target is returned as written, a PyPI target as
// pypi:NAME==VERSION, the package it names by its normalised name (the
// name a scan reports).
func (c Case) ResolveTarget(corpusDir, tmpDir string) (ScanTarget, error) {
	t, err := ParseTarget(c.Target)
	if err != nil {
		return ScanTarget{}, fmt.Errorf("case %s: %w", c.ID, err)
	}
	switch t.Scheme {
	case SchemeNPM:
		return ScanTarget{Arg: t.String(), Ecosystem: "npm", Name: t.Name, Version: t.Version}, nil
	case SchemePyPI:
		return ScanTarget{Arg: t.String(), Ecosystem: "pypi", Name: t.PackageName(), Version: t.Version}, nil
	case SchemeOCI:
		return ScanTarget{Arg: t.String(), Ecosystem: "oci", Name: t.Name, Version: t.Version}, nil
	case SchemeMCPB:
		// The manifest names the bundle; the scan must be of the file
		// with this digest.
		return ScanTarget{Arg: t.String(), Ecosystem: "mcpb", Integrity: t.Version}, nil
	case SchemeCapture:
		cp, err := ReadCapture(os.DirFS(corpusDir), t)
		if err != nil {
			return ScanTarget{}, fmt.Errorf("case %s: %w", c.ID, err)
		}
		return ScanTarget{Arg: t.String(), Ecosystem: CaptureSource, Name: cp.Name, Version: cp.Version, Integrity: cp.Integrity, Capture: cp}, nil
	}
	data, err := PackFixture(os.DirFS(corpusDir), t)
	if err != nil {
		return ScanTarget{}, fmt.Errorf("case %s: %w", c.ID, err)
	}
	file := filepath.Join(tmpDir, t.Name+"-"+t.Version+".tgz")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return ScanTarget{}, fmt.Errorf("case %s: write fixture tarball: %w", c.ID, err)
	}
	return ScanTarget{Arg: file, Ecosystem: "npm", Name: t.PackageName(), Version: t.Version, Integrity: Integrity(data)}, nil
}

// Integrity returns the SRI sha512 of data, the form npm and the evidence
// bundle use.
func Integrity(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// fixtureMTime is the modification time of every packed file, npm's own
// fixed date, so that the same sources always pack to the same bytes.
var fixtureMTime = time.Date(1985, 10, 26, 8, 15, 0, 0, time.UTC)

// fixtureManifest is what the harness reads of a fixture's package.json.
type fixtureManifest struct {
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Bin     json.RawMessage `json:"bin"`
}

// readFixture checks a fixture directory against its target and returns
// its manifest.
func readFixture(fsys fs.FS, t TargetRef) (string, fixtureManifest, error) {
	dir := path.Join(fixturesDir, t.Name)
	var m fixtureManifest
	data, err := fs.ReadFile(fsys, path.Join(dir, "package.json"))
	if err != nil {
		return dir, m, invalid("fixture %s: %w", t.Name, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return dir, m, invalid("fixture %s: package.json: %w", t.Name, err)
	}
	if want := t.PackageName(); m.Name != want {
		return dir, m, invalid("fixture %s: package.json names %q, want %q", t.Name, m.Name, want)
	}
	if m.Version != t.Version {
		return dir, m, invalid("fixture %s: package.json has version %q, but the target pins %s", t.Name, m.Version, t.Version)
	}
	return dir, m, nil
}

// checkFixture checks that a synthetic case's fixture exists and agrees
// with its target.
func (c Case) checkFixture(fsys fs.FS) error {
	t, err := ParseTarget(c.Target)
	if err != nil || t.Scheme != SchemeFixture {
		return nil // Validate reported it
	}
	if _, _, err := readFixture(fsys, t); err != nil {
		return c.errorf("target", err)
	}
	return nil
}

// fixtureServer is the fixtures' shared MCP server, packed as server.js
// into every fixture that has none of its own.
const fixtureServer = "server.js"

// PackFixture packs fixtures/ID of the corpus fsys into an npm tarball:
// every regular file under package/, with fixtures/server.js as
// package/server.js unless the fixture has its own, in byte order of path, with a fixed
// modification time, owner and mode (0755 for the package's bin entries,
// 0644 otherwise), gzip with no name or time. The same sources always give
// the same bytes, hence the same integrity.
func PackFixture(fsys fs.FS, t TargetRef) ([]byte, error) {
	if t.Scheme != SchemeFixture {
		return nil, &flaw{ErrTarget, fmt.Errorf("%s is not a fixture", t)}
	}
	dir, m, err := readFixture(fsys, t)
	if err != nil {
		return nil, err
	}
	bins := map[string]bool{}
	var one string
	var many map[string]string
	if json.Unmarshal(m.Bin, &one) == nil && one != "" {
		bins[path.Clean(one)] = true
	} else if json.Unmarshal(m.Bin, &many) == nil {
		for _, p := range many {
			bins[path.Clean(p)] = true
		}
	}
	type file struct {
		rel  string
		data []byte
	}
	var files []file
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: only regular files can be packed", p)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, file{strings.TrimPrefix(p, dir+"/"), data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pack fixture %s: %w", t.Name, err)
	}
	// The fixtures share one server (fixtures/server.js); a fixture that
	// brings its own keeps it.
	if !slices.ContainsFunc(files, func(f file) bool { return f.rel == fixtureServer }) {
		data, err := fs.ReadFile(fsys, path.Join(fixturesDir, fixtureServer))
		if err != nil {
			return nil, fmt.Errorf("pack fixture %s: the shared server: %w", t.Name, err)
		}
		files = append(files, file{fixtureServer, data})
	}
	// WalkDir visits in lexical order within a directory; sort the whole
	// list so the order does not depend on the directory layout.
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.rel, b.rel) })

	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		mode := int64(0o644)
		if bins[f.rel] {
			mode = 0o755
		}
		// The writer picks USTAR when it can, PAX for long names: a pure
		// function of the header, so still deterministic.
		h := &tar.Header{Typeflag: tar.TypeReg, Name: "package/" + f.rel, Mode: mode, Size: int64(len(f.data)), ModTime: fixtureMTime}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("pack fixture %s: %w", t.Name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("pack fixture %s: %w", t.Name, err)
		}
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return nil, fmt.Errorf("pack fixture %s: %w", t.Name, err)
	}
	return buf.Bytes(), nil
}

package pipeline

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/package-url/packageurl-go"

	"github.com/verifymcp/verifymcp/pkgspec"
)

// PyPI targets: pypi:REQUIREMENT, uvx:REQUIREMENT, pkg:pypi purls and
// local wheels and sdists.
//
// A requirement is a project name and an optional PEP 440 specifier set,
// as pip and uv read one: pypi:NAME (the latest release), pypi:NAME==1.2
// (exact; === too), pypi:NAME>=1.2,<2, pypi:NAME~=1.4. Target.Spec is
// what supplychain.(*PyPI).Resolve takes: "" for the latest release,
// "==V" or "===V" for an exact pin, else the specifier set with its
// clauses trimmed. Extras and environment markers are refused:
// verifymcp scans one package, with the dependencies its metadata
// declares, on the sandbox's own Python.

// pypiNameHeadRe reads the project name that starts a requirement.
var pypiNameHeadRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?`)

// parsePyPIRequirement reads "NAME[SPECIFIERS]" (after pypi: or uvx:)
// into t. scheme is "pypi" or "uvx"; uvx also takes NAME@VERSION (==) and
// NAME@latest.
func parsePyPIRequirement(t Target, scheme, s string) (Target, error) {
	bad := func(format string, args ...any) (Target, error) {
		return t, fmt.Errorf("%w: %q: "+format, append([]any{ErrBadTarget, t.Raw}, args...)...)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("no project name after %s:", scheme)
	}
	if strings.HasPrefix(s, "-") {
		return bad("%s options are not read (verifymcp scans one package from the index; write %s:NAME or %s:NAME==VERSION, and --index-url for a mirror)", scheme, scheme, scheme)
	}
	name := pypiNameHeadRe.FindString(s)
	if name == "" {
		return bad("%q does not start with a project name (ASCII letters, digits, and '.', '_', '-' between them)", s)
	}
	rest := strings.TrimSpace(s[len(name):])
	if err := pkgspec.ValidPyPIName(name); err != nil {
		return t, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	spec := ""
	switch {
	case strings.HasPrefix(rest, "["):
		return bad("extras (%s) are not scanned: verifymcp scans the package itself; drop the [...]", strings.SplitN(rest, "]", 2)[0]+"]")
	case strings.Contains(rest, ";"):
		return bad("environment markers (;%s) are not scanned: the sandbox has one Python and one platform; drop the ; and what follows", strings.SplitN(rest, ";", 2)[1])
	case strings.HasPrefix(rest, "@"):
		v := strings.TrimSpace(rest[1:])
		if scheme != "uvx" {
			return bad("NAME@... is not a version in a Python requirement (PEP 508 reads a URL after @); write %s:%s==VERSION", scheme, name)
		}
		switch {
		case v == "":
			return bad("an empty version after @")
		case v == "latest":
		case strings.ContainsAny(v, " \t=<>~,*/:"):
			return bad("%q after @ is not one version (uvx NAME@VERSION pins ==VERSION; write uvx:%s followed by a specifier set for a range)", v, name)
		default:
			spec = "==" + v
		}
	case rest == "":
	default:
		if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
			rest = strings.TrimSpace(rest[1 : len(rest)-1]) // PEP 508's name (>=1.0)
		}
		if !strings.ContainsAny(rest[:1], "=<>!~") {
			return bad("%q after the name is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2); a command or arguments after the package are not read: the entry point is chosen by the rule or --bin, arguments go in --arg", rest)
		}
		clauses := strings.Split(rest, ",")
		for i, c := range clauses {
			c = strings.TrimSpace(c)
			op, v, ok := pkgspec.SplitClause(c)
			if !ok {
				if c == "" {
					return bad("the specifier set %q has an empty clause", rest)
				}
				return bad("%q is not a version specifier (want ==VERSION, or a PEP 440 set such as >=1.2,<2 or ~=1.4)", c)
			}
			clauses[i] = op + v
		}
		spec = strings.Join(clauses, ",")
	}
	if spec != "" {
		if err := checkPyPISpec(name, spec); err != nil {
			return bad("%v", err)
		}
	}
	t.Ecosystem, t.Name, t.Spec = "pypi", name, spec
	return t, nil
}

// checkPyPISpec checks a specifier as the resolver will read it
// (pkgspec.ParseVersionSpec, which supplychain's resolver reads too), and
// says what is wrong in the resolver's words.
func checkPyPISpec(name, spec string) error {
	spec = strings.TrimSpace(spec)
	if _, err := pkgspec.ParseVersionSpec(spec); err != nil {
		// "invalid requirement: x" reads better without the sentinel's words.
		msg := strings.Replace(err.Error(), pkgspec.ErrBadRequirement.Error()+": ", "", 1)
		return fmt.Errorf("%s %q: %s", pkgspec.NormalizePyPIName(name), spec, msg)
	}
	return nil
}

// parsePyPIPurl reads a pkg:pypi purl (packageurl-go has normalised the
// name: lower case, '_' as '-').
func parsePyPIPurl(t Target, s string, p packageurl.PackageURL) (Target, error) {
	for _, q := range p.Qualifiers {
		if q.Key == "repository_url" && publicPyPIIndex(q.Value) {
			continue
		}
		why := qualifierRefusal(q.Key)
		switch q.Key {
		case "repository_url":
			why = "names another index; scan it with --index-url and a purl without the qualifier"
		case "file_name":
			why = "names one distribution file; verifymcp installs the release from the index (or scan the local wheel or sdist)"
		case "download_url":
			why = "names a file outside the index; download it and scan the local wheel or sdist"
		}
		return t, fmt.Errorf("%w: purl %q: qualifier %s=%s %s", ErrUnsupported, s, q.Key, q.Value, why)
	}
	if p.Subpath != "" {
		return t, fmt.Errorf("%w: purl %q: subpath %s names a file inside the package; verifymcp scans whole packages (drop the #subpath)", ErrUnsupported, s, p.Subpath)
	}
	if p.Namespace != "" {
		return t, fmt.Errorf("%w: purl %q: a pypi purl has no namespace (%s/)", ErrBadTarget, s, p.Namespace)
	}
	if err := pkgspec.ValidPyPIName(p.Name); err != nil {
		return t, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	spec := ""
	if p.Version != "" {
		if strings.ContainsAny(p.Version, " \t=<>~,*") {
			return t, fmt.Errorf("%w: purl %q: version %q is not one version (a purl names an exact release)", ErrBadTarget, s, p.Version)
		}
		spec = "==" + p.Version
		if err := checkPyPISpec(p.Name, spec); err != nil {
			return t, fmt.Errorf("%w: purl %q: %v", ErrBadTarget, s, err)
		}
	}
	t.Ecosystem, t.Name, t.Spec = "pypi", p.Name, spec
	return t, nil
}

// publicPyPIIndex reports whether a purl's repository_url names the
// public index, the purl spec's default for pypi: https://pypi.org, its
// simple API (/simple) or its JSON API (/pypi).
func publicPyPIIndex(v string) bool {
	if !strings.Contains(v, "://") {
		v = "https://" + v
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return false
	}
	host := strings.ToLower(u.Host)
	switch strings.TrimSuffix(u.Path, "/") {
	case "", "/simple", "/pypi":
	default:
		return false
	}
	return host == "pypi.org" || host == "www.pypi.org" || host == "pypi.python.org"
}

// localDist is a local Python distribution: a wheel or an sdist.
type localDist struct {
	// kind is "wheel" or "sdist".
	kind string
	// name and version as its metadata spells them.
	name, version string
	// sha256 is the hex digest of the file, the form the index gives.
	sha256 string
	data   []byte
	// metadata is the core metadata file: the wheel's
	// *.dist-info/METADATA, the sdist's PKG-INFO.
	metadata []byte
}

// wheelNameRe is a wheel's file name (the binary distribution format):
// {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl.
var wheelNameRe = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([^-]+)(?:-([0-9][^-]*))?-([^-]+)-([^-]+)-([^-]+)\.whl$`)

// readWheel reads a local wheel: name and version from its file name,
// which must agree with its *.dist-info/METADATA (PEP 503 names; the
// version with '-' escaped as '_'), and its sha256.
func readWheel(path string) (localDist, error) {
	fail := func(format string, args ...any) (localDist, error) {
		return localDist{}, fmt.Errorf("%w: %s: "+format, append([]any{ErrBadTarget, path}, args...)...)
	}
	m := wheelNameRe.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return fail("not a wheel file name (NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl)")
	}
	fileName, fileVersion := m[1], m[2]
	data, err := os.ReadFile(path)
	if err != nil {
		return localDist{}, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fail("not a zip archive: %v", err)
	}
	var meta []byte
	for _, f := range zr.File {
		dir, base, ok := strings.Cut(f.Name, "/")
		if !ok || base != "METADATA" || !strings.HasSuffix(dir, ".dist-info") {
			continue
		}
		if meta != nil {
			return fail("more than one *.dist-info/METADATA")
		}
		rc, err := f.Open()
		if err != nil {
			return fail("%s: %v", f.Name, err)
		}
		meta, err = io.ReadAll(io.LimitReader(rc, 16<<20))
		rc.Close()
		if err != nil {
			return fail("%s: %v", f.Name, err)
		}
	}
	if meta == nil {
		return fail("no *.dist-info/METADATA at its top")
	}
	name, version, err := coreMetadata(meta)
	if err != nil {
		return fail("METADATA: %v", err)
	}
	if pkgspec.NormalizePyPIName(name) != pkgspec.NormalizePyPIName(fileName) {
		return fail("the file name says %s, its METADATA %s", fileName, name)
	}
	if strings.ReplaceAll(version, "-", "_") != fileVersion {
		return fail("the file name says version %s, its METADATA %s", fileVersion, version)
	}
	sum := sha256.Sum256(data)
	return localDist{kind: "wheel", name: name, version: version, sha256: hex.EncodeToString(sum[:]), data: data, metadata: meta}, nil
}

// readSdist reads a local source distribution, a .tar.gz (or a legacy
// .zip) with PKG-INFO in its one top directory: name and version from
// PKG-INFO, and its sha256.
func readSdist(path string) (localDist, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return localDist{}, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	meta, err := sdistPKGInfo(path, data)
	if err != nil {
		return localDist{}, err
	}
	if meta == nil {
		return localDist{}, fmt.Errorf("%w: %s: no PKG-INFO at its top: not a Python sdist", ErrBadTarget, path)
	}
	name, version, err := coreMetadata(meta)
	if err != nil {
		return localDist{}, fmt.Errorf("%w: %s: PKG-INFO: %v", ErrBadTarget, path, err)
	}
	sum := sha256.Sum256(data)
	return localDist{kind: "sdist", name: name, version: version, sha256: hex.EncodeToString(sum[:]), data: data, metadata: meta}, nil
}

// readLocalDist reads a local wheel or sdist, by its file name.
func readLocalDist(path string) (localDist, error) {
	if strings.HasSuffix(strings.ToLower(path), ".whl") {
		return readWheel(path)
	}
	return readSdist(path)
}

// sdistPKGInfo returns <top>/PKG-INFO of a .tar.gz or .zip archive, nil
// when it has none.
func sdistPKGInfo(path string, data []byte) ([]byte, error) {
	atTop := func(name string) bool {
		parts := strings.Split(strings.TrimPrefix(name, "./"), "/")
		return len(parts) == 2 && parts[0] != "" && parts[1] == "PKG-INFO"
	}
	if strings.HasSuffix(strings.ToLower(path), ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, fmt.Errorf("%w: %s is not a zip archive: %v", ErrBadTarget, path, err)
		}
		for _, f := range zr.File {
			if !atTop(f.Name) {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrBadTarget, path, err)
			}
			defer rc.Close()
			return readMeta(path, rc)
		}
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a gzip tarball: %v", ErrBadTarget, path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadTarget, path, err)
		}
		if h.Typeflag == tar.TypeReg && atTop(h.Name) {
			return readMeta(path, tr)
		}
	}
}

func readMeta(path string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: PKG-INFO: %v", ErrBadTarget, path, err)
	}
	return b, nil
}

// isSdist reports whether the local .tar.gz at path is a Python sdist
// (PKG-INFO in its top directory) rather than an npm tarball
// (package.json there). One that cannot be read is left to the npm
// reader, which says why.
func isSdist(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	meta, err := sdistPKGInfo(path, data)
	return err == nil && meta != nil
}

// coreMetadata reads Name and Version of a core metadata file (METADATA,
// PKG-INFO: RFC 822 headers).
func coreMetadata(meta []byte) (name, version string, err error) {
	// A body (the description) may follow; the headers end at the first
	// blank line. mail.ReadMessage wants one even when there is no body.
	msg, err := mail.ReadMessage(io.MultiReader(bytes.NewReader(meta), strings.NewReader("\r\n\r\n")))
	if err != nil {
		return "", "", fmt.Errorf("not core metadata: %v", err)
	}
	name, version = strings.TrimSpace(msg.Header.Get("Name")), strings.TrimSpace(msg.Header.Get("Version"))
	if err := pkgspec.ValidPyPIName(name); err != nil {
		return "", "", fmt.Errorf("Name: %v", err)
	}
	if version == "" || strings.ContainsAny(version, " \t/\\") {
		return "", "", fmt.Errorf("no valid Version (%q)", version)
	}
	return name, version, nil
}

// parseLocalDist reads a local wheel or sdist target into t.
func parseLocalDist(t Target, path string) (Target, error) {
	if _, err := os.Stat(path); err != nil {
		return t, fmt.Errorf("%w: local distribution %s: %v", ErrBadTarget, path, err)
	}
	d, err := readLocalDist(path)
	if err != nil {
		return t, err
	}
	t.Ecosystem, t.File, t.Name, t.Spec = "pypi", path, d.name, "=="+d.version
	return t, nil
}

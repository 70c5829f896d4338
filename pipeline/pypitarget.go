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
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/verifymcp/verifymcp/pkgspec"
)

// PyPI targets: pypi:REQUIREMENT, uvx:REQUIREMENT and pkg:pypi purls
// are pkgspec's (ParseRequirement, ParsePurl); local wheels and sdists
// are read here.

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

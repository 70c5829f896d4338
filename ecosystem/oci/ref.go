package oci

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
)

// ErrBadRef is a target that is not a valid image reference. Every error
// ParseRef returns is a *RefError that matches it with errors.Is.
var ErrBadRef = errors.New("bad image reference")

// RefError is a target ParseRef refused, and why.
type RefError struct {
	Raw    string
	Reason string
}

func (e *RefError) Error() string { return e.Raw + ": " + e.Reason }

// Is makes every RefError match ErrBadRef.
func (e *RefError) Is(target error) bool { return target == ErrBadRef }

// The transports an image target names.
const (
	// TransportRegistry is an image the engine pulls from its registry
	// (oci:, docker:, docker://).
	TransportRegistry = "registry"
	// TransportDaemon is an image already in the local engine
	// (docker-daemon:).
	TransportDaemon = "daemon"
	// TransportLayout is an OCI image layout directory (oci-layout:),
	// for air-gapped use: it is turned into an archive with LayoutArchive
	// and loaded into the engine, with no registry asked.
	TransportLayout = "layout"
)

// Ref is a parsed image target.
type Ref struct {
	// Raw is the target as written.
	Raw string
	// Transport is TransportRegistry, TransportDaemon or TransportLayout.
	Transport string
	// Name is the repository in normalised form (docker.io/library/x);
	// "" for a layout.
	Name string
	// Familiar is the reference as docker shows it (x:latest,
	// ghcr.io/acme/x@sha256:...); "" for a layout.
	Familiar string
	// Tag and Digest are what the reference names: either, both
	// (NAME:TAG@DIGEST, where the digest decides), or, for a layout, none
	// (its only image).
	Tag    string
	Digest string
	// DefaultTag is true when the reference named neither a tag nor a
	// digest and Tag is "latest" because docker reads it so.
	DefaultTag bool
	// Path is the layout directory (cleaned); "" for other transports.
	Path string
}

// ParseRef reads an image target:
//
//	oci:REF, docker:REF, docker://REF   an image in a registry
//	docker-daemon:NAME[:TAG|@DIGEST]    an image already in the local engine
//	oci-layout:DIR[:TAG|@DIGEST]        an OCI image layout directory
//
// REF and NAME are docker references (x, acme/x:1, ghcr.io/acme/x@sha256:…)
// and are read as docker reads them, with github.com/distribution/reference.
// In a layout target, the part after the last '@' is a digest and the
// part after a ':' that follows the last '/' is a tag (the value of the
// org.opencontainers.image.ref.name annotation), so a directory whose
// last element holds ':' must be written with a trailing '/'.
func ParseRef(raw string) (Ref, error) {
	bad := func(reason string) (Ref, error) { return Ref{}, &RefError{Raw: raw, Reason: reason} }
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok {
		return bad("not an image target: want oci:, docker:, docker-daemon: or oci-layout: in front")
	}
	r := Ref{Raw: raw}
	switch scheme {
	case "oci", "docker":
		r.Transport = TransportRegistry
		if scheme == "docker" {
			rest = strings.TrimPrefix(rest, "//")
		}
	case "docker-daemon":
		r.Transport = TransportDaemon
	case "oci-layout":
		r.Transport = TransportLayout
		return parseLayoutRef(r, rest)
	default:
		return bad("unknown transport " + scheme + ": want oci:, docker:, docker-daemon: or oci-layout:")
	}
	if rest == "" {
		return bad("no image named")
	}
	if d, ok := strings.CutPrefix(rest, "sha256:"); ok && !strings.ContainsAny(d, "/:@") {
		return bad("an image ID is not a reference: name the image (NAME@sha256:...)")
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		if why := checkDigest(rest[i+1:]); why != "" {
			return bad(why)
		}
	}
	named, err := reference.ParseNormalizedNamed(rest)
	if err != nil {
		// distribution/reference wraps its sentinels in text only; a name
		// that parses lower-cased was refused for its case.
		if _, lerr := reference.ParseNormalizedNamed(strings.ToLower(rest)); lerr == nil {
			return bad("repository name must be lowercase")
		}
		return bad(refReason(err))
	}
	r.Name = named.Name()
	if t, ok := named.(reference.Tagged); ok {
		r.Tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		r.Digest = d.Digest().String()
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag, r.DefaultTag = "latest", true
		named = reference.TagNameOnly(named)
	}
	r.Familiar = reference.FamiliarString(named)
	return r, nil
}

// parseLayoutRef reads DIR[:TAG|@DIGEST].
func parseLayoutRef(r Ref, rest string) (Ref, error) {
	bad := func(reason string) (Ref, error) { return Ref{}, &RefError{Raw: r.Raw, Reason: reason} }
	dir := rest
	slash := strings.LastIndexByte(rest, '/')
	if i := strings.LastIndexByte(rest, '@'); i > slash {
		dir, r.Digest = rest[:i], rest[i+1:]
		if err := checkDigest(r.Digest); err != "" {
			return bad(err)
		}
	} else if i := strings.LastIndexByte(rest, ':'); i > slash {
		dir, r.Tag = rest[:i], rest[i+1:]
		if r.Tag == "" {
			return bad("empty tag after ':'")
		}
	}
	if dir == "" {
		return bad("empty directory: want oci-layout:DIR[:TAG|@DIGEST]")
	}
	r.Path = filepath.Clean(dir)
	return r, nil
}

// checkDigest is why d is not a digest an image can be pinned by, or "".
func checkDigest(d string) string {
	dg, err := digest.Parse(d)
	if err != nil || dg.Algorithm() != digest.SHA256 {
		return "bad digest " + d + ": want sha256:<64 lower-case hex digits>"
	}
	return ""
}

// refReason is distribution/reference's error in the words a user needs.
func refReason(err error) string {
	switch {
	case errors.Is(err, reference.ErrTagInvalidFormat):
		return "bad tag: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'"
	case errors.Is(err, reference.ErrNameTooLong):
		return "repository name is too long"
	case errors.Is(err, reference.ErrNameEmpty):
		return "repository name must have at least one component"
	default:
		return err.Error()
	}
}

package image

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
)

// Image repositories and the labels the builder puts on its images.
const (
	// SandboxRepo is the repository of the sandbox image; the tag is the
	// first 12 hex digits of the recipe hash.
	SandboxRepo = "verifymcp-sandbox"
	// BaseRepo is the repository of bootstrapped Debian bases, tagged by the
	// hash of the base part of the recipe only, so that changes above the
	// base do not run debootstrap again.
	BaseRepo = "verifymcp-base"

	// LabelImage says which kind of verifymcp image this is: "sandbox" or "base".
	LabelImage = "verifymcp.image"
	// LabelRecipe carries the full recipe hash of a sandbox image.
	LabelRecipe = "verifymcp.recipe"
	// LabelBase says which base a sandbox image was built on (Image.Base).
	LabelBase = "verifymcp.base"
	// LabelBaseRecipe carries the full base-recipe hash of a bootstrapped base.
	LabelBaseRecipe = "verifymcp.base-recipe"
	// LabelPython carries the version of the CPython a sandbox image has
	// (its Debian python3), as the recipe pins it and the build checks.
	LabelPython = "verifymcp.python"
)

// Defaults for Options.
const (
	DefaultNPMRegistry  = "https://registry.npmjs.org"
	DefaultDebianMirror = "http://deb.debian.org/debian"
)

// basePullIdle bounds how long a base pull may go without any progress
// before the builder gives up on registries and bootstraps the base. An
// engine with no registry fails at once (DNS); this catches the ones that
// hang instead.
const basePullIdle = 30 * time.Second

// downloadTimeout bounds one package download, so a registry that stops
// answering fails the build instead of hanging it.
const downloadTimeout = 10 * time.Minute

// maxPackageBytes bounds a downloaded npm tarball, so a misbehaving mirror
// cannot fill the disk before the integrity check runs.
const maxPackageBytes = 512 << 20

// Options configures how the sandbox image is built. The zero value
// builds from the public npm registry and Debian mirror and prints nothing.
type Options struct {
	// NPMRegistry is the base URL of the npm registry (or a mirror that keeps
	// its tarball layout) the node and npm packages are downloaded from.
	NPMRegistry string
	// DebianMirror is the Debian archive the base packages come from, for
	// debootstrap and for apt on a pulled base.
	DebianMirror string
	// Progress receives one line per build step, with its duration.
	Progress io.Writer
	// HTTPClient downloads the packages; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Image identifies the sandbox image on the engine.
type Image struct {
	// Ref is the tag, SandboxRepo:<first 12 hex of RecipeHash>.
	Ref string
	// ID is the content-addressed image ID ("sha256:..."), which reports
	// record as the sandbox image digest.
	ID string
	// RecipeHash is the full hex SHA-256 of the embedded recipe.
	RecipeHash string
	// Base is how the Debian base was obtained:
	// "pulled:debian:bookworm-slim" or "bootstrapped:verifymcp-base:<hash>".
	Base string
	// Python is the version of the image's CPython (LabelPython).
	Python string
}

// IntegrityError reports a downloaded package whose digest differs from the
// integrity pinned in the recipe.
type IntegrityError struct {
	URL  string
	Want string // the pinned SRI string
	Got  string // the digest of what was served, in the same algorithm
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("integrity mismatch for %s: pinned %s, got %s", e.URL, e.Want, e.Got)
}

// Ref returns the tag of the sandbox image the embedded recipe describes.
func Ref() string { return embeddedRecipe().ref() }

// Inspect reports whether the sandbox image for the embedded recipe is
// present on the engine. An image carrying the tag but another recipe label
// is not the recipe's image and counts as absent.
func Inspect(ctx context.Context, cli client.APIClient) (Image, bool, error) {
	return inspectSandbox(ctx, cli, embeddedRecipe())
}

// Ensure returns the sandbox image for the embedded recipe, building it
// only when the engine does not have it. built says whether it was built.
func Ensure(ctx context.Context, cli client.APIClient, opts Options) (Image, bool, error) {
	r := embeddedRecipe()
	img, ok, err := inspectSandbox(ctx, cli, r)
	if err != nil {
		return Image{}, false, err
	}
	if ok {
		fmt.Fprintf(progressOut(opts), "sandbox image %s is present (%s, base %s)\n", img.Ref, img.ID, img.Base)
		return img, false, nil
	}
	img, err = buildSandbox(ctx, cli, opts, r)
	if err != nil {
		return Image{}, false, err
	}
	return img, true, nil
}

// Build builds the sandbox image for the embedded recipe whether or not
// the engine has it, reusing a cached bootstrapped base.
func Build(ctx context.Context, cli client.APIClient, opts Options) (Image, error) {
	return buildSandbox(ctx, cli, opts, embeddedRecipe())
}

func inspectSandbox(ctx context.Context, cli client.APIClient, r *recipe) (Image, bool, error) {
	ref := r.ref()
	resp, err := cli.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		return Image{}, false, nil
	}
	if err != nil {
		return Image{}, false, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	if resp.Config == nil || resp.Config.Labels[LabelRecipe] != r.hash {
		return Image{}, false, nil
	}
	return Image{Ref: ref, ID: resp.ID, RecipeHash: r.hash, Base: resp.Config.Labels[LabelBase], Python: resp.Config.Labels[LabelPython]}, true, nil
}

// arch names one engine architecture in the spellings the recipe needs.
type platformNames struct {
	node   string // npm node package suffix: x64, arm64
	debian string // debootstrap --arch
	goarch string // runtime.GOARCH of a host that can bootstrap it natively
}

func engineArch(info string) (platformNames, error) {
	switch info {
	case "x86_64", "amd64":
		return platformNames{node: "x64", debian: "amd64", goarch: "amd64"}, nil
	case "aarch64", "arm64":
		return platformNames{node: "arm64", debian: "arm64", goarch: "arm64"}, nil
	}
	return platformNames{}, fmt.Errorf("engine architecture %q is not supported (x86_64 and aarch64 are)", info)
}

// baseChoice is the base the Dockerfile builds FROM.
type baseChoice struct {
	from string // image reference for FROM
	desc string // Image.Base
	apt  bool   // the recipe packages still need installing
}

package image

import (
	"context"
	"fmt"
	"strings"

	"github.com/docker/docker/client"
)

// Variant is one image the embedded recipe describes: the default, or
// the variant built on another Debian release for its python3.
type Variant struct {
	// Python is the CPython version, X.Y.Z, as the recipe pins it.
	Python string
	// Ref is the tag of the image.
	Ref string
}

// Variants returns the images the embedded recipe describes, the default
// (that of Ref) first.
func Variants() []Variant {
	var out []Variant
	for _, r := range embeddedRecipe().images() {
		out = append(out, Variant{Python: r.python, Ref: r.ref()})
	}
	return out
}

// pythonRecipe is the recipe of the image that offers version (X.Y.Z or
// X.Y).
func pythonRecipe(version string) (*recipe, error) {
	var offered []string
	for _, r := range embeddedRecipe().images() {
		if r.python == version || majorMinor(r.python) == version {
			return r, nil
		}
		offered = append(offered, r.python)
	}
	return nil, fmt.Errorf("the sandbox offers no Python %s (it offers %s)", version, strings.Join(offered, ", "))
}

// EnsurePython is Ensure for the image that offers Python version (X.Y.Z
// or X.Y).
func EnsurePython(ctx context.Context, cli client.APIClient, opts Options, version string) (Image, bool, error) {
	r, err := pythonRecipe(version)
	if err != nil {
		return Image{}, false, err
	}
	img, ok, err := inspectSandbox(ctx, cli, r)
	if err != nil {
		return Image{}, false, err
	}
	if ok {
		fmt.Fprintf(progressOut(opts), "sandbox image %s is present (%s, base %s)\n", img.Ref, img.ID, img.Base)
		return img, false, nil
	}
	img, err = buildSandbox(ctx, cli, opts, r)
	return img, err == nil, err
}

// BuildPython is Build for the image that offers Python version.
func BuildPython(ctx context.Context, cli client.APIClient, opts Options, version string) (Image, error) {
	r, err := pythonRecipe(version)
	if err != nil {
		return Image{}, err
	}
	return buildSandbox(ctx, cli, opts, r)
}

// InspectPython is Inspect for the image that offers Python version.
func InspectPython(ctx context.Context, cli client.APIClient, version string) (Image, bool, error) {
	r, err := pythonRecipe(version)
	if err != nil {
		return Image{}, false, err
	}
	return inspectSandbox(ctx, cli, r)
}

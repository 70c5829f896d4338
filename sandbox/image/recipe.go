package image

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"
	"text/template"
)

// The sandbox image is built from the recipe embedded here: a Dockerfile
// template, the pinned node and npm packages with their integrity, the base
// choice and the Debian package list. Its hash names the image, so a binary
// always runs scans in the image its own recipe describes.
//
//go:embed recipe
var recipeFiles embed.FS

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
	// Pythons are the other interpreters offered (see sandbox/pyinterp.go): each
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

// Package mcpbrun is the scan's part of the MCPB ecosystem: it reads
// bundle targets (pipeline.ShippedEcosystem) and runs a bundle's server as
// a desktop client would (sandbox.Shipped): the bundle unpacked as
// shipped, its manifest's command with every setting the user would fill
// given a placeholder (a sensitive one masked like an --env value), on
// the sandbox image, which has the node and python3 a client offers.
package mcpbrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pkgspec"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// Where a bundle is unpacked in the run container, and the scratch
// directory its directory and file settings point at (the tool calls'
// scratch, holding their decoys).
const (
	bundleDir = "/work/bundle"
	scratch   = mcpb.Home + "/work"
	// maxDownload bounds a bundle fetched by URL.
	maxDownload = 512 << 20
)

// Ecosystem is the MCPB ecosystem's pipeline part.
type Ecosystem struct {
	// Client fetches bundles named by URL (http.DefaultClient's transport
	// with a timeout when nil).
	Client *http.Client
}

// Name is "mcpb".
func (Ecosystem) Name() string { return mcpb.Ecosystem{}.Name() }

// Parse reads a bundle target: the path of a .mcpb (or .dxt) file, or
// mcpb:PATH or mcpb:URL, either ending in #sha256=HEX to name the digest
// the bundle must have. PATH may be a directory holding an unpacked
// bundle (see zipDir). The ref is the target, as mcpb:ABSOLUTE-PATH for a
// file or directory.
func (Ecosystem) Parse(raw string) (string, bool, error) {
	ref, explicit := strings.CutPrefix(raw, "mcpb:")
	loc, sum, _ := strings.Cut(ref, "#")
	if !explicit && !strings.HasSuffix(loc, ".mcpb") && !strings.HasSuffix(loc, ".dxt") {
		return "", false, nil
	}
	if loc == "" {
		return "", true, fmt.Errorf("%w: %q: no bundle path or URL after mcpb:", pkgspec.ErrBadTarget, raw)
	}
	if sum != "" {
		if _, err := expectedDigest(sum); err != nil {
			return "", true, fmt.Errorf("%w: %q: %v", pkgspec.ErrBadTarget, raw, err)
		}
	}
	if u, err := url.Parse(loc); err == nil && u.Scheme != "" && u.Scheme != "https" && u.Scheme != "http" && len(u.Scheme) > 1 {
		return "", true, fmt.Errorf("%w: %q: a bundle URL must be http or https", pkgspec.ErrBadTarget, raw)
	}
	if isURL(loc) {
		return raw, true, nil
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return "", true, fmt.Errorf("%w: %q: %v", pkgspec.ErrBadTarget, raw, err)
	}
	ref = "mcpb:" + abs
	if sum != "" {
		ref += "#" + sum
	}
	return ref, true, nil
}

// PinRef is ref pinned to digest (sha256:HEX), the bundle's file digest:
// mcpb:LOCATION#sha256=HEX (pipeline.RefPinner).
func (Ecosystem) PinRef(ref, digest string) string {
	loc, _, _ := strings.Cut(strings.TrimPrefix(ref, "mcpb:"), "#")
	hex, ok := strings.CutPrefix(digest, "sha256:")
	if !ok {
		return ref
	}
	return "mcpb:" + loc + "#sha256=" + hex
}

// isURL reports whether loc is an http(s) URL rather than a path.
func isURL(loc string) bool {
	return strings.HasPrefix(loc, "https://") || strings.HasPrefix(loc, "http://")
}

// Resolve reads the bundle (a file, or a download), checks it and its
// manifest, and makes the command a client would run.
func (e Ecosystem) Resolve(ctx context.Context, ref string) (*sandbox.Release, error) {
	loc, sum, _ := strings.Cut(strings.TrimPrefix(ref, "mcpb:"), "#")
	data, source, err := e.read(ctx, loc)
	if err != nil {
		return nil, err
	}
	b, err := mcpb.Open(bytes.NewReader(data), int64(len(data)), mcpb.Limits{})
	if err != nil {
		return nil, fmt.Errorf("%w: bundle %s: %w", pkgspec.ErrBadTarget, loc, err)
	}
	m := b.Manifest
	want := b.Digest
	if sum != "" {
		want, _ = expectedDigest(sum)
	}
	values, sensitive := mcpb.Placeholders(m, scratch)
	cmd, env, cerr := m.Command(bundleDir, values, "linux")
	var unresolved *mcpb.UnresolvedError
	switch {
	case errors.As(cerr, &unresolved):
	case cerr != nil:
		return nil, fmt.Errorf("%w: bundle %s: %w", pkgspec.ErrBadTarget, loc, cerr)
	}
	p := &prepare{bundle: b, loc: loc, source: source, want: want, cmd: cmd, env: env}
	if m.Server.Type == mcpb.TypeUV {
		if err := p.uvProject(); err != nil {
			return nil, err
		}
	}
	if source == "directory" {
		p.notes = append(p.notes, dirNote)
	}
	if unresolved != nil {
		p.notes = append(p.notes, "the manifest's command names variables no client defines, left as written: "+strings.Join(unresolved.Vars, ", "))
	}
	rel := &sandbox.Release{Name: m.Name, Version: m.Version, Integrity: want, Source: source, Kind: "bundle", Shipped: p}
	for _, k := range sensitive {
		for _, v := range values[k] {
			rel.Secrets = append(rel.Secrets, sandbox.Secret{Name: "config:" + k, Value: v})
		}
	}
	p.sensitive = sensitive
	return rel, nil
}

// Entry is the target an MCP registry package of type mcpb names: its
// identifier, the bundle's URL, with the fileSha256 the entry lists for
// it, which the bundle must have.
func (Ecosystem) Entry(pkg supplychain.RegistryPackage) (string, []string, error) {
	id := strings.TrimSpace(pkg.Identifier)
	if id == "" {
		return "", nil, fmt.Errorf("%w: the mcpb package has no identifier", pkgspec.ErrBadTarget)
	}
	if pkg.FileSHA256 == "" {
		return "mcpb:" + id, []string{"the mcpb package lists no fileSha256: the bundle's digest is not checked against the entry"}, nil
	}
	return "mcpb:" + id + "#sha256=" + strings.ToLower(pkg.FileSHA256), nil, nil
}

// read reads the bundle at loc: a file, or an http(s) URL.
func (e Ecosystem) read(ctx context.Context, loc string) ([]byte, string, error) {
	if isURL(loc) {
		c := e.Client
		if c == nil {
			c = &http.Client{Timeout: 2 * time.Minute}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
		if err != nil {
			return nil, "", fmt.Errorf("%w: bundle URL %s: %v", pkgspec.ErrBadTarget, loc, err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, "", fmt.Errorf("download bundle %s: %w", loc, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, "", fmt.Errorf("%w: download bundle %s: %s", pkgspec.ErrBadTarget, loc, resp.Status)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
		if err != nil {
			return nil, "", fmt.Errorf("download bundle %s: %w", loc, err)
		}
		if len(data) > maxDownload {
			return nil, "", fmt.Errorf("%w: bundle %s is larger than %d MiB", pkgspec.ErrBadTarget, loc, maxDownload>>20)
		}
		return data, "url", nil
	}
	st, err := os.Stat(loc)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("%w: bundle %s: %v", pkgspec.ErrBadTarget, loc, err)
	case st.IsDir():
		data, err := zipDir(loc, mcpb.Limits{})
		if err != nil {
			return nil, "", fmt.Errorf("%w: bundle %s: %w", pkgspec.ErrBadTarget, loc, err)
		}
		return data, "directory", nil
	case !st.Mode().IsRegular():
		return nil, "", fmt.Errorf("%w: bundle %s is not a file", pkgspec.ErrBadTarget, loc)
	case st.Size() > maxDownload:
		return nil, "", fmt.Errorf("%w: bundle %s is larger than %d MiB", pkgspec.ErrBadTarget, loc, maxDownload>>20)
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		return nil, "", fmt.Errorf("%w: bundle %s: %v", pkgspec.ErrBadTarget, loc, err)
	}
	return data, "file", nil
}

// expectedDigest reads sha256=HEX.
func expectedDigest(frag string) (string, error) {
	hex, ok := strings.CutPrefix(strings.ToLower(frag), "sha256=")
	if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return "", errors.New("the part after # must be sha256= and 64 hexadecimal digits")
	}
	return "sha256:" + hex, nil
}

// prepare runs one bundle (sandbox.Shipped).
type prepare struct {
	bundle      *mcpb.Bundle
	loc, source string
	want        string
	cmd         []string
	env         map[string]string
	sensitive   []string
	notes       []string
	// python is a uv bundle's project, whose dependencies are installed
	// before its server starts.
	python *sandbox.PyProject
}

// uvProject makes p run a uv bundle as a client does: `uv run` in the
// bundle's directory syncs a venv with the project's dependencies, then
// runs the entry point with its python. The sandbox installs them as a
// PyPI release's tree (resolved from the index, built and installed
// watched, with no network when the server runs) and runs the entry
// point, with the arguments the command gives after it, on the venv's
// python.
func (p *prepare) uvProject() error {
	b, m := p.bundle, p.bundle.Manifest
	proj, err := b.PyProject()
	switch {
	case errors.Is(err, mcpb.ErrUnsupportedProject):
		return fmt.Errorf("%w: uv bundle %s: %w", pkgspec.ErrUnsupported, p.loc, err)
	case err != nil:
		return fmt.Errorf("%w: bundle %s: %w", pkgspec.ErrBadTarget, p.loc, err)
	}
	p.python = &sandbox.PyProject{Name: proj.Name, Version: proj.Version, RequiresPython: proj.RequiresPython,
		Requirements: append(slices.Clone(proj.Dependencies), proj.Dev...)}
	if proj.NoProject {
		p.python.Name, p.python.Version = m.Name, m.Version
		p.notes = append(p.notes, "pyproject.toml has no [project] table: uv takes the directory for no project and installs nothing before it runs the entry point, and neither did the sandbox")
	}
	if proj.Package {
		// uv builds and installs the project itself, with the
		// dependencies its built metadata names.
		var sdist bytes.Buffer
		name, err := b.Sdist(&sdist, proj)
		if err != nil {
			return fmt.Errorf("bundle %s: %w", p.loc, err)
		}
		p.python.Sdist, p.python.SdistName, p.python.Requirements = sdist.Bytes(), name, slices.Clone(proj.Dev)
		p.notes = append(p.notes, "the project is a package: it was built from the bundle's files as "+name+" and installed with its dependencies, as uv installs it")
	}
	if len(p.cmd) > 0 && p.cmd[0] == "uv" {
		entry := path.Join(bundleDir, m.Server.EntryPoint)
		cmd := []string{"python", entry}
		for i, a := range p.cmd {
			if a == m.Server.EntryPoint || a == entry {
				cmd = append(cmd, p.cmd[i+1:]...)
				break
			}
		}
		p.notes = append(p.notes, "a client runs "+strings.Join(p.cmd, " ")+": what uv syncs for it was installed in the install phase, "+
			"and its entry point run with the venv's python, as uv runs it once it has synced")
		p.cmd = cmd
	}
	if proj.UVLock {
		p.notes = append(p.notes, "the bundle ships a uv.lock, which is not read: the dependencies were resolved from the index as a PyPI release's are")
	}
	return nil
}

// Prepare checks the bundle's digest and says how to start its server on
// the sandbox image, with the bundle's files unpacked read-only.
func (p *prepare) Prepare(_ context.Context, e sandbox.Engine) (*sandbox.Launch, error) {
	b, m := p.bundle, p.bundle.Manifest
	if p.want != b.Digest {
		return nil, fmt.Errorf("%w: bundle %s has digest %s, not the %s asked for", sandbox.ErrShipped, p.loc, b.Digest, p.want)
	}
	sh := &evidence.Shipped{Kind: "bundle", Digest: b.Digest, Reference: p.loc, Source: p.source, RanAs: "65534:65534",
		Cmd: p.cmd, WorkingDir: bundleDir, Notes: p.notes}
	man := &evidence.BundleManifest{ManifestVersion: m.Spec(), Name: m.Name, Version: m.Version, Author: m.Author.Name,
		ServerType: m.Server.Type, EntryPoint: m.Server.EntryPoint, Files: b.Files, UnpackedBytes: b.Unpacked,
		UserConfig: slices.Sorted(maps.Keys(m.UserConfig)), Sensitive: slices.Sorted(slices.Values(p.sensitive))}
	if c := m.Compatibility; c != nil {
		man.Platforms = c.Platforms
		if r := c.Runtimes; r != nil {
			man.Runtimes = map[string]string{}
			if r.Node != "" {
				man.Runtimes["node"] = r.Node
			}
			if r.Python != "" {
				man.Runtimes["python"] = r.Python
			}
		}
	}
	if len(man.Platforms) > 0 && !slices.Contains(man.Platforms, "linux") {
		sh.Notes = append(sh.Notes, "the manifest lists the platforms "+strings.Join(man.Platforms, ", ")+", not linux: it was run on linux all the same")
	}
	sh.Manifest = man
	sh.Declared = declared(m)
	if s := b.Signature; s != nil {
		sh.Signature = &evidence.ReleaseSignature{Present: s.Present, Format: s.Format, Verified: s.Verified, SelfSigned: s.SelfSigned,
			Trusted: s.Trusted, Signer: s.Signer, Issuer: s.Issuer, Reason: s.Reason}
	}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	if p.python != nil {
		env = nil // the venv's PATH
	}
	for _, k := range slices.Sorted(maps.Keys(p.env)) {
		env = append(env, k+"="+p.env[k])
		sh.EnvNames = append(sh.EnvNames, k)
	}
	lock := b.Lockfile()
	ig := evidence.Integrity{Expected: p.want, Computed: b.Digest, Match: p.want == b.Digest}
	return &sandbox.Launch{Image: e.Image, Cmd: p.cmd, Env: env, WorkDir: bundleDir, FilesAt: bundleDir,
		Files: func(w io.Writer) error { return b.WriteTar(w, "", 65534, 65534) }, Lockfile: lock,
		Packages: len(mcpb.Ecosystem{}.TreePurls(lock, "")), Integrity: ig, Shipped: sh, Python: p.python}, nil
}

// declared is the surface the manifest declares: nil lists for a kind it
// has no key for.
func declared(m *mcpb.Manifest) *evidence.DeclaredSurface {
	d := &evidence.DeclaredSurface{Source: "manifest.json", ToolsGenerated: m.ToolsGenerated, PromptsGenerated: m.PromptsGenerated}
	if m.Tools != nil {
		d.Tools = []string{}
		for _, t := range m.Tools {
			d.Tools = append(d.Tools, t.Name)
		}
	}
	if m.Prompts != nil {
		d.Prompts = []string{}
		for _, p := range m.Prompts {
			d.Prompts = append(d.Prompts, p.Name)
		}
	}
	return d
}

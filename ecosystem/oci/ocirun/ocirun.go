// Package ocirun is the scan's part of the OCI ecosystem: it reads image
// targets (pipeline.ShippedEcosystem) and makes an image ready to run in
// the sandbox (sandbox.Shipped): pulled from its registry with the
// operator's docker credentials, taken from the engine, or loaded from an
// OCI image layout; its digest checked, its configuration recorded and its
// filesystem read for the packages it holds. The image then runs as it
// ships, its own entrypoint and command, under the sandbox's hardening.
package ocirun

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/ecosystem/oci/imagefs"
	"github.com/verifymcp/verifymcp/internal/atomicfile"

	"github.com/distribution/reference"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"

	credclient "github.com/docker/docker-credential-helpers/client"
	"github.com/docker/docker-credential-helpers/credentials"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/verifymcp/verifymcp/ecosystem/oci"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pkgspec"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// Ecosystem is the OCI ecosystem's pipeline part.
type Ecosystem struct{}

// Name is "oci".
func (Ecosystem) Name() string { return oci.Ecosystem{}.Name() }

// Parse reads oci:REF, docker:REF, docker-daemon:NAME and
// oci-layout:DIR targets (see oci.ParseRef).
func (Ecosystem) Parse(raw string) (string, bool, error) {
	if !isRef(raw) {
		return "", false, nil
	}
	ref, err := oci.ParseRef(raw)
	if err != nil {
		return "", true, fmt.Errorf("%w: %w", pkgspec.ErrBadTarget, err)
	}
	if ref.Transport == oci.TransportLayout && !filepath.IsAbs(ref.Path) {
		// The directory from any working directory (a fleet worker's).
		abs, err := filepath.Abs(ref.Path)
		if err != nil {
			return "", true, fmt.Errorf("%w: %q: %v", pkgspec.ErrBadTarget, raw, err)
		}
		sel := ""
		switch {
		case ref.Digest != "":
			sel = "@" + ref.Digest
		case ref.Tag != "":
			sel = ":" + ref.Tag
		}
		return "oci-layout:" + abs + "/" + sel, true, nil
	}
	return raw, true, nil
}

// Resolve reads the reference; the engine resolves its digest when it
// pulls or loads it.
func (Ecosystem) Resolve(_ context.Context, raw string) (*sandbox.Release, error) {
	ref, err := oci.ParseRef(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pkgspec.ErrBadTarget, err)
	}
	name, version := ref.Name, cmp.Or(ref.Digest, ref.Tag)
	if ref.Transport == oci.TransportLayout {
		if st, err := os.Stat(ref.Path); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: %s: not an OCI image layout directory", pkgspec.ErrBadTarget, ref.Path)
		}
		// A layout names no repository: the image is the directory's,
		// and exactly the manifest its selector picks, every blob of
		// which is read and checked here.
		img, err := oci.LayoutArchive(ref.Path, cmp.Or(ref.Digest, ref.Tag), io.Discard)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", pkgspec.ErrBadTarget, err)
		}
		name, version = filepath.Base(ref.Path), img.ManifestDigest
	}
	rel := &sandbox.Release{Name: name, Version: version, Integrity: ref.Digest, Kind: "image",
		Source: ref.Transport, Shipped: &prepare{ref: ref}}
	if ref.Transport == oci.TransportRegistry {
		rel.Registry = domain(ref)
	}
	return rel, nil
}

// Entry is the reference an MCP registry package of type oci names: its
// identifier (a full reference; older entries give the tag as version).
func (Ecosystem) Entry(pkg supplychain.RegistryPackage) (string, []string, error) {
	id := strings.TrimSpace(pkg.Identifier)
	if id == "" {
		return "", nil, fmt.Errorf("%w: the oci package has no identifier", pkgspec.ErrBadTarget)
	}
	var notes []string
	if !strings.ContainsAny(id[strings.LastIndex(id, "/")+1:], ":@") && pkg.Version != "" {
		id += ":" + pkg.Version
		notes = append(notes, "the oci package names its tag as version "+pkg.Version)
	}
	if b := strings.TrimSuffix(pkg.RegistryBaseURL, "/"); b != "" && !strings.Contains(id, "/") {
		host := strings.TrimPrefix(strings.TrimPrefix(b, "https://"), "http://")
		id = host + "/" + id
	}
	return "oci:" + id, notes, nil
}

// prepare makes one image ready to run (sandbox.Shipped).
type prepare struct{ ref oci.Ref }

// Prepare pulls, takes or loads the image, checks its digest, records its
// configuration and reads the packages it holds.
func (p *prepare) Prepare(ctx context.Context, e sandbox.Engine) (*sandbox.Launch, error) {
	sh := &evidence.Shipped{Kind: "image", Source: p.ref.Transport, RanAs: "65534:65534"}
	var id string
	switch p.ref.Transport {
	case oci.TransportLayout:
		img, loaded, err := load(ctx, e.Client, p.ref)
		if err != nil {
			return nil, err
		}
		id, sh.Digest, sh.Reference = loaded, img.ManifestDigest, "oci-layout:"+p.ref.Path+"@"+img.ManifestDigest
	case oci.TransportDaemon:
		id = p.ref.Familiar
	default:
		if err := pull(ctx, e.Client, p.ref); err != nil {
			return nil, err
		}
		id = pullRef(p.ref)
	}
	info, err := e.Client.ImageInspect(ctx, id)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("%w: image %s is not on the engine", sandbox.ErrShipped, p.ref.Raw)
		}
		return nil, fmt.Errorf("inspect image %s: %w", p.ref.Raw, err)
	}
	sh.ImageID = info.ID
	if p.ref.Transport != oci.TransportLayout {
		sh.Digest, sh.Reference = repoDigest(info.RepoDigests, p.ref)
		if p.ref.Digest != "" && sh.Digest != p.ref.Digest {
			return nil, fmt.Errorf("%w: image %s: the engine holds digest %q, not the one asked for", sandbox.ErrShipped, p.ref.Raw, sh.Digest)
		}
		if sh.Digest == "" {
			// A local image that was never pushed has no registry digest:
			// its identity is its configuration's.
			sh.Digest, sh.Reference = info.ID, p.ref.Familiar
			sh.Notes = append(sh.Notes, "the image has no registry digest (never pushed or pulled); it is identified by its configuration's digest")
		}
	}
	if sh.Digest != "" && p.ref.Transport != oci.TransportLayout && strings.HasPrefix(sh.Reference, p.ref.Name+"@") {
		sh.Resolved = "oci:" + sh.Reference
	}
	if info.RootFS.Layers != nil {
		sh.Layers = slices.Clone(info.RootFS.Layers)
	}
	cfg := info.Config
	if cfg == nil {
		return nil, fmt.Errorf("%w: image %s has no configuration", sandbox.ErrShipped, p.ref.Raw)
	}
	sh.Entrypoint, sh.Cmd, sh.WorkingDir, sh.User = slices.Clone(cfg.Entrypoint), slices.Clone(cfg.Cmd), cfg.WorkingDir, cfg.User
	sh.RootUser = oci.RunsAsRoot(cfg.User)
	sh.EnvNames = envNames(cfg.Env)
	for port := range cfg.ExposedPorts {
		sh.Ports = append(sh.Ports, port)
	}
	slices.Sort(sh.Ports)
	if len(cfg.Labels) > 0 {
		sh.Labels = cfg.Labels
	}
	if name := cfg.Labels[oci.OwnershipLabel]; name != "" {
		sh.MCPName = name
	}
	contents, cached, err := cachedInventory(ctx, e, info.ID)
	if err != nil {
		return nil, err
	}
	if cached {
		sh.Notes = append(sh.Notes, "the image's packages are the inventory an earlier scan read from this image (by its ID, "+info.ID+")")
	}
	sh.Packages = len(contents.Packages)
	sh.OS = strings.TrimSpace(contents.OSRelease.ID + " " + contents.OSRelease.VersionID)
	if !contents.HasBash {
		sh.Unwatched = "the image has no bash, which the behaviour watch's wrapper needs"
	}
	cmd := append(slices.Clone(cfg.Entrypoint), cfg.Cmd...)
	if len(cmd) == 0 {
		return nil, fmt.Errorf("%w: image %s declares neither an entrypoint nor a command", sandbox.ErrShipped, p.ref.Raw)
	}
	// The engine checks every blob it pulls or loads against its digest:
	// the image is the one its digest names. Asked for by digest, that is
	// the digest expected; by tag or name, the one the registry (or
	// layout, or engine) gave.
	ig := evidence.Integrity{Expected: cmp.Or(p.ref.Digest, sh.Digest), Computed: sh.Digest}
	ig.Match = ig.Expected == ig.Computed
	return &sandbox.Launch{Image: info.ID, Cmd: cmd, Env: cfg.Env, WorkDir: cfg.WorkingDir, Lockfile: contents.Lockfile(),
		Packages: len(contents.Packages), Integrity: ig, Shipped: sh, User: ownUser(cfg.User)}, nil
}

// ownUser is the user an image's configuration runs it as, for a second
// start when the first, as the sandbox's user, fails: root ("0") when it
// names none; "" when it names the sandbox's own (nobody, 65534).
func ownUser(user string) string {
	if user == "" {
		return "0"
	}
	if name, _, _ := strings.Cut(user, ":"); name == "65534" || name == "nobody" {
		return ""
	}
	return user
}

// pull pulls ref with the operator's docker credentials for its registry
// (they go to the engine, never into a container).
func pull(ctx context.Context, cli client.APIClient, ref oci.Ref) error {
	auth, err := registryAuth(domain(ref))
	if err != nil {
		return err
	}
	rc, err := cli.ImagePull(ctx, pullRef(ref), image.PullOptions{RegistryAuth: auth})
	if err != nil {
		return pullError(ref, err)
	}
	defer rc.Close()
	if err := jsonmessage.DisplayJSONMessagesStream(rc, io.Discard, 0, false, nil); err != nil {
		return pullError(ref, err)
	}
	return nil
}

// pullError says why ref could not be pulled: an image that is not there
// is the target's error.
func pullError(ref oci.Ref, err error) error {
	msg := err.Error()
	if cerrdefs.IsNotFound(err) || strings.Contains(msg, "manifest unknown") || strings.Contains(msg, "not found") ||
		strings.Contains(msg, "repository does not exist") || strings.Contains(msg, "pull access denied") {
		return fmt.Errorf("%w: pull %s: %v", sandbox.ErrShipped, ref.Raw, err)
	}
	return fmt.Errorf("pull %s: %w", ref.Raw, err)
}

// load loads an OCI image layout into the engine and returns the layout's
// image and the engine's ID for it, which must be its configuration's
// digest.
func load(ctx context.Context, cli client.APIClient, ref oci.Ref) (oci.Image, string, error) {
	pr, pw := io.Pipe()
	type converted struct {
		img oci.Image
		err error
	}
	done := make(chan converted, 1)
	go func() {
		img, err := oci.LayoutArchive(ref.Path, cmp.Or(ref.Digest, ref.Tag), pw)
		pw.CloseWithError(err)
		done <- converted{img, err}
	}()
	resp, err := cli.ImageLoad(ctx, pr, client.ImageLoadWithQuiet(true))
	if err != nil {
		pr.CloseWithError(err)
		c := <-done
		if c.err != nil {
			return oci.Image{}, "", fmt.Errorf("%w: %w", sandbox.ErrShipped, c.err)
		}
		return oci.Image{}, "", fmt.Errorf("load %s: %w", ref.Path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c := <-done
	if c.err != nil {
		return oci.Image{}, "", fmt.Errorf("%w: %w", sandbox.ErrShipped, c.err)
	}
	return c.img, c.img.ConfigDigest, nil
}

// cachedInventory is inventory, kept in e.CacheDir by the image's ID (the
// digest of its configuration, which names every layer's content) and by
// what reads it (the inventory's form, imagefs's version and
// osv-scalibr's): an image is read once, and its later scans take the
// record. cached says it was.
func cachedInventory(ctx context.Context, e sandbox.Engine, id string) (c *oci.Contents, cached bool, err error) {
	if e.CacheDir == "" {
		c, err = inventory(ctx, e, id)
		return c, false, err
	}
	key := sha256.Sum256([]byte(id + "\n" + oci.InventorySchema + "\n" + imagefs.Version + "\n" + scalibrVersion()))
	path := filepath.Join(e.CacheDir, "inventory-"+hex.EncodeToString(key[:16])+".json")
	if data, err := os.ReadFile(path); err == nil {
		var rec oci.Contents
		if json.Unmarshal(data, &rec) == nil {
			return &rec, true, nil
		}
	}
	if c, err = inventory(ctx, e, id); err != nil {
		return nil, false, err
	}
	data, err := json.Marshal(c)
	if err == nil {
		if err = os.MkdirAll(e.CacheDir, 0o700); err == nil {
			err = atomicfile.Write(path, data)
		}
	}
	if err != nil && e.Logger != nil {
		e.Logger.Warn("the image's inventory could not be kept for later scans", "err", err)
	}
	return c, false, nil
}

// scalibrVersion is the version of osv-scalibr this program was built
// with ("" when the build does not say).
func scalibrVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/google/osv-scalibr" {
				return d.Version
			}
		}
	}
	return ""
}

// inventory reads the image's filesystem, through a container created and
// never started, for the packages it holds.
func inventory(ctx context.Context, e sandbox.Engine, id string) (*oci.Contents, error) {
	created, err := e.Client.ContainerCreate(ctx, &container.Config{Image: id, Entrypoint: []string{"/verifymcp-never-run"}, Labels: e.Labels},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return nil, fmt.Errorf("create a container to read image %s: %w", id, err)
	}
	defer func() {
		_ = e.Client.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}()
	rc, err := e.Client.ContainerExport(ctx, created.ID)
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", id, err)
	}
	defer rc.Close()
	contents, err := imagefs.Inventory(ctx, rc, imagefs.Limits{})
	if err != nil {
		return nil, fmt.Errorf("read the packages of image %s: %w", id, err)
	}
	return contents, nil
}

// repoDigest is the digest of ref's repository among an image's repo
// digests, and the reference by digest; the first one when none is ref's.
func repoDigest(digests []string, ref oci.Ref) (digest, reference string) {
	for _, rd := range digests {
		name, d, ok := strings.Cut(rd, "@")
		if ok && (oci.Ecosystem{}).Normalize(name) == ref.Name {
			return d, ref.Name + "@" + d
		}
	}
	if len(digests) > 0 {
		name, d, _ := strings.Cut(digests[0], "@")
		return d, name + "@" + d
	}
	return "", ""
}

// registryAuth is the encoded credential of the docker configuration
// ($DOCKER_CONFIG/config.json, else ~/.docker/config.json) for host, as
// the docker CLI finds it: the host's credential helper (credHelpers),
// else the configuration's credential store (credsStore), else its
// auths; "" when it has none. A helper is the operator's own program
// (docker-credential-NAME on PATH), run on this machine with the registry's
// address on stdin (github.com/docker/docker-credential-helpers' client);
// what it gives goes to the engine, never into a container.
func registryAuth(host string) (string, error) {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", nil
		}
		dir = filepath.Join(home, ".docker")
	}
	file := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("read docker config: %w", err)
	}
	var conf struct {
		Auths map[string]struct {
			Auth          string `json:"auth"`
			Username      string `json:"username"`
			Password      string `json:"password"`
			IdentityToken string `json:"identitytoken"`
		} `json:"auths"`
		CredsStore  string            `json:"credsStore"`
		CredHelpers map[string]string `json:"credHelpers"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		return "", fmt.Errorf("read docker config %s: %w", file, err)
	}
	keys := []string{host, "https://" + host, "http://" + host}
	if host == "docker.io" {
		// The docker CLI's key for Docker Hub comes first.
		keys = append([]string{"https://index.docker.io/v1/", "index.docker.io"}, keys...)
	}
	helper := conf.CredsStore
	for _, k := range keys {
		if h, ok := conf.CredHelpers[k]; ok {
			helper = h
			break
		}
	}
	if helper != "" {
		return helperAuth(helper, keys[0], host)
	}
	for _, k := range keys {
		a, ok := conf.Auths[k]
		if !ok {
			continue
		}
		ac := registry.AuthConfig{Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken, ServerAddress: host}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return "", fmt.Errorf("docker config: the credential for %s is not base64", host)
			}
			ac.Username, ac.Password, _ = strings.Cut(string(raw), ":")
		}
		return registry.EncodeAuthConfig(ac)
	}
	return "", nil
}

// helperAuth asks the credential helper docker-credential-NAME for the
// credential of serverURL: "" when it has none.
func helperAuth(name, serverURL, host string) (string, error) {
	prog := "docker-credential-" + name
	if _, err := exec.LookPath(prog); err != nil {
		return "", fmt.Errorf("docker config: its credential helper %s is not on PATH", prog)
	}
	c, err := credclient.Get(credclient.NewShellProgramFunc(prog), serverURL)
	switch {
	case credentials.IsErrCredentialsNotFound(err):
		return "", nil
	case err != nil:
		// Never the helper's output: it may hold the secret.
		return "", fmt.Errorf("docker config: credential helper %s failed for %s", prog, host)
	}
	ac := registry.AuthConfig{Username: c.Username, Password: c.Secret, ServerAddress: host}
	if c.Username == "<token>" {
		ac = registry.AuthConfig{IdentityToken: c.Secret, ServerAddress: host}
	}
	return registry.EncodeAuthConfig(ac)
}

// isRef reports whether raw names an image target (oci.ParseRef's
// prefixes).
func isRef(raw string) bool {
	for _, p := range []string{"oci:", "docker:", "docker-daemon:", "oci-layout:"} {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

// pullRef is the reference the engine pulls: by digest when ref names
// one, else by tag.
func pullRef(ref oci.Ref) string {
	if ref.Digest != "" {
		return ref.Name + "@" + ref.Digest
	}
	return ref.Name + ":" + ref.Tag
}

// domain is the registry host of ref's repository (docker.io for a
// familiar name).
func domain(ref oci.Ref) string {
	if n, err := reference.ParseNormalizedNamed(ref.Name); err == nil {
		return reference.Domain(n)
	}
	host, _, _ := strings.Cut(ref.Name, "/")
	return host
}

func envNames(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

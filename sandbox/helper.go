package sandbox

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// The helper image runs the egress proxy and the observer: it holds one
// static Linux build of this program and nothing else, so no image
// registry is needed. The build must be for the engine's operating system
// and architecture, not the host's: the scanner may run on macOS, or on an
// amd64 machine against an arm64 engine. SelectHelper finds one, in this
// order:
//
//  1. the binary named by HelperBinaryEnv, when it is set (the operator's
//     choice; a wrong one is an error, not a reason to look further);
//  2. this program itself, when it is a Linux build for the engine's
//     architecture (every plain `go build` or `go install` on Linux);
//  3. a build embedded in this program: release binaries (`make dist`,
//     build tag embedhelpers) carry the Linux builds they are not
//     themselves, gzip-compressed (see helper_*_embed.go).
//
// Failing all three the scan stops before it creates anything, with an
// error that says how to get one.

// HelperBinaryEnv names the environment variable that points at a static
// Linux build of verifymcp for the engine's architecture, to run in the
// helper containers instead of this program.
const HelperBinaryEnv = "VERIFYMCP_HELPER_BINARY"

// helperImageRef returns the tag of the helper image for a binary.
func helperImageRef(sum string) string { return "verifymcp-helper:" + sum[:12] }

// ErrHelperNotStatic is returned when the helper binary is dynamically
// linked and so cannot run in an image built from scratch.
var ErrHelperNotStatic = errors.New("helper binary is dynamically linked; build verifymcp with CGO_ENABLED=0")

// ErrNoHelper is returned by SelectHelper when no Linux build of this
// program for the engine's architecture is at hand.
var ErrNoHelper = errors.New("no helper binary for the engine")

// HelperArchError is a helper binary built for another architecture than
// the engine's.
type HelperArchError struct {
	// Source is where the binary came from; Arch is its architecture and
	// Engine the engine's (GOARCH names).
	Source, Arch, Engine string
}

func (e *HelperArchError) Error() string {
	return fmt.Sprintf("helper binary %s is built for linux/%s, but the Docker engine runs linux/%s; use a build for linux/%s", e.Source, e.Arch, e.Engine, e.Engine)
}

// elfMachines maps the ELF machines Go builds Linux binaries for to their
// GOARCH names.
var elfMachines = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
	elf.EM_386:     "386",
	elf.EM_ARM:     "arm",
	elf.EM_PPC64:   "ppc64le", // big-endian ppc64 is told apart by byte order below
	elf.EM_S390:    "s390x",
	elf.EM_RISCV:   "riscv64",
}

// EngineArch returns the GOARCH name of a Docker engine's architecture as
// the engine reports it: the version endpoint's Arch ("amd64", "arm64") or
// the info endpoint's, which is the kernel's name ("x86_64", "aarch64").
func EngineArch(arch string) string {
	switch a := strings.ToLower(strings.TrimSpace(arch)); a {
	case "x86_64":
		return "amd64"
	case "aarch64":
		return "arm64"
	default:
		return a
	}
}

// Helper is the static binary the helper image is built from, and the
// image's tag. Loading it touches no engine, so a command can do it while
// its target still resolves and build the image only once it did. The
// binary (tens of megabytes: the program itself) is read again only when
// the image has to be built, streamed into the build, and never held in
// memory whole.
type Helper struct {
	// Ref is the helper image's tag, named by the binary's digest.
	Ref string
	// Arch is the binary's architecture (a GOARCH name), from its ELF
	// header.
	Arch string
	// Source says where the binary comes from: a path, or "embedded
	// linux/ARCH build".
	Source string
	sha256 string
	size   int64
	// open returns the binary's bytes as a stream.
	open func() (io.ReadCloser, error)
}

// LoadHelper hashes the binary at path and checks that it is a static
// Linux executable, of any architecture (SelectHelper checks that against
// the engine's).
func LoadHelper(path string) (*Helper, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read helper binary: %w", err)
	}
	defer f.Close()
	arch, err := elfArch(f)
	if err != nil {
		return nil, fmt.Errorf("helper binary %s: %w", path, err)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("read helper binary: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return &Helper{Ref: helperImageRef(sum), Arch: arch, Source: path, sha256: sum, size: n,
		open: func() (io.ReadCloser, error) { return os.Open(path) }}, nil
}

// loadEmbedded is LoadHelper for a gzip-compressed build carried in this
// program. It is decompressed here once to be checked and hashed, and
// again only when the image has to be built.
func loadEmbedded(arch string, gz []byte) (*Helper, error) {
	open := func() (io.ReadCloser, error) { return gzip.NewReader(bytes.NewReader(gz)) }
	source := "embedded linux/" + arch + " build"
	var data []byte
	zr, err := open()
	if err == nil {
		data, err = io.ReadAll(zr)
	}
	if err != nil {
		return nil, fmt.Errorf("helper binary %s: %w", source, err)
	}
	got, err := elfArch(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("helper binary %s: %w", source, err)
	}
	if got != arch {
		return nil, &HelperArchError{Source: source, Arch: got, Engine: arch}
	}
	sum := sha256.Sum256(data)
	s := hex.EncodeToString(sum[:])
	return &Helper{Ref: helperImageRef(s), Arch: arch, Source: source, sha256: s, size: int64(len(data)), open: open}, nil
}

// SelectHelper returns the helper binary for an engine whose architecture
// is arch (as the engine reports it, see EngineArch): explicit, when it is
// not empty (normally the value of HelperBinaryEnv), else this program,
// else an embedded build; see the top of this file.
func SelectHelper(arch, explicit string) (*Helper, error) {
	return selectHelper(EngineArch(arch), explicit, thisBinary{runtime.GOOS, runtime.GOARCH, os.Executable}, embeddedHelpers)
}

// thisBinary is the running program: the system and architecture it was
// built for, and how to find it.
type thisBinary struct {
	goos, goarch string
	path         func() (string, error)
}

func selectHelper(arch, explicit string, self thisBinary, embedded map[string][]byte) (*Helper, error) {
	if arch == "" {
		return nil, fmt.Errorf("%w: the Docker engine did not say its architecture", ErrNoHelper)
	}
	if explicit != "" {
		h, err := LoadHelper(explicit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", HelperBinaryEnv, err)
		}
		if h.Arch != arch {
			return nil, &HelperArchError{Source: explicit, Arch: h.Arch, Engine: arch}
		}
		return h, nil
	}
	var selfErr error
	if self.goos == "linux" && self.goarch == arch {
		path, err := self.path()
		if err == nil {
			var h *Helper
			if h, err = LoadHelper(path); err == nil {
				return h, nil
			}
		}
		// A build of the right architecture that cannot serve (a cgo
		// build) still leaves the embedded one.
		selfErr = fmt.Errorf("this program cannot be the helper (set %s to a static linux/%s build): %w", HelperBinaryEnv, arch, err)
	}
	if gz, ok := embedded[arch]; ok {
		return loadEmbedded(arch, gz)
	}
	if selfErr != nil {
		return nil, selfErr
	}
	return nil, fmt.Errorf("%w: the Docker engine runs linux/%s and this program is a %s/%s build without an embedded helper; "+
		"use a release binary (it carries the Linux helpers), or set %s to a static linux/%s build of the same version "+
		"(the one in the linux_%s release archive, or: GOOS=linux GOARCH=%s CGO_ENABLED=0 go build -o verifymcp-linux-%s ./cmd/verifymcp)",
		ErrNoHelper, arch, self.goos, self.goarch, HelperBinaryEnv, arch, arch, arch, arch)
}

// embeddedHelpers are the gzip-compressed Linux builds of this program
// that it carries, by GOARCH; empty unless it was built with the tag
// embedhelpers (see helper_*_embed.go).
var embeddedHelpers = map[string][]byte{}

// HelperArches returns the architectures whose helper this program can
// supply without HelperBinaryEnv: its own, when it is a static Linux
// build, and those of the builds it carries, sorted.
func HelperArches() []string {
	var arches []string
	if runtime.GOOS == "linux" {
		if f, err := openExecutable(); err == nil {
			if arch, err := elfArch(f); err == nil {
				arches = append(arches, arch)
			}
			f.Close()
		}
	}
	for a := range embeddedHelpers {
		arches = append(arches, a)
	}
	slices.Sort(arches)
	return slices.Compact(arches)
}

func openExecutable() (*os.File, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return os.Open(exe)
}

// EnsureHelperImage builds (once per binary) a minimal image holding only
// the static binary at path, and returns its tag.
func EnsureHelperImage(ctx context.Context, cli client.APIClient, path string) (string, error) {
	h, err := LoadHelper(path)
	if err != nil {
		return "", err
	}
	if err := h.Ensure(ctx, cli); err != nil {
		return "", err
	}
	return h.Ref, nil
}

// errHelperChanged is the error of a helper binary that is not the one
// the command loaded.
var errHelperChanged = errors.New("changed since this command started")

// copyTo writes the binary to w, checked to be the one the helper was
// loaded from (a binary replaced since, by an upgrade, would build an image
// under another's tag): when it is not, it returns an error once w has had
// at most as many bytes as the loaded one had. It streams: the binary is
// tens of megabytes, and is never held in memory whole.
func (h *Helper) copyTo(w io.Writer) error {
	f, err := h.open()
	if err != nil {
		return fmt.Errorf("read helper binary: %w", err)
	}
	defer f.Close()
	changed := fmt.Errorf("helper binary %s %w; run it again", h.Source, errHelperChanged)
	sum := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(w, sum), f, h.size); errors.Is(err, io.EOF) {
		return changed
	} else if err != nil {
		return fmt.Errorf("read helper binary: %w", err)
	}
	if n, _ := f.Read(make([]byte, 1)); n > 0 || hex.EncodeToString(sum.Sum(nil)) != h.sha256 {
		return changed
	}
	return nil
}

// buildContext writes the helper image's build context, a tar of its
// Dockerfile and the binary, to w. When the binary changed, it ends the
// tar with blocks that are not a tar's end and returns the error, so that
// an image build reading the context fails rather than builds from it
// (through Ensure's pipe, the error also aborts the request's body).
func (h *Helper) buildContext(w io.Writer) error {
	dockerfile := "FROM scratch\nCOPY verifymcp /verifymcp\nUSER 65534:65534\nENTRYPOINT [\"/verifymcp\"]\nLABEL verifymcp.image=helper\n"
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, dockerfile); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "verifymcp", Mode: 0o755, Size: h.size, ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if err := h.copyTo(tw); err != nil {
		if errors.Is(err, errHelperChanged) {
			// Two blocks no tar reader takes for a header, nor for the end.
			_, _ = w.Write(bytes.Repeat([]byte{0xff}, 1024))
		}
		return err
	}
	return tw.Close()
}

// Present reports whether the helper image exists; it only inspects.
func (h *Helper) Present(ctx context.Context, cli client.APIClient) (bool, error) {
	if _, err := cli.ImageInspect(ctx, h.Ref); err == nil {
		return true, nil
	} else if !client.IsErrNotFound(err) {
		return false, fmt.Errorf("inspect helper image: %w", err)
	}
	return false, nil
}

// Ensure builds the helper image unless it exists.
func (h *Helper) Ensure(ctx context.Context, cli client.APIClient) error {
	if ok, err := h.Present(ctx, cli); err != nil || ok {
		return err
	}
	// The binary is checked as the context streams to the build.
	pr, pw := io.Pipe()
	wrote := make(chan error, 1)
	go func() {
		err := h.buildContext(pw)
		wrote <- err
		pw.CloseWithError(err)
	}()
	resp, err := cli.ImageBuild(ctx, pr, build.ImageBuildOptions{Tags: []string{h.Ref}, Remove: true, ForceRemove: true, Version: types.BuilderV1})
	if err == nil {
		err = drainBuild(resp.Body)
		resp.Body.Close()
	}
	pr.Close() // ends a write the build did not read
	if werr := <-wrote; errors.Is(werr, errHelperChanged) {
		if err == nil {
			// Never kept under the loaded binary's tag, should an engine
			// have built from a context that did not end.
			_, _ = cli.ImageRemove(context.WithoutCancel(ctx), h.Ref, image.RemoveOptions{Force: true})
		}
		return werr
	}
	if err != nil {
		return fmt.Errorf("build helper image: %w", err)
	}
	return nil
}

// drainBuild reads an image build's JSON message stream and returns the
// first error it reports.
func drainBuild(r io.Reader) error {
	dec := json.NewDecoder(r)
	var last string
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read build output: %w", err)
		}
		if msg.Error != "" {
			return fmt.Errorf("%s (after: %s)", msg.Error, strings.TrimSpace(last))
		}
		if s := strings.TrimSpace(msg.Stream); s != "" {
			last = s
		}
	}
}

// elfArch checks that r is a statically linked Linux executable and
// returns its architecture.
func elfArch(r io.ReaderAt) (string, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return "", fmt.Errorf("not an ELF executable (a Linux build is needed): %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", ErrHelperNotStatic
		}
	}
	if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return "", fmt.Errorf("an ELF executable for %s, not Linux", strings.TrimPrefix(f.OSABI.String(), "ELFOSABI_"))
	}
	arch, ok := elfMachines[f.Machine]
	switch {
	case !ok:
		return "", fmt.Errorf("an ELF executable for %s, which verifymcp has no helper for", f.Machine)
	case f.Machine == elf.EM_PPC64 && f.ByteOrder == binary.BigEndian:
		arch = "ppc64"
	}
	return arch, nil
}

// PruneHelperImages removes the helper images (labelled
// verifymcp.image=helper) other than keep's ref: those of earlier builds
// of this program, which each upgrade leaves behind. An image a container
// still uses is left in place (the engine refuses to remove it), so is a
// dangling reference the engine answers not found for. It returns how
// many images it removed.
func PruneHelperImages(ctx context.Context, cli client.APIClient, keep string) (int, error) {
	return pruneImages(ctx, cli, "verifymcp.image=helper", keep)
}

// pruneImages removes the images labelled label but keep (see
// PruneHelperImages).
func pruneImages(ctx context.Context, cli client.APIClient, label, keep string) (int, error) {
	imgs, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", label))})
	if err != nil {
		return 0, fmt.Errorf("list helper images: %w", err)
	}
	n := 0
	for _, img := range imgs {
		if slices.Contains(img.RepoTags, keep) {
			continue
		}
		var refs []string
		for _, t := range img.RepoTags {
			if t != "<none>:<none>" { // a dangling image's
				refs = append(refs, t)
			}
		}
		if len(refs) == 0 {
			refs = []string{img.ID}
		}
		removed := false
		for _, ref := range refs {
			if _, err := cli.ImageRemove(ctx, ref, image.RemoveOptions{PruneChildren: true}); err == nil {
				removed = true
			} else if !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
				return n, fmt.Errorf("remove helper image %s: %w", ref, err)
			}
		}
		if removed {
			n++
		}
	}
	return n, nil
}

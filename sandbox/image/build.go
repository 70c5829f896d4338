package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
)

// imageBuild carries one build's settings; the context is passed to each
// step, not stored.
type imageBuild struct {
	cli  client.APIClient
	opts Options
	r    *recipe
	out  io.Writer
	tmp  string
}

func progressOut(opts Options) io.Writer {
	if opts.Progress == nil {
		return io.Discard
	}
	return opts.Progress
}

func buildSandbox(ctx context.Context, cli client.APIClient, opts Options, r *recipe) (img Image, err error) {
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

package image

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	imagetypes "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

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
	rc, err := cli.ImagePull(ctx, ref, imagetypes.PullOptions{})
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
	rc, err := cli.ImageImport(ctx, imagetypes.ImportSource{Source: pr, SourceName: "-"}, ref, imagetypes.ImportOptions{
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

//go:build docker

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/verifymcp/verifymcp/sandbox"
)

// TestImage builds the container image of verifymcp the way `make image`
// does (the Dockerfile's target prebuilt: a static Linux build for the
// engine, a CA bundle, /tmp and /data on scratch, no registry) and runs it
// as an operator would: `version` without the engine, and `sandbox doctor`
// through the mounted engine socket, as the image's unprivileged user
// with the socket's group.
func TestImage(t *testing.T) {
	ec, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	sock, ok := strings.CutPrefix(ec.DaemonHost(), "unix://")
	if !ok {
		t.Skipf("the engine is at %s: this test mounts a local engine's socket", ec.DaemonHost())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v, err := ec.ServerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	arch := sandbox.EngineArch(v.Arch)

	dir := t.TempDir()
	version := fmt.Sprintf("image-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, d := range []string{"rootfs/tmp", "rootfs/etc/ssl/certs", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "rootfs/tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-trimpath", "-ldflags", "-s -w -X github.com/verifymcp/verifymcp/cmd/verifymcp/cli.Version="+version, "-o", filepath.Join(dir, "rootfs/verifymcp"), ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build linux/%s: %v\n%s", arch, err, out)
	}
	for src, dst := range map[string]string{"/etc/ssl/certs/ca-certificates.crt": "rootfs/etc/ssl/certs/ca-certificates.crt", "../../Dockerfile": "Dockerfile"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ref := "verifymcp-image-test:" + version
	resp, err := ec.ImageBuild(ctx, tarDir(t, dir), build.ImageBuildOptions{
		Tags: []string{ref}, Target: "prebuilt", Dockerfile: "Dockerfile", Remove: true, ForceRemove: true,
		Version: types.BuilderV1, BuildArgs: map[string]*string{"VERSION": &version},
	})
	if err != nil {
		t.Fatalf("build image: %v", err)
	}
	buildErr := readBuild(resp.Body)
	resp.Body.Close()
	t.Cleanup(func() { _, _ = ec.ImageRemove(context.Background(), ref, image.RemoveOptions{PruneChildren: true}) })
	if buildErr != nil {
		t.Fatalf("build image: %v", buildErr)
	}
	in, _, err := ec.ImageInspectWithRaw(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if in.Config.User != "65532:65532" || in.Architecture != arch || in.Size > 80<<20 {
		t.Errorf("image: user %q, architecture %s, %d bytes; want 65532:65532, %s, under 80 MB", in.Config.User, in.Architecture, in.Size, arch)
	}

	var st syscall.Stat_t
	if err := syscall.Stat(sock, &st); err != nil {
		t.Fatal(err)
	}
	withSocket := &container.HostConfig{Binds: []string{sock + ":/var/run/docker.sock"}, GroupAdd: []string{fmt.Sprint(st.Gid)}}
	for _, tc := range []struct {
		name string
		host *container.HostConfig
		args []string
		want []string
	}{
		{"version, no engine", &container.HostConfig{}, []string{"version"},
			[]string{"verifymcp " + version + " (", "linux/" + arch, "helper:   for linux/" + arch + " engines"}},
		{"a command that needs no engine", &container.HostConfig{}, []string{"rubric", "explain", "pkg.supply.osv.vulnerable"},
			[]string{"pkg.supply.osv.vulnerable"}},
		{"doctor through the socket", withSocket, []string{"sandbox", "doctor", "--fetch-check", ""},
			[]string{"engine:       Docker " + v.Version, "leftovers:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runImage(ctx, t, ec, ref, tc.host, tc.args)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// runImage runs the image with args and returns its exit code and output.
func runImage(ctx context.Context, t *testing.T, ec *client.Client, ref string, host *container.HostConfig, args []string) (int64, string) {
	t.Helper()
	c, err := ec.ContainerCreate(ctx, &container.Config{Image: ref, Cmd: args}, host, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ec.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}) // the image declares VOLUME /data
	waitCh, errCh := ec.ContainerWait(ctx, c.ID, container.WaitConditionNextExit)
	if err := ec.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	var code int64
	select {
	case w := <-waitCh:
		code = w.StatusCode
	case err := <-errCh:
		t.Fatal(err)
	}
	logs, err := ec.ContainerLogs(ctx, c.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, logs); err != nil {
		t.Fatal(err)
	}
	return code, out.String()
}

// tarDir is dir as a build context, modes kept (/tmp's sticky bit too).
func tarDir(t *testing.T, dir string) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return &buf
}

// readBuild reads an image build's message stream and returns its error.
func readBuild(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if msg.Error != "" {
			return fmt.Errorf("%s", msg.Error)
		}
	}
}

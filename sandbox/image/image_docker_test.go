//go:build docker

package image_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

// TestImageDocker builds the sandbox image on the real engine (or reuses
// it) and checks the contract the run phase relies on by running short
// containers from it. A cold build on an engine without a registry
// bootstraps the base with debootstrap, which needs root and takes minutes.
func TestImageDocker(t *testing.T) {
	ctx := t.Context()
	cli, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	start := time.Now()
	img, built, err := image.Ensure(ctx, cli, image.Options{Progress: t.Output()})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	t.Logf("Ensure: built=%v in %s: %+v", built, time.Since(start).Round(time.Millisecond), img)

	if got, want := img.Ref, image.Ref(); got != want {
		t.Errorf("Ref = %q, want %q", got, want)
	}
	if !strings.HasPrefix(img.ID, "sha256:") {
		t.Errorf("ID = %q, want a sha256 image ID", img.ID)
	}
	if !strings.HasPrefix(img.Base, "pulled:") && !strings.HasPrefix(img.Base, "bootstrapped:"+image.BaseRepo+":") {
		t.Errorf("Base = %q, want pulled:... or bootstrapped:%s:...", img.Base, image.BaseRepo)
	}

	t.Run("config", func(t *testing.T) {
		resp, err := cli.ImageInspect(ctx, img.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ID != img.ID {
			t.Errorf("inspect ID = %s, want %s", resp.ID, img.ID)
		}
		cfg := resp.Config
		for k, want := range map[string]string{image.LabelImage: "sandbox", image.LabelRecipe: img.RecipeHash, image.LabelBase: img.Base} {
			if got := cfg.Labels[k]; got != want {
				t.Errorf("label %s = %q, want %q", k, got, want)
			}
		}
		for _, env := range []string{"NPM_CONFIG_UPDATE_NOTIFIER=false", "NPM_CONFIG_FUND=false", "NPM_CONFIG_AUDIT=false"} {
			if !slices.Contains(cfg.Env, env) {
				t.Errorf("Env %q lacks %s", cfg.Env, env)
			}
		}
		if len(cfg.Entrypoint) != 0 {
			t.Errorf("Entrypoint = %q, want none", cfg.Entrypoint)
		}
		if cfg.WorkingDir != "/work" {
			t.Errorf("WorkingDir = %q, want /work", cfg.WorkingDir)
		}
		t.Logf("image size %.1f MiB", float64(resp.Size)/(1<<20))
	})

	tests := []struct {
		name       string
		user       string
		cmd        []string
		wantPrefix string
	}{
		{"node_is_22", "65534:65534", []string{"node", "--version"}, "v22."},
		{"npm_runs", "65534:65534", []string{"npm", "--version"}, "10."},
		{"npx_runs", "65534:65534", []string{"npx", "--version"}, "10."},
		{"node_runs_code", "65534:65534", []string{"node", "-e", "console.log(require('os').userInfo().uid)"}, "65534"},
		{"python3_runs", "65534:65534", []string{"python3", "--version"}, "Python 3."},
		{"pip3_runs", "65534:65534", []string{"pip3", "--version"}, "pip "},
		{"tools_in_usr_local_bin", "", []string{"sh", "-c", "for c in node npm npx python3 pip3; do command -v $c; done"},
			"/usr/local/bin/node\n/usr/local/bin/npm\n/usr/local/bin/npx\n/usr/local/bin/python3\n/usr/local/bin/pip3"},
		{"uid_is_65534", "65534:65534", []string{"id", "-u"}, "65534"},
		{"gid_is_65534", "65534:65534", []string{"id", "-g"}, "65534"},
		{"nobody_is_65534", "", []string{"sh", "-c", "getent passwd nobody | cut -d: -f3,4; getent group nogroup | cut -d: -f3"}, "65534:65534\n65534"},
		{"dirs_owned_by_65534", "", []string{"stat", "-c", "%n %u:%g %a", "/work", "/work/tree", "/cache/npm"},
			"/work 65534:65534 755\n/work/tree 65534:65534 755\n/cache/npm 65534:65534 755"},
		{"npm_cache_is_empty", "", []string{"sh", "-c", "ls -A /cache/npm | wc -l"}, "0"},
		{"tmp_is_empty", "", []string{"sh", "-c", "ls -A /tmp | wc -l"}, "0"},
		{"workdir_is_work", "65534:65534", []string{"pwd"}, "/work"},
		{"ca_certificates", "65534:65534", []string{"sh", "-c", "test -s /etc/ssl/certs/ca-certificates.crt && echo ok"}, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := imgRun(t, cli, img.Ref, tt.user, tt.cmd...)
			if !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("%q printed %q, want prefix %q", tt.cmd, got, tt.wantPrefix)
			}
		})
	}

	t.Run("second_ensure_does_not_rebuild", func(t *testing.T) {
		var progress bytes.Buffer
		start := time.Now()
		again, built, err := image.Ensure(ctx, cli, image.Options{Progress: &progress})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("warm Ensure took %s: %s", time.Since(start).Round(time.Microsecond), strings.TrimSpace(progress.String()))
		if built {
			t.Errorf("second Ensure built the image again")
		}
		if again != img {
			t.Errorf("second Ensure = %+v, want %+v", again, img)
		}
		got, ok, err := image.Inspect(ctx, cli)
		if err != nil || !ok || got != img {
			t.Errorf("Inspect = %+v, %v, %v; want %+v, true, nil", got, ok, err, img)
		}
	})
}

// BenchmarkEnsureImageWarm measures image.Ensure when the image is present,
// which every scan pays.
func BenchmarkEnsureImageWarm(b *testing.B) {
	cli, err := sandbox.NewClient()
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	if _, _, err := image.Ensure(b.Context(), cli, image.Options{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, built, err := image.Ensure(b.Context(), cli, image.Options{}); err != nil || built {
			b.Fatalf("Ensure: built=%v err=%v", built, err)
		}
	}
}

// imgRun runs cmd in a fresh container of ref with no network and
// returns its trimmed stdout; a non-zero exit fails the test.
func imgRun(t *testing.T, cli client.APIClient, ref, user string, cmd ...string) string {
	t.Helper()
	ctx := t.Context()
	created, err := cli.ContainerCreate(ctx,
		&container.Config{Image: ref, Cmd: cmd, User: user, Labels: map[string]string{sandbox.LabelRun: "image-test", sandbox.LabelOwner: owner()}},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatalf("create container: %v", err)
	}
	defer cli.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start %q: %v", cmd, err)
	}
	var code int64
	waitC, errC := cli.ContainerWait(ctx, created.ID, container.WaitConditionNotRunning)
	select {
	case w := <-waitC:
		code = w.StatusCode
	case err := <-errC:
		t.Fatalf("wait %q: %v", cmd, err)
	}
	logs, err := cli.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatalf("logs %q: %v", cmd, err)
	}
	defer logs.Close()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, logs); err != nil {
		t.Fatalf("read logs %q: %v", cmd, err)
	}
	if code != 0 {
		t.Fatalf("%q exited %d: stdout %q, stderr %q", cmd, code, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// owner is the sandbox.LabelOwner value of this process, as the sandbox
// puts it on what it creates.
func owner() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid())
}

//go:build docker

package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/cmd/verifymcp/cli"
	"github.com/verifymcp/verifymcp/sandbox"
)

// crossBuild builds verifymcp for linux/arch into dir with a version of its
// own, so that its digest (and helper image tag) is nobody else's.
func crossBuild(t *testing.T, dir, arch, version string) string {
	t.Helper()
	out := filepath.Join(dir, "verifymcp-linux-"+arch)
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(gobin, "build", "-o", out, "-ldflags", "-X github.com/verifymcp/verifymcp/cmd/verifymcp/cli.Version="+version, "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cross-build linux/%s: %v\n%s", arch, err, b)
	}
	return out
}

// watchEngine collects the engine's container, network, volume and image
// events from now until the returned function is called. It reads the
// live stream: the engine keeps only its last 256 events for a query of
// the past, and concurrent tests on the engine push a scan's first events
// out of that.
func watchEngine(t *testing.T, ec *client.Client) func() []events.Message {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := filters.NewArgs()
	for _, typ := range []events.Type{events.ContainerEventType, events.NetworkEventType, events.VolumeEventType, events.ImageEventType} {
		f.Add("type", string(typ))
	}
	since := time.Now()
	msgs, errs := ec.Events(ctx, events.ListOptions{Since: fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond()), Filters: f})
	var got []events.Message
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case m := <-msgs:
				got = append(got, m)
			case err := <-errs:
				if err != nil && ctx.Err() == nil {
					t.Errorf("engine events: %v", err)
				}
				return
			}
		}
	}()
	return func() []events.Message {
		// Events trail the calls that caused them a little.
		time.Sleep(300 * time.Millisecond)
		cancel()
		<-done
		return got
	}
}

// TestScanWithExplicitHelper is the path of a scanner that is not itself a
// Linux build for the engine (macOS, or an amd64 host against an arm64
// engine): the helper containers run the binary VERIFYMCP_HELPER_BINARY
// names. A build for the engine's architecture, made apart from this test
// binary, scans a real package, and the run's egress proxy and observer
// are containers of its image, not of this test binary's; a build for the
// other architecture is refused before the engine is touched.
func TestScanWithExplicitHelper(t *testing.T) {
	inProcess(t)
	ec, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	ctx := context.Background()
	v, err := ec.ServerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	arch := sandbox.EngineArch(v.Arch)
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[arch]
	if other == "" {
		t.Fatalf("engine architecture %q: this test knows amd64 and arm64", v.Arch)
	}
	dir := t.TempDir()
	version := fmt.Sprintf("helper-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	helperBin := crossBuild(t, dir, arch, version)
	otherBin := crossBuild(t, dir, other, version)

	h, err := sandbox.LoadHelper(helperBin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec.ImageInspect(ctx, h.Ref); err == nil {
		t.Fatalf("helper image %s exists before the scan; it should be this test's alone", h.Ref)
	}
	t.Cleanup(func() {
		_, _ = ec.ImageRemove(context.Background(), h.Ref, image.RemoveOptions{PruneChildren: true})
	})
	// The helper image of this test binary: if it is not there now, the
	// scan must not build it.
	exe, _ := os.Executable()
	own, err := sandbox.LoadHelper(exe)
	ownAbsent := false
	if err == nil {
		_, err = ec.ImageInspect(ctx, own.Ref)
		ownAbsent = err != nil
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s/%d", host, os.Getpid())

	// Scanned in the test's own tree-cache namespace (ownTreeCache): a
	// tree of it in the engine's cache would need no fetch, and so no
	// egress proxy.
	const target = "npm:@modelcontextprotocol/server-memory@2026.1.26"

	t.Run("a build for another architecture is refused", func(t *testing.T) {
		t.Setenv(sandbox.HelperBinaryEnv, otherBin)
		oh, err := sandbox.LoadHelper(otherBin)
		if err != nil {
			t.Fatal(err)
		}
		data := t.TempDir()
		stop := watchEngine(t, ec)
		res := runCLI(t, "scan", "--data-dir", data, "--ca-bundle", caBundle, "--skip", skipThirdParties, "--format", "json", target)
		seen := stop()
		last := lastLine(res.stderr)
		if res.code != cli.ExitImage || !strings.Contains(last, "built for linux/"+other) || !strings.Contains(last, "engine runs linux/"+arch) {
			t.Errorf("exit %d, want %d with the architectures named; stderr:\n%s", res.code, cli.ExitImage, res.stderr)
		}
		for _, m := range seen {
			if ours(ctx, ec, m, owner, oh.Ref) {
				t.Errorf("the refused scan touched the engine: %s %s %s", m.Type, m.Action, m.Actor.Attributes["name"])
			}
		}
	})

	t.Run("a build for the engine scans", func(t *testing.T) {
		t.Setenv(sandbox.HelperBinaryEnv, helperBin)
		data := t.TempDir()
		ownTreeCache(t)
		scan := func() (result, map[string]int) {
			stop := watchEngine(t, ec)
			res := runCLI(t, "scan", "--data-dir", data, "--ca-bundle", caBundle, "--skip", skipThirdParties, "--format", "json", target)
			created := map[string]int{}
			for _, m := range stop() {
				if m.Type == events.ContainerEventType && m.Action == events.ActionCreate && ours(ctx, ec, m, owner, "") {
					created[m.Actor.Attributes["image"]]++
				}
			}
			if res.code != cli.ExitOK {
				t.Fatalf("scan with %s=%s: exit %d\n%s", sandbox.HelperBinaryEnv, helperBin, res.code, res.stderr)
			}
			return res, created
		}
		res, created := scan()
		var rep struct {
			Sandbox struct {
				Outcome string `json:"outcome"`
			} `json:"sandbox"`
			Signals map[string]struct{ State string } `json:"signals"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatalf("report: %v\n%.500s", err, res.stdout)
		}
		// The fetch step went through the helper's egress proxy, and the
		// observer watched the run.
		if rep.Sandbox.Outcome != "ok" || rep.Signals["sandbox.install"].State != "observed" || rep.Signals["sandbox.behavior"].State != "observed" {
			t.Errorf("outcome %q, install %q, behaviour %q; want ok and both observed", rep.Sandbox.Outcome, rep.Signals["sandbox.install"].State, rep.Signals["sandbox.behavior"].State)
		}
		// Two helper containers: the egress proxy and the observer.
		if created[h.Ref] != 2 {
			t.Errorf("containers created per image: %v; want the egress proxy and the observer from %s", created, h.Ref)
		}
		if ownAbsent {
			if _, err := ec.ImageInspect(ctx, own.Ref); err == nil {
				t.Errorf("the scan built %s from this test binary, not the helper it was given", own.Ref)
				_, _ = ec.ImageRemove(context.Background(), own.Ref, image.RemoveOptions{PruneChildren: true})
			}
		}
	})
	noLeftovers(t, os.Getpid())
}

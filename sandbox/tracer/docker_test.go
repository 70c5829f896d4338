//go:build docker && linux

package tracer

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// sandboxImage is the image the target runs in: VERIFYMCP_TRACER_TEST_IMAGE,
// or the newest verifymcp-sandbox image (built by `verifymcp sandbox
// build`), which has node.
func sandboxImage(t *testing.T) string {
	if img := os.Getenv("VERIFYMCP_TRACER_TEST_IMAGE"); img != "" {
		return img
	}
	out, err := exec.Command("docker", "images", "verifymcp-sandbox", "--format", "{{.Repository}}:{{.Tag}}").Output()
	if err != nil {
		t.Fatalf("list images: %v", err)
	}
	imgs := strings.Fields(string(out))
	if len(imgs) == 0 {
		t.Fatal("no verifymcp-sandbox image: build one with `verifymcp sandbox build`, or set VERIFYMCP_TRACER_TEST_IMAGE to an image with /bin/sh, stat and node")
	}
	return imgs[0]
}

// TestDocker_tracerContainer runs the arrangement the sandbox uses: the
// package's container holds its entry point behind tini and the wrapper,
// as an unprivileged user with no capabilities; a second container with
// only CAP_SYS_PTRACE joins its PID namespace and traces everything there.
// The test binary is the tracer (it must be static: CGO_ENABLED=0).
func TestDocker_tracerContainer(t *testing.T) {
	img := sandboxImage(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	target, tracerName := "verifymcp-tracer-test-"+hex.EncodeToString(suffix), "verifymcp-tracer-test-t-"+hex.EncodeToString(suffix)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", target, tracerName).Run() })

	// The package code: it execs, has node exec, and tries to kill every
	// root process it can see (the tracer), which must fail.
	const script = `/bin/echo hi
node -e 'require("child_process").execFileSync("/bin/true", ["from-node"])'
for p in /proc/[0-9]*; do pid=${p#/proc/}; if [ "$(stat -c %u $p 2>/dev/null)" = 0 ]; then kill -9 $pid 2>/dev/null && echo "killed $pid"; fi; done
echo done
exec sleep 60`
	tc := exec.Command("docker", "run", "--rm", "-i", "--name", target, "--init",
		"--user", "65534:65534", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--read-only", "--tmpfs", "/tmp", "--network", "none", "--entrypoint", "/bin/sh",
		img, "-c", `read -r _; exec "$@"`, "verifymcp-wait", "/bin/sh", "-c", script)
	var out syncBuffer
	tc.Stdout, tc.Stderr = &out, &out
	release, err := tc.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.Start(); err != nil {
		t.Fatal(err)
	}
	targetDone := make(chan error, 1)
	go func() { targetDone <- tc.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _ := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", target).Output()
		if strings.TrimSpace(string(st)) == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("target container did not start: %s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	tr := exec.Command("docker", "run", "--rm", "--name", tracerName,
		"--pid", "container:"+target, "--network", "none", "--user", "0:0",
		"--cap-drop", "ALL", "--cap-add", "SYS_PTRACE", "--security-opt", "no-new-privileges", "--read-only",
		"-v", self+":/tracer:ro", "-e", helperEnv+"=tracer", "--entrypoint", "/tracer", img, "-test.run=^$")
	var trErr syncBuffer
	tr.Stderr = &trErr
	stdout, err := tr.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan Event, 1024)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("not an event: %q", sc.Text())
				continue
			}
			events <- ev
		}
	}()
	var evs []Event
	select {
	case ev, ok := <-events:
		if !ok || ev.Type != TypeReady {
			t.Fatalf("first event %+v (open %v), want ready; tracer stderr: %s", ev, ok, trErr.String())
		}
		if ev.Attached < 2 || ev.Failed != 0 {
			t.Fatalf("ready %+v: want tini and the wrapper attached, nothing failed", ev)
		}
		evs = append(evs, ev)
	case <-time.After(60 * time.Second):
		t.Fatalf("tracer not ready; stderr: %s", trErr.String())
	}

	_, _ = io.WriteString(release, "\n")
	release.Close()
	for !strings.Contains(out.String(), "done\n") {
		if time.Now().After(deadline.Add(60 * time.Second)) {
			t.Fatalf("target did not finish its work: %s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Stop the tracer first, as the sandbox does: it shares the target's PID
	// namespace, so the end of the target's init would kill it.
	if b, err := exec.Command("docker", "stop", "-t", "10", tracerName).CombinedOutput(); err != nil {
		t.Fatalf("docker stop tracer: %v: %s", err, b)
	}
	for ev := range events {
		evs = append(evs, ev)
	}
	if err := tr.Wait(); err != nil {
		t.Errorf("tracer: %v: %s", err, trErr.String())
	}
	// The target carries on, no longer traced.
	hostPID, err := exec.Command("docker", "inspect", "-f", "{{.State.Pid}}", target).Output()
	if err != nil {
		t.Fatalf("inspect target: %v", err)
	}
	status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(hostPID)) + "/status")
	if err != nil || !strings.Contains(string(status), "\nTracerPid:\t0\n") {
		t.Errorf("target init after the tracer stopped: %v\n%s", err, status)
	}
	select {
	case err := <-targetDone:
		t.Errorf("target ended with the tracer: %v: %s", err, out.String())
	default:
	}

	if got := out.String(); !strings.Contains(got, "hi\n") || !strings.Contains(got, "done\n") || strings.Contains(got, "killed") {
		t.Errorf("target output %q: want hi and done, and no process killed", got)
	}
	var node, fromNode *Event
	for i, ev := range evs {
		if ev.Type == TypeExec && strings.HasSuffix(ev.Exe, "/node") {
			node = &evs[i]
		}
		if ev.Type == TypeExec && slices.Equal(ev.Argv, []string{"/bin/true", "from-node"}) {
			fromNode = &evs[i]
		}
		if ev.Type == TypeExec && ev.UID != 65534 {
			t.Errorf("exec as uid %d: %+v", ev.UID, ev)
		}
		if ev.Type == TypeExec && ev.Exe == "/tracer" {
			t.Errorf("the tracer traced itself: %+v", ev)
		}
		if ev.Type == TypeAttachError {
			t.Errorf("attach error: %+v", ev)
		}
	}
	if node == nil || fromNode == nil || fromNode.PPID != node.PID {
		t.Errorf("want node and the /bin/true it ran, as its child; node %+v, true %+v; all: %+v", node, fromNode, evs)
	}
	if last := evs[len(evs)-1]; last.Type != TypeEnd || last.Reason != "context" || last.Detached < 2 {
		t.Errorf("last event %+v, want end because the tracer was stopped, with tini and sleep (the shell, exec'd) detached", last)
	}
	if entry := execs(evs); len(entry) == 0 || !slices.Equal(entry[0].Argv, []string{"/bin/sh", "-c", script}) {
		t.Errorf("first exec %+v, want the wrapper handing over to the entry point", entry)
	}
}

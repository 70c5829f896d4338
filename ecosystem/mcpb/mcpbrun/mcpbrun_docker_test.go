//go:build docker

package mcpbrun_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/supplychain/supplytest"

	"github.com/verifymcp/verifymcp/internal/e2e"
)

// These tests scan MCPB bundles end to end the way a user does: the real
// binary and engine, the bundles of testdata (packed by the official
// packer, see testdata/README.md).

var binary string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		bin, remove, err := e2e.Build("../../../cmd/verifymcp")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer remove()
		binary = bin
		return m.Run()
	}())
}

func run(t *testing.T, env []string, args ...string) e2e.Result {
	t.Helper()
	return e2e.Run(t, binary, env, args...)
}

type report struct {
	Target struct {
		Ecosystem, Name, Version, Integrity, Source, Purl string
		MCPRegistry                                       *struct {
			Name string `json:"name"`
		} `json:"mcp_registry"`
	} `json:"target"`
	Session *struct {
		Outcome string `json:"outcome"`
	} `json:"session"`
	Contract *struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"contract"`
	Signals map[string]struct{ State, Reason string } `json:"signals"`
	Supply  struct {
		OSV struct {
			Result *struct {
				Packages        int `json:"packages"`
				Vulnerabilities []struct {
					ID      string `json:"id"`
					Package string `json:"package"`
				} `json:"vulnerabilities"`
			} `json:"result"`
		} `json:"osv"`
	} `json:"supply"`
	Masking []struct {
		Marker string         `json:"marker"`
		Where  map[string]int `json:"where"`
	} `json:"masking"`
	Findings []struct{ Code, Severity, Subject, Message string }
}

func (r report) artefactFindings() []string {
	var out []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Code, "pkg.artefact.") {
			out = append(out, f.Code+" "+f.Subject)
		}
	}
	slices.Sort(out)
	return out
}

func scan(t *testing.T, env []string, target string, extra ...string) (report, e2e.Result) {
	t.Helper()
	args := append([]string{"scan", "--format", "json", "--data-dir", t.TempDir(), "--skip", "socket,github,dnssec,judge,mcp_registry"}, extra...)
	res := run(t, env, append(args, target)...)
	if res.Code != 0 && res.Code != 1 {
		t.Fatalf("scan %s: exit %d\n%s", target, res.Code, res.Stderr)
	}
	var r report
	if err := json.Unmarshal([]byte(res.Stdout), &r); err != nil {
		t.Fatalf("scan %s: report: %v\n%s", target, err, res.Stderr)
	}
	if r.Session == nil || r.Session.Outcome != "ok" {
		t.Fatalf("scan %s: session %+v\n%s", target, r.Session, res.Stderr)
	}
	return r, res
}

// TestBundleSurfaces scans each test bundle: the manifest's declared
// surface is compared with what its server lists, in both directions, and
// a bundle that agrees (a fixture, and a real server packed by the
// official packer) gives no finding of the comparison.
func TestBundleSurfaces(t *testing.T) {
	osv := supplytest.NewOSV()
	t.Cleanup(osv.Close)
	env := []string{"VERIFYMCP_OSV_ENDPOINT=" + osv.URL()}
	for _, tc := range []struct {
		bundle string
		want   []string
		tools  int
	}{
		{"benign", nil, 2},
		{"undeclared", []string{"pkg.artefact.surface.undeclared tool run_command"}, 3},
		{"unserved", []string{"pkg.artefact.surface.unserved tool delete_files"}, 2},
		{"generated", nil, 2},
		{"server-memory", nil, 9},
	} {
		t.Run(tc.bundle, func(t *testing.T) {
			t.Parallel()
			r, _ := scan(t, env, filepath.Join("testdata", tc.bundle+".mcpb"))
			if got := r.artefactFindings(); !slices.Equal(got, tc.want) {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
			if r.Target.Ecosystem != "mcpb" || r.Target.Source != "file" || !strings.HasPrefix(r.Target.Integrity, "sha256:") ||
				!strings.HasPrefix(r.Target.Purl, "pkg:generic/") || r.Contract == nil || len(r.Contract.Tools) != tc.tools {
				t.Errorf("target %+v, contract %+v", r.Target, r.Contract)
			}
			// The supply chain: OSV reads the tree a bundle ships (the
			// real server's node_modules, with the SDK version it pins);
			// a fixture ships none.
			osvSig := r.Signals["osv"]
			switch tc.bundle {
			case "server-memory":
				var ids []string
				if res := r.Supply.OSV.Result; res != nil {
					for _, v := range res.Vulnerabilities {
						ids = append(ids, v.Package+" "+v.ID)
					}
				}
				slices.Sort(ids)
				if want := []string{"@modelcontextprotocol/sdk GHSA-8r9q-7v3j-jr4g", "@modelcontextprotocol/sdk GHSA-w48q-cv73-mx4w"}; osvSig.State != "observed" || !slices.Equal(ids, want) {
					t.Errorf("osv %+v, advisories %v; want observed and %v", osvSig, ids, want)
				}
			default:
				if osvSig.State != "not_assessed" || !strings.Contains(osvSig.Reason, "ships no lockfile") {
					t.Errorf("osv %+v, want not assessed: the fixture ships no tree", osvSig)
				}
			}
		})
	}
}

// TestUVBundle scans the packer's own uv example: its pyproject.toml's
// dependencies are resolved from the index and installed as a PyPI
// release's tree (watched), its entry point runs on the venv's python, and
// OSV reads the PyPI packages installed. A uv project the sandbox cannot
// install as a client would is refused as unsupported.
func TestUVBundle(t *testing.T) {
	osv := supplytest.NewOSV()
	t.Cleanup(osv.Close)
	env := []string{"VERIFYMCP_OSV_ENDPOINT=" + osv.URL()}
	r, res := scan(t, env, filepath.Join("testdata", "hello-world-uv.mcpb"), "--verbose")
	if got := r.artefactFindings(); len(got) != 0 {
		t.Errorf("artefact findings %q, want none", got)
	}
	if r.Contract == nil || len(r.Contract.Tools) != 1 || r.Contract.Tools[0].Name != "say_hello" {
		t.Errorf("contract %+v, want the one tool say_hello", r.Contract)
	}
	var x struct {
		Install struct {
			Outcome  string `json:"outcome"`
			Packages int    `json:"packages"`
			Python   struct {
				Version string `json:"version"`
			} `json:"python"`
			Integrity struct{ Match bool } `json:"integrity"`
		} `json:"install"`
		Shipped struct {
			Cmd   []string `json:"cmd"`
			Notes []string `json:"notes"`
		} `json:"shipped"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &x); err != nil {
		t.Fatal(err)
	}
	in := x.Install
	if in.Outcome != "ok" || in.Packages < 10 || !strings.HasPrefix(in.Python.Version, "3.") || !in.Integrity.Match {
		t.Errorf("install %+v, want mcp 1.27.0's tree installed on a sandbox Python, the bundle's digest matched", in)
	}
	if want := []string{"python", "/work/bundle/src/server.py"}; !slices.Equal(x.Shipped.Cmd, want) {
		t.Errorf("command %q, want %q", x.Shipped.Cmd, want)
	}
	if s := r.Signals["sandbox.behavior"]; s.State != "observed" {
		t.Errorf("behaviour %+v, want observed", s)
	}
	if s := r.Signals["osv"]; s.State != "observed" || r.Supply.OSV.Result == nil || r.Supply.OSV.Result.Packages != in.Packages {
		t.Errorf("osv %+v (%+v), want observed over the %d packages installed", s, r.Supply.OSV.Result, in.Packages)
	}

	// A real server bundled by its author's rules: mcp-server-time's sdist
	// files, a hatchling package, which is built and installed with its
	// dependencies and its dev group; the manifest's two tools are served.
	r, res = scan(t, env, filepath.Join("testdata", "mcp-server-time-uv.mcpb"), "--verbose")
	if got := r.artefactFindings(); len(got) != 0 {
		t.Errorf("mcp-server-time-uv: artefact findings %q, want none", got)
	}
	var y struct {
		Install struct {
			Outcome string `json:"outcome"`
			Scripts []struct {
				Package, Event string
			} `json:"scripts"`
		} `json:"install"`
		Shipped struct {
			Cmd []string `json:"cmd"`
		} `json:"shipped"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &y); err != nil {
		t.Fatal(err)
	}
	built := slices.ContainsFunc(y.Install.Scripts, func(s struct{ Package, Event string }) bool {
		return s.Package == "mcp-server-time" && s.Event == "build"
	})
	if y.Install.Outcome != "ok" || !built || r.Contract == nil || len(r.Contract.Tools) != 2 {
		t.Errorf("mcp-server-time-uv: install %+v, contract %+v; want the package built and installed, two tools", y.Install, r.Contract)
	}
	if want := []string{"python", "/work/bundle/src/mcp_server_time/__main__.py", "--local-timezone", "UTC"}; !slices.Equal(y.Shipped.Cmd, want) {
		t.Errorf("mcp-server-time-uv: command %q, want %q", y.Shipped.Cmd, want)
	}

	dir := t.TempDir()
	manifest := `{"manifest_version": "0.4", "name": "sourced", "version": "1.0.0", "description": "d", "author": {"name": "a"},
 "server": {"type": "uv", "entry_point": "server.py"}}`
	pyproject := "[project]\nname = \"sourced\"\nversion = \"1.0.0\"\ndependencies = [\"lib\"]\n[tool.uv.sources]\nlib = { git = \"https://example.com/lib\" }\n"
	for name, body := range map[string]string{"manifest.json": manifest, "pyproject.toml": pyproject, "server.py": "print()\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A Poetry project (no [project]): uv installs nothing for it, and
	// neither does the sandbox; its server fails to import as a client's
	// would.
	poetry := t.TempDir()
	for name, body := range map[string]string{
		"manifest.json":  strings.ReplaceAll(manifest, "sourced", "poetry-project"),
		"pyproject.toml": "[build-system]\nrequires = [\"poetry-core\"]\n[tool.poetry]\nname = \"poetry-project\"\n[tool.poetry.dependencies]\nmcp = \"^1.0\"\n",
		"server.py":      "import mcp\n",
	} {
		if err := os.WriteFile(filepath.Join(poetry, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pr := run(t, env, "scan", "--format", "json", "--data-dir", t.TempDir(), "--skip", "socket,github,dnssec,judge,mcp_registry,osv", "mcpb:"+poetry)
	var pz struct {
		Session struct {
			Outcome    string `json:"outcome"`
			StderrTail string `json:"stderr_tail"`
		} `json:"session"`
		Install struct {
			Outcome  string `json:"outcome"`
			Packages int    `json:"packages"`
		} `json:"install"`
	}
	if err := json.Unmarshal([]byte(pr.Stdout), &pz); err != nil {
		t.Fatalf("a Poetry uv bundle: exit %d, %v\n%s", pr.Code, err, pr.Stderr)
	}
	if pz.Install.Outcome != "ok" || pz.Install.Packages != 0 || pz.Session.Outcome != "start_crashed" || !strings.Contains(pz.Session.StderrTail, "No module named 'mcp'") {
		t.Errorf("a Poetry uv bundle: install %+v, session %+v; want nothing installed and the import failing", pz.Install, pz.Session)
	}

	bad := run(t, nil, "scan", "--data-dir", t.TempDir(), "mcpb:"+dir)
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "tool.uv.sources") {
		t.Errorf("a uv bundle with git sources: exit %d, stderr %q; want 2 naming [tool.uv.sources]", bad.Code, bad.Stderr)
	}
}

// TestBundleSettings: the benign bundle's settings are filled as a client
// would, its sensitive one with a placeholder that is a known secret of
// the scan (masked wherever it would show) and never appears in the
// report.
func TestBundleSettings(t *testing.T) {
	_, res := scan(t, nil, "mcpb:"+filepath.Join("testdata", "benign.mcpb"), "--verbose", "--skip", "osv")
	var r struct {
		Shipped struct {
			Cmd      []string `json:"cmd"`
			EnvNames []string `json:"env_names"`
			Manifest struct {
				Sensitive  []string `json:"sensitive"`
				UserConfig []string `json:"user_config"`
			} `json:"manifest"`
		} `json:"shipped"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &r); err != nil {
		t.Fatal(err)
	}
	sh := r.Shipped
	if !slices.Equal(sh.Manifest.Sensitive, []string{"api_key"}) || !slices.Equal(sh.Manifest.UserConfig, []string{"api_key", "notes_dir"}) ||
		!slices.Equal(sh.EnvNames, []string{"NOTES_API_KEY"}) || !slices.Contains(sh.Cmd, "/home/sandbox/notes") {
		t.Errorf("shipped %+v: want the settings filled (notes_dir's default under HOME) and api_key sensitive", sh)
	}
	if strings.Contains(res.Stdout+res.Stderr, "mcpb-api_key-") {
		t.Error("the sensitive setting's placeholder value appears in the output")
	}
}

// TestBundleByURL scans a bundle by URL from a loopback server, checked
// against the digest the target names, and as an MCP registry entry of
// type mcpb (server.json's identifier and fileSha256); a digest that does
// not match is the target's error.
func TestBundleByURL(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "benign.mcpb"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	memory, err := os.ReadFile(filepath.Join("testdata", "server-memory.mcpb"))
	if err != nil {
		t.Fatal(err)
	}
	memSum := sha256.Sum256(memory)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/releases/benign-1.0.0.mcpb":
			_, _ = w.Write(data)
		case "/releases/server-memory-2025.8.4.mcpb":
			_, _ = w.Write(memory)
		default:
			http.NotFound(w, r)
		}
	}))
	defer files.Close()
	bundleURL := files.URL + "/releases/benign-1.0.0.mcpb"

	r, _ := scan(t, nil, "mcpb:"+bundleURL+"#sha256="+hexSum, "--no-exercise", "--skip", "osv")
	if r.Target.Source != "url" || r.Target.Integrity != "sha256:"+hexSum {
		t.Errorf("by URL: target %+v", r.Target)
	}
	bad := run(t, nil, "scan", "--data-dir", t.TempDir(), "mcpb:"+bundleURL+"#sha256="+strings.Repeat("0", 64))
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "has digest sha256:"+hexSum) {
		t.Errorf("a wrong digest: exit %d, %q; want 2 naming the digest", bad.Code, bad.Stderr)
	}
	missing := run(t, nil, "scan", "--data-dir", t.TempDir(), "mcpb:"+files.URL+"/releases/none.mcpb")
	if missing.Code != 2 || !strings.Contains(missing.Stderr, "404") {
		t.Errorf("a bundle that is not there: exit %d, %q; want 2 and the 404", missing.Code, missing.Stderr)
	}

	// An MCP registry entry of type mcpb, end to end: the real server's
	// bundle by its URL and fileSha256, its contract, behaviour and tool
	// calls, and OSV over the tree it ships.
	const name = "io.github.verifymcp/memory-bundle"
	memURL := files.URL + "/releases/server-memory-2025.8.4.mcpb"
	serverJSON := `{"$schema": "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
  "name": "` + name + `", "description": "A knowledge-graph memory server shipped as an MCPB bundle.", "version": "2025.8.4",
  "packages": [{"registryType": "mcpb", "identifier": "` + memURL + `", "fileSha256": "` + hex.EncodeToString(memSum[:]) + `", "transport": {"type": "stdio"}}]}`
	reg := e2e.MCPRegistry(t, name, "2025.8.4", serverJSON)
	osv := supplytest.NewOSV()
	defer osv.Close()
	e, _ := scan(t, []string{"VERIFYMCP_MCP_REGISTRY=" + reg, "VERIFYMCP_OSV_ENDPOINT=" + osv.URL()}, "registry:"+name+"@2025.8.4")
	if e.Target.Ecosystem != "mcpb" || e.Target.Integrity != "sha256:"+hex.EncodeToString(memSum[:]) || e.Target.MCPRegistry == nil || e.Target.MCPRegistry.Name != name {
		t.Errorf("registry entry: target %+v", e.Target)
	}
	for _, sig := range []string{"sandbox.session", "contract", "sandbox.behavior", "sandbox.exercise", "osv"} {
		if s := e.Signals[sig]; s.State != "observed" {
			t.Errorf("registry entry: signal %s %+v, want observed", sig, s)
		}
	}
}

// TestBadBundles: a file that is no bundle, or a bundle that is not
// there, is refused before the engine is used, with the reason.
func TestBadBundles(t *testing.T) {
	dir := t.TempDir()
	notZip := filepath.Join(dir, "broken.mcpb")
	if err := os.WriteFile(notZip, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, want string }{
		{notZip, "broken.mcpb"},
		{filepath.Join(dir, "absent.mcpb"), "no such file"},
		{"mcpb:ftp://example.com/x.mcpb", "http or https"},
		{"mcpb:" + notZip + "#sha256=12", "64 hexadecimal digits"},
	} {
		res := run(t, nil, "scan", "--data-dir", t.TempDir(), tc.target)
		if res.Code != 2 || !strings.Contains(res.Stderr, tc.want) {
			t.Errorf("scan %s: exit %d, stderr %q; want 2 and %q", tc.target, res.Code, res.Stderr, tc.want)
		}
	}
}

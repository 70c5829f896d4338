//go:build docker

package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/store"
)

// TestConfigScanServers: a client config naming three real pinned npm
// servers and one @latest, plus a local script and a URL server, read and
// then scanned end to end in the sandbox. The config holds literal
// credentials; none of them appears in any output format, on stderr, or
// anywhere in the data directory (the store, the bundles), and no server
// is started with them: only their names reach the sandbox.
func TestConfigScanServers(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString(b)
	token := "ghp_" + strings.NewReplacer("-", "x", "_", "y").Replace(enc + enc)[:36]
	password := "pw" + strings.NewReplacer("-", "x", "_", "y").Replace(enc)[:14]
	cfg := `{
  // A Cursor config, with a comment and a trailing comma (JSONC).
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31"],
      "env": {"GITHUB_TOKEN": "` + token + `"}},
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/tmp"]},
    "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.8.31"]},
    "thinking": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-sequential-thinking@latest"],
      "env": {"DB_PASSWORD": "` + password + `"}},
    "local": {"command": "node", "args": ["./scripts/server.js"]},
    "remote": {"url": "http://mcp.example.com/mcp"},
  },
}
`
	path := filepath.Join(dir, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{token, password}
	noSecret := func(where, s string) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(s, sec) {
				t.Errorf("%s holds a credential value from the config", where)
			}
		}
	}

	res := verifymcp(t, nil, "config", "scan", path, "--scan-servers", "-j", "2", "--data-dir", data, "--format", "json",
		"--skip", "osv,socket,github,dnssec,judge")
	if res.code != 0 {
		t.Fatalf("config scan --scan-servers: exit %d\n%s", res.code, res.stderr)
	}
	noSecret("the JSON report", res.stdout)
	noSecret("stderr", res.stderr)
	var rep struct {
		Findings []struct {
			Code   string `json:"code"`
			Server string `json:"server"`
		} `json:"findings"`
		Targets []struct {
			Server     string `json:"server"`
			Target     string `json:"target"`
			NotScanned string `json:"not_scanned"`
		} `json:"targets"`
		Scans []struct {
			Server  string   `json:"server"`
			Target  string   `json:"target"`
			Version string   `json:"version"`
			RunID   string   `json:"run_id"`
			Outcome string   `json:"outcome"`
			Score   *float64 `json:"score"`
			Drift   string   `json:"drift"`
		} `json:"scans"`
		Summary struct {
			Statement string `json:"statement"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range rep.Findings {
		found[f.Server+" "+f.Code] = true
	}
	for _, want := range []string{"memory cfg.credential.literal", "thinking cfg.credential.literal", "thinking cfg.launch.unpinned",
		"memory cfg.launch.pinned", "remote cfg.transport.plaintext", "remote cfg.reach.remote", "local cfg.reach.local_process"} {
		if !found[want] {
			t.Errorf("no finding %q in %v", want, found)
		}
	}
	if found["filesystem cfg.filesystem.broad"] {
		t.Error("/tmp reported as broad filesystem access")
	}
	notScanned := map[string]string{}
	for _, tg := range rep.Targets {
		if tg.NotScanned != "" {
			notScanned[tg.Server] = tg.NotScanned
		}
	}
	if len(notScanned) != 2 || notScanned["local"] == "" || notScanned["remote"] == "" {
		t.Errorf("not scanned: %v, want local and remote with reasons", notScanned)
	}
	if len(rep.Scans) != 4 {
		t.Fatalf("%d scans, want 4: %+v\n%s", len(rep.Scans), rep.Scans, res.stderr)
	}
	for _, s := range rep.Scans {
		if s.Outcome != "ok" || s.RunID == "" || s.Score == nil || s.Drift != "first_scan" || s.Version == "" || s.Version == "latest" {
			t.Errorf("scan of %s (%s): %+v", s.Server, s.Target, s)
		}
	}

	// Again, in the other formats: every server resumed from the store, and
	// with --rescan compared with the pins the first run made.
	for _, format := range []string{"table", "sarif"} {
		res := verifymcp(t, nil, "config", "scan", path, "--scan-servers", "--data-dir", data, "--format", format, "--skip", "osv,socket,github,dnssec,judge")
		if res.code != 0 {
			t.Fatalf("config scan --format %s: exit %d\n%s", format, res.code, res.stderr)
		}
		noSecret("the "+format+" report", res.stdout)
		noSecret("stderr", res.stderr)
	}
	res = verifymcp(t, nil, "config", "scan", path, "--scan-servers", "--rescan", "-j", "2", "--data-dir", data, "--format", "json",
		"--skip", "osv,socket,github,dnssec,judge")
	if res.code != 0 {
		t.Fatalf("config scan --rescan: exit %d\n%s", res.code, res.stderr)
	}
	noSecret("the rescan's report", res.stdout)
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Scans {
		if s.Drift != "compared" {
			t.Errorf("rescan of %s: drift %q, want compared with its pin", s.Server, s.Drift)
		}
	}

	// Nothing stored holds a credential value: the database, its log, the
	// bundles and the caches.
	err := filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, sec := range secrets {
			if bytes.Contains(content, []byte(sec)) {
				t.Errorf("%s holds a credential value from the config", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The store keeps bundles and results compressed: read them back.
	st, err := store.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	err = st.EachBundle(context.Background(), store.Filter{}, func(runID string, bundle []byte) error {
		n++
		noSecret("stored bundle "+runID, string(bundle))
		for _, v := range []string{"8", "7"} {
			if r, err := st.Result(context.Background(), runID, v); err == nil {
				noSecret("stored result "+runID, string(r))
			}
		}
		return nil
	})
	if err != nil || n != 8 {
		t.Errorf("stored bundles: %d, %v; want the 8 runs of the two scanning runs", n, err)
	}
}

// TestConfigScanNpmAndPyPI: a VS Code config naming a real npm server
// (npx, given ${workspaceFolder}) and a real PyPI server (uvx, pinned,
// its options before the package) scans to the end, exit 0: the PyPI
// target resumes from the store like the npm one, the workspace folder
// is the sandbox's scratch directory (the filesystem server starts on
// it; the git server, given it as its repository, is not blamed if it
// fails on it), and the servers whose variables have no honest stand-in,
// or that name a module, are listed as not scanned with why. Neither release is scanned
// by another test, so no tree is shared.
func TestConfigScanNpmAndPyPI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	const (
		npmTarget  = "npm:@modelcontextprotocol/server-filesystem@2026.7.10"
		pypiTarget = "pypi:mcp-server-time==2026.10.10"
	)
	cfg := `{
  "inputs": [{"type": "promptString", "id": "tz", "description": "Time zone"}],
  "servers": {
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.7.10", "${workspaceFolder}"]},
    "time": {"command": "uvx", "args": ["--python", "3", "mcp-server-time==2026.10.10", "--local-timezone", "UTC"]},
    "time-asked": {"command": "uvx", "args": ["mcp-server-time==2026.10.10", "--local-timezone", "${input:tz}"]},
    "time-module": {"command": "python3", "args": ["-m", "mcp_server_time"]},
    "git": {"command": "uvx", "args": ["mcp-server-git==2026.7.10", "--repository", "${workspaceFolder}"]}
  }
}
`
	path := filepath.Join(dir, ".vscode", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Targets []struct {
			Server      string   `json:"server"`
			Target      string   `json:"target"`
			Args        []string `json:"args"`
			Substituted []string `json:"substituted"`
			NotScanned  string   `json:"not_scanned"`
		} `json:"targets"`
		Scans []struct {
			Server  string   `json:"server"`
			Target  string   `json:"target"`
			Version string   `json:"version"`
			RunID   string   `json:"run_id"`
			Outcome string   `json:"outcome"`
			Score   *float64 `json:"score"`
			Drift   string   `json:"drift"`
			Error   string   `json:"error"`
		} `json:"scans"`
		Summary struct {
			Gate struct {
				Result  string   `json:"result"`
				Tripped []string `json:"tripped"`
			} `json:"gate"`
		} `json:"summary"`
	}
	skip := "osv,socket,github,dnssec,judge"
	res := verifymcp(t, nil, "config", "scan", path, "--scan-servers", "-j", "2", "--data-dir", data, "--format", "json", "--skip", skip)
	if res.code != 0 {
		t.Fatalf("config scan --scan-servers: exit %d\n%s", res.code, res.stderr)
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{}
	for _, tg := range rep.Targets {
		targets[tg.Server] = tg.Target + " | " + strings.Join(tg.Args, " ") + " | " + strings.Join(tg.Substituted, "; ") + " | " + tg.NotScanned
	}
	want := map[string]string{
		"files":       npmTarget + " | /tmp | args[2] ${workspaceFolder} -> /tmp (the sandbox's scratch working directory) | ",
		"time":        pypiTarget + " | --local-timezone UTC |  | ",
		"time-asked":  ` | --local-timezone ${input:tz} |  | args[2] is "${input:tz}": an input is typed at launch, and the scan gives no made-up value to what is not a credential`,
		"time-module": " |  |  | python -m names a module, not a package (python3 -m mcp_server_time): which distribution provides it, and at which version, is not in the file",
	}
	for k, w := range want {
		if targets[k] != w {
			t.Errorf("target %s:\n got %s\nwant %s", k, targets[k], w)
		}
	}
	if len(rep.Scans) != 3 {
		t.Fatalf("%d scans, want 3: %+v\n%s", len(rep.Scans), rep.Scans, res.stderr)
	}
	scanned := map[string]bool{}
	firstRun := map[string]string{}
	gitFailed := false
	for _, s := range rep.Scans {
		scanned[s.Target] = true
		firstRun[s.Target] = s.RunID
		if s.Server == "git" {
			// The git server is given the scratch directory for the user's
			// project, which is no repository. If it fails to start on
			// that, the failure is the stand-in's: no score is shown.
			switch s.Outcome {
			case "ok":
				if s.Score == nil {
					t.Errorf("git started, but has no score: %+v", s)
				}
			case "start_crashed", "handshake_timeout", "protocol_error":
				gitFailed = true
				if s.Score != nil || !strings.Contains(s.Error, "started on the scanner's stand-ins (args[2] ${workspaceFolder} -> /tmp") ||
					!strings.Contains(s.Error, "not scored as the package's outcome") {
					t.Errorf("git failed on the stand-in and is blamed for it: %+v", s)
				}
			default:
				t.Errorf("scan of git: %+v", s)
			}
			t.Logf("git on ${workspaceFolder}: %s", s.Outcome)
			continue
		}
		// ok: the filesystem server started on the scratch directory, and
		// no server was blamed for a value the scanner made up.
		if s.Outcome != "ok" || s.RunID == "" || s.Score == nil || s.Drift != "first_scan" || s.Version == "" {
			t.Errorf("scan of %s (%s): %+v", s.Server, s.Target, s)
		}
	}
	if !scanned[npmTarget] || !scanned[pypiTarget] {
		t.Errorf("scanned %v, want %s and %s", scanned, npmTarget, pypiTarget)
	}

	// Again: both resume from the store (the PyPI key carries its files'
	// digests), and --fail-on low gates on the packages' findings (the
	// config's own findings here are info only).
	res = verifymcp(t, nil, "config", "scan", path, "--scan-servers", "--data-dir", data, "--format", "json", "--skip", skip, "--fail-on", "low")
	if res.code != 0 && res.code != 1 {
		t.Fatalf("resumed config scan: exit %d\n%s", res.code, res.stderr)
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Scans {
		if (s.Outcome != "ok" && s.Server != "git") || s.RunID != firstRun[s.Target] {
			t.Errorf("resumed scan of %s: %+v, want the stored run %s", s.Server, s, firstRun[s.Target])
		}
		if s.Server == "git" && gitFailed && s.Score != nil {
			t.Errorf("resumed, git is blamed for the stand-in: %+v", s)
		}
	}
	tripped := rep.Summary.Gate.Tripped
	if (res.code == 1) != (len(tripped) > 0) || (res.code == 1) != (rep.Summary.Gate.Result == "failed") {
		t.Errorf("exit %d with gate %q, tripped %q", res.code, rep.Summary.Gate.Result, tripped)
	}
	for _, tr := range tripped {
		if !strings.HasPrefix(tr, npmTarget+": ") && !strings.HasPrefix(tr, "pypi:mcp-server-time==2026.10.10: ") &&
			(gitFailed || !strings.HasPrefix(tr, "pypi:mcp-server-git==2026.7.10: ")) {
			t.Errorf("tripped %q is not a finding of a package scanned on its own terms", tr)
		}
	}
	t.Logf("--fail-on low: exit %d, tripped %q", res.code, tripped)
}

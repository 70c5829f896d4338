package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/rubric"
)

// shippedFormats writes rep in every format a person or a machine reads.
func shippedFormats(t *testing.T, rep Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	var js, tbl, md, page bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&tbl, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	out["json"], out["table"], out["markdown"], out["html"] = js.String(), tbl.String(), md.String(), page.String()
	out["compact"] = compactText(t, rep, TableOptions{Width: 80})
	out["sarif"] = string(writeSARIF(t, rep))
	return out
}

// TestShippedSections: a release that ran as shipped has its section in
// the full table, Markdown and HTML, a line in the compact table, and
// its facts there; label values stay out of every format (the bundle
// holds one: the positive control).
func TestShippedSections(t *testing.T) {
	tests := []struct {
		fixture string
		ranAs   string   // in the compact table's release line
		want    []string // in the full table
	}{
		{"shipped_image", "ran as 65534:65534", []string{
			"RELEASE  image run as shipped (no install phase)",
			"none declared, so ROOT; the sandbox ran it as 65534:65534",
			"debian 13, 367 packages found",
			"sha256:e1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80, 3 layers",
			"io.github.acme/time-mcp (claimed by the release's label)",
			"PATH, TIME_MCP_LOG_LEVEL, TZ (names; values are never kept)",
			"8080/tcp",
		}},
		{"shipped_root", "first start as 65534:65534: start_crashed (exit 1); ran as 0:0", []string{
			"none declared, so ROOT; the sandbox ran it as 0:0",
			"starts       first start as 65534:65534: start_crashed (exit 1); ran as 0:0",
			"pkg.artefact.image.requires_root",
		}},
		{"shipped_bundle", "ran as 65534:65534", []string{
			"RELEASE  bundle run as shipped (no install phase)",
			"MCPB 0.3  time-tools@0.3.1 by Acme Tools; node server, entry point server/index.js",
			"api_key (sensitive), notes_dir",
			"tools get_time, echo; prompts not declared (manifest.json)",
			"verified, self-signed, not trusted; signer Acme Tools Release",
			"platforms darwin, linux, win32; runtimes node >=18.0.0",
			"42 files, 1.758MiB unpacked",
			"pkg.artefact.surface.undeclared  tool run_command",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			b := loadBundle(t, tt.fixture)
			rep := build(t, b)
			out := shippedFormats(t, rep)
			for _, w := range tt.want {
				if !strings.Contains(out["table"], w) {
					t.Errorf("the table lacks %q", w)
				}
			}
			if !strings.Contains(out["compact"], "  release  ") || !strings.Contains(strings.Join(strings.Fields(out["compact"]), " "), tt.ranAs) {
				t.Errorf("the compact table has no release line:\n%s", out["compact"])
			}
			if !strings.Contains(out["markdown"], "## Release") || !strings.Contains(out["html"], `<section id="release"`) {
				t.Error("Markdown or HTML has no Release section")
			}
			for label, value := range b.Shipped.Labels {
				if value == b.Shipped.MCPName {
					continue // shown as the MCP name it claims
				}
				if !strings.Contains(out["table"], label) {
					t.Errorf("label %s is not named", label)
				}
				for format, text := range out {
					if strings.Contains(text, value) && !strings.Contains(rep.Target.Version, value) {
						t.Errorf("%s carries the value of label %s", format, label)
					}
				}
			}
		})
	}
	if b := loadBundle(t, "shipped_image"); !strings.Contains(b.Shipped.Labels["org.opencontainers.image.source"], "https://github.com/acme/time-mcp") {
		t.Fatal("positive control: the image fixture has lost its source label's value")
	}

	// An installed release has no section, and null in JSON.
	rep := build(t, loadBundle(t, "everything"))
	out := shippedFormats(t, rep)
	if strings.Contains(out["table"], "RELEASE") || strings.Contains(out["compact"], "  release  ") ||
		strings.Contains(out["markdown"], "## Release") || strings.Contains(out["html"], `id="release"`) {
		t.Error("an installed release has a release section")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out["json"]), &m); err != nil {
		t.Fatal(err)
	}
	if got := string(m["shipped"]); got != "null" {
		t.Errorf("shipped = %s, want null", got)
	}
}

// TestShippedHeader: the header names the release as resolved: an image
// by its digest when the evidence resolved it, else by its tag after ':'
// (an image's name@tag names nothing); a bundle as name@version.
func TestShippedHeader(t *testing.T) {
	digest := "oci:ghcr.io/acme/time-mcp@sha256:7d3f9a1c5e2b8d4f6a0c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f"
	tests := []struct {
		name     string
		fixture  string
		resolved string
		want     string
	}{
		{"image_by_digest", "shipped_image", "keep", "oci:ghcr.io/acme/time-mcp:1.4.2 -> " + digest},
		{"image_by_tag", "shipped_image", "", "oci:ghcr.io/acme/time-mcp:1.4.2"},
		{"bundle", "shipped_bundle", "keep", "mcpb:https://downloads.example.com/time-tools-0.3.1.mcpb -> mcpb:time-tools@0.3.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := build(t, loadBundle(t, tt.fixture))
			if tt.resolved != "keep" {
				rep.Shipped.Resolved = tt.resolved
			}
			if got := targetLine(rep); got != tt.want {
				t.Errorf("targetLine = %q, want %q", got, tt.want)
			}
			out := shippedFormats(t, rep)
			name := releaseName(rep)
			if !strings.HasPrefix(out["markdown"], "# verifymcp report: "+mdCode(name, false)+"\n") {
				t.Errorf("the Markdown title does not name %s:\n%s", name, strings.SplitN(out["markdown"], "\n", 2)[0])
			}
			if !strings.Contains(out["html"], "<h1>verifymcp report: <code>"+name+"</code></h1>") {
				t.Errorf("the page does not name %s", name)
			}
			if strings.Contains(out["table"], "time-mcp@1.4.2") || strings.Contains(out["sarif"], "time-mcp@1.4.2") {
				t.Error("an image is named name@tag")
			}
		})
	}
}

// TestReleaseName: ReleaseName names a bundle's release as its report
// does (diff names its sides by it).
func TestReleaseName(t *testing.T) {
	for _, fixture := range []string{"shipped_image", "shipped_bundle", "everything"} {
		for _, resolved := range []string{"keep", ""} {
			b := loadBundle(t, fixture)
			if b.Shipped != nil && resolved != "keep" {
				b.Shipped.Resolved = resolved
			}
			if got, want := ReleaseName(b), releaseName(build(t, b)); got != want {
				t.Errorf("%s, resolved %q: ReleaseName = %q, the report's %q", fixture, resolved, got, want)
			}
		}
	}
}

// TestShippedSARIF: a shipped release's results name it as its ecosystem
// writes it, and a finding about a tool the manifest does not declare
// stands at that tool.
func TestShippedSARIF(t *testing.T) {
	r := rubric.Current()
	for _, tt := range []struct {
		fixture, pkg, standIn string
	}{
		{"shipped_image", "oci:ghcr.io/acme/time-mcp@sha256:7d3f9a1c5e2b8d4f6a0c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f",
			".verifymcp/oci/ghcr.io/acme/time-mcp"},
		{"shipped_bundle", "mcpb:time-tools@0.3.1", ".verifymcp/mcpb/time-tools"},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			b := loadBundle(t, tt.fixture)
			rep := Build(b, r, rubric.Evaluate(b, r))
			data := writeSARIF(t, rep)
			checkSARIF(t, tt.fixture, data)
			run := decodeSARIF(t, data).Runs[0]
			if run.Properties["target"] != tt.pkg || run.Properties["purl"] != b.Target.Purl {
				t.Errorf("run target %v, purl %v; want %s, %s", run.Properties["target"], run.Properties["purl"], tt.pkg, b.Target.Purl)
			}
			undeclared := 0
			for _, res := range run.Results {
				if res.Props["package"] != tt.pkg {
					t.Errorf("%s: package %v, want %s", res.RuleID, res.Props["package"], tt.pkg)
				}
				if got := res.Locations[0].Physical.Artifact.URI; got != tt.standIn {
					t.Errorf("%s: stands at %s, want %s", res.RuleID, got, tt.standIn)
				}
				if res.RuleID != rubric.CodeSurfaceUndeclared {
					continue
				}
				undeclared++
				l := res.Locations[0].Logical[0]
				if l.Name != "run_command" || l.Kind != "function" || l.FQN != tt.pkg+"/tool:run_command" {
					t.Errorf("the undeclared tool's result is at %+v, want the tool run_command", l)
				}
			}
			if want := map[string]int{"shipped_bundle": 1}[tt.fixture]; undeclared != want {
				t.Errorf("%d %s results, want %d", undeclared, rubric.CodeSurfaceUndeclared, want)
			}
		})
	}
}

// TestShippedEscaped: what a release declares of itself (its command,
// manifest, signer) is the package's text: it is escaped in every
// format.
func TestShippedEscaped(t *testing.T) {
	b := loadBundle(t, "shipped_bundle")
	b.Shipped.Manifest.Author = "Acme <script>alert(1)</script> [x](https://evil.example/a) \x1b]0;owned\x07"
	b.Shipped.Cmd = append(b.Shipped.Cmd, "--x=<img src=x onerror=alert(2)>", "\u202eevil")
	b.Shipped.Signature.Signer = "**bold** | cell @octocat"
	rep := build(t, b)
	out := shippedFormats(t, rep)
	checkMarkdown(t, out["markdown"])
	for _, bad := range []string{"<script>", "<img src"} {
		if strings.Contains(out["html"], bad) {
			t.Errorf("the page carries %q", bad)
		}
	}
	for _, format := range []string{"table", "markdown", "html"} {
		if strings.ContainsAny(out[format], "\x1b\x07\u202e") {
			t.Errorf("%s carries a control character of the release's", format)
		}
	}
	if !strings.Contains(out["table"], `\x1b]0;owned`) {
		t.Error("the table does not show the escape as text")
	}
}

// TestShippedSchema: the shipped member is required, strict and keeps
// values out: a report that carried label values or settings' values
// would not validate.
func TestShippedSchema(t *testing.T) {
	sch := compileSchema(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, build(t, loadBundle(t, "shipped_bundle"))); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, sch, buf.Bytes()); err != nil {
		t.Fatalf("the bundle's report does not validate: %v", err)
	}
	shipped := func(m map[string]any) map[string]any { return m["shipped"].(map[string]any) }
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"shipped_omitted", func(m map[string]any) { delete(m, "shipped") }},
		{"labels_with_values", func(m map[string]any) { shipped(m)["labels"] = map[string]any{"a": "b"} }},
		{"env_with_values", func(m map[string]any) { shipped(m)["env"] = []any{"API_KEY=x"} }},
		{"kind_other", func(m map[string]any) { shipped(m)["kind"] = "tarball" }},
		{"notes_null", func(m map[string]any) { shipped(m)["notes"] = nil }},
		{"user_config_values", func(m map[string]any) {
			shipped(m)["manifest"].(map[string]any)["user_config_values"] = map[string]any{"api_key": "x"}
		}},
		{"signature_verified_omitted", func(m map[string]any) { delete(shipped(m)["signature"].(map[string]any), "verified") }},
		{"declared_tools_omitted", func(m map[string]any) { delete(shipped(m)["declared"].(map[string]any), "tools") }},
		{"schema_version_v10", func(m map[string]any) { m["schema_version"] = "verifymcp.report/v10" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, data); err == nil {
				t.Error("schema accepted the mutated report")
			}
		})
	}
}

// TestShippedFirstStart: an image that did not start as the sandbox's
// unprivileged user and then started as root shows its first start in
// every format, its JSON carries it (first_start, null for an image
// whose first start was the only one) and validates against version 12
// only: version 11's schema forbids the member, and without it the report
// is a version 11 report.
func TestShippedFirstStart(t *testing.T) {
	rep := build(t, loadBundle(t, "shipped_root"))
	out := shippedFormats(t, rep)
	const line = "first start as 65534:65534: start_crashed (exit 1); ran as 0:0"
	for _, format := range []string{"table", "markdown", "html"} {
		if !strings.Contains(out[format], line) {
			t.Errorf("%s does not show %q", format, line)
		}
	}
	if !strings.Contains(out["html"], "<strong>"+line+"</strong>") {
		t.Error("the page does not mark a first start that ended in root")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out["json"]), &m); err != nil {
		t.Fatal(err)
	}
	fs, _ := m["shipped"].(map[string]any)["first_start"].(map[string]any)
	if fs["as"] != "65534:65534" || fs["outcome"] != "start_crashed" || fs["exit_code"] != 1.0 ||
		!strings.Contains(fs["stderr_tail"].(string), "mkdir /var/lib/time-mcp: permission denied") {
		t.Errorf("first_start = %v", fs)
	}
	if err := validate(t, compileSchema(t), []byte(out["json"])); err != nil {
		t.Fatalf("the report does not validate: %v", err)
	}
	v11 := compileSchemaBytes(t, "report.v11.schema.json", mustRead(t, "schema/report.v11.schema.json"))
	m["schema_version"] = "verifymcp.report/v11"
	data, _ := json.Marshal(m)
	if err := validate(t, v11, data); err == nil {
		t.Error("a report with a first start validates against the v11 schema")
	}
	delete(m["shipped"].(map[string]any), "first_start")
	data, _ = json.Marshal(m)
	if err := validate(t, v11, data); err != nil {
		t.Errorf("without what v12 added, the report should be a v11 report: %v", err)
	}

	// An image whose first start was the only one: null, and no line.
	rep = build(t, loadBundle(t, "shipped_image"))
	out = shippedFormats(t, rep)
	if strings.Contains(out["table"], "first start") || strings.Contains(out["compact"], "first start") {
		t.Error("an image started once shows a first start")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out["json"]), &top); err != nil {
		t.Fatal(err)
	}
	var sh map[string]json.RawMessage
	if err := json.Unmarshal(top["shipped"], &sh); err != nil {
		t.Fatal(err)
	}
	if got := string(sh["first_start"]); got != "null" {
		t.Errorf("first_start = %s, want null", got)
	}
}

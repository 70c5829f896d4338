package benchmark_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/rubric"
)

const validReviewed = `id: example
kind: reviewed
track: package
target: npm:example-mcp@1.2.3
reviewer: Ada Lovelace <ada@lovelace.example>
provenance: Reported by a user on 2026-01-05, reviewed before any scan.
rubric_version: "5"
scope: [pkg.session.]
expected: [pkg.session.start_crashed]
env: {API_TOKEN: placeholder}
args: [--stdio]
disputes: []
selected: 2026-01-05
`

const validSynthetic = `id: crash
kind: synthetic
track: package
target: fixture:crash@1.0.0
reviewer: pending
provenance: Built by the project.
rubric_version: 5
scope: [pkg.session.]
expected: [pkg.session.start_crashed]
statement: It exits at start; it would not if it answered initialize.
`

const fixtureManifest = `{"name":"verifymcp-case-crash","version":"1.0.0","bin":{"verifymcp-case-crash":"server.js"}}`

// corpus returns a file system with the given case files and a valid
// crash fixture.
func corpus(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"fixtures/crash/package.json": {Data: []byte(fixtureManifest)},
		"fixtures/crash/server.js":    {Data: []byte("process.exit(3)\n")},
		"fixtures/crash/fixture.json": {Data: []byte(`{"crash":3}`)},
		"cases/README.md":             {Data: []byte("# cases\n")},
	}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func TestLoadCorpusValid(t *testing.T) {
	cases, err := benchmark.LoadCorpusFS(corpus(map[string]string{
		"cases/reviewed/example.yaml": validReviewed,
		"cases/synthetic/crash.yaml":  validSynthetic,
		"cases/reviewed/README.md":    "# reviewed\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].ID != "crash" || cases[1].ID != "example" {
		t.Fatalf("cases %+v, want crash (synthetic) then example (reviewed)", cases)
	}
	ex := cases[1]
	if ex.File != "cases/reviewed/example.yaml" || ex.RubricVersion != "5" || ex.Env["API_TOKEN"] != "placeholder" || ex.Args[0] != "--stdio" {
		t.Errorf("case %+v", ex)
	}
	if cases[0].RubricVersion != "5" {
		t.Errorf("an unquoted rubric version reads as %q", cases[0].RubricVersion)
	}
}

// TestLoadCorpusErrors checks that each malformed file is refused with its
// file, its line and the right sentinel.
func TestLoadCorpusErrors(t *testing.T) {
	replace := func(base, old, new string) string {
		if !strings.Contains(base, old) {
			panic("test setup: " + old)
		}
		return strings.Replace(base, old, new, 1)
	}
	tests := []struct {
		name  string
		file  string
		data  string
		is    error
		where string // file:line
		msg   string
	}{
		{"unknown_field", "cases/reviewed/example.yaml", replace(validReviewed, "disputes: []", "scopes: [pkg.x.]"), benchmark.ErrInvalidCase, "example.yaml:12", `unknown field "scopes"`},
		{"remote_track", "cases/reviewed/example.yaml", replace(validReviewed, "track: package", "track: remote"), benchmark.ErrTrack, "example.yaml:3", "package track only"},
		{"missing_track", "cases/reviewed/example.yaml", replace(validReviewed, "track: package\n", ""), benchmark.ErrInvalidCase, "example.yaml", "track: missing"},
		{"unpinned_target", "cases/reviewed/example.yaml", replace(validReviewed, "@1.2.3", ""), benchmark.ErrTarget, "example.yaml:4", "registry-only"},
		{"range_target", "cases/reviewed/example.yaml", replace(validReviewed, "@1.2.3", "@^1.2.3"), benchmark.ErrTarget, "example.yaml:4", "range"},
		{"tag_target", "cases/reviewed/example.yaml", replace(validReviewed, "@1.2.3", "@latest"), benchmark.ErrTarget, "example.yaml:4", "dist-tag"},
		{"remote_endpoint_target", "cases/reviewed/example.yaml", replace(validReviewed, "npm:example-mcp@1.2.3", "https://mcp.example.com/sse"), benchmark.ErrTarget, "example.yaml:4", "another track"},
		{"pypi_range_target", "cases/reviewed/example.yaml", replace(validReviewed, "npm:example-mcp@1.2.3", "pypi:example-mcp>=1.2.3"), benchmark.ErrTarget, "example.yaml:4", "not one exact version"},
		{"uvx_target", "cases/reviewed/example.yaml", replace(validReviewed, "npm:example-mcp@1.2.3", "uvx:example-mcp"), benchmark.ErrTarget, "example.yaml:4", "pypi:NAME==VERSION"},
		{"reviewed_case_on_a_fixture", "cases/reviewed/example.yaml", replace(validReviewed, "npm:example-mcp@1.2.3", "fixture:crash@1.0.0"), benchmark.ErrInvalidCase, "example.yaml:4", "fixtures are synthetic"},
		{"no_reviewer", "cases/reviewed/example.yaml", replace(validReviewed, "reviewer: Ada Lovelace <ada@lovelace.example>\n", ""), benchmark.ErrInvalidCase, "example.yaml", "reviewer: missing"},
		{"bot_reviewer", "cases/reviewed/example.yaml", replace(validReviewed, "Ada Lovelace", "renovate[bot]"), benchmark.ErrInvalidCase, "example.yaml:5", "signed by a person"},
		{"email_reviewer", "cases/reviewed/example.yaml", replace(validReviewed, "Ada Lovelace <ada@lovelace.example>", "ada@example.com"), benchmark.ErrInvalidCase, "example.yaml:5", "a name and a way to reach them"},
		{"no_provenance", "cases/reviewed/example.yaml", replace(validReviewed, "provenance: Reported by a user on 2026-01-05, reviewed before any scan.\n", ""), benchmark.ErrInvalidCase, "example.yaml", "provenance: missing"},
		{"no_rubric_version", "cases/reviewed/example.yaml", replace(validReviewed, "rubric_version: \"5\"\n", ""), benchmark.ErrInvalidCase, "example.yaml", "rubric_version: missing"},
		{"empty_scope", "cases/reviewed/example.yaml", replace(replace(validReviewed, "[pkg.session.]", "[]"), "[pkg.session.start_crashed]", "[]"), benchmark.ErrInvalidCase, "example.yaml:8", "scope: empty"},
		{"scope_of_everything", "cases/reviewed/example.yaml", replace(validReviewed, "[pkg.session.]", "[pkg.]"), benchmark.ErrInvalidCase, "example.yaml:8", "covers every code"},
		{"scope_not_a_prefix", "cases/reviewed/example.yaml", replace(validReviewed, "[pkg.session.]", "[session]"), benchmark.ErrInvalidCase, "example.yaml:8", "neither a code prefix"},
		{"expected_out_of_scope", "cases/reviewed/example.yaml", replace(validReviewed, "[pkg.session.start_crashed]", "[pkg.supply.osv.vulnerable]"), benchmark.ErrInvalidCase, "example.yaml:9", "outside the case's scope"},
		{"expected_twice", "cases/reviewed/example.yaml", replace(validReviewed, "[pkg.session.start_crashed]", "[pkg.session.start_crashed, pkg.session.start_crashed]"), benchmark.ErrInvalidCase, "example.yaml:9", "listed twice"},
		{"wrong_type", "cases/reviewed/example.yaml", replace(validReviewed, "[pkg.session.]", "{a: b}"), benchmark.ErrInvalidCase, "line 8", "cannot unmarshal"},
		{"yaml_syntax", "cases/reviewed/example.yaml", replace(validReviewed, "scope: [pkg.session.]", "scope: [pkg.session."), benchmark.ErrInvalidCase, "example.yaml", "line"},
		{"two_documents", "cases/reviewed/example.yaml", validReviewed + "---\nid: other\n", benchmark.ErrInvalidCase, "example.yaml:14", "one case per file"},
		{"kind_in_the_wrong_directory", "cases/synthetic/example.yaml", validReviewed, benchmark.ErrInvalidCase, "example.yaml:2", "the file is in cases/synthetic"},
		{"id_not_the_file_name", "cases/reviewed/other.yaml", validReviewed, benchmark.ErrInvalidCase, "other.yaml:1", "must agree"},
		{"synthetic_without_statement", "cases/synthetic/crash.yaml", replace(validSynthetic, "statement: It exits at start; it would not if it answered initialize.\n", ""), benchmark.ErrInvalidCase, "crash.yaml", "what would change the answer"},
		{"fixture_of_another_version", "cases/synthetic/crash.yaml", replace(validSynthetic, "crash@1.0.0", "crash@1.0.1"), benchmark.ErrInvalidCase, "crash.yaml:4", "package.json has version \"1.0.0\""},
		{"missing_fixture", "cases/synthetic/crash.yaml", replace(validSynthetic, "fixture:crash@1.0.0", "fixture:nosuch@1.0.0"), benchmark.ErrInvalidCase, "crash.yaml:4", "fixture nosuch"},
		{"open_dispute_half_answered", "cases/reviewed/example.yaml", replace(validReviewed, "disputes: []", "disputes:\n  - raised_by: Grace Hopper\n    date: 2026-02-01\n    question: Why?\n    answered_by: Ada Lovelace"), benchmark.ErrInvalidCase, "example.yaml:13", "status open, but an answer is given"},
		{"answered_dispute_without_who", "cases/reviewed/example.yaml", replace(validReviewed, "disputes: []", "disputes:\n  - raised_by: Grace Hopper\n    date: 2026-02-01\n    question: Why?\n    answer: Because."), benchmark.ErrInvalidCase, "example.yaml:13", "answered_by: missing"},
		{"finding_not_expected", "cases/reviewed/example.yaml", replace(validReviewed, "disputes: []", "findings:\n  - code: pkg.session.oom\n    subject: \"\"\n    why: It needs 2 GiB.\ndisputes: []"), benchmark.ErrInvalidCase, "example.yaml:12", "pkg.session.oom is justified but not expected"},
		{"finding_without_why", "cases/reviewed/example.yaml", replace(validReviewed, "disputes: []", "findings:\n  - code: pkg.session.start_crashed\n    subject: \"\"\ndisputes: []"), benchmark.ErrInvalidCase, "example.yaml:12", "why is missing"},
		{"finding_twice", "cases/reviewed/example.yaml", replace(validReviewed, "disputes: []", "findings:\n  - {code: pkg.session.start_crashed, subject: \"\", why: a}\n  - {code: pkg.session.start_crashed, subject: \"\", why: b}\ndisputes: []"), benchmark.ErrInvalidCase, "example.yaml:12", "listed twice"},
		{"dispute_unknown_field", "cases/reviewed/example.yaml", replace(validReviewed, "disputes: []", "disputes:\n  - raised_by: Grace Hopper\n    reason: x"), benchmark.ErrInvalidCase, "example.yaml:14", `unknown field "reason"`},
		{"stray_file", "cases/reviewed/example.yml", validReviewed, benchmark.ErrInvalidCase, "example.yml", "named ID.yaml"},
		{"empty_file", "cases/reviewed/example.yaml", "", benchmark.ErrInvalidCase, "example.yaml", "empty file"},
		// The catalog of the rubric in force: a typo is refused, not charged
		// to the scanner as a false negative.
		{"expected_not_in_the_catalog", "cases/reviewed/example.yaml", replace(validReviewed, "[pkg.session.start_crashed]", "[pkg.session.start_crashd]"), benchmark.ErrInvalidCase, "example.yaml:9: expected[0]", "not in the catalog of rubric " + rubric.CurrentVersion},
		{"scope_prefix_without_its_dot", "cases/reviewed/example.yaml", replace(replace(validReviewed, "[pkg.session.]", "[pkg.contract.annotation]"), "[pkg.session.start_crashed]", "[]"), benchmark.ErrInvalidCase, "example.yaml:8: scope[0]", `covers no code of rubric ` + rubric.CurrentVersion + `; as a prefix it needs its trailing dot: "pkg.contract.annotation."`},
		{"scope_prefix_that_covers_no_code", "cases/reviewed/example.yaml", replace(replace(validReviewed, "[pkg.session.]", "[pkg.sesion.]"), "[pkg.session.start_crashed]", "[]"), benchmark.ErrInvalidCase, "example.yaml:8: scope[0]", "covers no code of rubric"},
		// A measurement fires whenever it was made: a case that scopes one
		// must expect it, or it reads as a false positive.
		{"measurement_in_scope_not_expected", "cases/reviewed/example.yaml", replace(replace(validReviewed, "[pkg.session.]", "[pkg.contract.description.]"), "[pkg.session.start_crashed]", "[]"), benchmark.ErrInvalidCase, "example.yaml:8: scope[0]", "pkg.contract.description.coverage is a measurement"},
		{"measurement_under_a_broad_prefix", "cases/reviewed/example.yaml", replace(validReviewed, "[pkg.session.]", "[pkg.session., pkg.contract.]"), benchmark.ErrInvalidCase, "example.yaml:8: scope[1]", "pkg.contract.schema.completeness is a measurement"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := benchmark.LoadCorpusFS(corpus(map[string]string{tc.file: tc.data}))
			if err == nil {
				t.Fatal("loaded")
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			var ce *benchmark.CaseError
			if !errors.As(err, &ce) {
				t.Errorf("error %v is not a *CaseError", err)
			}
			found := false
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.Contains(line, tc.where) && strings.Contains(line, tc.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("error %q, want a line with %q and %q", err, tc.where, tc.msg)
			}
		})
	}
}

func TestLoadCorpusReportsEveryProblem(t *testing.T) {
	bad := strings.Replace(strings.Replace(validReviewed, "track: package", "track: remote", 1), "Ada Lovelace", "", 1)
	_, err := benchmark.LoadCorpusFS(corpus(map[string]string{
		"cases/reviewed/example.yaml": bad,
		"cases/synthetic/crash.yaml":  strings.Replace(validSynthetic, "@1.0.0", "", 1),
	}))
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{"example.yaml:3: track", "example.yaml:5: reviewer", "crash.yaml:4: target"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestLoadCorpusCatalogLines checks that a refusal against the catalog
// names the line of the offending entry, not only of its field.
func TestLoadCorpusCatalogLines(t *testing.T) {
	data := strings.Replace(validReviewed, "scope: [pkg.session.]\nexpected: [pkg.session.start_crashed]\n",
		"scope:\n  - pkg.session.\n  - pkg.sesion.\nexpected:\n  - pkg.session.start_crashed\n  - pkg.session.start_crashd\n", 1)
	_, err := benchmark.LoadCorpusFS(corpus(map[string]string{"cases/reviewed/example.yaml": data}))
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{"example.yaml:10: scope[1]", "example.yaml:13: expected[1]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestLoadCorpusMeasurementExpected: a case that scopes a measurement and
// expects it (the measurement was made) loads.
func TestLoadCorpusMeasurementExpected(t *testing.T) {
	data := strings.NewReplacer("[pkg.session.]", "[pkg.contract.description.]",
		"[pkg.session.start_crashed]", "[pkg.contract.description.coverage]").Replace(validReviewed)
	if _, err := benchmark.LoadCorpusFS(corpus(map[string]string{"cases/reviewed/example.yaml": data})); err != nil {
		t.Fatal(err)
	}
}

func TestLoadCorpusDuplicateIDs(t *testing.T) {
	syn := strings.NewReplacer("id: crash", "id: example", "fixture:crash@", "fixture:crash@").Replace(validSynthetic)
	_, err := benchmark.LoadCorpusFS(corpus(map[string]string{
		"cases/reviewed/example.yaml":  validReviewed,
		"cases/synthetic/example.yaml": syn,
	}))
	if err == nil || !strings.Contains(err.Error(), `id "example" is also the id of`) {
		t.Errorf("error %v", err)
	}
}

func TestParseTarget(t *testing.T) {
	ok := []struct {
		in   string
		want benchmark.TargetRef
	}{
		{"npm:example-mcp@1.2.3", benchmark.TargetRef{Scheme: "npm", Name: "example-mcp", Version: "1.2.3"}},
		{"npm:@scope/server-x@2026.8.31", benchmark.TargetRef{Scheme: "npm", Name: "@scope/server-x", Version: "2026.8.31"}},
		{"npm:x@1.0.0-beta.2", benchmark.TargetRef{Scheme: "npm", Name: "x", Version: "1.0.0-beta.2"}},
		{" fixture:crash-at-start@1.0.0 ", benchmark.TargetRef{Scheme: "fixture", Name: "crash-at-start", Version: "1.0.0"}},
		{"pypi:mcp-server-fetch==2025.4.7", benchmark.TargetRef{Scheme: "pypi", Name: "mcp-server-fetch", Version: "2025.4.7"}},
		{"oci:mcp/time@sha256:9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e", benchmark.TargetRef{Scheme: "oci", Name: "docker.io/mcp/time", Version: "sha256:9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e"}},
		{"docker:ghcr.io/acme/notes:1.0@sha256:9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e", benchmark.TargetRef{Scheme: "oci", Name: "ghcr.io/acme/notes", Version: "sha256:9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e"}},
		{"pypi:mcp_server.Git == 1.0rc1", benchmark.TargetRef{Scheme: "pypi", Name: "mcp_server.Git", Version: "1.0rc1"}},
		{"pypi:awslabs.aws-documentation-mcp-server==1.1.2.post1", benchmark.TargetRef{Scheme: "pypi", Name: "awslabs.aws-documentation-mcp-server", Version: "1.1.2.post1"}},
		{"pypi:x==1!2.0.dev3", benchmark.TargetRef{Scheme: "pypi", Name: "x", Version: "1!2.0.dev3"}},
		{"pkg:pypi/mcp-server-time@2025.9.25", benchmark.TargetRef{Scheme: "pypi", Name: "mcp-server-time", Version: "2025.9.25"}},
		{"mcpb:https://github.com/acme/notes/releases/download/v1.0.0/notes.mcpb#sha256=" + strings.Repeat("ab", 32),
			benchmark.TargetRef{Scheme: "mcpb", Name: "https://github.com/acme/notes/releases/download/v1.0.0/notes.mcpb", Version: "sha256:" + strings.Repeat("ab", 32)}},
	}
	for _, tc := range ok {
		got, err := benchmark.ParseTarget(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
		if got.Scheme == "mcpb" && got.String() != tc.in {
			t.Errorf("%q: String() = %q, want the target as written", tc.in, got.String())
		}
	}
	bad := map[string]string{
		"oci:mcp/time:1.0":                                                      "a tag moves",
		"mcpb:https://example.com/notes.mcpb":                                   "pin the bundle by its digest",
		"mcpb:https://example.com/notes.mcpb#sha256=ABAB":                       "pin the bundle by its digest",
		"mcpb:http://example.com/notes.mcpb#sha256=" + strings.Repeat("ab", 32): "must be https",
		"./notes.mcpb": "cannot be fetched by anyone else",
		"mcpb:/srv/bundles/notes#sha256=" + strings.Repeat("ab", 32):                                     "cannot be fetched by anyone else",
		"docker-daemon:mcp/time@sha256:9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e": "cannot be fetched by anyone else",
		"":                                   "missing",
		"npm:example":                        "registry-only",
		"npm:@scope/example":                 "registry-only",
		"npm:example@":                       "registry-only",
		"npm:example@latest":                 "dist-tag",
		"npm:example@next":                   "dist-tag",
		"npm:example@^1.2.3":                 "range",
		"npm:example@~1.2.3":                 "range",
		"npm:example@>=1.0.0":                "range",
		"npm:example@1.x":                    "range",
		"npm:example@1.2.x":                  "range",
		"npm:example@*":                      "range",
		"npm:example@1.0.0 - 2.0.0":          "range",
		"npm:example@1.0.0 || 2.0.0":         "range",
		"npm:example@1.2":                    "not one exact version",
		"npm:example@v1.2.3":                 "not one exact version",
		"npm:example@01.2.3":                 "not one exact version",
		"npm:example@1.2.3+build.5":          "build metadata",
		"npm:Example@1.2.3":                  "not a valid npm package name",
		"example@1.2.3":                      "want npm:NAME@VERSION",
		"pkg:npm/example@1.2.3":              "want npm:NAME@VERSION",
		"pypi:example":                       "registry-only",
		"pypi:example>=1.2":                  "not one exact version",
		"pypi:example~=1.2":                  "not one exact version",
		"pypi:example==1.*":                  "range",
		"pypi:example==1.2,<2":               "range",
		"pypi:example===1.2":                 "arbitrary",
		"pypi:example==1.2+local":            "local label",
		"pypi:example==1.0-alpha1":           "canonical PEP 440",
		"pypi:example==v1.0":                 "canonical PEP 440",
		"pypi:example[cli]==1.0":             "extras",
		"pypi:example==1.0; os_name=='nt'":   "environment markers",
		"pypi:example@1.0":                   "pypi:example==VERSION",
		"pypi:==1.0":                         "not a valid PyPI project name",
		"pkg:pypi/example":                   "registry-only",
		"pkg:pypi/example@1.0?file_name=x":   "qualifier",
		"pkg:pypi/ex%20ample@1.0":            "not a valid PyPI project name",
		"uvx:example==1.0":                   "pypi:NAME==VERSION",
		"./example-1.0-py3-none-any.whl":     "local tarball",
		"https://mcp.example.com/sse":        "another track",
		"https://registry.npmjs.org/example": "registry URL",
		"./example-1.2.3.tgz":                "local tarball",
		"fixture:Crash@1.0.0":                "not a fixture id",
	}
	for in, want := range bad {
		_, err := benchmark.ParseTarget(in)
		if !errors.Is(err, benchmark.ErrTarget) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want ErrTarget saying %q", in, err, want)
		}
	}
}

func TestPackFixture(t *testing.T) {
	fsys := corpus(nil)
	fsys["fixtures/crash/lib/util.js"] = &fstest.MapFile{Data: []byte("module.exports = 1\n")}
	ref := benchmark.TargetRef{Scheme: "fixture", Name: "crash", Version: "1.0.0"}
	a, err := benchmark.PackFixture(fsys, ref)
	if err != nil {
		t.Fatal(err)
	}
	// The same sources with other file times and modes pack to the same bytes.
	for _, f := range fsys {
		f.ModTime, f.Mode = time.Now(), 0o600
	}
	b, err := benchmark.PackFixture(fsys, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("packing twice gave different bytes")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header name %q time %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(time.Date(1985, 10, 26, 8, 15, 0, 0, time.UTC)) || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: mtime %v uid %d uname %q", h.Name, h.ModTime, h.Uid, h.Uname)
		}
		got = append(got, h.Name+" "+strings.TrimPrefix(os.FileMode(h.Mode).String(), "-"))
	}
	want := []string{
		"package/fixture.json rw-r--r--",
		"package/lib/util.js rw-r--r--",
		"package/package.json rw-r--r--",
		"package/server.js rwxr-xr-x",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestResolveTarget(t *testing.T) {
	dir := t.TempDir()
	for name, f := range corpus(map[string]string{"cases/synthetic/crash.yaml": validSynthetic}) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases, err := benchmark.LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	st, err := cases[0].ResolveTarget(dir, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if st.Arg != filepath.Join(tmp, "crash-1.0.0.tgz") || st.Name != "verifymcp-case-crash" || st.Ecosystem != "npm" || st.Version != "1.0.0" || !strings.HasPrefix(st.Integrity, "sha512-") {
		t.Errorf("scan target %+v", st)
	}
	rev, err := benchmark.ParseCase("example.yaml", []byte(validReviewed))
	if err != nil {
		t.Fatal(err)
	}
	st, err = rev.ResolveTarget(dir, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if st != (benchmark.ScanTarget{Arg: "npm:example-mcp@1.2.3", Ecosystem: "npm", Name: "example-mcp", Version: "1.2.3"}) {
		t.Errorf("npm scan target %+v", st)
	}
	// A PyPI case is scanned as pypi:NAME==VERSION, and the scan must
	// report the project by its PEP 503 name.
	for _, target := range []string{"pypi:Example_MCP.Server==1.2.3", "pkg:pypi/example_mcp.server@1.2.3"} {
		py, err := benchmark.ParseCase("example.yaml", []byte(strings.Replace(validReviewed, "npm:example-mcp@1.2.3", target, 1)))
		if err != nil {
			t.Fatal(err)
		}
		st, err = py.ResolveTarget(dir, tmp)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := benchmark.ParseTarget(target)
		if st != (benchmark.ScanTarget{Arg: "pypi:" + ref.Name + "==1.2.3", Ecosystem: "pypi", Name: "example-mcp-server", Version: "1.2.3"}) {
			t.Errorf("%s: pypi scan target %+v", target, st)
		}
	}
}

// TestJustifies: a justified finding is found by code and subject, and by
// nothing else.
func TestJustifies(t *testing.T) {
	c := benchmark.Case{Findings: []benchmark.Justified{
		{Code: "pkg.behavior.dns.lookup", Subject: "run", Match: `"registry.npmjs.org"`, Why: "it checks for updates"},
		{Code: "pkg.behavior.beacon", Subject: "run", Why: "its telemetry"},
	}}
	if why, ok := c.Justifies("pkg.behavior.dns.lookup", "run", `the server looked up "registry.npmjs.org" in the run phase`); !ok || why != "it checks for updates" {
		t.Errorf("Justifies = %q, %v", why, ok)
	}
	if _, ok := c.Justifies("pkg.behavior.beacon", "run", "anything"); !ok {
		t.Errorf("a justification with no match covers every finding of its code and subject")
	}
	for _, q := range [][3]string{
		{"pkg.behavior.dns.lookup", "scripts:x", `looked up "registry.npmjs.org"`},
		{"pkg.behavior.dns.lookup", "run", `the server looked up "evil.example" in the run phase`},
		{"pkg.behavior.egress.attempt", "run", "registry.npmjs.org"},
	} {
		if _, ok := c.Justifies(q[0], q[1], q[2]); ok {
			t.Errorf("Justifies(%s, %s, %q) = true, want false", q[0], q[1], q[2])
		}
	}
}

// writeCorpus writes a corpus file system to a new directory.
func writeCorpus(t *testing.T, fsys fstest.MapFS) string {
	t.Helper()
	dir := t.TempDir()
	for name, f := range fsys {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReadCorpusRefusesOneCaseAndScoresTheRest: a remote-track case, a
// case expecting a code the catalog does not hold and a stray file are
// each refused, with file, line and why, and reported as refused; the
// other cases are scanned and scored.
func TestReadCorpusRefusesOneCaseAndScoresTheRest(t *testing.T) {
	dir := writeCorpus(t, corpus(map[string]string{
		"cases/reviewed/example.yaml": validReviewed,
		"cases/reviewed/remote.yaml":  strings.NewReplacer("id: example", "id: remote", "track: package", "track: remote").Replace(validReviewed),
		"cases/reviewed/typo.yaml":    strings.NewReplacer("id: example", "id: typo", "[pkg.session.start_crashed]", "[pkg.session.start_crashd]").Replace(validReviewed),
		"cases/reviewed/notes.txt":    "not a case\n",
		"cases/synthetic/crash.yaml":  validSynthetic,
	}))
	cases, err := benchmark.ReadCorpus(dir, rubric.Current())
	if err != nil {
		t.Fatalf("one refused case refuses the corpus: %v", err)
	}
	refused := map[string]string{}
	for _, c := range cases {
		refused[c.ID] = fmt.Sprint(c.Refused)
	}
	wantRefused := map[string]string{
		"remote":    "cases/reviewed/remote.yaml:3: track: \"remote\": this harness scores the package track only",
		"typo":      "cases/reviewed/typo.yaml:9: expected[0]: pkg.session.start_crashd is not in the catalog of rubric " + rubric.CurrentVersion,
		"notes.txt": "cases/reviewed/notes.txt: a case is one file named ID.yaml",
	}
	for id, want := range wantRefused {
		if !strings.Contains(refused[id], want) {
			t.Errorf("case %s: refused %q, want %q", id, refused[id], want)
		}
	}
	for _, id := range []string{"crash", "example"} {
		if refused[id] != "[]" {
			t.Errorf("case %s refused: %s", id, refused[id])
		}
	}
	if len(cases) != 5 {
		t.Errorf("%d cases, want 5", len(cases))
	}

	var scanned []string
	scan := func(_ context.Context, c benchmark.Case, st benchmark.ScanTarget) (benchmark.Observed, error) {
		scanned = append(scanned, c.ID)
		return benchmark.Observed{RubricVersion: "5", Name: st.Name, Version: st.Version, Integrity: st.Integrity,
			Findings: []benchmark.Emitted{{Code: "pkg.session.start_crashed"}},
			Signals:  map[string]benchmark.SignalState{"sandbox.session": {State: "observed"}}}, nil
	}
	rep, err := benchmark.RunCases(context.Background(), benchmark.RunInfo{RubricVersion: "5"}, cases, dir, t.TempDir(), scan, rubric.Current())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"crash", "example"}, scanned); diff != "" {
		t.Errorf("scanned (-want +got):\n%s", diff)
	}
	s, r := rep.Kinds[0], rep.Kinds[1]
	if s.Compared != 1 || s.Counts != (benchmark.Counts{TP: 1}) || len(s.Refused) != 0 {
		t.Errorf("synthetic %+v", s)
	}
	if r.Cases != 4 || r.Compared != 1 || r.Counts != (benchmark.Counts{TP: 1}) || r.Publishable {
		t.Errorf("reviewed %+v", r)
	}
	if diff := cmp.Diff([]string{"notes.txt", "remote", "typo"}, r.Refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := benchmark.WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"verifymcp cases: 5 cases (synthetic 1, reviewed 4), 3 refused when the corpus was read",
		"remote      -   -   -                 -  no (refused)",
		"refused when the corpus was read: notes.txt, remote, typo",
		"remote (reviewed) cases/reviewed/remote.yaml\n  refused:       cases/reviewed/remote.yaml:3: track: \"remote\"",
		"  remote: refused when the corpus was read (1 problem, listed with the case)",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}

	// The strict form, for the suite, refuses the corpus with every problem.
	if _, err := benchmark.LoadCorpus(dir); err == nil || !strings.Contains(err.Error(), "remote.yaml:3") || !strings.Contains(err.Error(), "typo.yaml:9") {
		t.Errorf("LoadCorpus: %v", err)
	}
}

// TestProducingSignal checks that every code of the rubric in force has
// one producing signal, which its dimension reads: the attribution of a
// miss to an unavailable signal is then never a guess.
func TestProducingSignal(t *testing.T) {
	rb := rubric.Current()
	for _, def := range rb.Codes {
		d, _ := rb.Dimension(def.Dimension)
		got := benchmark.ProducingSignal(rb, def.Code)
		if got == "" || !slices.Contains(d.Signals, got) {
			t.Errorf("%s (dimension %s, signals %v): producing signal %q", def.Code, d.ID, d.Signals, got)
		}
	}
	for code, want := range map[string]string{
		"pkg.supply.registry.no_repository": "registry.metadata", // provenance also reads github and dnssec
		"pkg.supply.github.not_found":       "github",
		"pkg.dnssec.bogus":                  "dnssec",
		"pkg.supply.osv.malware":            "osv", // malware_signal also reads socket
		"pkg.supply.socket.malware":         "socket",
		"pkg.session.spec.outdated":         "sandbox.session", // spec_recency also reads contract
		"pkg.protocol.stdout.non_json":      "sandbox.session",
	} {
		if got := benchmark.ProducingSignal(rb, code); got != want {
			t.Errorf("ProducingSignal(%s) = %q, want %q", code, got, want)
		}
	}
}

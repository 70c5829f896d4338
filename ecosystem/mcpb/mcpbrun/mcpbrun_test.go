package mcpbrun_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb/mcpbrun"
	"github.com/verifymcp/verifymcp/pkgspec"
	"github.com/verifymcp/verifymcp/supplychain"
)

// TestParse: bundle targets are read, a local one as its absolute path
// (its ref names the same file from any directory: a fleet worker's).
func TestParse(t *testing.T) {
	e := mcpbrun.Ecosystem{}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		raw, ref string
		ok, bad  bool
	}{
		{"./server.mcpb", "mcpb:" + filepath.Join(wd, "server.mcpb"), true, false},
		{"legacy.dxt", "mcpb:" + filepath.Join(wd, "legacy.dxt"), true, false},
		{"mcpb:https://example.com/x.mcpb#sha256=" + sum, "mcpb:https://example.com/x.mcpb#sha256=" + sum, true, false},
		{"mcpb:/srv/bundle", "mcpb:/srv/bundle", true, false},
		{"mcpb:dist/../b.mcpb#sha256=" + sum, "mcpb:" + filepath.Join(wd, "b.mcpb") + "#sha256=" + sum, true, false},
		{"npm:left-pad@1.3.0", "", false, false},
		{"server.tgz", "", false, false},
		{"mcpb:", "", true, true},
		{"mcpb:ftp://example.com/x.mcpb", "", true, true},
		{"x.mcpb#sha256=zz", "", true, true},
	} {
		ref, ok, err := e.Parse(tc.raw)
		if ok != tc.ok || (err != nil) != tc.bad || ref != tc.ref {
			t.Errorf("Parse(%q) = %q, %v, %v; want %q, ok %v, error %v", tc.raw, ref, ok, err, tc.ref, tc.ok, tc.bad)
		}
		if err != nil && !errors.Is(err, pkgspec.ErrBadTarget) {
			t.Errorf("Parse(%q) error %v is not a bad target", tc.raw, err)
		}
	}
}

// TestResolveSecrets: a bundle's sensitive settings are filled with
// placeholders that go to the scan as secrets to mask, and only they do.
func TestResolveSecrets(t *testing.T) {
	rel, err := mcpbrun.Ecosystem{}.Resolve(context.Background(), filepath.Join("testdata", "benign.mcpb"))
	if err != nil {
		t.Fatal(err)
	}
	if rel.Name != "verifymcp-fixture-benign" || rel.Version != "1.0.0" || rel.Kind != "bundle" || !strings.HasPrefix(rel.Integrity, "sha256:") {
		t.Errorf("release %+v", rel)
	}
	if len(rel.Secrets) != 1 || rel.Secrets[0].Name != "config:api_key" || !strings.HasPrefix(rel.Secrets[0].Value, "mcpb-api_key-") {
		t.Errorf("secrets %+v, want the api_key placeholder alone", rel.Secrets)
	}
	// A uv bundle resolves (its project is installed when it is
	// prepared); one whose project the sandbox cannot install as a client
	// would is unsupported, one without a project a bad target.
	uv := filepath.Join("..", "testdata", "hello-signed.mcpb")
	if rel, err := (mcpbrun.Ecosystem{}).Resolve(context.Background(), uv); err != nil || rel.Name != "hello-world-uv" {
		t.Errorf("a uv bundle: %+v, %v", rel, err)
	}
	for body, want := range map[string]error{
		"": pkgspec.ErrBadTarget,
		"[project]\nname = \"p\"\n[build-system]\nrequires = [\"hatchling\"]\n": pkgspec.ErrUnsupported,
	} {
		dir := t.TempDir()
		files := map[string]string{"manifest.json": `{"manifest_version": "0.4", "name": "p", "version": "1.0.0", "description": "d", "author": {"name": "a"},
 "server": {"type": "uv", "entry_point": "server.py"}}`, "server.py": "print()\n"}
		if body != "" {
			files["pyproject.toml"] = body
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := (mcpbrun.Ecosystem{}).Resolve(context.Background(), "mcpb:"+dir); !errors.Is(err, want) {
			t.Errorf("a uv bundle with pyproject %q: %v, want %v", body, err, want)
		}
	}
}

func TestPinRef(t *testing.T) {
	sum := strings.Repeat("cd", 32)
	for ref, want := range map[string]string{
		"mcpb:/srv/b.mcpb": "mcpb:/srv/b.mcpb#sha256=" + sum,
		"mcpb:/srv/b.mcpb#sha256=" + strings.Repeat("ab", 32): "mcpb:/srv/b.mcpb#sha256=" + sum,
		"mcpb:https://example.com/b.mcpb":                     "mcpb:https://example.com/b.mcpb#sha256=" + sum,
	} {
		if got := (mcpbrun.Ecosystem{}).PinRef(ref, "sha256:"+sum); got != want {
			t.Errorf("PinRef(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestEntry(t *testing.T) {
	sum := strings.Repeat("AB", 32)
	ref, notes, err := mcpbrun.Ecosystem{}.Entry(supplychain.RegistryPackage{RegistryType: "mcpb", Identifier: "https://example.com/b.mcpb", FileSHA256: sum})
	if err != nil || ref != "mcpb:https://example.com/b.mcpb#sha256="+strings.ToLower(sum) || len(notes) != 0 {
		t.Errorf("Entry = %q, %q, %v", ref, notes, err)
	}
	if _, notes, _ := (mcpbrun.Ecosystem{}).Entry(supplychain.RegistryPackage{Identifier: "https://example.com/b.mcpb"}); len(notes) != 1 {
		t.Errorf("an entry without fileSha256 is not noted: %q", notes)
	}
}

package supplychain_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/supplychain"
)

// The PyPI documents are hand-written in the JSON API's shape, not
// recorded: see testdata/pypi/README.md.
const (
	pypiProject = "testdata/pypi/mcp-server-fetch.project.json"
	pypiRelease = "testdata/pypi/mcp-server-fetch-2025.4.7.release.json"
)

// pypiDoc reads a document, changed by edit when not nil.
func pypiDoc(t *testing.T, file string, edit func(doc map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return data
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	return data
}

func pypiInfo(doc map[string]any) map[string]any { return doc["info"].(map[string]any) }

// pypiAddRelease adds a release with one wheel uploaded at ts.
func pypiAddRelease(doc map[string]any, version, ts string, yanked bool) {
	doc["releases"].(map[string]any)[version] = []any{map[string]any{
		"filename":             "mcp_server_fetch-" + version + "-py3-none-any.whl",
		"packagetype":          "bdist_wheel",
		"upload_time":          ts[:19],
		"upload_time_iso_8601": ts,
		"yanked":               yanked,
		"yanked_reason":        nil,
	}}
}

func TestPyPIMetadata(t *testing.T) {
	// What both documents say about 2025.4.7 itself.
	base := evidence.RegistryMeta{
		Ecosystem: "pypi", Name: "mcp-server-fetch", Version: "2025.4.7",
		PublishedAt: npmPublished(t, "2025-04-07T16:05:21.914466Z"),
		Maintainers: []evidence.Maintainer{{Name: "Jack Adamson", EmailDomain: "anthropic.com"}, {Name: "Anthropic, PBC."}},
		License:     "MIT",
		// Not served by the JSON API; ApplyPyPIProvenance says more.
		Unserved: []string{"provenance"},
		// The package declares no project URL, home page or download URL.
		LinksRead: true,
	}
	withHistory := base
	withHistory.PreviousVersion, withHistory.PreviousPublishedAt = "2025.3.28", npmPublished(t, "2025-03-28T14:18:57.239104Z")
	withHistory.VersionCount = 10
	withHistory.FirstPublishedAt = npmPublished(t, "2024-11-19T21:53:10.412377Z")

	tests := []struct {
		name, file, version string
		want                evidence.RegistryMeta
	}{
		{"project document has the history", pypiProject, "2025.4.7", withHistory},
		{"release document has none", pypiRelease, "2025.4.7", base},
		{"version spelled with v", pypiRelease, "v2025.4.7", base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := supplychain.PyPIMetadata(pypiDoc(t, tt.file, nil), tt.version)
			if err != nil {
				t.Fatalf("PyPIMetadata: %v", err)
			}
			if d := cmp.Diff(&tt.want, got); d != "" {
				t.Errorf("PyPIMetadata (-want +got):\n%s", d)
			}
		})
	}
}

// The project document's info describes the latest version only.
func TestPyPIMetadataOtherVersion(t *testing.T) {
	got, err := supplychain.PyPIMetadata(pypiDoc(t, pypiProject, nil), "2025.3.28")
	if !errors.Is(err, supplychain.ErrVersionNotFound) {
		t.Fatalf("PyPIMetadata(project, 2025.3.28) = %+v, %v; want ErrVersionNotFound", got, err)
	}
}

func TestPyPIMetadataMalformed(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON":        `<html>`,
		"no info":         `{"releases": {}}`,
		"info without id": `{"info": {"summary": "x"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := supplychain.PyPIMetadata([]byte(doc), "1.0"); err == nil {
				t.Errorf("PyPIMetadata = %+v, want an error", got)
			}
		})
	}
}

func TestPyPIMetadataHistory(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(doc map[string]any)
		version     string
		wantPrev    string
		wantPrevAt  string
		wantCount   int
		wantFirstAt string
	}{
		{"a release skips rc and dev releases", func(doc map[string]any) {
			pypiAddRelease(doc, "2025.4.8rc1", "2025-04-08T09:00:00.000000Z", false)
			pypiAddRelease(doc, "2025.4.9.dev2", "2025-04-08T10:00:00.000000Z", false)
		}, "2025.4.7", "2025.3.28", "2025-03-28T14:18:57.239104Z", 12, "2024-11-19T21:53:10.412377Z"},
		{"previous by upload time, not by number", func(doc map[string]any) {
			// A fix for the 0.6 line uploaded after 2025.4.7 was prepared
			// but before it was uploaded.
			pypiAddRelease(doc, "0.6.3", "2025-04-02T08:00:00.000000Z", false)
		}, "2025.4.7", "0.6.3", "2025-04-02T08:00:00Z", 11, "2024-11-19T21:53:10.412377Z"},
		{"a yanked release was still published", func(doc map[string]any) {
			pypiAddRelease(doc, "2025.4.6", "2025-04-06T08:00:00.000000Z", true)
		}, "2025.4.7", "2025.4.6", "2025-04-06T08:00:00Z", 11, "2024-11-19T21:53:10.412377Z"},
		{"a release without files is not counted", func(doc map[string]any) {
			doc["releases"].(map[string]any)["2025.4.6"] = []any{}
			doc["releases"].(map[string]any)["0.0.1"] = []any{}
		}, "2025.4.7", "2025.3.28", "2025-03-28T14:18:57.239104Z", 10, "2024-11-19T21:53:10.412377Z"},
		{"the first release has no previous", func(doc map[string]any) {
			releases := doc["releases"].(map[string]any)
			for v := range releases {
				if v != "2025.4.7" {
					delete(releases, v)
				}
			}
		}, "2025.4.7", "", "", 1, "2025-04-07T16:05:21.914466Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := supplychain.PyPIMetadata(pypiDoc(t, pypiProject, tt.edit), tt.version)
			if err != nil {
				t.Fatal(err)
			}
			if got.PreviousVersion != tt.wantPrev {
				t.Errorf("PreviousVersion = %q, want %q", got.PreviousVersion, tt.wantPrev)
			}
			switch {
			case tt.wantPrev == "" && got.PreviousPublishedAt != nil:
				t.Errorf("PreviousPublishedAt = %v, want none", got.PreviousPublishedAt)
			case tt.wantPrev != "" && (got.PreviousPublishedAt == nil || !got.PreviousPublishedAt.Equal(*npmPublished(t, tt.wantPrevAt))):
				t.Errorf("PreviousPublishedAt = %v, want %s", got.PreviousPublishedAt, tt.wantPrevAt)
			}
			if got.VersionCount != tt.wantCount {
				t.Errorf("VersionCount = %d, want %d", got.VersionCount, tt.wantCount)
			}
			if got.FirstPublishedAt == nil || !got.FirstPublishedAt.Equal(*npmPublished(t, tt.wantFirstAt)) {
				t.Errorf("FirstPublishedAt = %v, want %s", got.FirstPublishedAt, tt.wantFirstAt)
			}
		})
	}
}

func TestPyPIMetadataInfoFields(t *testing.T) {
	servers := &evidence.Repository{Host: "github.com", Owner: "modelcontextprotocol", Name: "servers"}
	tests := []struct {
		name  string
		edit  func(info map[string]any, doc map[string]any)
		check func(t *testing.T, got *evidence.RegistryMeta)
	}{
		{"source URL in project_urls", func(info, _ map[string]any) {
			info["project_urls"] = map[string]any{
				"Homepage":    "https://modelcontextprotocol.io",
				"Source Code": "https://github.com/modelcontextprotocol/servers/tree/main/src/fetch",
				"Issues":      "https://github.com/modelcontextprotocol/servers/issues",
			}
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			want := *servers
			want.Directory = "src/fetch"
			if got.RepositoryURL != "https://github.com/modelcontextprotocol/servers/tree/main/src/fetch" || got.Repository == nil || *got.Repository != want {
				t.Errorf("repository = %q, %+v; want the Source Code URL, %+v", got.RepositoryURL, got.Repository, want)
			}
			if got.Homepage != "https://modelcontextprotocol.io" {
				t.Errorf("Homepage = %q", got.Homepage)
			}
		}},
		{"repository label beats a github homepage", func(info, _ map[string]any) {
			info["project_urls"] = map[string]any{"Repository": "https://gitlab.com/acme/fetch", "Homepage": "https://github.com/acme/other"}
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Repository == nil || got.Repository.Host != "gitlab.com" || got.Repository.Name != "fetch" {
				t.Errorf("Repository = %+v, want gitlab.com/acme/fetch", got.Repository)
			}
		}},
		{"home_page on GitHub is the repository", func(info, _ map[string]any) {
			info["home_page"] = "https://github.com/modelcontextprotocol/servers"
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Repository == nil || *got.Repository != *servers || got.Homepage != "https://github.com/modelcontextprotocol/servers" {
				t.Errorf("repository %+v, homepage %q", got.Repository, got.Homepage)
			}
		}},
		{"a homepage elsewhere is not a repository", func(info, _ map[string]any) {
			info["home_page"] = "https://modelcontextprotocol.io/servers/fetch"
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Repository != nil || got.RepositoryURL != "" || got.RepositoryError != "" {
				t.Errorf("repository = %q, %+v, %q; want none", got.RepositoryURL, got.Repository, got.RepositoryError)
			}
		}},
		{"an unparseable source URL is explained", func(info, _ map[string]any) {
			info["project_urls"] = map[string]any{"Source": "https://github.com/modelcontextprotocol"}
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Repository != nil || got.RepositoryError != `repository "https://github.com/modelcontextprotocol": no owner/name in the path` {
				t.Errorf("repository %+v, error %q", got.Repository, got.RepositoryError)
			}
		}},
		{"license expression of metadata 2.4", func(info, _ map[string]any) {
			info["license_expression"] = "MIT OR Apache-2.0"
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.License != "MIT OR Apache-2.0" {
				t.Errorf("License = %q", got.License)
			}
		}},
		{"a pasted license text gives way to the classifiers", func(info, _ map[string]any) {
			info["license"] = "MIT License\n\nCopyright (c) 2024 Anthropic, PBC.\n\nPermission is hereby granted, free of charge, ..."
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.License != "MIT License" {
				t.Errorf("License = %q, want the classifier's MIT License", got.License)
			}
		}},
		{"mcp-name marker in the README", func(info, _ map[string]any) {
			info["description"] = "# Fetch MCP Server\n\n<!-- mcp-name: io.github.modelcontextprotocol/fetch -->\n\nA Model Context Protocol server..."
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.MCPName != "io.github.modelcontextprotocol/fetch" {
				t.Errorf("MCPName = %q", got.MCPName)
			}
		}},
		{"yanked release", func(info, doc map[string]any) {
			info["yanked"], info["yanked_reason"] = true, "SSRF via redirects, fixed in 2025.4.8"
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Deprecated != "yanked: SSRF via redirects, fixed in 2025.4.8" {
				t.Errorf("Deprecated = %q", got.Deprecated)
			}
		}},
		{"every file yanked, no reason", func(_, doc map[string]any) {
			for _, f := range doc["urls"].([]any) {
				f.(map[string]any)["yanked"] = true
			}
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Deprecated != "yanked (no reason given)" {
				t.Errorf("Deprecated = %q", got.Deprecated)
			}
		}},
		{"one file yanked is not a yanked release", func(_, doc map[string]any) {
			doc["urls"].([]any)[0].(map[string]any)["yanked"] = true
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Deprecated != "" {
				t.Errorf("Deprecated = %q, want empty", got.Deprecated)
			}
		}},
		{"address lists and separate names", func(info, _ map[string]any) {
			info["author"], info["author_email"] = "Anthropic, PBC.", `"Dev One" <one@Anthropic.com>, two@example.org`
			info["maintainer"], info["maintainer_email"] = "Jack Adamson", "jadamson@anthropic.com"
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			want := []evidence.Maintainer{{Name: "Jack Adamson", EmailDomain: "anthropic.com"}, {Name: "Dev One", EmailDomain: "anthropic.com"}, {EmailDomain: "example.org"}}
			if d := cmp.Diff(want, got.Maintainers); d != "" {
				t.Errorf("Maintainers (-want +got):\n%s", d)
			}
		}},
		{"an address net/mail rejects", func(info, _ map[string]any) {
			info["maintainer_email"] = "Jack Adamson <jadamson@anthropic.com>; ops at example.org, ops@example.org"
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			want := []evidence.Maintainer{{EmailDomain: "anthropic.com"}, {EmailDomain: "example.org"}, {Name: "Anthropic, PBC."}}
			if d := cmp.Diff(want, got.Maintainers); d != "" {
				t.Errorf("Maintainers (-want +got):\n%s", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := pypiDoc(t, pypiRelease, func(doc map[string]any) { tt.edit(pypiInfo(doc), doc) })
			got, err := supplychain.PyPIMetadata(doc, "2025.4.7")
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
			for _, addr := range []string{"jadamson@", "one@", "two@", "ops@"} {
				if out, _ := json.Marshal(got); bytes.Contains(out, []byte(addr)) {
					t.Errorf("metadata holds an address (%s): %s", addr, out)
				}
			}
		})
	}
}

// PyPI metadata carries no author URL, no install scripts and, from
// this API, no attestations: those stay empty rather than guessed.
func TestPyPIMetadataNotInTheAPI(t *testing.T) {
	got, err := supplychain.PyPIMetadata(pypiDoc(t, pypiProject, nil), "2025.4.7")
	if err != nil {
		t.Fatal(err)
	}
	if got.AuthorURL != "" || got.LifecycleScripts != nil || got.Provenance {
		t.Errorf("author URL %q, scripts %v, provenance %v; want all empty", got.AuthorURL, got.LifecycleScripts, got.Provenance)
	}
	if got.PublishedAt == nil || got.PublishedAt.Location() != time.UTC {
		t.Errorf("PublishedAt = %v, want a UTC time", got.PublishedAt)
	}
}

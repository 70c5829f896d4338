package supplychain

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
)

// These tests are pure: they read the recorded packuments under
// testdata/npm (see its README) and build Versions the way Resolve does,
// without a registry. npm_test.go resolves through a local registry.

func regTime(t *testing.T, s string) *time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	ts = ts.UTC()
	return &ts
}

// regDoc reads testdata/npm/<file>.packument.json, changed by edit when
// not nil.
func regDoc(t *testing.T, file string, edit func(doc map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/npm/" + file + ".packument.json")
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

// regVersion resolves spec in a packument as Resolve does.
func regVersion(t *testing.T, data []byte, spec string) *Version {
	t.Helper()
	var p packument
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	v, err := p.resolve(p.Name, spec)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// regManifest returns the version document of v in doc, to edit.
func regManifest(doc map[string]any, v string) map[string]any {
	return doc["versions"].(map[string]any)[v].(map[string]any)
}

func TestNPMMetadataRecorded(t *testing.T) {
	servers := &evidence.Repository{Host: "github.com", Owner: "modelcontextprotocol", Name: "servers"}
	tests := []struct {
		file, version string
		want          evidence.RegistryMeta
	}{
		{"server-everything", "2026.8.31", evidence.RegistryMeta{
			Name: "@modelcontextprotocol/server-everything", Version: "2026.8.31",
			PublishedAt:     regTime(t, "2026-09-02T05:06:16Z"),
			PreviousVersion: "2026.8.18", PreviousPublishedAt: regTime(t, "2026-08-19T09:03:54.631Z"),
			VersionCount: 10, FirstPublishedAt: regTime(t, "2025-10-02T22:02:11.599Z"),
			RepositoryURL: "https://github.com/modelcontextprotocol/servers.git", Repository: servers,
			Homepage: "https://modelcontextprotocol.io",
			License:  "SEE LICENSE IN LICENSE",
			MCPName:  "io.github.modelcontextprotocol/server-everything",
		}},
		// Published after 2026.8.31 although its number is lower: the
		// previous version is by time, not by number.
		{"server-everything", "2025.8.18", evidence.RegistryMeta{
			Name: "@modelcontextprotocol/server-everything", Version: "2025.8.18",
			PublishedAt:     regTime(t, "2026-09-14T04:30:02.396Z"),
			PreviousVersion: "2026.8.31", PreviousPublishedAt: regTime(t, "2026-09-02T05:06:16Z"),
			VersionCount: 10, FirstPublishedAt: regTime(t, "2025-10-02T22:02:11.599Z"),
			Homepage:  "https://modelcontextprotocol.io",
			AuthorURL: "https://anthropic.com",
			License:   "MIT",
		}},
		// The first version in the document has no previous version.
		{"server-everything", "2025.9.25", evidence.RegistryMeta{
			Name: "@modelcontextprotocol/server-everything", Version: "2025.9.25",
			PublishedAt:  regTime(t, "2025-10-02T22:02:11.599Z"),
			VersionCount: 10, FirstPublishedAt: regTime(t, "2025-10-02T22:02:11.599Z"),
			Homepage:  "https://modelcontextprotocol.io",
			AuthorURL: "https://anthropic.com",
			License:   "MIT",
		}},
		{"server-filesystem", "2.0.1", evidence.RegistryMeta{
			Name: "@modelcontextprotocol/server-filesystem", Version: "2.0.1",
			PublishedAt:     regTime(t, "2026-10-25T00:05:17Z"),
			PreviousVersion: "2026.8.31", PreviousPublishedAt: regTime(t, "2026-09-01T01:08:17.648Z"),
			VersionCount: 15, FirstPublishedAt: regTime(t, "2025-09-23T14:35:16.571Z"),
			RepositoryURL: "https://github.com/modelcontextprotocol/servers.git", Repository: servers,
			Homepage: "https://modelcontextprotocol.io",
			License:  "SEE LICENSE IN LICENSE",
			MCPName:  "io.github.modelcontextprotocol/server-filesystem",
		}},
		{"server-filesystem", "2026.1.14", evidence.RegistryMeta{
			Name: "@modelcontextprotocol/server-filesystem", Version: "2026.1.14",
			PublishedAt:     regTime(t, "2026-01-18T01:20:41.36Z"),
			PreviousVersion: "2025.7.29", PreviousPublishedAt: regTime(t, "2026-01-15T19:20:12.21Z"),
			VersionCount: 15, FirstPublishedAt: regTime(t, "2025-09-23T14:35:16.571Z"),
			RepositoryURL: "https://github.com/modelcontextprotocol/servers.git", Repository: servers,
			Homepage:  "https://modelcontextprotocol.io",
			AuthorURL: "https://anthropic.com",
			License:   "MIT",
			MCPName:   "io.github.modelcontextprotocol/server-filesystem",
		}},
		// Deprecated on the public registry, but the registry here does
		// not serve the message (see testdata/npm/README.md).
		{"server-github", "2025.4.8", evidence.RegistryMeta{
			Name: "@modelcontextprotocol/server-github", Version: "2025.4.8",
			PublishedAt:     regTime(t, "2025-10-12T11:04:28.193Z"),
			PreviousVersion: "2025.1.23", PreviousPublishedAt: regTime(t, "2025-10-02T22:32:58.369Z"),
			VersionCount: 5, FirstPublishedAt: regTime(t, "2025-10-02T22:32:58.369Z"),
			Homepage:  "https://modelcontextprotocol.io",
			AuthorURL: "https://anthropic.com",
			License:   "MIT",
		}},
		// publishConfig.provenance is an intention, not an attestation:
		// without dist.attestations there is no provenance. The author is
		// a bare address, which yields no URL.
		{"sigstore-sign", "5.1.0", evidence.RegistryMeta{
			Name: "@sigstore/sign", Version: "5.1.0",
			PublishedAt:     regTime(t, "2026-11-05T00:18:56Z"),
			PreviousVersion: "5.0.0", PreviousPublishedAt: regTime(t, "2026-06-14T14:30:36.978Z"),
			VersionCount: 18, FirstPublishedAt: regTime(t, "2024-04-23T07:51:21.624Z"),
			RepositoryURL: "git+https://github.com/sigstore/sigstore-js.git",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "sigstore", Name: "sigstore-js"},
			Homepage:      "https://github.com/sigstore/sigstore-js/tree/main/packages/sign#readme",
			License:       "Apache-2.0",
		}},
		{"request", "2.88.2", evidence.RegistryMeta{
			Name: "request", Version: "2.88.2",
			PublishedAt:  regTime(t, "2024-03-13T20:02:36.49Z"),
			VersionCount: 10, FirstPublishedAt: regTime(t, "2024-03-13T20:02:36.49Z"),
			RepositoryURL: "https://github.com/request/request.git",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "request", Name: "request"},
			License:       "Apache-2.0",
		}},
		{"request", "0.10.0", evidence.RegistryMeta{
			Name: "request", Version: "0.10.0",
			PublishedAt:     regTime(t, "2025-10-03T23:09:58.588Z"),
			PreviousVersion: "2.9.203", PreviousPublishedAt: regTime(t, "2024-12-04T23:25:06.407Z"),
			VersionCount: 10, FirstPublishedAt: regTime(t, "2024-03-13T20:02:36.49Z"),
			RepositoryURL: "http://github.com/mikeal/node-utils.git",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "mikeal", Name: "node-utils"},
		}},
		// prepare is declared but is not an install script.
		{"ci-info", "4.5.0", evidence.RegistryMeta{
			Name: "ci-info", Version: "4.5.0",
			PublishedAt:     regTime(t, "2026-11-09T10:36:21Z"),
			PreviousVersion: "4.4.0", PreviousPublishedAt: regTime(t, "2026-01-29T18:37:42.643Z"),
			VersionCount: 7, FirstPublishedAt: regTime(t, "2024-02-23T22:24:44.318Z"),
			RepositoryURL: "github:watson/ci-info",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "watson", Name: "ci-info"},
			Homepage:      "https://github.com/watson/ci-info",
			AuthorURL:     "https://twitter.com/wa7son",
			License:       "MIT",
		}},
		{"accepts", "1.2.0", evidence.RegistryMeta{
			Name: "accepts", Version: "1.2.0",
			PublishedAt:     regTime(t, "2025-10-28T15:15:55.267Z"),
			PreviousVersion: "1.0.0", PreviousPublishedAt: regTime(t, "2024-12-05T08:51:09.743Z"),
			VersionCount: 5, FirstPublishedAt: regTime(t, "2024-03-09T23:48:42.127Z"),
			RepositoryURL: "jshttp/accepts",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "jshttp", Name: "accepts"},
			AuthorURL:     "http://jongleberry.com",
			License:       "MIT",
		}},
		{"accepts", "1.0.0", evidence.RegistryMeta{
			Name: "accepts", Version: "1.0.0",
			PublishedAt:     regTime(t, "2024-12-05T08:51:09.743Z"),
			PreviousVersion: "1.3.7", PreviousPublishedAt: regTime(t, "2024-11-22T23:22:25.94Z"),
			VersionCount: 5, FirstPublishedAt: regTime(t, "2024-03-09T23:48:42.127Z"),
			RepositoryURL: "https://github.com/expressjs/accepts.git",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "expressjs", Name: "accepts"},
			AuthorURL:     "http://jongleberry.com",
			License:       "MIT",
		}},
		{"eventsource-parser", "4.1.3", evidence.RegistryMeta{
			Name: "eventsource-parser", Version: "4.1.3",
			PublishedAt:     regTime(t, "2026-10-25T21:38:04Z"),
			PreviousVersion: "4.1.2", PreviousPublishedAt: regTime(t, "2026-10-12T15:39:11Z"),
			VersionCount: 6, FirstPublishedAt: regTime(t, "2024-12-02T18:35:22.834Z"),
			RepositoryURL: "git+ssh://git@github.com/rexxars/eventsource-parser.git",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "rexxars", Name: "eventsource-parser"},
			Homepage:      "https://github.com/rexxars/eventsource-parser#readme",
			License:       "MIT",
		}},
		{"esbuild", "0.28.2", evidence.RegistryMeta{
			Name: "esbuild", Version: "0.28.2",
			PublishedAt:     regTime(t, "2026-08-08T20:36:04.544Z"),
			PreviousVersion: "0.28.1", PreviousPublishedAt: regTime(t, "2026-06-12T00:24:50.666Z"),
			VersionCount: 6, FirstPublishedAt: regTime(t, "2026-04-02T16:55:43.539Z"),
			RepositoryURL:    "git+https://github.com/evanw/esbuild.git",
			Repository:       &evidence.Repository{Host: "github.com", Owner: "evanw", Name: "esbuild"},
			License:          "MIT",
			LifecycleScripts: map[string]string{"postinstall": "node install.js"},
		}},
		{"esbuild", "0.0.4", evidence.RegistryMeta{
			Name: "esbuild", Version: "0.0.4",
			PublishedAt:     regTime(t, "2026-09-14T16:50:48.203Z"),
			PreviousVersion: "0.28.2", PreviousPublishedAt: regTime(t, "2026-08-08T20:36:04.544Z"),
			VersionCount: 6, FirstPublishedAt: regTime(t, "2026-04-02T16:55:43.539Z"),
			LifecycleScripts: map[string]string{"postinstall": "node install.js"},
		}},
		// A release skips the prereleases published just before it.
		{"core-js", "3.51.0", evidence.RegistryMeta{
			Name: "core-js", Version: "3.51.0",
			PublishedAt:     regTime(t, "2026-10-19T11:00:41Z"),
			PreviousVersion: "0.0.7", PreviousPublishedAt: regTime(t, "2026-08-18T11:34:30.482Z"),
			VersionCount: 7, FirstPublishedAt: regTime(t, "2024-09-05T00:40:57.997Z"),
			RepositoryURL:    "git+https://github.com/zloirock/core-js.git",
			Repository:       &evidence.Repository{Host: "github.com", Owner: "zloirock", Name: "core-js", Directory: "packages/core-js"},
			Homepage:         "https://core-js.io",
			AuthorURL:        "http://zloirock.ru",
			License:          "MIT",
			LifecycleScripts: map[string]string{"postinstall": `node -e "try{require('./postinstall')}catch(e){}"`},
		}},
		// A prerelease's previous version may be a prerelease.
		{"core-js", "4.0.0-alpha.0", evidence.RegistryMeta{
			Name: "core-js", Version: "4.0.0-alpha.0",
			PublishedAt:     regTime(t, "2026-08-23T03:53:14.769Z"),
			PreviousVersion: "3.0.0-beta.20", PreviousPublishedAt: regTime(t, "2026-08-23T01:02:28.417Z"),
			VersionCount: 7, FirstPublishedAt: regTime(t, "2024-09-05T00:40:57.997Z"),
			RepositoryURL:    "https://github.com/zloirock/core-js.git",
			Repository:       &evidence.Repository{Host: "github.com", Owner: "zloirock", Name: "core-js", Directory: "packages/core-js"},
			AuthorURL:        "http://zloirock.ru",
			License:          "MIT",
			LifecycleScripts: map[string]string{"postinstall": `node -e "try{require('./postinstall')}catch(e){}"`},
		}},
		// The legacy licenses array, and two versions seven seconds apart.
		{"qrcode-terminal", "0.12.0", evidence.RegistryMeta{
			Name: "qrcode-terminal", Version: "0.12.0",
			PublishedAt:     regTime(t, "2024-11-23T04:03:36.159Z"),
			PreviousVersion: "0.10.0", PreviousPublishedAt: regTime(t, "2024-11-23T04:03:28.697Z"),
			VersionCount: 9, FirstPublishedAt: regTime(t, "2024-11-23T04:03:28.697Z"),
			RepositoryURL: "https://github.com/gtanner/qrcode-terminal",
			Repository:    &evidence.Repository{Host: "github.com", Owner: "gtanner", Name: "qrcode-terminal"},
			Homepage:      "https://github.com/gtanner/qrcode-terminal",
			License:       "Apache 2.0",
		}},
	}
	// The bugs URL of each version that declares one (an object {url} in
	// all of these documents but request's, whose url is http).
	bugs := map[string]string{
		"sigstore-sign@5.1.0":         "https://github.com/sigstore/sigstore-js/issues",
		"request@2.88.2":              "http://github.com/request/request/issues",
		"ci-info@4.5.0":               "https://github.com/watson/ci-info/issues",
		"accepts@1.0.0":               "https://github.com/expressjs/accepts/issues",
		"eventsource-parser@4.1.3":    "https://github.com/rexxars/eventsource-parser/issues",
		"core-js@3.51.0":              "https://github.com/zloirock/core-js/issues",
		"server-github@2025.4.8":      "https://github.com/modelcontextprotocol/servers/issues",
		"server-everything@2025.8.18": "https://github.com/modelcontextprotocol/servers/issues",
	}
	for _, v := range []string{"server-everything@2026.8.31", "server-everything@2025.9.25", "server-filesystem@2.0.1", "server-filesystem@2026.1.14"} {
		bugs[v] = "https://github.com/modelcontextprotocol/servers/issues"
	}
	for _, tt := range tests {
		t.Run(tt.file+"@"+tt.version, func(t *testing.T) {
			v := regVersion(t, regDoc(t, tt.file, nil), tt.version)
			got, err := NPMMetadata(v)
			if err != nil {
				t.Fatalf("NPMMetadata: %v", err)
			}
			want := tt.want
			// The links are the homepage and the bugs URL, in that order.
			if want.Homepage != "" {
				want.Links = append(want.Links, evidence.RegistryLink{Field: "homepage", URL: want.Homepage})
			}
			if b := bugs[tt.file+"@"+tt.version]; b != "" {
				want.Links = append(want.Links, evidence.RegistryLink{Field: "bugs.url", URL: b})
			}
			want.LinksRead = true
			want.Ecosystem = "npm"
			want.Maintainers = []evidence.Maintainer{} // the registry here serves none
			// The documents were recorded from a registry that strips them
			// (no signatures, no maintainers): nothing can be said about
			// provenance, maintainers or deprecation.
			want.Unserved = []string{"provenance", "maintainers", "deprecation"}
			if d := cmp.Diff(&want, got); d != "" {
				t.Errorf("NPMMetadata (-want +got):\n%s", d)
			}
			if v.Published == nil || !v.Published.Equal(*got.PublishedAt) {
				t.Errorf("Version.Published = %v, metadata says %v", v.Published, got.PublishedAt)
			}
		})
	}
}

func TestNPMMetadataWithoutPackument(t *testing.T) {
	v := regVersion(t, regDoc(t, "server-everything", nil), "2026.8.31")
	tests := []struct {
		name string
		v    *Version
	}{
		{"nil", nil},
		{"not made by Resolve", &Version{Name: v.Name, Version: v.Version, Manifest: v.Manifest}},
		{"manifest not an object", &Version{Name: v.Name, Version: v.Version, Manifest: json.RawMessage(`"x"`), history: v.history}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := NPMMetadata(tt.v); err == nil {
				t.Errorf("NPMMetadata = %+v, want an error", got)
			}
		})
	}
}

// TestNPMMetadataUnserved: a document as the public registry serves it
// (signed versions, a maintainers list) leaves nothing unserved; the same
// document stripped by a mirror says provenance, maintainers and
// deprecation are unknown, so that no finding claims their absence.
func TestNPMMetadataUnserved(t *testing.T) {
	doc := regDoc(t, "server-everything", func(d map[string]any) {
		d["maintainers"] = []any{map[string]any{"name": "jspahrsummers", "email": "justin@anthropic.com"}}
		for _, v := range d["versions"].(map[string]any) {
			v.(map[string]any)["dist"].(map[string]any)["signatures"] = []any{map[string]any{"keyid": "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA", "sig": "MEUCIQ"}}
		}
	})
	got, err := NPMMetadata(regVersion(t, doc, "2026.8.31"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Unserved) != 0 {
		t.Errorf("public-registry document: Unserved = %v, want none", got.Unserved)
	}
	stripped, err := NPMMetadata(regVersion(t, regDoc(t, "server-everything", nil), "2026.8.31"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"provenance", "maintainers", "deprecation"}, stripped.Unserved); d != "" {
		t.Errorf("stripped document: Unserved (-want +got):\n%s", d)
	}
}

func TestManifestMeta(t *testing.T) {
	pj := []byte(`{"name":"fixture-mcp","version":"1.0.0","homepage":"https://www.secure.vmcp/docs",
		"repository":{"type":"git","url":"git+https://code.rsa.vmcp/acme/fixture-mcp.git"},
		"author":"Acme <dev@acme.vmcp> (https://ed.vmcp/about)",
		"maintainers":[{"name":"ops","email":"ops@gone.vmcp"},"Old <old@unsigned.vmcp>"],
		"mcpName":"vmcp.secure/fixture","scripts":{"postinstall":"node x.js","test":"x"}}`)
	m, err := ManifestMeta("fixture-mcp", "1.0.0", pj)
	if err != nil {
		t.Fatal(err)
	}
	if m.Homepage != "https://www.secure.vmcp/docs" || m.AuthorURL != "https://ed.vmcp/about" || m.MCPName != "vmcp.secure/fixture" ||
		m.Repository == nil || m.Repository.Host != "code.rsa.vmcp" || len(m.Maintainers) != 2 ||
		m.Maintainers[0].EmailDomain != "gone.vmcp" || m.Maintainers[1].EmailDomain != "unsigned.vmcp" ||
		len(m.LifecycleScripts) != 1 || m.Provenance {
		t.Errorf("ManifestMeta = %+v", m)
	}
	if _, err := ManifestMeta("x", "1", []byte(`[`)); err == nil {
		t.Error("a manifest that is not JSON must be an error")
	}
}

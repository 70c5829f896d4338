package supplychain

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
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

// The edits below put into the recorded documents what the public
// registry serves and the registry here strips (testdata/npm/README.md),
// in the public registry's shape.

func TestNPMMetadataProvenance(t *testing.T) {
	const url = "https://registry.npmjs.org/-/npm/v1/attestations/@sigstore%2fsign@5.1.0"
	tests := []struct {
		name         string
		attestations any
		want         bool
	}{
		{"slsa v1", map[string]any{"url": url, "provenance": map[string]any{"predicateType": "https://slsa.dev/provenance/v1"}}, true},
		{"slsa v0.2 of the first provenance publishes", map[string]any{"url": url, "provenance": map[string]any{"predicateType": "https://slsa.dev/provenance/v0.2"}}, true},
		{"publish attestation only", map[string]any{"url": url, "provenance": map[string]any{"predicateType": "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"}}, false},
		{"url without provenance", map[string]any{"url": url}, false},
		{"not an object", "yes", false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := regDoc(t, "sigstore-sign", func(doc map[string]any) {
				if tt.attestations != nil {
					regManifest(doc, "5.1.0")["dist"].(map[string]any)["attestations"] = tt.attestations
				}
			})
			got, err := NPMMetadata(regVersion(t, doc, "5.1.0"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Provenance != tt.want {
				t.Errorf("Provenance = %v, want %v", got.Provenance, tt.want)
			}
		})
	}
}

func TestNPMMetadataMaintainers(t *testing.T) {
	tests := []struct {
		name       string
		top, inVer any // top-level and version-level maintainers; nil leaves them out
		want       []evidence.Maintainer
	}{
		{"top-level objects, domains lower-cased",
			[]any{
				map[string]any{"name": "jspahrsummers", "email": "Justin@Anthropic.COM"},
				map[string]any{"name": "ashwin-ant", "email": "ashwin@anthropic.com"},
				map[string]any{"name": "olaservo", "email": "olaservo@users.noreply.github.com"},
			}, nil,
			[]evidence.Maintainer{{Name: "jspahrsummers", EmailDomain: "anthropic.com"}, {Name: "ashwin-ant", EmailDomain: "anthropic.com"}, {Name: "olaservo", EmailDomain: "users.noreply.github.com"}}},
		{"top-level wins over the version's list",
			[]any{map[string]any{"name": "current", "email": "current@example.org"}},
			[]any{map[string]any{"name": "former", "email": "former@expired-domain.example"}},
			[]evidence.Maintainer{{Name: "current", EmailDomain: "example.org"}}},
		{"the version's list when there is no top-level one", nil,
			[]any{map[string]any{"name": "former", "email": "former@expired-domain.example"}},
			[]evidence.Maintainer{{Name: "former", EmailDomain: "expired-domain.example"}}},
		{"old string form", []any{"mikeal <mikeal.rogers@gmail.com>", "fredkschott <fkschott@gmail.com> (https://fks.dev)"}, nil,
			[]evidence.Maintainer{{Name: "mikeal", EmailDomain: "gmail.com"}, {Name: "fredkschott", EmailDomain: "gmail.com"}}},
		{"no usable email keeps the name", []any{map[string]any{"name": "noemail"}, map[string]any{"name": "bad", "email": "not-an-address"}}, nil,
			[]evidence.Maintainer{{Name: "noemail"}, {Name: "bad"}}},
		{"not a list", "someone", nil, []evidence.Maintainer{}},
		{"none", nil, nil, []evidence.Maintainer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := regDoc(t, "server-everything", func(doc map[string]any) {
				if tt.top != nil {
					doc["maintainers"] = tt.top
				}
				if tt.inVer != nil {
					regManifest(doc, "2026.8.31")["maintainers"] = tt.inVer
				}
			})
			got, err := NPMMetadata(regVersion(t, doc, "2026.8.31"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got.Maintainers); d != "" {
				t.Errorf("Maintainers (-want +got):\n%s", d)
			}
		})
	}
}

var regEmailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)

// No email address of the input, from maintainers, authors or anywhere
// else in the manifest, reaches the metadata: only domains do.
func TestNPMMetadataNoEmailAddresses(t *testing.T) {
	maintainers := []any{
		map[string]any{"name": "alice", "email": "alice.smith@example.com"},
		"bob <bob@example.net> (https://bob.example.net)",
	}
	files := []string{"server-everything", "server-filesystem", "server-github", "sigstore-sign", "request", "ci-info", "accepts", "eventsource-parser", "esbuild", "core-js", "qrcode-terminal"}
	checked := 0
	for _, file := range files {
		data := regDoc(t, file, func(doc map[string]any) {
			doc["maintainers"] = maintainers
			for _, m := range doc["versions"].(map[string]any) {
				m.(map[string]any)["maintainers"] = []any{map[string]any{"name": "carol", "email": "carol@example.org"}}
			}
		})
		var p packument
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		var emails []string
		for _, e := range regEmailRe.FindAllString(string(data), -1) {
			// "git@github.com" in an ssh repository URL is the ssh user,
			// not a person's address, and the declared URL is kept.
			if !strings.HasPrefix(e, "git@") && !slices.Contains(emails, e) {
				emails = append(emails, e)
			}
		}
		for version := range p.Versions {
			meta, err := NPMMetadata(regVersion(t, data, version))
			if err != nil {
				t.Fatalf("%s@%s: %v", file, version, err)
			}
			out, err := json.Marshal(meta)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range emails {
				if bytes.Contains(out, []byte(e)) {
					t.Errorf("%s@%s: metadata holds the address %q: %s", file, version, e, out)
				}
			}
			if len(meta.Maintainers) != 2 || meta.Maintainers[0].EmailDomain != "example.com" || meta.Maintainers[1].EmailDomain != "example.net" {
				t.Errorf("%s@%s: maintainers = %+v", file, version, meta.Maintainers)
			}
			checked++
		}
		if len(emails) < 3 {
			t.Errorf("%s: found %d addresses in the input; the edit should have added 3", file, len(emails))
		}
	}
	if checked < 80 {
		t.Errorf("checked %d versions, want every version of every recorded document", checked)
	}
}

func TestNPMMetadataManifestFields(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(m map[string]any)
		check func(t *testing.T, got *evidence.RegistryMeta)
	}{
		{"deprecated", func(m map[string]any) {
			m["deprecated"] = "Package no longer supported. Contact Support at https://www.npmjs.com/support for more info."
		},
			func(t *testing.T, got *evidence.RegistryMeta) {
				if want := "Package no longer supported. Contact Support at https://www.npmjs.com/support for more info."; got.Deprecated != want {
					t.Errorf("Deprecated = %q, want %q", got.Deprecated, want)
				}
			}},
		{"undeprecated is empty", func(m map[string]any) { m["deprecated"] = "" },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if got.Deprecated != "" {
					t.Errorf("Deprecated = %q, want empty", got.Deprecated)
				}
			}},
		{"deprecated true", func(m map[string]any) { m["deprecated"] = true },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if got.Deprecated != "true" {
					t.Errorf("Deprecated = %q, want true", got.Deprecated)
				}
			}},
		{"install scripts, not prepare", func(m map[string]any) {
			m["scripts"] = map[string]any{
				"preinstall": "node check.js", "install": "node-gyp rebuild", "postinstall": "node setup.js",
				"prepare": "npm run build", "prepublish": "tsc", "preprepare": "x", "postprepare": "y", "test": "jest", "dependencies": "z",
			}
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			want := map[string]string{"preinstall": "node check.js", "install": "node-gyp rebuild", "postinstall": "node setup.js"}
			if d := cmp.Diff(want, got.LifecycleScripts); d != "" {
				t.Errorf("LifecycleScripts (-want +got):\n%s", d)
			}
		}},
		{"gypfile implies node-gyp rebuild", func(m map[string]any) { m["gypfile"] = true; m["scripts"] = map[string]any{"prepare": "x"} },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if d := cmp.Diff(map[string]string{"install": "node-gyp rebuild"}, got.LifecycleScripts); d != "" {
					t.Errorf("LifecycleScripts (-want +got):\n%s", d)
				}
			}},
		{"gypfile with a preinstall adds nothing", func(m map[string]any) {
			m["gypfile"] = true
			m["scripts"] = map[string]any{"preinstall": "prebuild-install || node-gyp rebuild"}
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if d := cmp.Diff(map[string]string{"preinstall": "prebuild-install || node-gyp rebuild"}, got.LifecycleScripts); d != "" {
				t.Errorf("LifecycleScripts (-want +got):\n%s", d)
			}
		}},
		{"scripts not an object", func(m map[string]any) { m["scripts"] = []any{"postinstall"} },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if got.LifecycleScripts != nil {
					t.Errorf("LifecycleScripts = %v, want none", got.LifecycleScripts)
				}
			}},
		{"token in the repository URL is not stored", func(m map[string]any) {
			m["repository"] = map[string]any{"type": "git", "url": "https://ci-bot:ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/acme/mcp-server.git"}
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if want := "https://ci-bot:redacted@github.com/acme/mcp-server.git"; got.RepositoryURL != want {
				t.Errorf("RepositoryURL = %q, want %q", got.RepositoryURL, want)
			}
			if d := cmp.Diff(&evidence.Repository{Host: "github.com", Owner: "acme", Name: "mcp-server"}, got.Repository); d != "" {
				t.Errorf("Repository (-want +got):\n%s", d)
			}
			out, _ := json.Marshal(got)
			if bytes.Contains(out, []byte("ghp_")) {
				t.Errorf("metadata holds the token: %s", out)
			}
		}},
		{"unparseable repository", func(m map[string]any) { m["repository"] = "https://github.com/modelcontextprotocol" },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if got.Repository != nil || got.RepositoryURL != "https://github.com/modelcontextprotocol" ||
					got.RepositoryError != `repository "https://github.com/modelcontextprotocol": no owner/name in the path` {
					t.Errorf("repository = %q, %+v, %q", got.RepositoryURL, got.Repository, got.RepositoryError)
				}
			}},
		{"repository object without url", func(m map[string]any) { m["repository"] = map[string]any{"type": "git"} },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if got.Repository != nil || got.RepositoryError != "repository: the object has no url" {
					t.Errorf("repository = %+v, %q", got.Repository, got.RepositoryError)
				}
			}},
		{"repository array", func(m map[string]any) { m["repository"] = []any{"a/b"} },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if got.Repository != nil || got.RepositoryError != "repository: the field is neither a string nor an object" {
					t.Errorf("repository = %+v, %q", got.Repository, got.RepositoryError)
				}
			}},
		{"empty repository declares nothing", func(m map[string]any) { m["repository"] = "" },
			func(t *testing.T, got *evidence.RegistryMeta) {
				if got.Repository != nil || got.RepositoryURL != "" || got.RepositoryError != "" {
					t.Errorf("repository = %q, %+v, %q", got.RepositoryURL, got.Repository, got.RepositoryError)
				}
			}},
		{"fields of the wrong type are left empty", func(m map[string]any) {
			m["homepage"] = []any{"https://a.example"}
			m["mcpName"] = 42
			m["author"] = []any{"x"}
			m["license"] = 7
		}, func(t *testing.T, got *evidence.RegistryMeta) {
			if got.Homepage != "" || got.MCPName != "" || got.AuthorURL != "" || got.License != "" {
				t.Errorf("homepage %q, mcpName %q, author URL %q, license %q; want all empty", got.Homepage, got.MCPName, got.AuthorURL, got.License)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := regDoc(t, "server-everything", func(doc map[string]any) { tt.edit(regManifest(doc, "2026.8.31")) })
			got, err := NPMMetadata(regVersion(t, doc, "2026.8.31"))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

// The public registry's time map also has "created" and "modified", and
// an unpublished package has an "unpublished" object there.
func TestNPMMetadataTimeMap(t *testing.T) {
	doc := regDoc(t, "server-everything", func(doc map[string]any) {
		tm := doc["time"].(map[string]any)
		tm["created"] = "2024-11-19T21:40:11.044Z"
		tm["modified"] = "2024-01-01T00:00:00.000Z" // never earlier in practice; must be ignored all the same
		tm["unpublished"] = map[string]any{"time": "2024-12-01T00:00:00.000Z", "versions": []any{"0.1.0"}}
		tm["0.1.0"] = "2024-11-19T21:40:11.500Z" // published, then unpublished: no longer in versions
	})
	got, err := NPMMetadata(regVersion(t, doc, "2026.8.31"))
	if err != nil {
		t.Fatal(err)
	}
	if want := regTime(t, "2024-11-19T21:40:11.044Z"); !got.FirstPublishedAt.Equal(*want) {
		t.Errorf("FirstPublishedAt = %v, want created, %v", got.FirstPublishedAt, want)
	}
	if got.VersionCount != 10 {
		t.Errorf("VersionCount = %d, want 10 (an unpublished version is not counted)", got.VersionCount)
	}
	if got.PreviousVersion != "2026.8.18" {
		t.Errorf("PreviousVersion = %q, want 2026.8.18", got.PreviousVersion)
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

func TestParseRepository(t *testing.T) {
	gh := func(owner, name, dir string) *evidence.Repository {
		return &evidence.Repository{Host: "github.com", Owner: owner, Name: name, Directory: dir}
	}
	tests := []struct {
		raw, dir string
		want     *evidence.Repository
	}{
		// GitHub, every URL form npm accepts.
		{"https://github.com/modelcontextprotocol/servers.git", "", gh("modelcontextprotocol", "servers", "")},
		{"https://github.com/modelcontextprotocol/servers", "", gh("modelcontextprotocol", "servers", "")},
		{"http://github.com/mikeal/request.git", "", gh("mikeal", "request", "")},
		{"git+https://github.com/sigstore/sigstore-js.git", "", gh("sigstore", "sigstore-js", "")},
		{"git+ssh://git@github.com/rexxars/eventsource-parser.git", "", gh("rexxars", "eventsource-parser", "")},
		{"git+ssh://git@github.com:npm/cli.git", "", gh("npm", "cli", "")},
		{"git://github.com/debug-js/debug.git", "", gh("debug-js", "debug", "")},
		{"ssh://git@github.com/inspect-js/object-inspect.git", "", gh("inspect-js", "object-inspect", "")},
		{"ssh://git@github.com:22/inspect-js/object-inspect.git", "", gh("inspect-js", "object-inspect", "")},
		{"git@github.com:pkgjs/parseargs.git", "", gh("pkgjs", "parseargs", "")},
		{"github.com:isaacs/minimatch", "", gh("isaacs", "minimatch", "")},
		{"github:watson/ci-info", "", gh("watson", "ci-info", "")},
		{"GitHub:watson/ci-info#v4.5.0", "", gh("watson", "ci-info", "")},
		{"jshttp/accepts", "", gh("jshttp", "accepts", "")},
		{"jshttp/accepts#2.0.0", "", gh("jshttp", "accepts", "")},
		{"github.com/zeit/arg", "", gh("zeit", "arg", "")},
		{"https://www.github.com/o/r", "", gh("o", "r", "")},
		{"https://GitHub.com/Owner/Repo.git", "", gh("Owner", "Repo", "")},
		{"https://github.com/o/r#readme", "", gh("o", "r", "")},
		{"https://github.com/o/r?tab=readme-ov-file", "", gh("o", "r", "")},
		{"git+https://github.com/o/r.git#semver:^1.0.0", "", gh("o", "r", "")},
		{"https://ci:token@github.com/o/r.git", "", gh("o", "r", "")},
		{"https://github.com/o/r/issues", "", gh("o", "r", "")},
		{"https://github.com/o/r.js", "", gh("o", "r.js", "")},
		// Monorepo directories, declared or from a web URL.
		{"git+https://github.com/zloirock/core-js.git", "packages/core-js", gh("zloirock", "core-js", "packages/core-js")},
		{"https://github.com/o/r.git", "./packages/x/", gh("o", "r", "packages/x")},
		{"https://github.com/modelcontextprotocol/servers/tree/main/src/fetch", "", gh("modelcontextprotocol", "servers", "src/fetch")},
		{"https://github.com/o/r/blob/main/packages/x/package.json", "", gh("o", "r", "packages/x")},
		{"https://github.com/o/r/blob/main/README.md", "", gh("o", "r", "")},
		{"https://github.com/o/r/tree/main", "", gh("o", "r", "")},
		{"https://github.com/o/r/tree/main/a", "b", gh("o", "r", "b")},
		// GitLab: nested groups and the /-/ separator.
		{"https://gitlab.com/gitlab-org/gitlab.git", "", &evidence.Repository{Host: "gitlab.com", Owner: "gitlab-org", Name: "gitlab"}},
		{"gitlab:group/sub/proj", "", &evidence.Repository{Host: "gitlab.com", Owner: "group/sub", Name: "proj"}},
		{"git@gitlab.com:group/proj.git", "", &evidence.Repository{Host: "gitlab.com", Owner: "group", Name: "proj"}},
		{"https://gitlab.com/group/sub/proj/-/tree/main/packages/x", "", &evidence.Repository{Host: "gitlab.com", Owner: "group/sub", Name: "proj", Directory: "packages/x"}},
		// Bitbucket.
		{"https://bitbucket.org/atlassian/atlaskit", "", &evidence.Repository{Host: "bitbucket.org", Owner: "atlassian", Name: "atlaskit"}},
		{"bitbucket:atlassian/atlaskit", "", &evidence.Repository{Host: "bitbucket.org", Owner: "atlassian", Name: "atlaskit"}},
		{"git@bitbucket.org:atlassian/atlaskit.git", "", &evidence.Repository{Host: "bitbucket.org", Owner: "atlassian", Name: "atlaskit"}},
		{"https://bitbucket.org/o/r/src/master/lib", "", &evidence.Repository{Host: "bitbucket.org", Owner: "o", Name: "r", Directory: "lib"}},
		// Other git hosts.
		{"https://git.sr.ht/~sircmpwn/hare", "", &evidence.Repository{Host: "git.sr.ht", Owner: "~sircmpwn", Name: "hare"}},
		{"ssh://git@codeberg.org/forgejo/forgejo.git", "", &evidence.Repository{Host: "codeberg.org", Owner: "forgejo", Name: "forgejo"}},
		{"git://git.example.org/pub/scm/tool.git", "", &evidence.Repository{Host: "git.example.org", Owner: "pub/scm", Name: "tool"}},
		{"https://gitlab.example.com/group/proj/-/tree/main/x", "", &evidence.Repository{Host: "gitlab.example.com", Owner: "group", Name: "proj"}},
		{"https://www.example.com/o/r.git", "", &evidence.Repository{Host: "www.example.com", Owner: "o", Name: "r"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseRepository(tt.raw, tt.dir)
			if err != nil {
				t.Fatalf("ParseRepository(%q, %q): %v", tt.raw, tt.dir, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseRepository(%q, %q) (-want +got):\n%s", tt.raw, tt.dir, d)
			}
		})
	}
}

func TestParseRepositoryRejects(t *testing.T) {
	tests := []struct {
		raw, reason string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"not a url", "not a URL: contains white space, control characters or backslashes"},
		{"https://github.com/o/r name", "not a URL: contains white space, control characters or backslashes"},
		{`C:\src\repo`, "not a URL: contains white space, control characters or backslashes"},
		{"https://", "no host"},
		{"git+ssh://", "no host"},
		{"https://github.com", "no owner/name in the path"},
		{"https://github.com/modelcontextprotocol", "no owner/name in the path"},
		{"https://git.example.com/repo.git", "no owner/name in the path"},
		{"https://gitlab.com/group", "no group/name in the path"},
		{"github:", "no owner/name in the path"},
		{"github:owner", "no owner/name in the path"},
		{"owner", "not a repository URL or shorthand"},
		{"a/b/c", "not a repository URL or shorthand"},
		{"/abs/path", "not a repository URL or shorthand"},
		{"./rel/path", "not a repository URL or shorthand"},
		{"../rel", "not a repository URL or shorthand"},
		{"file:../local", "not a repository URL or shorthand"},
		{"javascript:alert(1)", "not a repository URL or shorthand"},
		{"mailto:dev@example.com", "not a repository URL or shorthand"},
		{"file:///home/dev/repo", "a local path, not a hosted repository"},
		{"ftp://github.com/o/r", `unsupported scheme "ftp"`},
		{"gist:11081aaa281", "a gist has no owner and repository name"},
		{"https://github.com/o/..", `".." is not a valid owner or repository name`},
		{"https://github.com/o/%2e%2e", `".." is not a valid owner or repository name`},
		{"https://github.com/o/r%3Cscript%3E", `"r<script>" is not a valid owner or repository name`},
		{"http://[::1", `not a URL: missing ']' in host`},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseRepository(tt.raw, "")
			re, ok := errors.AsType[*RepositoryError](err)
			if !ok {
				t.Fatalf("ParseRepository(%q) = %+v, %v; want a *RepositoryError", tt.raw, got, err)
			}
			if got != nil {
				t.Errorf("ParseRepository(%q) returned %+v with its error", tt.raw, got)
			}
			if re.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", re.Reason, tt.reason)
			}
			if re.URL != strings.TrimSpace(tt.raw) {
				t.Errorf("URL = %q, want %q", re.URL, strings.TrimSpace(tt.raw))
			}
		})
	}
}

func TestRepositoryErrorRedactsPassword(t *testing.T) {
	_, err := ParseRepository("https://bot:s3cret@github.com/onlyowner", "")
	re, ok := errors.AsType[*RepositoryError](err)
	if !ok {
		t.Fatalf("err = %v, want a *RepositoryError", err)
	}
	if want := "https://bot:redacted@github.com/onlyowner"; re.URL != want {
		t.Errorf("URL = %q, want %q", re.URL, want)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q holds the password", err)
	}
}

func TestNPMAuthorURL(t *testing.T) {
	tests := []struct {
		author string // raw JSON
		want   string
	}{
		{`"Anthropic, PBC (https://anthropic.com)"`, "https://anthropic.com"},
		{`"Thomas Watson Steen <w@tson.dk> (https://twitter.com/wa7son)"`, "https://twitter.com/wa7son"},
		{`"Jonathan Ong <me@jongleberry.com> (http://jongleberry.com)"`, "http://jongleberry.com"},
		{`"Foo (Bar Corp) <foo@bar.example> (https://foo.example)"`, "https://foo.example"},
		{`"  Jane Doe   (https://jane.example)  "`, "https://jane.example"},
		{`"Mikeal Rogers <mikeal.rogers@gmail.com>"`, ""},
		{`"bdehamer@github.com"`, ""},
		{`"Model Context Protocol a Series of LF Projects, LLC."`, ""},
		{`"Jane (jane@example.com)"`, ""},
		{`"Jane (mailto:jane@example.com)"`, ""},
		{`{"name": "Denis Pushkarev", "email": "zloirock@zloirock.ru", "url": "http://zloirock.ru"}`, "http://zloirock.ru"},
		{`{"name": "Old", "web": "http://old.example"}`, "http://old.example"},
		{`{"name": "X", "url": "mailto:x@example.com"}`, ""},
		{`{"name": "X", "email": "x@example.com"}`, ""},
		{`""`, ""},
		{`null`, ""},
		{`42`, ""},
		{`["https://a.example"]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.author, func(t *testing.T) {
			if got := npmAuthorURL(json.RawMessage(tt.author)); got != tt.want {
				t.Errorf("npmAuthorURL(%s) = %q, want %q", tt.author, got, tt.want)
			}
		})
	}
}

func TestParsePerson(t *testing.T) {
	tests := []struct {
		in, name, email, url string
	}{
		{"Thomas Watson Steen <w@tson.dk> (https://twitter.com/wa7son)", "Thomas Watson Steen", "w@tson.dk", "https://twitter.com/wa7son"},
		{"Mikeal Rogers <mikeal.rogers@gmail.com>", "Mikeal Rogers", "mikeal.rogers@gmail.com", ""},
		{"Anthropic, PBC (https://anthropic.com)", "Anthropic, PBC", "", "https://anthropic.com"},
		{"Foo (Bar Corp) <foo@bar.example> (https://foo.example)", "Foo (Bar Corp)", "foo@bar.example", "https://foo.example"},
		{"bdehamer@github.com", "", "bdehamer@github.com", ""},
		{"just a name", "just a name", "", ""},
		{"", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			name, email, u := parsePerson(tt.in)
			if name != tt.name || email != tt.email || u != tt.url {
				t.Errorf("parsePerson(%q) = %q, %q, %q; want %q, %q, %q", tt.in, name, email, u, tt.name, tt.email, tt.url)
			}
		})
	}
}

func TestNPMLicense(t *testing.T) {
	tests := []struct {
		name              string
		license, licenses string // raw JSON, "" for absent
		want              string
	}{
		{"SPDX id", `"MIT"`, "", "MIT"},
		{"SPDX expression", `"(MIT OR Apache-2.0)"`, "", "(MIT OR Apache-2.0)"},
		{"see license in", `"SEE LICENSE IN LICENSE"`, "", "SEE LICENSE IN LICENSE"},
		{"legacy object", `{"type": "MIT", "url": "https://opensource.org/licenses/MIT"}`, "", "MIT"},
		{"legacy array in license", `[{"type": "MIT"}, {"type": "Apache-2.0"}]`, "", "MIT OR Apache-2.0"},
		{"array of strings", `["MIT", "GPL-2.0"]`, "", "MIT OR GPL-2.0"},
		{"duplicates once", `[{"type": "MIT"}, {"type": "MIT"}]`, "", "MIT"},
		{"legacy licenses array", "", `[{"type": "Apache 2.0"}]`, "Apache 2.0"},
		{"legacy licenses with urls", "", `[{"type": "MIT", "url": "http://x/MIT"}, {"type": "BSD", "url": "http://x/BSD"}]`, "MIT OR BSD"},
		{"legacy licenses object", "", `{"type": "BSD"}`, "BSD"},
		{"license wins over licenses", `"ISC"`, `[{"type": "MIT"}]`, "ISC"},
		{"empty license falls back", `""`, `[{"type": "MIT"}]`, "MIT"},
		{"none", "", "", ""},
		{"null", `null`, "", ""},
		{"number", `7`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l, ls json.RawMessage
			if tt.license != "" {
				l = json.RawMessage(tt.license)
			}
			if tt.licenses != "" {
				ls = json.RawMessage(tt.licenses)
			}
			if got := npmLicense(l, ls); got != tt.want {
				t.Errorf("npmLicense(%s, %s) = %q, want %q", tt.license, tt.licenses, got, tt.want)
			}
		})
	}
}

func TestEmailDomain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Justin@Anthropic.COM", "anthropic.com"},
		{"<a@b.co.uk>", "b.co.uk"},
		{"  a@example.org  ", "example.org"},
		{"a@example.org.", "example.org"},
		{"odd@name@evil.example", "evil.example"},
		{"olaservo@users.noreply.github.com", "users.noreply.github.com"},
		{"nobody", ""},
		{"a@localhost", ""},
		{"a@exa mple.com", ""},
		{"a@-bad.example", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := emailDomain(tt.in); got != tt.want {
			t.Errorf("emailDomain(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPreviousRelease(t *testing.T) {
	at := func(day int) time.Time { return time.Date(2026, 1, day, 12, 0, 0, 0, time.UTC) }
	tests := []struct {
		name       string
		published  map[string]time.Time
		target     string
		prerelease func(string) bool
		want       string
		wantAt     time.Time
	}{
		{"the release before", map[string]time.Time{"1.0.0": at(1), "1.1.0": at(2), "1.2.0": at(3)}, "1.2.0", npmPrerelease, "1.1.0", at(2)},
		{"by time, not by number: a backport", map[string]time.Time{"1.0.0": at(1), "2.0.0": at(3), "1.0.1": at(4)}, "1.0.1", npmPrerelease, "2.0.0", at(3)},
		{"by time, not by number: after a backport", map[string]time.Time{"1.0.0": at(1), "1.0.1": at(4), "2.0.0": at(3), "2.0.1": at(5)}, "2.0.1", npmPrerelease, "1.0.1", at(4)},
		{"map order does not matter", map[string]time.Time{"3.0.0": at(1), "0.1.0": at(2), "2.0.0": at(3)}, "2.0.0", npmPrerelease, "0.1.0", at(2)},
		{"a release skips prereleases", map[string]time.Time{"1.0.0": at(1), "2.0.0-beta.1": at(2), "2.0.0-rc.1": at(3), "2.0.0": at(4)}, "2.0.0", npmPrerelease, "1.0.0", at(1)},
		{"a prerelease counts prereleases", map[string]time.Time{"1.0.0": at(1), "2.0.0-beta.1": at(2), "2.0.0-rc.1": at(3)}, "2.0.0-rc.1", npmPrerelease, "2.0.0-beta.1", at(2)},
		{"a prerelease counts releases", map[string]time.Time{"1.0.0": at(1), "2.0.0-rc.1": at(3)}, "2.0.0-rc.1", npmPrerelease, "1.0.0", at(1)},
		{"only prereleases before a release", map[string]time.Time{"1.0.0-alpha": at(1), "1.0.0-rc": at(2), "1.0.0": at(3)}, "1.0.0", npmPrerelease, "", time.Time{}},
		{"the first version", map[string]time.Time{"1.0.0": at(1), "1.1.0": at(2)}, "1.0.0", npmPrerelease, "", time.Time{}},
		{"the only version", map[string]time.Time{"1.0.0": at(1)}, "1.0.0", npmPrerelease, "", time.Time{}},
		{"no time for the target", map[string]time.Time{"1.0.0": at(1)}, "1.1.0", npmPrerelease, "", time.Time{}},
		{"a tie goes to the higher version", map[string]time.Time{"1.0.9": at(1), "1.0.10": at(1), "1.1.0": at(2)}, "1.1.0", npmPrerelease, "1.0.10", at(1)},
		{"published with the target is not before it", map[string]time.Time{"1.0.0": at(1), "1.0.1": at(2), "1.0.2": at(2)}, "1.0.2", npmPrerelease, "1.0.0", at(1)},
		{"pep 440 release skips rc", map[string]time.Time{"2025.4.7": at(1), "2025.5.0rc1": at(2), "2025.5.0.dev3": at(3), "2025.5.0": at(4)}, "2025.5.0", pep440Prerelease, "2025.4.7", at(1)},
		{"pep 440 post-release is a release", map[string]time.Time{"1.0": at(1), "1.0.post1": at(2), "1.1": at(3)}, "1.1", pep440Prerelease, "1.0.post1", at(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, gotAt := previousRelease(tt.target, tt.published, tt.prerelease)
			if got != tt.want {
				t.Errorf("previousRelease(%s) = %q, want %q", tt.target, got, tt.want)
			}
			switch {
			case tt.want == "" && gotAt != nil:
				t.Errorf("time = %v, want none", gotAt)
			case tt.want != "" && (gotAt == nil || !gotAt.Equal(tt.wantAt)):
				t.Errorf("time = %v, want %v", gotAt, tt.wantAt)
			}
		})
	}
}

func TestPEP440Prerelease(t *testing.T) {
	tests := map[string]bool{
		"1.0": false, "2025.4.7": false, "1.0.post1": false, "1.0-1": false, "1.0+local.abc": false, "1.0+dev": false,
		"1.0a1": true, "1.0.alpha1": true, "1.0b2": true, "1.0-beta.2": true, "1.0rc1": true, "1.0c1": true,
		"1.0.preview1": true, "1.0.dev0": true, "1.0a1.post1": true, "1.0.post1.dev2": true, "1.0RC1": true,
	}
	for v, want := range tests {
		if got := pep440Prerelease(v); got != want {
			t.Errorf("pep440Prerelease(%q) = %v, want %v", v, got, want)
		}
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

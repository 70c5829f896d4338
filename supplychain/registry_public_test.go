package supplychain

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
)

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

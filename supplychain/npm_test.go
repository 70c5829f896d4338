package supplychain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/supplychain"
)

// The packument was recorded from
// https://registry.npmjs.org/@modelcontextprotocol%2fserver-everything and
// trimmed to ten of its versions; everything kept is as the registry served it.
const (
	sePackage   = "@modelcontextprotocol/server-everything"
	sePackument = "testdata/npm/server-everything.packument.json"
)

func npmDiff[T any](want, got T) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("\n-%+v\n+%+v", want, got)
}

// npmRegistry is a local npm registry: GET /<escaped name> answers the
// packument, unknown names get the registry's 404 body. The first fail
// requests are answered with failStatus instead.
type npmRegistry struct {
	docs map[string][]byte // by package name

	mu         sync.Mutex
	fail       int
	failStatus int
	requests   []*http.Request
}

func (reg *npmRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reg.mu.Lock()
	reg.requests = append(reg.requests, r)
	fail := reg.fail > 0
	if fail {
		reg.fail--
	}
	reg.mu.Unlock()
	if fail {
		w.WriteHeader(reg.failStatus)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, `{"error":"method not allowed"}`, http.StatusMethodNotAllowed)
		return
	}
	doc, ok := reg.docs[strings.TrimPrefix(r.URL.Path, "/")]
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"Not found"}`)
		return
	}
	w.Write(doc)
}

func (reg *npmRegistry) seen() []*http.Request {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return append([]*http.Request(nil), reg.requests...)
}

// npmRecorded returns the recorded packument, changed by edit when not nil.
func npmRecorded(t *testing.T, edit func(doc map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile(sePackument)
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

func npmServe(t *testing.T, reg *npmRegistry) (*supplychain.NPM, *npmRegistry) {
	t.Helper()
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	return supplychain.NewNPM(srv.Client(), srv.URL), reg
}

func npmPublished(t *testing.T, s string) *time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	ts = ts.UTC()
	return &ts
}

// npmResolved is the part of a Version a table compares.
type npmResolved struct {
	Name, Version, Requested, Integrity, Tarball, Deprecated string
	Published                                                *time.Time
}

func npmSummary(v *supplychain.Version) npmResolved {
	return npmResolved{v.Name, v.Version, v.Requested, v.Integrity, v.Tarball, v.Deprecated, v.Published}
}

func TestNPMResolve(t *testing.T) {
	npm, _ := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}})
	tarball := func(v string) string {
		return "https://registry.npmjs.org/@modelcontextprotocol/server-everything/-/server-everything-" + v + ".tgz"
	}
	v2026_8_31 := npmResolved{
		Name: sePackage, Version: "2026.8.31",
		Integrity: "sha512-5U3OZh8Xq0Li4nA26l6uNvV9/1suMDuWSn+NjLZIhzinhMY6N3A4DCrxVecBGPf2PsNFKTEv5krxGPRwzxc7jQ==",
		Tarball:   tarball("2026.8.31"),
		Published: npmPublished(t, "2026-09-02T05:06:16Z"),
	}
	with := func(r npmResolved, requested string) npmResolved { r.Requested = requested; return r }

	tests := []struct {
		name string
		spec string
		want npmResolved
	}{
		{name: "exact version", spec: "2025.9.25", want: npmResolved{
			Name: sePackage, Version: "2025.9.25", Requested: "2025.9.25",
			Integrity: "sha512-QD4PjzjY8uaY52lwejauH32JUQXjy+72oSzUd2z1vSmG/R5KrP9ToCiFg9A7GSB1DHuQvIu2lrkp2rXJ9r8Ejw==",
			Tarball:   tarball("2025.9.25"),
			Published: npmPublished(t, "2025-10-02T22:02:11.599Z"),
		}},
		{name: "oldest version", spec: "0.6.2", want: npmResolved{
			Name: sePackage, Version: "0.6.2", Requested: "0.6.2",
			Integrity: "sha512-8ILXxbM8kBWbrtEZoCBYqvAPRyPHhayo4aS2llIPt9oi55o4EUj/90xTFeXuyiM3ReQR/fov3ZmpCy/vC+svUQ==",
			Tarball:   tarball("0.6.2"),
			Published: npmPublished(t, "2026-03-25T20:04:50.347Z"),
		}},
		{name: "latest dist-tag", spec: "latest", want: with(v2026_8_31, "latest")},
		{name: "empty spec is latest", spec: "", want: with(v2026_8_31, "latest")},
		{name: "range latest satisfies", spec: "^2026.1.0", want: with(v2026_8_31, "^2026.1.0")},
		{name: "caret range latest does not satisfy: highest satisfying, by semver not by string", spec: "^2025.4.0", want: npmResolved{
			Name: sePackage, Version: "2025.12.18", Requested: "^2025.4.0",
			Integrity: "sha512-S+MYITzTp02eLSxT+abAMDXf2vjubVKUbdjVj5HW9aEepa/lkcdcSZHeI8PpxpnZOQOW28FKGyFEG/QdawyAeA==",
			Tarball:   tarball("2025.12.18"),
			Published: npmPublished(t, "2026-02-11T04:50:02.485Z"),
		}},
		{name: "tilde range", spec: "~2025.8.0", want: npmResolved{
			Name: sePackage, Version: "2025.8.18", Requested: "~2025.8.0",
			Integrity: "sha512-oKhMHq3WlKfUEJCzNaTgCiXp2fisv7a2ZtAdRNXM4lwesWI0Ak+69eqe06infEKy946+ZvSV808yEyERTml1Bg==",
			Tarball:   tarball("2025.8.18"),
			Published: npmPublished(t, "2026-09-14T04:30:02.396Z"),
		}},
		{name: "any version is latest", spec: "*", want: with(v2026_8_31, "*")},
		{name: "x range", spec: "2026.x", want: with(v2026_8_31, "2026.x")},
		{name: "partial version is a range", spec: "2025.9", want: npmResolved{
			Name: sePackage, Version: "2025.9.25", Requested: "2025.9",
			Integrity: "sha512-QD4PjzjY8uaY52lwejauH32JUQXjy+72oSzUd2z1vSmG/R5KrP9ToCiFg9A7GSB1DHuQvIu2lrkp2rXJ9r8Ejw==",
			Tarball:   tarball("2025.9.25"),
			Published: npmPublished(t, "2025-10-02T22:02:11.599Z"),
		}},
		{name: "bounded range", spec: ">=2025.1.0 <2025.9.0", want: npmResolved{
			Name: sePackage, Version: "2025.8.18", Requested: ">=2025.1.0 <2025.9.0",
			Integrity: "sha512-oKhMHq3WlKfUEJCzNaTgCiXp2fisv7a2ZtAdRNXM4lwesWI0Ak+69eqe06infEKy946+ZvSV808yEyERTml1Bg==",
			Tarball:   tarball("2025.8.18"),
			Published: npmPublished(t, "2026-09-14T04:30:02.396Z"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := npm.Resolve(context.Background(), sePackage, tt.spec)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.spec, err)
			}
			if d := npmDiff(tt.want, npmSummary(v)); d != "" {
				t.Errorf("Resolve(%q) (-want +got):%s", tt.spec, d)
			}
			var m struct {
				Name         string            `json:"name"`
				Version      string            `json:"version"`
				Bin          map[string]string `json:"bin"`
				Dependencies map[string]string `json:"dependencies"`
			}
			if err := json.Unmarshal(v.Manifest, &m); err != nil {
				t.Fatalf("manifest: %v", err)
			}
			if m.Name != sePackage || m.Version != tt.want.Version || m.Bin["mcp-server-everything"] != "dist/index.js" || m.Dependencies["@modelcontextprotocol/sdk"] == "" {
				t.Errorf("manifest = %+v, want the version document of %s", m, tt.want.Version)
			}
		})
	}
}

func TestNPMResolveNotFound(t *testing.T) {
	npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}})
	tests := []struct {
		name, pkg, spec string
		want            error
	}{
		{"version not published", sePackage, "2025.6.1", supplychain.ErrVersionNotFound},
		{"v-prefixed version not published", sePackage, "v2025.6.1", supplychain.ErrVersionNotFound},
		{"range nothing satisfies", sePackage, "^2027.0.0", supplychain.ErrVersionNotFound},
		{"unknown dist-tag", sePackage, "next", supplychain.ErrVersionNotFound},
		{"unknown package", "@modelcontextprotocol/server-nonexistent", "latest", supplychain.ErrPackageNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(reg.seen())
			v, err := npm.Resolve(context.Background(), tt.pkg, tt.spec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Resolve(%q, %q) = %+v, %v; want %v", tt.pkg, tt.spec, v, err, tt.want)
			}
			if n := len(reg.seen()) - before; n != 1 {
				t.Errorf("%d requests, want 1 (an answer is not retried)", n)
			}
		})
	}
}

// npm takes "v1.2.3" as the version 1.2.3 (semver's loose parsing), and
// pick itself strips the "v" to decide the spec is a version.
func TestNPMResolveVPrefixedVersion(t *testing.T) {
	npm, _ := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}})
	v, err := npm.Resolve(context.Background(), sePackage, "v2025.9.25")
	if errors.Is(err, supplychain.ErrVersionNotFound) {
		t.Errorf("v-prefixed version: %v", err)
	}
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if v.Version != "2025.9.25" {
		t.Errorf("Resolve(v2025.9.25) = %s, want 2025.9.25", v.Version)
	}
}

// A dist-tag moved back to an older release (as after a bad publish):
// npm takes the latest tag whenever it satisfies the range.
func TestNPMResolveLatestTagWins(t *testing.T) {
	doc := npmRecorded(t, func(doc map[string]any) {
		doc["dist-tags"] = map[string]any{"latest": "2026.8.18", "next": "2026.8.31"}
	})
	npm, _ := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: doc}})
	tests := []struct {
		spec, want string
	}{
		{">=2026.1.0", "2026.8.18"},
		{"^2026.1.0", "2026.8.18"},
		{"latest", "2026.8.18"},
		{"next", "2026.8.31"},
		{"^2026.8.20", "2026.8.31"},
		{"^2025.1.0", "2025.12.18"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			v, err := npm.Resolve(context.Background(), sePackage, tt.spec)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.spec, err)
			}
			if v.Version != tt.want {
				t.Errorf("Resolve(%q) = %s, want %s", tt.spec, v.Version, tt.want)
			}
		})
	}
}

// npmRangeSet is a package's published versions, its latest tag and its
// deprecated versions, for the range table below.
type npmRangeSet struct {
	latest     string
	versions   []string
	deprecated []string
}

var npmRangeSets = map[string]npmRangeSet{
	"A": {latest: "2.1.0", versions: []string{"1.0.0", "1.2.3", "1.2.4-beta.1", "1.2.4", "1.3.0-rc.1", "1.3.0", "1.10.0", "2.0.0-alpha.1", "2.0.0-beta.2", "2.0.0", "2.1.0", "3.0.0-rc.1"}},
	"Z": {latest: "0.2.9", versions: []string{"0.0.1", "0.0.3", "0.0.4", "0.1.0", "0.2.3", "0.2.9", "0.3.0-beta.2", "0.3.0", "1.0.0"}},
	"P": {latest: "2.0.0-beta.2", versions: []string{"1.0.0", "1.5.0", "2.0.0-beta.1", "2.0.0-beta.2"}},
	"L": {latest: "1.2.4", versions: []string{"1.0.0", "1.2.4", "1.2.5", "1.3.0", "1.4.0", "2.0.0"}},
	"D": {latest: "1.4.0", versions: []string{"1.0.0", "1.2.0", "1.2.1", "1.3.0", "1.4.0"}, deprecated: []string{"1.4.0", "1.2.1", "1.3.0"}},
	"B": {latest: "1.0.0", versions: []string{"1.0.0", "1.2.3-beta.2", "1.2.4-beta.1", "1.4.0", "1.5.0-alpha.1", "2.0.0-rc.1"}},
	"C": {latest: "1.2.3-beta.2", versions: []string{"1.2.3-beta.2", "1.2.4-beta.1", "1.3.0-alpha.1"}},
	"R": {latest: "1.0.0", versions: []string{"1.0.0", "1.1.0", "1.2.0", "1.2.5", "1.3.0", "1.3.2", "1.4.0", "2.0.0", "2.5.0", "3.0.0"}},
	"V": {latest: "1.0.0", versions: []string{"1.0.0", "1.0.1-alpha.9", "1.0.1-alpha.10", "1.0.1", "2.0.0+build.7"}},
}

// npmRangePackument is a packument of the set's versions, each with a
// version document as the registry serves it (name, version, dist).
func npmRangePackument(t *testing.T, name string, s npmRangeSet) []byte {
	t.Helper()
	versions := map[string]any{}
	for _, v := range s.versions {
		doc := map[string]any{"name": name, "version": v, "dist": map[string]any{
			"integrity": "sha512-" + v,
			"tarball":   "https://registry.npmjs.org/" + name + "/-/" + name + "-" + v + ".tgz",
		}}
		if slices.Contains(s.deprecated, v) {
			doc["deprecated"] = v + " is deprecated"
		}
		versions[v] = doc
	}
	data, err := json.Marshal(map[string]any{"name": name, "dist-tags": map[string]any{"latest": s.latest}, "versions": versions})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestNPMResolveRange resolves ranges as npm install does: the version
// the latest tag names when it satisfies the range (for "*" whatever it
// is) and is not deprecated, otherwise the highest satisfying version,
// preferring versions that are not deprecated; a prerelease satisfies a
// range only when a comparator in the same || branch names a prerelease
// of the same major.minor.patch. want "" is npm's "No matching version"
// (ETARGET).
//
// Every want was checked against node-semver 7.7.2 (semver.maxSatisfying
// with loose: true, which is what npm passes) and, for the pick among
// the satisfying versions, npm-pick-manifest 11.0.3 as npm 11.19.1 bundles
// it, on 2026-12-02. The comments give what go-npm-version v0.0.2 matched
// where that differs from node-semver.
func TestNPMResolveRange(t *testing.T) {
	tests := []struct {
		set, spec, want string
	}{
		{"A", "^1.2.3", "1.10.0"},
		{"A", "~1.2.3", "1.2.4"},
		{"A", "1.x", "1.10.0"},
		{"A", "1.2.x", "1.2.4"},
		{"A", "1.2.X", "1.2.4"},
		{"A", "1.2.*", "1.2.4"},
		{"A", "1", "1.10.0"},
		{"A", "1.2", "1.2.4"},
		{"A", "1.2.3 - 1.3.0", "1.3.0"}, // go-npm-version: a parse error
		{"A", "1.2 - 2", "2.1.0"},       // go-npm-version: a parse error
		{"A", "1.0.0 - 1.2", "1.2.4"},   // go-npm-version: a parse error
		{"A", "^1.0.0 || ^3.0.0-rc.1", "3.0.0-rc.1"},
		{"A", "1.2.x || 2.0.x", "2.0.0"},
		{"A", ">=1.3.0-rc.1 <1.3.0", "1.3.0-rc.1"},      // go-npm-version: no match
		{"A", ">=2.0.0-alpha.1 <2.0.0", "2.0.0-beta.2"}, // go-npm-version: no match
		{"A", "^2.0.0-alpha.1", "2.1.0"},
		{"A", "~2.0.0-alpha.1", "2.0.0"},
		{"A", "^1.2.4-beta.0", "1.10.0"},
		{"A", ">1.2.4-beta.0 <1.3.0-0", "1.2.4"},
		{"A", ">=1.3.0-rc.1", "2.1.0"},
		{"A", "<2.0.0", "1.10.0"},
		{"A", "<=2.0.0-beta.2", "2.0.0-beta.2"},
		{"A", ">=1.0.0 <2", "1.10.0"},
		{"A", ">= 1.0.0 < 1.3", "1.2.4"},
		{"A", "*", "2.1.0"},
		{"A", "x", "2.1.0"},
		{"A", ">=0.0.0", "2.1.0"},
		{"A", "=1.2.3", "1.2.3"},
		{"A", "v1.2.3", "1.2.3"},
		{"A", "^v1.2.3", "1.10.0"},
		{"A", "~>1.2.3", "1.2.4"}, // go-npm-version: a parse error
		{"A", "^4.0.0", ""},
		{"Z", "^0.2.3", "0.2.9"},
		{"Z", "^0.0.3", "0.0.3"},
		{"Z", "^0.0", "0.0.4"},
		{"Z", "~0.2", "0.2.9"},
		{"Z", "0.x || >=0.0.3 <0.0.4", "0.2.9"},
		{"Z", "^0.3.0-beta.1", "0.3.0"},
		{"P", "*", "2.0.0-beta.2"},
		{"P", "x", "1.5.0"},
		{"P", "^2.0.0", ""},
		{"P", "^2.0.0-0", "2.0.0-beta.2"},
		{"P", ">=1.0.0", "1.5.0"},
		{"L", "^1.0.0", "1.2.4"},
		{"L", "^1.2.5", "1.4.0"},
		{"L", "*", "1.2.4"},
		{"D", "^1.0.0", "1.2.0"},
		{"D", "~1.2.0", "1.2.0"},
		{"D", "1.3.0", "1.3.0"},
		{"B", ">=1.2.3-beta.1", "1.4.0"},
		{"B", "^1.2.3-beta.1", "1.4.0"},
		{"B", "~1.2.3-beta.1", "1.2.3-beta.2"},
		{"B", ">=1.2.3-beta.1 <2.0.0-rc.2", "2.0.0-rc.1"}, // go-npm-version: 1.4.0
		{"C", "^1.2.3-beta.1", "1.2.3-beta.2"},
		{"C", ">1.2.3-beta.2", ""},
		{"C", "*", "1.2.3-beta.2"},
		{"R", ">1.2", "3.0.0"},
		{"R", "<=1.2", "1.0.0"},
		{"R", ">1", "3.0.0"},
		{"R", "<1.3", "1.0.0"},
		{"R", "=1.2", "1.2.5"},
		{"R", "1.2.3 - 1.3", "1.3.2"}, // go-npm-version: a parse error
		{"R", "^1.x", "1.0.0"},
		{"R", "~1.x", "1.0.0"},
		{"R", "1.2.0 - 2", "2.5.0"}, // go-npm-version: a parse error
		{"R", "<1.2.0 || >=2.5.0 <3", "1.0.0"},
		{"R", ">=1.1 <=1.3", "1.3.2"},
		{"R", "~1", "1.0.0"},
		{"R", "^0.x || ^2", "2.5.0"},
		{"V", "^1.0.1-alpha.9", "1.0.1"},
		{"V", "2.0.0", ""},
		{"V", ">=2", "2.0.0+build.7"},
		{"V", "1.0.1-alpha.9 - 1.0.1-alpha.10", "1.0.1-alpha.10"}, // go-npm-version: a parse error
	}
	const name = "ranges"
	npms := map[string]*supplychain.NPM{}
	for k, s := range npmRangeSets {
		npms[k], _ = npmServe(t, &npmRegistry{docs: map[string][]byte{name: npmRangePackument(t, name, s)}})
	}
	for _, tt := range tests {
		t.Run(tt.set+"/"+tt.spec, func(t *testing.T) {
			v, err := npms[tt.set].Resolve(context.Background(), name, tt.spec)
			if tt.want == "" {
				if !errors.Is(err, supplychain.ErrVersionNotFound) {
					got := "no version"
					if v != nil {
						got = v.Version
					}
					t.Fatalf("Resolve(%q) = %s, %v; want ErrVersionNotFound", tt.spec, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v; want %s", tt.spec, err, tt.want)
			}
			if v.Version != tt.want || v.Integrity != "sha512-"+tt.want {
				t.Errorf("Resolve(%q) = %s (integrity %s), want %s", tt.spec, v.Version, v.Integrity, tt.want)
			}
		})
	}
}

// A comma is no part of npm's range grammar. node-semver 7.7.2 in loose
// mode, as npm calls it, silently drops the comparator before one
// (">=1.0.0, <2" is "<2.0.0-0", "1.x, 2.x" is "2.x"); the matcher refuses
// the range instead, so the scan fails with a clear error rather than
// guessing which of two readings was meant.
func TestNPMResolveRangeCommaRefused(t *testing.T) {
	npm, _ := npmServe(t, &npmRegistry{docs: map[string][]byte{"ranges": npmRangePackument(t, "ranges", npmRangeSets["A"])}})
	v, err := npm.Resolve(context.Background(), "ranges", ">=1.0.0, <2")
	if !errors.Is(err, supplychain.ErrVersionNotFound) || !strings.Contains(err.Error(), "neither a published version, a dist-tag nor a semver range") {
		got := "no version"
		if v != nil {
			got = v.Version
		}
		t.Fatalf("Resolve(>=1.0.0, <2) = %s, %v; want ErrVersionNotFound saying it is no range", got, err)
	}
}

func TestNPMDeprecated(t *testing.T) {
	// npm deprecate adds a "deprecated" message to the version document.
	const msg = "2025.8.18 leaks file contents; upgrade to 2025.9.25 or later"
	doc := npmRecorded(t, func(doc map[string]any) {
		doc["versions"].(map[string]any)["2025.8.18"].(map[string]any)["deprecated"] = msg
	})
	npm, _ := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: doc}})
	for spec, want := range map[string]string{"2025.8.18": msg, "2025.9.25": "", "latest": ""} {
		v, err := npm.Resolve(context.Background(), sePackage, spec)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", spec, err)
		}
		if v.Deprecated != want {
			t.Errorf("Resolve(%q).Deprecated = %q, want %q", spec, v.Deprecated, want)
		}
	}
}

func TestNPMSHA1Only(t *testing.T) {
	// Packages published before 2017 carry only a SHA-1 shasum.
	doc := npmRecorded(t, func(doc map[string]any) {
		delete(doc["versions"].(map[string]any)["0.6.2"].(map[string]any)["dist"].(map[string]any), "integrity")
	})
	npm, _ := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: doc}})
	v, err := npm.Resolve(context.Background(), sePackage, "0.6.2")
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha1-8a410e4cfb533f63eb05d0a899908066e0a92b1e"; v.Integrity != want {
		t.Errorf("integrity = %q, want %q", v.Integrity, want)
	}
}

// The registry expects a scoped name with its slash escaped
// (@scope%2fname), under the registry's own path when it has one.
func TestNPMRequestPath(t *testing.T) {
	reg := &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}}
	srv := httptest.NewServer(http.StripPrefix("/artifactory/api/npm/npm", reg))
	defer srv.Close()
	for _, endpoint := range []string{srv.URL + "/artifactory/api/npm/npm", srv.URL + "/artifactory/api/npm/npm/"} {
		t.Run(endpoint, func(t *testing.T) {
			npm := supplychain.NewNPM(srv.Client(), endpoint)
			if got, want := npm.Registry(), srv.URL+"/artifactory/api/npm/npm/"; got != want {
				t.Errorf("Registry() = %q, want %q", got, want)
			}
			before := len(reg.seen())
			if _, err := npm.Resolve(context.Background(), sePackage, "latest"); err != nil {
				t.Fatal(err)
			}
			seen := reg.seen()[before:]
			if len(seen) != 1 {
				t.Fatalf("%d requests, want 1", len(seen))
			}
			// RequestURI is the path as sent on the wire.
			if got, want := seen[0].RequestURI, "/artifactory/api/npm/npm/@modelcontextprotocol%2fserver-everything"; !strings.EqualFold(got, want) {
				t.Errorf("request URI = %q, want %q", got, want)
			}
			if got := seen[0].Header.Get("Accept"); !strings.Contains(got, "application/json") {
				t.Errorf("Accept = %q, want application/json", got)
			}
		})
	}
}

func TestNPMBadName(t *testing.T) {
	npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}})
	for _, name := range []string{
		"",
		"Server-Everything",
		"@ModelContextProtocol/server-everything",
		"server everything",
		"../server-everything",
		"@modelcontextprotocol/",
		"@modelcontextprotocol",
		".hidden",
		"_private",
		"server-everything?x=1",
		strings.Repeat("a", 215),
	} {
		t.Run(name, func(t *testing.T) {
			v, err := npm.Resolve(context.Background(), name, "latest")
			if !errors.Is(err, supplychain.ErrBadName) {
				t.Errorf("Resolve(%q) = %+v, %v; want ErrBadName", name, v, err)
			}
		})
	}
	if n := len(reg.seen()); n != 0 {
		t.Errorf("the registry saw %d requests for invalid names, want none", n)
	}
}

func TestNPMUnreachable(t *testing.T) {
	t.Run("503 then 200 is retried and succeeds", func(t *testing.T) {
		t.Parallel()
		npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}, fail: 1, failStatus: http.StatusServiceUnavailable})
		v, err := npm.Resolve(context.Background(), sePackage, "latest")
		if err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		if v.Version != "2026.8.31" {
			t.Errorf("version = %s, want 2026.8.31", v.Version)
		}
		if n := len(reg.seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("429 then 200 is retried and succeeds", func(t *testing.T) {
		t.Parallel()
		npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}, fail: 1, failStatus: http.StatusTooManyRequests})
		if _, err := npm.Resolve(context.Background(), sePackage, "latest"); err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		if n := len(reg.seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("persistent 503", func(t *testing.T) {
		t.Parallel()
		npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}, fail: 1000, failStatus: http.StatusServiceUnavailable})
		v, err := npm.Resolve(context.Background(), sePackage, "latest")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) {
			t.Fatalf("Resolve = %+v, %v; want ErrRegistryUnreachable", v, err)
		}
		if n := len(reg.seen()); n != 4 {
			t.Errorf("%d requests, want 4 (the first and three retries)", n)
		}
	})
	t.Run("403 is not retried", func(t *testing.T) {
		t.Parallel()
		npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}, fail: 1000, failStatus: http.StatusForbidden})
		if _, err := npm.Resolve(context.Background(), sePackage, "latest"); !errors.Is(err, supplychain.ErrRegistryUnreachable) {
			t.Fatalf("Resolve error = %v, want ErrRegistryUnreachable", err)
		}
		if n := len(reg.seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("closed port", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		npm := supplychain.NewNPM(nil, "http://"+addr)
		v, err := npm.Resolve(context.Background(), sePackage, "latest")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) {
			t.Fatalf("Resolve = %+v, %v; want ErrRegistryUnreachable", v, err)
		}
	})
	t.Run("context ends during the backoff", func(t *testing.T) {
		t.Parallel()
		npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}, fail: 1000, failStatus: http.StatusBadGateway})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := npm.Resolve(ctx, sePackage, "latest")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) {
			t.Fatalf("Resolve error = %v, want ErrRegistryUnreachable", err)
		}
		if n := len(reg.seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Resolve took %s after its context ended", d)
		}
	})
}

// Metadata comes from the document Resolve fetched: one request in all.
func TestNPMMetadataAfterResolve(t *testing.T) {
	npm, reg := npmServe(t, &npmRegistry{docs: map[string][]byte{sePackage: npmRecorded(t, nil)}})
	v, err := npm.Resolve(context.Background(), sePackage, "latest")
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	meta, err := supplychain.NPMMetadata(v)
	if err != nil {
		t.Fatalf("NPMMetadata: %v", err)
	}
	if n := len(reg.seen()); n != 1 {
		t.Errorf("%d requests, want 1: metadata must not fetch again", n)
	}
	got := struct {
		Name, Version, Previous, MCPName, RepositoryURL string
		Repository                                      *evidence.Repository
		Published                                       *time.Time
		Count                                           int
	}{meta.Name, meta.Version, meta.PreviousVersion, meta.MCPName, meta.RepositoryURL, meta.Repository, meta.PublishedAt, meta.VersionCount}
	want := got
	want.Name, want.Version, want.Previous = sePackage, "2026.8.31", "2026.8.18"
	want.MCPName = "io.github.modelcontextprotocol/server-everything"
	want.RepositoryURL = "https://github.com/modelcontextprotocol/servers.git"
	want.Repository = &evidence.Repository{Host: "github.com", Owner: "modelcontextprotocol", Name: "servers"}
	want.Published, want.Count = v.Published, 10
	if d := npmDiff(want, got); d != "" {
		t.Errorf("metadata (-want +got):%s", d)
	}
	if d := npmDiff(*want.Repository, *got.Repository); d != "" {
		t.Errorf("repository (-want +got):%s", d)
	}
}

// A Version not made by Resolve has no packument to read history from;
// metadata says so instead of reporting zero versions.
func TestNPMMetadataNeedsResolve(t *testing.T) {
	v := &supplychain.Version{Name: sePackage, Version: "2026.8.31", Manifest: json.RawMessage(`{"name":"x"}`)}
	if meta, err := supplychain.NPMMetadata(v); err == nil {
		t.Errorf("NPMMetadata = %+v, want an error", meta)
	}
}

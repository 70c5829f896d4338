// Package npm is the npm ecosystem: its names, pins, package URLs and the
// packages of a package-lock.json.
package npm

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// Ecosystem is npm.
type Ecosystem struct{}

// Name is "npm".
func (Ecosystem) Name() string { return "npm" }

// Title is "npm".
func (Ecosystem) Title() string { return "npm" }

// Registry is registry.npmjs.org.
func (Ecosystem) Registry() (url, noun string) { return "https://registry.npmjs.org", "npm registry" }

// Normalize is name as written: npm's registry compares names as they are.
func (Ecosystem) Normalize(name string) string { return name }

// Pin is NAME@VERSION.
func (Ecosystem) Pin(name, version string) string { return name + "@" + version }

// Unpin reads NAME@VERSION: the name ends at the first '@' after a
// scope's leading one, as npm reads a package spec.
func (Ecosystem) Unpin(ref string) (name, version string) {
	from := 0
	if strings.HasPrefix(ref, "@") {
		from = 1
	}
	if j := strings.IndexByte(ref[from:], '@'); j >= 0 {
		return ref[:from+j], ref[from+j+1:]
	}
	return ref, ""
}

// Exact: a spec that is neither empty, a tag (latest) nor a range.
func (Ecosystem) Exact(spec string) (string, bool) {
	if spec == "" || spec == "latest" || strings.ContainsAny(spec, "^~<>=* |") {
		return "", false
	}
	return spec, true
}

// Purl is the package URL of an exact npm version. It is not
// packageurl-go's ToString, which writes a version's build metadata "+" as
// %2B: reports and stored runs carry this form, and targets are read in
// both.
func (Ecosystem) Purl(name, version string) string {
	p := name
	if strings.HasPrefix(name, "@") {
		p = "%40" + strings.TrimPrefix(name, "@")
	}
	return "pkg:npm/" + p + "@" + url.PathEscape(version)
}

// PurlName is @namespace/name, or name without a namespace.
func (Ecosystem) PurlName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	if !strings.HasPrefix(namespace, "@") {
		namespace = "@" + namespace
	}
	return namespace + "/" + name
}

// Key is NAME@VERSION as written.
func (Ecosystem) Key(name, version string) string { return name + "@" + version }

// TreePurls are the package URLs of a package-lock.json's packages (its
// root and linked packages left out), sorted by tree path.
func (e Ecosystem) TreePurls(lockfile []byte, skip string) []string {
	var lock struct {
		Packages map[string]struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Link    bool   `json:"link"`
		} `json:"packages"`
	}
	if len(lockfile) == 0 || json.Unmarshal(lockfile, &lock) != nil {
		return nil
	}
	seen := map[string]bool{skip: true}
	var out []string
	keys := make([]string, 0, len(lock.Packages))
	for k := range lock.Packages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, path := range keys {
		p := lock.Packages[path]
		if path == "" || p.Link || p.Version == "" {
			continue
		}
		name := p.Name
		if name == "" {
			i := strings.LastIndex(path, "node_modules/")
			if i < 0 {
				continue
			}
			name = path[i+len("node_modules/"):]
		}
		purl := e.Purl(name, p.Version)
		if !seen[purl] {
			seen[purl] = true
			out = append(out, purl)
		}
	}
	return out
}

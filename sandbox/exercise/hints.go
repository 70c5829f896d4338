package exercise

import (
	"strconv"
	"strings"
)

// formats are the values of the string formats honoured.
func (p Places) format(f string) (string, bool) {
	switch f {
	case "uri", "url", "iri", "uri-reference", "iri-reference":
		return p.URL, true
	case "email", "idn-email":
		return p.Email, true
	case "hostname", "idn-hostname":
		return p.Host, true
	case "date":
		return "2026-01-15", true
	case "date-time":
		return "2026-01-15T10:00:00Z", true
	case "time":
		return "10:00:00", true
	case "uuid":
		return "3f2b8c1e-6d4a-4e5b-9c7d-2a1b0c9d8e7f", true
	case "ipv4":
		return "192.0.2.10", true
	case "ipv6":
		return "2001:db8::10", true
	case "duration":
		return "PT1M", true
	case "regex":
		return "^example$", true
	}
	return "", false
}

// hint is what a word of a property name says its string holds.
type hint int

const (
	hintNone hint = iota
	hintFile
	hintDir
	hintURL
	hintEmail
	hintHost
	hintID
	hintLang
	hintText
)

// nameHints is the small table of words the name heuristics know. A word
// not found is looked up again without a plural "s".
var nameHints = map[string]hint{
	"path": hintFile, "file": hintFile, "filename": hintFile, "filepath": hintFile,
	"source": hintFile, "src": hintFile, "destination": hintFile, "dest": hintFile, "target": hintFile,
	"dir": hintDir, "directory": hintDir, "folder": hintDir, "root": hintDir, "cwd": hintDir, "workspace": hintDir,
	"url": hintURL, "uri": hintURL, "link": hintURL, "endpoint": hintURL, "webhook": hintURL, "href": hintURL,
	"email": hintEmail, "mail": hintEmail, "to": hintEmail, "recipient": hintEmail, "cc": hintEmail, "bcc": hintEmail,
	"host": hintHost, "hostname": hintHost, "domain": hintHost,
	"id": hintID, "uuid": hintID, "key": hintID,
	"language": hintLang, "lang": hintLang, "locale": hintLang,
}

// nameHint reads a property name from its last word to its first; the first
// word the table knows decides. A file word in a name that also has a
// directory word ("dir_path") means the directory. The name "from" alone is
// a sender's mail address.
func nameHint(name string) hint {
	ws := words(name)
	if len(ws) == 1 && ws[0] == "from" {
		return hintEmail
	}
	dir := false
	for _, w := range ws {
		if nameHints[w] == hintDir {
			dir = true
		}
	}
	for i := len(ws) - 1; i >= 0; i-- {
		h, ok := nameHints[ws[i]]
		if !ok {
			h, ok = nameHints[strings.TrimSuffix(ws[i], "s")]
		}
		if ok {
			if h == hintFile && dir {
				return hintDir
			}
			return h
		}
	}
	return hintNone
}

// byName is the heuristic value of a string property called name.
func (p Places) byName(name string) string {
	switch nameHint(name) {
	case hintFile:
		return p.file()
	case hintDir:
		return p.Scratch
	case hintURL:
		return p.URL
	case hintEmail:
		return p.Email
	case hintHost:
		return p.Host
	case hintID:
		return "example-1"
	case hintLang:
		return "en"
	}
	return "example"
}

// formatHints are the hints of the formats whose values have variants.
var formatHints = map[string]hint{
	"uri": hintURL, "url": hintURL, "iri": hintURL, "uri-reference": hintURL, "iri-reference": hintURL,
	"email": hintEmail, "idn-email": hintEmail,
}

// varied returns the variant-th distinct value of a hint that has several:
// the decoys in turn for a file, the URL with a query, the mail address
// with a tag.
func (p Places) varied(h hint, variant int) (string, bool) {
	n := strconv.Itoa(variant + 1)
	switch h {
	case hintFile:
		if variant < len(p.Decoys) {
			return p.Scratch + "/" + p.Decoys[variant].Path, true
		}
	case hintURL:
		sep := "?"
		if strings.Contains(p.URL, "?") {
			sep = "&"
		}
		return p.URL + sep + "page=" + n, true
	case hintEmail:
		if local, domain, ok := strings.Cut(p.Email, "@"); ok {
			return local + "+" + n + "@" + domain, true
		}
	}
	return "", false
}

package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/verifymcp/verifymcp/rubric"
)

// IgnoreFileName is the ignore file a scan reads from the current
// directory when no other is named.
const IgnoreFileName = ".verifymcp-ignore.yaml"

// IgnoreFile is a reviewed list of findings an operator has accepted:
// each entry names a code (and, optionally, a subject and a target), why,
// who decided and until when. Entries are applied when a report is
// written: an ignored finding is still in the report, marked as such, and
// does not trip the gate; an expired entry stops applying and the report
// says so.
type IgnoreFile struct {
	Path    string
	Entries []IgnoreEntry
}

// IgnoreEntry is one accepted finding.
type IgnoreEntry struct {
	Code string
	// Subject, when set, limits the entry to findings about it (a tool's
	// name, "server instructions", ...); empty matches every subject.
	Subject string
	// Target, when set, limits the entry to one package: ECOSYSTEM:NAME,
	// any version, or ECOSYSTEM:NAME@VERSION (pypi:NAME==VERSION too); a
	// target without an ecosystem is an npm package's.
	Target  string
	Reason  string
	By      string
	Expires string // YYYY-MM-DD, the last day it applies
	// Line is the entry's line in the file.
	Line int

	expires time.Time
}

// ExpiredAt says whether the entry no longer applies at now: its expiry
// date is the last day it does.
func (e IgnoreEntry) ExpiredAt(now time.Time) bool { return now.After(e.expires.AddDate(0, 0, 1)) }

// ignoreFields are the keys of an ignore entry, in the order they are
// written.
var ignoreFields = []string{"code", "subject", "target", "reason", "by", "expires"}

func (e *IgnoreEntry) field(key string) *string {
	switch key {
	case "code":
		return &e.Code
	case "subject":
		return &e.Subject
	case "target":
		return &e.Target
	case "reason":
		return &e.Reason
	case "by":
		return &e.By
	case "expires":
		return &e.Expires
	}
	return nil
}

// LoadIgnoreFile reads an ignore file (see ParseIgnoreFile). Every error
// starts with the file's path.
func LoadIgnoreFile(path string) (*IgnoreFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, err
	}
	return ParseIgnoreFile(path, data)
}

// ParseIgnoreFile parses the ignore file named path: a mapping whose one
// key, ignore, lists the entries. Every entry needs a code that some
// rubric defines, a reason, who decided and an expiry date; anything else
// is an error that reads "FILE:LINE: what is wrong", on one line.
func ParseIgnoreFile(path string, data []byte) (*IgnoreFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(path, err)
	}
	f := &IgnoreFile{Path: path}
	if len(doc.Content) == 0 {
		return f, nil
	}
	root := yamlDeref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return f, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: an ignore file is a mapping with one key, ignore: the list of entries", path, root.Line)
	}
	seen := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], yamlDeref(root.Content[i+1])
		switch {
		case k.Value != "ignore":
			return nil, fmt.Errorf("%s:%d: unknown key %q: an ignore file has one key, ignore", path, k.Line, k.Value)
		case seen:
			return nil, fmt.Errorf("%s:%d: ignore is given twice", path, k.Line)
		}
		seen = true
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			continue
		}
		if v.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%s:%d: ignore must be a list of entries (- code: ...)", path, v.Line)
		}
		for _, n := range v.Content {
			e, err := parseIgnoreEntry(path, yamlDeref(n))
			if err != nil {
				return nil, err
			}
			f.Entries = append(f.Entries, e)
		}
	}
	return f, nil
}

// parseIgnoreEntry reads and checks one entry.
func parseIgnoreEntry(path string, n *yaml.Node) (IgnoreEntry, error) {
	e := IgnoreEntry{Line: n.Line}
	at := func(line int) string { return path + ":" + strconv.Itoa(line) }
	if n.Kind != yaml.MappingNode {
		return e, fmt.Errorf("%s: an ignore entry is a mapping of %s", at(n.Line), strings.Join(ignoreFields, ", "))
	}
	lines := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlDeref(n.Content[i+1])
		field := e.field(k.Value)
		switch {
		case field == nil:
			return e, fmt.Errorf("%s: unknown field %q in an ignore entry (it takes %s)", at(k.Line), k.Value, strings.Join(ignoreFields, ", "))
		case lines[k.Value] != 0:
			return e, fmt.Errorf("%s: %s is given twice in one ignore entry", at(k.Line), k.Value)
		case v.Kind != yaml.ScalarNode:
			return e, fmt.Errorf("%s: %s must be text, not a list or a mapping", at(k.Line), k.Value)
		}
		lines[k.Value] = k.Line
		if v.Tag != "!!null" {
			*field = v.Value
		}
	}
	line := func(key string) string {
		if l := lines[key]; l != 0 {
			return at(l)
		}
		return at(e.Line)
	}
	switch {
	case strings.TrimSpace(e.Code) == "":
		return e, fmt.Errorf("%s: an ignore entry needs the code it accepts", at(e.Line))
	case !knownCode(e.Code):
		return e, fmt.Errorf("%s: %s", line("code"), unknownCode(e.Code))
	case strings.TrimSpace(e.Reason) == "":
		return e, fmt.Errorf("%s: ignoring %s needs a reason", at(e.Line), e.Code)
	case strings.TrimSpace(e.By) == "":
		return e, fmt.Errorf("%s: ignoring %s needs who decided it (by)", at(e.Line), e.Code)
	case strings.TrimSpace(e.Expires) == "":
		return e, fmt.Errorf("%s: ignoring %s needs an expiry date (expires: YYYY-MM-DD): an acceptance is reviewed again", at(e.Line), e.Code)
	}
	t, err := time.Parse(time.DateOnly, e.Expires)
	if err != nil {
		return e, fmt.Errorf("%s: expires %q is not a date YYYY-MM-DD", line("expires"), e.Expires)
	}
	e.expires = t
	return e, nil
}

// yamlDeref follows a YAML alias to the node it names.
func yamlDeref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// yamlLine is how the YAML parser names the line of a syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError writes a YAML syntax error as FILE:LINE: what, when the
// parser named the line.
func yamlError(path string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: not YAML: %s", path, m[1], m[2])
	}
	return fmt.Errorf("%s: not YAML: %w", path, err)
}

// rubricCodes are the reason codes of every embedded rubric version and
// config catalog: an ignore entry may name a code of the rubric a stored
// run is scored under, not only of the one in force.
var rubricCodes = sync.OnceValue(func() map[string]bool {
	codes := map[string]bool{}
	for _, v := range rubric.Versions() {
		r, err := rubric.Load(v)
		if err != nil {
			// The embedded rubrics are validated by their tests; a failure
			// here is a build defect, not a runtime condition.
			panic(err)
		}
		for _, c := range r.Codes {
			codes[c.Code] = true
		}
	}
	// And the config catalog's codes (cfg.), which config scan gates on.
	for _, v := range rubric.ConfigCatalogVersions() {
		c, err := rubric.LoadConfigCatalog(v)
		if err != nil {
			panic(err)
		}
		for _, cd := range c.Codes {
			codes[cd.Code] = true
		}
	}
	return codes
})

func knownCode(code string) bool { return rubricCodes()[code] }

// unknownCode says that code is in no rubric, with the codes it may have
// meant.
func unknownCode(code string) string {
	vs := rubric.Versions()
	msg := fmt.Sprintf("%q is not a reason code of any rubric (v%s to v%s) or of the config catalog", code, vs[0], vs[len(vs)-1])
	var near []string
	for c := range rubricCodes() {
		if code != "" && (strings.HasPrefix(c, code) || strings.Contains(c, code) || strings.HasPrefix(code, c)) {
			near = append(near, c)
		}
	}
	sort.Strings(near)
	switch {
	case len(near) > 0 && len(near) <= 3:
		return msg + "; did you mean " + strings.Join(near, " or ") + "?"
	default:
		return msg + "; `verifymcp rubric show` lists them"
	}
}

// matches reports whether the entry accepts finding f of the package t.
func (e IgnoreEntry) matches(f *Finding, t Target) bool {
	if f.Code != e.Code || (e.Subject != "" && f.Subject != e.Subject) {
		return false
	}
	if e.Target == "" {
		return true
	}
	eco, name, found := strings.Cut(e.Target, ":")
	if !found {
		eco, name = "npm", e.Target
	}
	if eco != or(t.Ecosystem, "npm") {
		return false
	}
	version := ""
	if n, v, ok := strings.Cut(name, "=="); ok {
		name, version = n, v
	} else if at := strings.LastIndex(name, "@"); at > 0 {
		name, version = name[:at], name[at+1:]
	}
	if eco == "pypi" {
		// PyPI compares names by PEP 503's normal form.
		name = pypiName(name)
	}
	return name == t.Name && (version == "" || version == t.Version)
}

// pypiNameRuns are the runs of separators PEP 503 folds into one "-".
var pypiNameRuns = regexp.MustCompile(`[-_.]+`)

// pypiName is a PyPI project name in PEP 503's normal form, lower case
// with every run of "-", "_" and "." one "-": the form a PyPI target's
// name has. It is pkgspec.NormalizePyPIName, which the report's layer
// does not import; a test holds the two equal.
func pypiName(name string) string {
	return pypiNameRuns.ReplaceAllString(strings.ToLower(name), "-")
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ignoreEntryYAML writes an entry that accepts finding f of the package
// t, as it is pasted under ignore: in the file. Every value is a YAML
// double-quoted string whose escapes give back the exact text (a subject
// with a bidirectional control or a control character included), so the
// entry parses and matches the finding, and nothing in it acts on a
// terminal. Reason and by are placeholders marked FILL IN; expires is a
// date the parser accepts.
func ignoreEntryYAML(f Finding, t Target, expires time.Time) []string {
	code := f.Code
	if !plainCode.MatchString(code) {
		code = yamlQuote(code)
	}
	lines := []string{"  - code: " + code}
	if f.Subject != "" {
		lines = append(lines, "    subject: "+yamlQuote(f.Subject))
	}
	return append(lines,
		"    target: "+yamlQuote(targetName(t))+"   # drop @"+yamlComment(t.Version)+" for every version",
		`    reason: "FILL IN: why this finding is accepted"`,
		`    by: "FILL IN: who decided"`,
		"    expires: "+yamlQuote(expires.Format(time.DateOnly))+"   # the last day it applies",
	)
}

// plainCode is a reason code as the rubric spells them, which YAML reads
// as written.
var plainCode = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$`)

// yamlQuote writes s as a YAML double-quoted string of printable
// characters: quotes and backslashes escaped, and every control, format,
// separator or other unprintable character written as \xXX, \uXXXX or
// \UXXXXXXXX, which YAML reads back as that character.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch {
		case r == utf8.RuneError && w == 1:
			b.WriteString(`\uFFFD`) // not text: no YAML file can hold it
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == ' ' || (unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r)):
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlComment is s made safe for a comment on a terminal: what yamlQuote
// would write, without the quotes.
func yamlComment(s string) string {
	q := yamlQuote(s)
	return q[1 : len(q)-1]
}

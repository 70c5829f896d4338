package exercise

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
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

// str generates a string: the format's value, the name's heuristic value,
// then fixed candidates and one built from the pattern, the first that fits
// the length bounds and the pattern.
func (g *generator) str(s *object, path, name string, variant int) (any, error) {
	lo, _ := count(s, "minLength")
	if lo > maxMinLength {
		return nil, prefix(path, fmt.Errorf("minLength %d is past the bound", lo))
	}
	hi, hasHi := count(s, "maxLength")
	if !hasHi {
		hi = -1
	} else if hi < lo {
		return nil, prefix(path, fmt.Errorf("minLength %d is more than maxLength %d", lo, hi))
	}
	pattern, _ := s.vals["pattern"].(string)
	c, err := g.strings(s, name, pattern, lo, hi)
	if err != nil {
		return nil, prefix(path, err)
	}
	if len(c.fits) == 0 {
		if pattern != "" {
			return nil, prefix(path, fmt.Errorf("pattern %q cannot be satisfied", pattern))
		}
		return nil, prefix(path, fmt.Errorf("no string fits the length bounds"))
	}
	v := c.fits[0]
	if variant > 0 {
		v = c.vary(g, variant)
	}
	return v, g.add(len(v) + 2)
}

// choice is what str found for one string schema and property name: kept
// for the items of an array, which ask the same schema for variants.
type choice struct {
	re   *regexp.Regexp
	lo   int
	hi   int
	hint hint
	fits []string
	// digits are the positions vary counts over, computed once.
	digits  []digit
	counted bool
}

// digit is a position of a string and the runes it may take.
type digit struct {
	pos   int
	runes []rune
}

// match reports whether v fits the pattern, charging the work.
func (c *choice) match(g *generator, v string) bool {
	if c.re == nil {
		return true
	}
	g.steps += 1 + len(v)/256
	return c.re.MatchString(v)
}

// strings returns the choice for a string schema, from the cache when the
// same schema and name were seen.
func (g *generator) strings(s *object, name, pattern string, lo, hi int) (*choice, error) {
	format, _ := s.vals["format"].(string)
	key := strings.Join([]string{name, pattern, format, strconv.Itoa(lo), strconv.Itoa(hi)}, "\x00")
	if c, ok := g.choices[key]; ok {
		return c, nil
	}
	c := &choice{lo: lo, hi: hi, hint: nameHint(name)}
	if pattern != "" {
		if err := g.charge(1 + len(pattern)/16); err != nil {
			return nil, err
		}
		var err error
		if c.re, err = regexp.Compile(pattern); err != nil {
			return nil, fmt.Errorf("pattern %q cannot be satisfied (not RE2)", pattern)
		}
	}
	var cands []string
	if v, ok := g.p.format(format); ok {
		cands = append(cands, v)
		c.hint = formatHints[format]
	}
	cands = append(cands, g.p.byName(name), "example", "a", "1", "A1", "abc123", "2026-01-01",
		g.p.URL, g.p.Email, g.p.file(), "ABC")
	if c.re != nil {
		if v, ok := fromPattern(pattern); ok {
			cands = append(cands, v)
		}
	}
	seen := map[string]bool{}
	for _, cand := range cands {
		for _, f := range fitLength(cand, lo, hi) {
			if !seen[f] && c.match(g, f) {
				seen[f] = true
				c.fits = append(c.fits, f)
				break
			}
		}
	}
	if g.choices == nil {
		g.choices = map[string]*choice{}
	}
	g.choices[key] = c
	return c, g.charge(0)
}

// fitsBounds reports whether v fits the length bounds and the pattern.
func (c *choice) fitsBounds(g *generator, v string) bool {
	n := utf8.RuneCountInString(v)
	return n >= c.lo && (c.hi < 0 || n <= c.hi) && c.match(g, v)
}

// vary returns the variant-th distinct string: the hint's variant (another
// decoy, URL or address), the next fitting candidate, then the first one
// counted up in its last few runes, each position taking the letters and
// digits the pattern accepts there. When none is left it returns the first
// string again, and the caller sees the repeat.
func (c *choice) vary(g *generator, variant int) string {
	if v, ok := g.p.varied(c.hint, variant); ok {
		for _, f := range fitLength(v, c.lo, c.hi) {
			if c.fitsBounds(g, f) {
				return f
			}
		}
	}
	if variant < len(c.fits) {
		return c.fits[variant]
	}
	base := []rune(c.fits[0])
	if !c.counted {
		c.counted = true
		const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		for i := len(base) - 1; i >= 0 && i >= len(base)-6; i-- {
			d := digit{pos: i, runes: []rune{base[i]}}
			for _, r := range alphabet {
				if r == base[i] {
					continue
				}
				m := append([]rune(nil), base...)
				m[i] = r
				if c.match(g, string(m)) {
					d.runes = append(d.runes, r)
				}
			}
			c.digits = append(c.digits, d)
		}
	}
	// Count k = variant-len(fits)+1 in the mixed radix of the positions.
	k := variant - len(c.fits) + 1
	m := append([]rune(nil), base...)
	for _, d := range c.digits {
		m[d.pos] = d.runes[k%len(d.runes)]
		k /= len(d.runes)
	}
	if v := string(m); k == 0 && len(c.digits) > 0 && c.fitsBounds(g, v) {
		return v
	}
	return c.fits[0]
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

// fitLength returns c brought within [lo, hi] runes (hi < 0: no upper
// bound): padded with "x" or with its own last rune, or truncated.
func fitLength(c string, lo, hi int) []string {
	n := utf8.RuneCountInString(c)
	switch {
	case n < lo:
		last := "x"
		if r, size := utf8.DecodeLastRuneInString(c); size > 0 {
			last = string(r)
		}
		out := []string{c + strings.Repeat("x", lo-n)}
		if last != "x" {
			out = append(out, c+strings.Repeat(last, lo-n))
		}
		return out
	case hi >= 0 && n > hi:
		return []string{string([]rune(c)[:hi])}
	}
	return []string{c}
}

// fromPattern builds a string the pattern matches by walking its syntax
// tree: the first alternative, the minimum repetition, a letter or digit of
// each class.
func fromPattern(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	ok := walkPattern(re.Simplify(), &b, 0)
	return b.String(), ok
}

func walkPattern(re *syntax.Regexp, b *strings.Builder, depth int) bool {
	if depth > 100 || b.Len() > maxMinLength {
		return false
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		r, ok := classRune(re.Rune)
		if !ok {
			return false
		}
		b.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture, syntax.OpPlus:
		return walkPattern(re.Sub[0], b, depth+1)
	case syntax.OpRepeat:
		for range min(re.Min, maxMinLength) {
			if !walkPattern(re.Sub[0], b, depth+1) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !walkPattern(sub, b, depth+1) {
				return false
			}
		}
	case syntax.OpAlternate:
		return walkPattern(re.Sub[0], b, depth+1)
	}
	return true
}

// classRune picks a rune of a character class, preferring a, A, 0, then any
// printable ASCII rune, then the class's first rune.
func classRune(ranges []rune) (rune, bool) {
	if len(ranges) < 2 {
		return 0, false
	}
	in := func(r rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	for _, r := range "aA0" {
		if in(r) {
			return r, true
		}
	}
	for r := rune(0x21); r < 0x7f; r++ {
		if in(r) {
			return r, true
		}
	}
	return ranges[0], true
}

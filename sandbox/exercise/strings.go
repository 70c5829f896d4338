package exercise

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

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

package checks

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden text: characters that render as nothing or change the display
// order, and text hidden by encoding or markup.
//
// Rules, and the legitimate uses they leave alone:
//   - invisible: format characters (Unicode category Cf, other than bidi
//     controls and tags), control characters other than tab and newlines,
//     the combining grapheme joiner and the blank fillers (Hangul fillers,
//     Khmer inherent vowels, braille blank). A zero-width joiner between
//     two pictographs (emoji sequences) and a zero-width (non-)joiner
//     between two letters of a non-Latin script (Persian, Indic) are
//     allowed.
//   - bidi: embeddings, overrides and isolates (U+202A-U+202E,
//     U+2066-U+2069) always; the marks (LRM, RLM, ALM) only in text with
//     no right-to-left letter, where they have no legitimate use.
//   - tag: the U+E0000 block, except a subdivision flag (U+1F3F4, tag
//     letters, cancel tag). The hidden ASCII is decoded into the finding.
//   - variation selectors: a run of two or more, any selector on an ASCII
//     letter, space or at the start, and an ideographic selector
//     (U+E0100-U+E01EF) on anything but a Han ideograph. VS15/VS16 after an
//     emoji or keycap base, and a single selector on a CJK or math
//     character, are the legitimate uses.
//   - encoded: base64 of at least 20 characters, hex of at least 24, or a
//     run of percent-escapes or HTML character references, that decodes
//     to readable text with a space in it (hashes and identifiers decode to
//     binary, and a JWT header has no space).
//   - markup: HTML comments, Markdown link-reference comments ("[//]: #"),
//     and elements styled display:none, visibility:hidden, font-size:0 or
//     opacity:0.
//   - whitespace: 40 blanks in a row, or 10 blank lines, before more text.

func isBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func isBidiMark(r rune) bool { return r == 0x200E || r == 0x200F || r == 0x061C }

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

func isVS(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF)
}

func isInvisible(r rune) bool {
	if isBidi(r) || isBidiMark(r) || isTag(r) || isVS(r) {
		return false
	}
	switch r {
	case '\t', '\n', '\r':
		return false
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.IsControl(r)
}

// escaped reports whether Visible shows r as an escape.
// Escaped reports whether Visible would write r as an escape: a hidden or
// direction-changing character.
func Escaped(r rune) bool { return escaped(r) }

func escaped(r rune) bool {
	return isBidi(r) || isBidiMark(r) || isTag(r) || isVS(r) || isInvisible(r)
}

func escape(r rune) string {
	return fmt.Sprintf("<U+%04X>", r)
}

// Visible returns s with every invisible, direction-changing, tag and
// variation-selector character replaced by <U+XXXX>, so that evidence
// quoting it can be read and cannot reorder the report it appears in.
func Visible(s string) string {
	if !strings.ContainsFunc(s, escaped) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if escaped(r) {
			b.WriteString(escape(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// evidence returns a span of Visible(text) of at most EvidenceMaxChars
// characters around text[start:end]: the match first, then context on
// both sides.
func evidence(text string, start, end int) string {
	pre, mid, post := tokens(text[:start]), tokens(text[start:end]), tokens(text[end:])
	budget := EvidenceMaxChars
	width := func(ts []string) int {
		n := 0
		for _, t := range ts {
			n += utf8.RuneCountInString(t)
		}
		return n
	}
	var out []string
	if width(mid) >= budget {
		for _, t := range mid {
			n := utf8.RuneCountInString(t)
			if n > budget {
				break
			}
			out = append(out, t)
			budget -= n
		}
		return strings.TrimSpace(strings.Join(out, ""))
	}
	rest := budget - width(mid)
	// Up to a third of the rest goes before the match, the remainder after.
	used, i := 0, len(pre)
	for i > 0 {
		n := utf8.RuneCountInString(pre[i-1])
		if used+n > rest/3 {
			break
		}
		used += n
		i--
	}
	after := rest - used
	out = append(out, pre[i:]...)
	out = append(out, mid...)
	for _, t := range post {
		n := utf8.RuneCountInString(t)
		if n > after {
			break
		}
		out = append(out, t)
		after -= n
	}
	return strings.TrimSpace(strings.Join(out, ""))
}

// tokens splits s into runes as Visible shows them.
func tokens(s string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		if escaped(r) {
			out = append(out, escape(r))
		} else {
			out = append(out, string(r))
		}
	}
	return out
}

// clip bounds revealed text for a finding.
func clip(s string) string {
	v := Visible(s)
	if utf8.RuneCountInString(v) <= EvidenceMaxChars {
		return v
	}
	rs := []rune(v)
	return string(rs[:EvidenceMaxChars])
}

// payload is hidden text revealed by a check, with where it was hidden.
type payload struct {
	text       string
	start, end int
}

// checkHidden runs the hidden-text checks over one unit and then the
// injection checks over whatever hidden text it decoded.
func checkHidden(out *findings, u unit) {
	var payloads []payload
	payloads = append(payloads, checkChars(out, u)...)
	if u.prose {
		payloads = append(payloads, checkEncoded(out, u)...)
		checkMarkup(out, u)
		checkWhitespace(out, u)
	}
	for _, p := range payloads {
		checkInjectionPayload(out, u, p)
	}
}

func checkChars(out *findings, u unit) []payload {
	s := u.text
	if !strings.ContainsFunc(s, escaped) {
		return nil
	}
	rtl := strings.ContainsFunc(s, func(r rune) bool {
		return unicode.In(r, unicode.Arabic, unicode.Hebrew, unicode.Syriac, unicode.Thaana, unicode.Nko)
	})
	type hit struct {
		n          int
		start, end int
	}
	var invisible, bidi, marks hit
	mark := func(h *hit, i, size int) {
		if h.n == 0 {
			h.start, h.end = i, i+size
		}
		h.n++
	}
	var payloads []payload
	rs := []rune(s)
	offs := make([]int, 0, len(rs)+1)
	for i := range s {
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	prev := func(k int) rune {
		if k > 0 {
			return rs[k-1]
		}
		return 0
	}
	next := func(k int) rune {
		if k+1 < len(rs) {
			return rs[k+1]
		}
		return 0
	}
	for k := 0; k < len(rs); k++ {
		r, i := rs[k], offs[k]
		size := offs[k+1] - i
		switch {
		case isBidi(r):
			mark(&bidi, i, size)
		case isBidiMark(r):
			if !rtl {
				mark(&marks, i, size)
			}
		case isTag(r):
			j := k
			for j < len(rs) && isTag(rs[j]) {
				j++
			}
			if !flagSequence(rs, k, j) {
				hidden := decodeTags(rs[k:j])
				out.add(Finding{Code: CodeUnicodeTag, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: evidence(s, i, offs[j]), Decoded: clip(hidden),
					Message: fmt.Sprintf("%d Unicode tag characters hide text that renders as nothing: %q.", j-k, clipPlain(hidden, 80))})
				payloads = append(payloads, payload{text: hidden, start: i, end: offs[j]})
			}
			k = j - 1
		case isVS(r):
			j := k
			for j < len(rs) && isVS(rs[j]) {
				j++
			}
			if smuggledVS(rs, k, j) {
				hidden := decodeVS(rs[k:j])
				f := Finding{Code: CodeUnicodeVariation, Kind: u.kind, Subject: u.subject, Field: u.field,
					Evidence: evidence(s, i, offs[j]),
					Message:  fmt.Sprintf("%d variation selector(s) after %s, where they select no variant and can carry hidden bytes.", j-k, describeBase(prev(k)))}
				if printable(hidden) {
					f.Decoded = clip(hidden)
					payloads = append(payloads, payload{text: hidden, start: i, end: offs[j]})
				}
				out.add(f)
			}
			k = j - 1
		case isInvisible(r):
			if !allowedJoiner(r, prev(k), next(k)) {
				mark(&invisible, i, size)
			}
		}
	}
	if bidi.n > 0 {
		out.add(Finding{Code: CodeUnicodeBidi, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: evidence(s, bidi.start, bidi.end),
			Message:  fmt.Sprintf("%d bidirectional embedding, override or isolate character(s) make the text display in a different order than the model reads it.", bidi.n)})
	}
	if marks.n > 0 {
		out.add(Finding{Code: CodeUnicodeBidi, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: evidence(s, marks.start, marks.end),
			Message:  fmt.Sprintf("%d direction mark(s) in text with no right-to-left letters.", marks.n)})
	}
	if invisible.n > 0 {
		out.add(Finding{Code: CodeUnicodeInvisible, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: evidence(s, invisible.start, invisible.end),
			Message:  fmt.Sprintf("%d invisible character(s), first %s.", invisible.n, escape([]rune(s[invisible.start:])[0]))})
	}
	return payloads
}

// flagSequence reports whether rs[k:j] are the tags of a subdivision flag:
// U+1F3F4, tag digits or letters, then CANCEL TAG.
func flagSequence(rs []rune, k, j int) bool {
	if k == 0 || rs[k-1] != 0x1F3F4 || j-k < 3 || rs[j-1] != 0xE007F {
		return false
	}
	for _, r := range rs[k : j-1] {
		if !(r >= 0xE0030 && r <= 0xE0039) && !(r >= 0xE0061 && r <= 0xE007A) {
			return false
		}
	}
	return true
}

func decodeTags(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		if c := r - 0xE0000; c >= 0x20 && c < 0x7F {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// smuggledVS applies the variation-selector rule to the run rs[k:j].
func smuggledVS(rs []rune, k, j int) bool {
	if j-k >= 2 {
		return true
	}
	r := rs[k]
	var base rune
	if k > 0 {
		base = rs[k-1]
	}
	switch {
	case base == 0 || unicode.IsSpace(base) || isLower(base) || isUpper(base):
		return true
	case r >= 0xE0100:
		return !unicode.Is(unicode.Han, base)
	case r == 0xFE0E || r == 0xFE0F:
		return false
	case base < 0x80:
		return true
	}
	return false
}

// decodeVS reads a run of variation selectors as bytes, the encoding
// published for hiding data in emoji: VS1-VS16 are 0-15, VS17-VS256 are
// 16-255.
func decodeVS(rs []rune) string {
	b := make([]byte, 0, len(rs))
	for _, r := range rs {
		switch {
		case r >= 0xFE00 && r <= 0xFE0F:
			b = append(b, byte(r-0xFE00))
		case r >= 0xE0100 && r <= 0xE01EF:
			b = append(b, byte(r-0xE0100+16))
		}
	}
	return string(b)
}

func describeBase(r rune) string {
	if r == 0 {
		return "the start of the text"
	}
	return fmt.Sprintf("%q", string(r))
}

// allowedJoiner is the legitimate use of zero-width joiners: inside emoji
// sequences, and between letters of scripts that use them for shaping.
func allowedJoiner(r, prev, next rune) bool {
	if r != 0x200C && r != 0x200D {
		return false
	}
	if r == 0x200D && (isPictograph(prev) || prev == 0xFE0F) && isPictograph(next) {
		return true
	}
	return unicode.IsLetter(prev) && unicode.IsLetter(next) && prev >= 0x0370 && next >= 0x0370
}

func isPictograph(r rune) bool {
	return (r >= 0x1F000 && r <= 0x1FAFF) || (r >= 0x2600 && r <= 0x27BF) || (r >= 0x2190 && r <= 0x21FF) || (r >= 0x2B00 && r <= 0x2BFF)
}

var (
	reHex      = regexp.MustCompile(`\b(?:0x)?[0-9A-Fa-f]{24,}\b`)
	rePercent  = regexp.MustCompile(`(?:%[0-9A-Fa-f]{2}){8,}`)
	reEntities = regexp.MustCompile(`(?:&#(?:[0-9]{2,7}|[xX][0-9A-Fa-f]{2,6});){8,}`)
)

// base64Runs returns what reBase64.FindAllStringIndex returns: every
// maximal run of 20 or more characters of base64's alphabets (standard
// and URL-safe), with up to two "=" after it.
func base64Runs(s string) [][2]int {
	in := func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
	}
	var out [][2]int
	for i := 0; i < len(s); {
		if !in(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && in(s[j]) {
			j++
		}
		if j-i >= 20 {
			for k := 0; k < 2 && j < len(s) && s[j] == '='; k++ {
				j++
			}
			out = append(out, [2]int{i, j})
		}
		i = j
	}
	return out
}

func checkEncoded(out *findings, u unit) []payload {
	var payloads []payload
	report := func(kind string, s, e int, decoded string) {
		out.add(Finding{Code: CodeHiddenEncoded, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: evidence(u.text, s, e), Decoded: clip(decoded),
			Message: fmt.Sprintf("A %s blob of %d characters decodes to text: %q.", kind, e-s, clipPlain(decoded, 80))})
		payloads = append(payloads, payload{text: decoded, start: s, end: e})
	}
	runs := base64Runs(u.text)
	for _, m := range runs {
		if d, ok := decodeBase64(u.text[m[0]:m[1]]); ok && readable(d) {
			report("base64", m[0], m[1], d)
		}
	}
	// A hex blob is a run of base64's alphabet too: without a run of 24,
	// there is none.
	long := false
	for _, m := range runs {
		long = long || m[1]-m[0] >= 24
	}
	for _, m := range reHex.FindAllStringIndex(u.text, -1) {
		if !long {
			break
		}
		h := strings.TrimPrefix(strings.TrimPrefix(u.text[m[0]:m[1]], "0x"), "0X")
		if len(h)%2 != 0 {
			continue
		}
		if d, err := hex.DecodeString(h); err == nil && readable(string(d)) {
			report("hex", m[0], m[1], string(d))
		}
	}
	if !strings.Contains(u.text, "%") && !strings.Contains(u.text, "&#") {
		return payloads
	}
	for _, m := range rePercent.FindAllStringIndex(u.text, -1) {
		if d, err := url.PathUnescape(u.text[m[0]:m[1]]); err == nil && readable(d) {
			report("percent-encoded", m[0], m[1], d)
		}
	}
	for _, m := range reEntities.FindAllStringIndex(u.text, -1) {
		if d := html.UnescapeString(u.text[m[0]:m[1]]); readable(d) {
			report("HTML character reference", m[0], m[1], d)
		}
	}
	return payloads
}

func decodeBase64(s string) (string, bool) {
	// A blob must mix cases or digits: long plain words and identifiers
	// ("maintainer_can_modify_pull_requests") are not base64.
	var upper, lower, digit bool
	for _, r := range s {
		upper = upper || isUpper(r)
		lower = lower || isLower(r)
		digit = digit || (r >= '0' && r <= '9')
	}
	if !(upper && lower) && !(digit && (upper || lower)) {
		return "", false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

// readable reports whether decoded bytes are text a model would read as
// an instruction: valid UTF-8, at least 12 characters, nearly all
// printable, half of them letters, with a space.
func readable(s string) bool {
	if len(s) < 12 || !utf8.ValidString(s) || !strings.Contains(s, " ") {
		return false
	}
	var n, printableN, letters int
	for _, r := range s {
		n++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' {
			printableN++
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return printableN*10 >= n*9 && letters*2 >= n
}

// printable reports whether decoded bytes are text at all.
func printable(s string) bool {
	if len(s) < 4 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}

var (
	reHTMLComment = regexp.MustCompile(`(?s)<!--(.*?)(?:-->|$)`)
	reMDComment   = regexp.MustCompile(`(?m)^[ \t]*\[(?://|comment|_)\]:\s*(?:#|<>)\s*(.*)$`)
	reHiddenStyle = regexp.MustCompile(`(?is)<([a-z][a-z0-9]*)\b[^>]*\bstyle\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0*)?(?:px|em|rem|pt|%)?\s*[;"']|opacity\s*:\s*0(?:\.0*)?\s*[;"'])[^>]*>(.*?)(?:</[a-z][a-z0-9]*\s*>|$)`)
	reHiddenAttr  = regexp.MustCompile(`(?is)<([a-z][a-z0-9]*)\b[^>]*?\s(?:hidden|aria-hidden\s*=\s*["']true["'])(?:\s[^>]*)?>(.*?)(?:</[a-z][a-z0-9]*\s*>|$)`)
)

func checkMarkup(out *findings, u unit) {
	if !strings.Contains(u.text, "<") && !strings.Contains(u.text, "]:") {
		return
	}
	type rule struct {
		re      *regexp.Regexp
		what    string
		body    int  // submatch holding the hidden text
		comment bool // a comment, which may be syntax rather than a message
	}
	for _, r := range []rule{
		{reHTMLComment, "An HTML comment hides text from a rendered view", 1, true},
		{reMDComment, "A Markdown comment hides text from a rendered view", 1, true},
		{reHiddenStyle, "An element styled invisible hides text from a rendered view", 2, false},
		{reHiddenAttr, "An element marked hidden hides text from a rendered view", 2, false},
	} {
		var m []int
		body := ""
		for _, c := range r.re.FindAllStringSubmatchIndex(u.text, -1) {
			b := ""
			if c[2*r.body] >= 0 {
				b = strings.TrimSpace(u.text[c[2*r.body]:c[2*r.body+1]])
			}
			// A comment hides text when it holds a message; one that is
			// syntax (a block editor's <!-- wp:paragraph -->, a
			// <!-- more --> marker) or is quoted as code documents markup.
			if r.comment && (!proseComment(b) || inCode(u.text, c[0], c[1])) {
				continue
			}
			// "<!--[if mso]> conditionals for Outlook" with no end names
			// the construct: a conditional comment always closes with
			// <![endif]-->.
			if r.re == reHTMLComment && strings.HasPrefix(b, "[if ") && !strings.HasSuffix(u.text[c[0]:c[1]], "-->") {
				continue
			}
			m, body = c, b
			break
		}
		if m == nil {
			continue
		}
		out.add(Finding{Code: CodeHiddenMarkup, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: evidence(u.text, m[0], m[1]), Decoded: clip(body),
			Message: fmt.Sprintf("%s: %q.", r.what, clipPlain(body, 80))})
	}
}

var (
	reJSONObject = regexp.MustCompile(`\{[^{}]*\}`)
	reProseWord  = regexp.MustCompile(`^[\p{L}][\p{L}'’-]*\p{L}[.,;!?]*$`)
)

// proseComment reports whether a comment's body reads as a message: three
// words or more once the syntax a markup format puts in comments is taken
// out (JSON attributes, "name:name" and "/name:name" delimiters, paths).
func proseComment(body string) bool {
	body = reJSONObject.ReplaceAllString(body, " ")
	n := 0
	for _, f := range strings.Fields(body) {
		if strings.ContainsAny(f, ":/=<>{}[]()#@") {
			continue
		}
		if reProseWord.MatchString(f) {
			n++
		}
	}
	return n >= 3
}

// maxIndent is the indentation, in characters, past which a line's text
// is out of view.
const maxIndent = 120

var reWhitespace = regexp.MustCompile(`(?:[ \t\x{00A0}\x{3000}]{40,}|(?:\r?\n[ \t]*){10,})(\S)`)

func checkWhitespace(out *findings, u unit) {
	if !strings.Contains(u.text, "  ") && !strings.Contains(u.text, "\n\n") && !strings.ContainsAny(u.text, "\u00a0\u3000") {
		return
	}
	var m []int
	for _, c := range reWhitespace.FindAllStringSubmatchIndex(u.text, -1) {
		// Indentation that aligns a line under a column of the one above
		// (a table in a description) is in view on any screen that shows
		// the line it aligns with; blank space pushes text out of view when
		// it runs on within a line, or indents past what a screen shows.
		if c[0] > 0 && u.text[c[0]-1] == '\n' && c[2]-c[0] < maxIndent && !strings.ContainsAny(u.text[c[0]:c[2]], "\r\n") {
			continue
		}
		if tablePadding(u.text, c[0], c[2]) {
			continue
		}
		m = c
		break
	}
	if m == nil {
		return
	}
	blank := m[2] - m[0]
	rest := u.text[m[2]:]
	end := len(rest)
	if i := strings.IndexAny(rest, "\n"); i > 0 {
		end = i
	}
	out.add(Finding{Code: CodeHiddenWhitespace, Kind: u.kind, Subject: u.subject, Field: u.field,
		Evidence: evidence(u.text, m[2], m[2]+end),
		Message:  fmt.Sprintf("%d characters of blank space push the text after them out of view.", blank)})
}

// tablePadding reports whether the blank text[from:to] pads a cell of a
// Markdown table row to its column's width: the row starts with "|", the
// blank ends at the cell's "|", and another row of the same table has a
// cell in that column at least as wide with text in it (a formatter pads
// every cell to the widest). Nothing sits in the padded column that the
// other rows do not show as wide.
func tablePadding(text string, from, to int) bool {
	if to >= len(text) || text[to] != '|' {
		return false
	}
	ls := strings.LastIndexByte(text[:from], '\n') + 1
	le := strings.IndexByte(text[to:], '\n')
	if le < 0 {
		le = len(text)
	} else {
		le += to
	}
	row := text[ls:le]
	if !strings.HasPrefix(strings.TrimLeft(row, " \t"), "|") || strings.ContainsAny(text[from:to], "\r\n") {
		return false
	}
	col := strings.Count(text[ls:to], "|") - 1 // the cell the blank ends
	cs := cells(row)
	if col < 0 || col >= len(cs) {
		return false
	}
	width := len(cs[col])
	lines := strings.Split(text, "\n")
	at := strings.Count(text[:ls], "\n")
	for _, dir := range []int{-1, 1} {
		for i := at + dir; i >= 0 && i < len(lines); i += dir {
			l := strings.TrimRight(lines[i], "\r")
			if !strings.HasPrefix(strings.TrimLeft(l, " \t"), "|") {
				break // the table ends
			}
			if cs := cells(l); col < len(cs) && len(cs[col]) >= width && strings.TrimSpace(cs[col]) != "" {
				return true
			}
		}
	}
	return false
}

// cells splits a Markdown table row into its cells, without the text
// before the first "|".
func cells(row string) []string {
	parts := strings.Split(row, "|")
	if len(parts) < 2 {
		return nil
	}
	return parts[1:]
}

// clipPlain shortens s for a message, showing hidden characters.
// ClipPlain returns s with hidden characters shown (as Visible does), cut
// to n characters.
func ClipPlain(s string, n int) string { return clipPlain(s, n) }

func clipPlain(s string, n int) string {
	v := Visible(s)
	rs := []rune(v)
	if len(rs) <= n {
		return v
	}
	return string(rs[:n]) + "…"
}

package checks

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Windows.
//
// Some texts hold the literals of an expression and are long (server
// instructions, long descriptions), and running an expression over all of
// such a text still costs more than the rest of Check. A windowed
// expression runs only over windows of the text around the occurrences of
// its anchors, literals one of which every match holds, and finds exactly
// the matches a run over the whole text finds, in the same order:
//
//   - Every match holds an occurrence of an anchor and is at most L bytes
//     long, where L is read from the expression's syntax with each
//     unbounded repetition bounded by the text's longest run of white
//     space, or of other bytes, or by its length. A match lies within L
//     bytes of the end of the occurrence, in the occurrence's window; when
//     every match starts (or ends) with the anchor, the window only
//     reaches L bytes after it (or before it).
//   - A window starts and ends on a character boundary next to a character
//     that is not a word character (or at an end of the text), so that \b
//     reads the same at its edges as in the text; expressions that read the
//     start or end of text or lines are not windowed.
//   - Overlapping windows are merged. A match of the text then lies in
//     exactly one window, and within a window the expression tries the
//     same paths in the same order as within the text: a path that leaves
//     the window fails in both (it would be a match crossing the window).
//     So the leftmost-first matches of each window are the text's matches
//     that lie in it, and the windows, in order, give all of them.
//
// TestWindowedMatchesRegexp holds windowed expressions to that on texts
// built to be hard for them.

// hit is an occurrence of a literal: its id and the offset of its last
// byte in the text.
type hit struct {
	id  uint16
	end int32
}

// How an anchor sits in the matches that hold it.
const (
	anchorInside = iota // somewhere in the match
	anchorStart         // the match starts with it (it holds no space)
	anchorEnd           // the match ends with it (it does not end in a space)
)

// windowed is an expression run in windows.
type windowed struct {
	re      *regexp.Regexp        // nil for an alternative, compiled on first use
	compile func() *regexp.Regexp // compiles it
	gate    *gate
	tree    *syntax.Regexp
	// anchors are literals every match holds one of, by id, with how
	// they sit in it; nil when the expression cannot be windowed. isAnchor
	// holds the same ids.
	anchors  map[int]uint8
	isAnchor litBits
	// runs classifies the characters of unbounded repetitions (runSpace,
	// runOther, runAny), whose runs bound the length of a match.
	runs map[*syntax.Regexp]uint8
	// alts, when not nil, are expressions one of which matches a text
	// exactly when this one does (match and matchIn use them), shortest
	// matches first.
	alts []*windowed
}

// positional marks the literals that are anchors of a windowed
// expression: textScan.positions records where they occur.
var positional = map[int]bool{}

// newWindowed prepares re to run in windows.
func newWindowed(re *regexp.Regexp) *windowed {
	w := newWindowedPattern(re.String())
	w.re = re
	return w
}

// newWindowedPattern prepares pattern to run in windows, compiling it on
// first use.
func newWindowedPattern(pattern string) *windowed {
	t, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		panic(err)
	}
	w := &windowed{gate: deriveGate(t).gate(), tree: t, runs: map[*syntax.Regexp]uint8{}}
	w.compile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
	if !windowable(t, w.runs) {
		return w
	}
	w.anchors = anchorsOf(t)
	if w.anchors == nil {
		if c := cover(w.gate); c != nil {
			w.anchors = map[int]uint8{}
			for _, id := range c {
				w.anchors[id] = anchorInside
			}
		}
	}
	if literals.frozen && w.anchors != nil {
		panic("checks: windowed expression made after the automaton was built")
	}
	for id := range w.anchors {
		positional[id] = true
		w.isAnchor[id>>6] |= 1 << (id & 63)
	}
	return w
}

// newWindowedMatch prepares re to run in windows, for match and matchIn
// mostly: they try its alternatives one by one.
func newWindowedMatch(re *regexp.Regexp) *windowed {
	w := newWindowed(re)
	if w.anchors == nil {
		return w
	}
	var alts []*windowed
	for _, alt := range alternativePatterns(re.String(), w.tree) {
		a := newWindowedPattern(alt)
		if a.anchors == nil {
			return w
		}
		alts = append(alts, a)
	}
	// The alternatives with the shortest matches cost least to try.
	short := textRuns{space: 1, other: 20, ascii: true}
	slices.SortStableFunc(alts, func(a, b *windowed) int {
		return short.maxLen(a, a.tree, 1000) - short.maxLen(b, b.tree, 1000)
	})
	w.alts = alts
	return w
}

// anchorsOf returns literals that every match of t starts or ends with,
// or for an alternation, that every match of each alternative does, or
// nil.
func anchorsOf(t *syntax.Regexp) map[int]uint8 {
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	if t.Op == syntax.OpAlternate {
		out := map[int]uint8{}
		for _, sub := range t.Sub {
			as := anchorsOf(sub)
			if as == nil {
				return nil
			}
			for id, k := range as {
				if old, ok := out[id]; ok && old != k {
					k = anchorInside
				}
				out[id] = k
			}
		}
		return out
	}
	subs := []*syntax.Regexp{t}
	if t.Op == syntax.OpConcat {
		subs = t.Sub
	}
	// The exact strings the match ends with, then those it starts with.
	if ends := edgeRun(subs, true); ends != nil {
		out := map[int]uint8{}
		for _, s := range ends {
			if s == "" || strings.HasSuffix(s, " ") || litGate(s).op != gateLit {
				out = nil
				break
			}
			out[litGate(s).lit] = anchorEnd
		}
		if out != nil {
			return out
		}
	}
	if starts := edgeRun(subs, false); starts != nil {
		out := map[int]uint8{}
		for _, s := range starts {
			// Up to the first space, which may stand for a longer run.
			s, _, _ = strings.Cut(s, " ")
			if s == "" || litGate(s).op != gateLit {
				return nil
			}
			out[litGate(s).lit] = anchorStart
		}
		return out
	}
	return nil
}

// edgeRun returns the exact strings (as deriveGate reads them) that the
// concatenation of subs ends with (or starts with), crossing the exact
// sets of its last (or first) parts, or nil.
func edgeRun(subs []*syntax.Regexp, end bool) []string {
	run := []string{""}
	for i := range subs {
		sub := subs[i]
		if end {
			sub = subs[len(subs)-1-i]
		}
		d := deriveGate(sub)
		if d.exact == nil {
			break
		}
		var x []string
		var ok bool
		if end {
			x, ok = cross(d.exact, run)
		} else {
			x, ok = cross(run, d.exact)
		}
		if !ok {
			break
		}
		run = x
	}
	if slices.Contains(run, "") {
		return nil
	}
	return run
}

// alternativePatterns returns patterns one of which matches a text exactly
// when pattern (parsed as t) does: its top-level alternatives, split from
// the pattern's source (syntax.Regexp.String is slow on some trees), or
// else those of alternatives.
func alternativePatterns(pattern string, t *syntax.Regexp) []string {
	// A leading group of flags, "(?i)", applies to every alternative.
	flags := ""
	if strings.HasPrefix(pattern, "(?") {
		if end := strings.IndexByte(pattern, ')'); end > 0 && !strings.ContainsAny(pattern[2:end], ":(") {
			flags, pattern = pattern[:end+1], pattern[end+1:]
		}
	}
	var parts []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']' || i > 0 && (pattern[i-1] == '[' || pattern[i-1] == '^' && i > 1 && pattern[i-2] == '[')
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			parts = append(parts, flags+pattern[start:i])
			start = i + 1
		}
	}
	if parts != nil {
		return append(parts, flags+pattern[start:])
	}
	var out []string
	for _, alt := range alternatives(t) {
		out = append(out, alt.String())
	}
	return out
}

// alternatives returns, for an alternation or a concatenation around one,
// the expressions that distribute the concatenation over the alternation:
// X(?:A|B)Y matches a text exactly when XAY or XBY does. It returns nil
// for any other expression.
func alternatives(t *syntax.Regexp) []*syntax.Regexp {
	switch t.Op {
	case syntax.OpAlternate:
		return t.Sub
	case syntax.OpConcat:
		for i, sub := range t.Sub {
			for sub.Op == syntax.OpCapture {
				sub = sub.Sub[0]
			}
			if sub.Op != syntax.OpAlternate {
				continue
			}
			out := make([]*syntax.Regexp, 0, len(sub.Sub))
			for _, alt := range sub.Sub {
				subs := append(append(slices.Clone(t.Sub[:i]), alt), t.Sub[i+1:]...)
				out = append(out, &syntax.Regexp{Op: syntax.OpConcat, Flags: t.Flags, Sub: subs})
			}
			return out
		}
	}
	return nil
}

// windowable reports whether t reads no edge of its input but word
// boundaries, and repeats without bound only single characters (whose
// runs bound the length of a match); it classifies those characters.
func windowable(t *syntax.Regexp, runs map[*syntax.Regexp]uint8) bool {
	switch t.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpNoMatch:
		return false
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		if t.Op != syntax.OpRepeat || t.Max < 0 {
			if !singleChar(t.Sub[0]) {
				return false
			}
			runs[t.Sub[0]] = runKind(t.Sub[0])
		}
	}
	for _, s := range t.Sub {
		if !windowable(s, runs) {
			return false
		}
	}
	return true
}

// Kinds of characters repeated without bound.
const (
	runSpace = iota // only white space
	runOther        // no white space
	runAny
)

// runKind classifies the characters single-character expression t
// matches: white space comes in runs no longer than a text's longest run
// of white space, and characters that are not white space in runs no
// longer than its longest run of other bytes.
func runKind(t *syntax.Regexp) uint8 {
	space, other := false, false
	for _, c := range []rune{'\t', '\n', '\f', '\r', ' '} {
		space = space || matchesChar(t, c)
	}
	for c := rune(0); c < utf8.RuneSelf && !other; c++ {
		other = !isSpaceByte(byte(c)) && matchesChar(t, c)
	}
	switch {
	case !space:
		return runOther
	case !other && !matchesNonASCII(t):
		return runSpace
	}
	return runAny
}

func singleChar(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpLiteral:
		return len(t.Rune) == 1
	}
	return false
}

// matchesChar reports whether single-character expression t matches r.
func matchesChar(t *syntax.Regexp, r rune) bool {
	switch t.Op {
	case syntax.OpCharClass:
		for i := 0; i+1 < len(t.Rune); i += 2 {
			if r >= t.Rune[i] && r <= t.Rune[i+1] {
				return true
			}
		}
		return false
	case syntax.OpAnyChar:
		return true
	case syntax.OpAnyCharNotNL:
		return r != '\n'
	case syntax.OpLiteral:
		if t.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(t.Rune[0]); f != t.Rune[0]; f = unicode.SimpleFold(f) {
				if f == r {
					return true
				}
			}
		}
		return r == t.Rune[0]
	}
	return false
}

// cover returns literals every text satisfying g holds one of, or nil.
func cover(g *gate) []int {
	switch g.op {
	case gateLit:
		return []int{g.lit}
	case gateOr:
		var out []int
		for _, k := range g.kids {
			c := cover(k)
			if c == nil {
				return nil
			}
			out = append(out, c...)
		}
		return out
	case gateAnd:
		// The conjunct whose shortest literal is longest: the rarest,
		// roughly.
		var best []int
		bestLen := 0
		for _, k := range g.kids {
			c := cover(k)
			if c == nil {
				continue
			}
			short := -1
			for _, id := range c {
				if n := len(literals.list[id]); short < 0 || n < short {
					short = n
				}
			}
			if short > bestLen || (short == bestLen && len(c) < len(best)) {
				best, bestLen = c, short
			}
		}
		return best
	}
	return nil
}

// matchesNonASCII reports whether t matches a character outside ASCII.
func matchesNonASCII(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpCharClass:
		n := len(t.Rune)
		return n > 0 && t.Rune[n-1] >= utf8.RuneSelf
	case syntax.OpLiteral:
		return t.Rune[0] >= utf8.RuneSelf
	}
	return true
}

// charBytes bounds the length in bytes of a character single-character
// expression t matches, in text that is not exotic: there an ASCII letter
// matches only ASCII letters, whatever (?i) folds it to.
func (r textRuns) charBytes(t *syntax.Regexp) int {
	if r.ascii {
		return 1
	}
	switch t.Op {
	case syntax.OpLiteral:
		n := 1
		for _, c := range t.Rune {
			n = max(n, utf8.RuneLen(c))
		}
		return n
	case syntax.OpCharClass:
		n := 1
		for i := 0; i+1 < len(t.Rune); i += 2 {
			lo, hi := t.Rune[i], t.Rune[i+1]
			if lo == hi && isExotic(lo) {
				continue
			}
			n = max(n, utf8.RuneLen(min(hi, unicode.MaxRune)))
		}
		return n
	}
	return utf8.UTFMax
}

// maxLen bounds the length in bytes of a match of t, part of w, in the
// text of length n with runs r.
func (r textRuns) maxLen(w *windowed, t *syntax.Regexp, n int) int {
	switch t.Op {
	case syntax.OpLiteral:
		if r.ascii {
			return len(t.Rune)
		}
		// An ASCII character matches only ASCII in text that is not
		// exotic; another may match its other case, which may be longer.
		m := 0
		for _, c := range t.Rune {
			switch {
			case c < utf8.RuneSelf:
				m++
			case t.Flags&syntax.FoldCase != 0:
				m += utf8.UTFMax
			default:
				m += utf8.RuneLen(c)
			}
		}
		return m
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return r.charBytes(t)
	case syntax.OpCapture, syntax.OpQuest:
		return r.maxLen(w, t.Sub[0], n)
	case syntax.OpConcat:
		m := 0
		for _, s := range t.Sub {
			m += r.maxLen(w, s, n)
		}
		return m
	case syntax.OpAlternate:
		m := 0
		for _, s := range t.Sub {
			m = max(m, r.maxLen(w, s, n))
		}
		return m
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		if t.Op == syntax.OpRepeat && t.Max >= 0 {
			return t.Max * r.maxLen(w, t.Sub[0], n)
		}
		switch w.runs[t.Sub[0]] {
		case runSpace:
			return r.space
		case runOther:
			return r.other
		}
		return n
	}
	return 0 // empty-width
}

// bound returns the bound on the length of w's matches in the text sc
// scanned, computed once per text.
func (sc *textScan) bound(w *windowed) int {
	for _, b := range sc.bounds {
		if b.w == w {
			return b.n
		}
	}
	n := sc.textRuns().maxLen(w, w.tree, len(sc.text))
	sc.bounds = append(sc.bounds, windowBound{w, n})
	return n
}

type windowBound struct {
	w *windowed
	n int
}

// windows returns the merged windows of text (of which hits are the
// positional literals) around the occurrences of w's anchors, given the
// bound L.
func (w *windowed) windows(text string, hits []hit, L int) []window {
	var ws []window
	for _, h := range hits {
		if !w.isAnchor.has(int(h.id)) {
			continue
		}
		end := int(h.end) + 1
		var x, y int
		switch w.anchors[int(h.id)] {
		case anchorStart:
			x = end - len(literals.list[h.id])
			y = x + L
		case anchorEnd:
			x, y = end-L, end
		default:
			x, y = end-L, end+L
		}
		x, y = max(0, x), min(len(text), y)
		for x > 0 && (!utf8.RuneStart(text[x]) || isWordByte(text[x-1])) {
			x--
		}
		for y < len(text) && (!utf8.RuneStart(text[y]) || isWordByte(text[y])) {
			y++
		}
		ws = append(ws, window{x, y})
	}
	slices.SortFunc(ws, func(a, b window) int { return a.x - b.x })
	out := ws[:0]
	for _, win := range ws {
		if n := len(out); n > 0 && win.x <= out[n-1].y {
			out[n-1].y = max(out[n-1].y, win.y)
			continue
		}
		out = append(out, win)
	}
	return out
}

// window is the span [x, y) of a text.
type window struct{ x, y int }

// regexp returns the expression.
func (w *windowed) regexp() *regexp.Regexp {
	if w.re != nil {
		return w.re
	}
	return w.compile()
}

// findAll is w.re.FindAllStringSubmatchIndex(sc.text, -1).
func (w *windowed) findAll(sc *textScan) [][]int {
	return w.findAllBy(sc, nil)
}

// findAllBy is findAll, with find (if not nil) standing in for
// w.re.FindAllStringSubmatchIndex(s, -1) on text that is not exotic.
func (w *windowed) findAllBy(sc *textScan, find func(string) [][]int) [][]int {
	if !sc.may(w.gate) {
		return nil
	}
	if sc.exotic {
		return w.regexp().FindAllStringSubmatchIndex(sc.text, -1)
	}
	if find == nil {
		find = func(s string) [][]int { return w.regexp().FindAllStringSubmatchIndex(s, -1) }
	}
	if w.anchors == nil {
		return find(sc.text)
	}
	text := sc.text
	var out [][]int
	for _, win := range w.windows(text, sc.positions(), sc.bound(w)) {
		for _, m := range find(text[win.x:win.y]) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += win.x
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// matchIn is w.re.MatchString(sc.text[s:e]).
func (w *windowed) matchIn(sc *textScan, s, e int) bool {
	text := sc.text[s:e]
	if sc.exotic || w.anchors == nil {
		return w.regexp().MatchString(text)
	}
	// Occurrences within the span are occurrences of the text's scan
	// that end in it; those that start before it only add windows.
	var hits []hit
	anchored := false
	for _, h := range sc.positions() {
		if int(h.end) >= s && int(h.end) < e {
			hits = append(hits, hit{h.id, h.end - int32(s)})
			anchored = anchored || w.isAnchor.has(int(h.id))
		}
	}
	if !anchored {
		return false // every match holds an anchor
	}
	if w.alts != nil {
		for _, alt := range w.alts {
			if alt.matchHits(sc, text, hits) {
				return true
			}
		}
		return false
	}
	return w.matchHits(sc, text, hits)
}

// matchHits is w.re.MatchString(text), for text a span of the text sc
// scanned and hits the occurrences in it.
func (w *windowed) matchHits(sc *textScan, text string, hits []hit) bool {
	// The runs of the text bound those of the span.
	for _, win := range w.windows(text, hits, sc.bound(w)) {
		if w.regexp().MatchString(text[win.x:win.y]) {
			return true
		}
	}
	return false
}

// match is w.re.MatchString(sc.text).
func (w *windowed) match(sc *textScan) bool {
	if !sc.may(w.gate) {
		return false
	}
	if w.alts != nil && !sc.exotic {
		for _, alt := range w.alts {
			if alt.match(sc) {
				return true
			}
		}
		return false
	}
	return w.matchIn(sc, 0, len(sc.text))
}

package checks

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Prefilters.
//
// Most text a server shows is honest, and most of the checks' regular
// expressions match none of it; running them over every text is what made
// Check slow. So each text is read once by an Aho-Corasick automaton over
// every literal the checks care about, folding ASCII case, and an
// expression runs only where its gate, a formula over those literals that
// every match must satisfy, holds. The gates are derived from the
// expressions' syntax trees (regexGate), so they cannot drift from the
// expressions; a gate only ever skips an expression that could not have
// matched, so the findings are the same.
//
// The automaton reads the text with ASCII letters folded to lower case and
// every run of white space (\s: tab, newline, form feed, carriage return,
// space) read as one space, so that a literal may span the white space of
// an expression: "before\s+using\s+any" gives the literal "before using
// any", which is far rarer than its words.
//
// Folding ASCII case is exact except for three characters: (?i) matches
// the Kelvin sign K (U+212A) for k and the long s ſ (U+017F) for s, and
// strings.ToLower, which the word-list prefilters apply, turns K into k
// and İ (U+0130) into i. A text holding any of them is "exotic": every
// gate holds and the word lists are applied to strings.ToLower(text), as
// before.

// maxLiterals bounds the literal table, so that a set of found literals
// fits in a litBits.
const maxLiterals = 1536

// litBits is the set of literals found in a text.
type litBits [maxLiterals / 64]uint64

func (b *litBits) has(id int) bool { return b[id>>6]&(1<<(id&63)) != 0 }

func (b *litBits) or(o *litBits) {
	for i := range b {
		b[i] |= o[i]
	}
}

// litTable numbers the literals of every gate. Gates are package-level
// values, so the table is complete once the package is initialised; the
// automaton is built from it on first use.
type litTable struct {
	ids    map[string]int
	list   []string
	frozen bool // the automaton is built: no literal may be added
}

var literals = &litTable{ids: map[string]int{}}

func (t *litTable) id(s string) int {
	if id, ok := t.ids[s]; ok {
		return id
	}
	if t.frozen {
		panic("checks: literal " + s + " added after the automaton was built")
	}
	if len(t.list) == maxLiterals {
		panic("checks: too many prefilter literals")
	}
	t.ids[s] = len(t.list)
	t.list = append(t.list, s)
	return len(t.list) - 1
}

// The exotic characters, as literals.
var exoticLits = [...]int{literals.id("\u0130"), literals.id("\u017f"), literals.id("\u212a")}

// Gate operators.
const (
	gateTrue = iota
	gateLit
	gateAnd
	gateOr
)

// A gate is a necessary condition for a match, over the literals of a
// text.
type gate struct {
	op   uint8
	lit  int
	kids []*gate
	// mask holds the literals of an or of literals, word by word.
	mask []maskWord
}

type maskWord struct {
	i    int
	bits uint64
}

var gateAlways = &gate{op: gateTrue}

func (g *gate) ok(b *litBits) bool {
	switch g.op {
	case gateLit:
		return b.has(g.lit)
	case gateAnd:
		for _, k := range g.kids {
			if !k.ok(b) {
				return false
			}
		}
		return true
	case gateOr:
		if g.mask != nil {
			for _, m := range g.mask {
				if b[m.i]&m.bits != 0 {
					return true
				}
			}
			return false
		}
		for _, k := range g.kids {
			if k.ok(b) {
				return true
			}
		}
		return false
	}
	return true
}

func (g *gate) String() string {
	switch g.op {
	case gateLit:
		return fmt.Sprintf("%q", literals.list[g.lit])
	case gateAnd, gateOr:
		var ks []string
		for _, k := range g.kids {
			ks = append(ks, k.String())
		}
		sep := " & "
		if g.op == gateOr {
			sep = " | "
		}
		return "(" + strings.Join(ks, sep) + ")"
	}
	return "true"
}

// litGate is the gate "s occurs in the text as the automaton reads it":
// s is folded and its white space collapsed the same way.
func litGate(s string) *gate {
	s = normalize(s)
	// A single letter, digit or space occurs in nearly every text.
	if s == "" || (len(s) == 1 && (isWordByte(s[0]) || s[0] == ' ')) {
		return gateAlways
	}
	return &gate{op: gateLit, lit: literals.id(s)}
}

// normalize folds ASCII letters to lower case and turns each run of \s
// into one space, as the automaton reads text.
func normalize(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := lowerByte(s[i])
		if isSpaceByte(c) {
			if len(b) > 0 && b[len(b)-1] == ' ' {
				continue
			}
			c = ' '
		}
		b = append(b, c)
	}
	return string(b)
}

// isSpaceByte is \s of Go's regexp: [\t\n\f\r ].
func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func andGate(ks []*gate) *gate {
	var out []*gate
	for _, k := range ks {
		switch k.op {
		case gateTrue:
		case gateAnd:
			out = append(out, k.kids...)
		default:
			out = append(out, k)
		}
	}
	switch len(out) {
	case 0:
		return gateAlways
	case 1:
		return out[0]
	}
	return &gate{op: gateAnd, kids: out}
}

func orGate(ks []*gate) *gate {
	var out []*gate
	for _, k := range ks {
		switch k.op {
		case gateTrue:
			return gateAlways
		case gateOr:
			out = append(out, k.kids...)
		default:
			out = append(out, k)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	g := &gate{op: gateOr, kids: out}
	for _, k := range out {
		if k.op != gateLit {
			return g
		}
	}
	for _, k := range out {
		i := k.lit >> 6
		j := slices.IndexFunc(g.mask, func(m maskWord) bool { return m.i == i })
		if j < 0 {
			g.mask = append(g.mask, maskWord{i: i})
			j = len(g.mask) - 1
		}
		g.mask[j].bits |= 1 << (k.lit & 63)
	}
	return g
}

// wordsGate is the gate of a word-list prefilter: one of ws occurs in
// strings.ToLower(text).
func wordsGate(ws []string) *gate {
	if len(ws) == 0 {
		return gateAlways
	}
	ks := make([]*gate, 0, len(ws))
	for _, w := range ws {
		// A word found in the text is found in the text as the automaton
		// reads it as long as folding and collapsing leave it as it is.
		if w != normalize(w) || strings.ContainsFunc(w, func(r rune) bool { return r >= utf8.RuneSelf }) ||
			strings.HasPrefix(w, " ") || strings.HasSuffix(w, " ") {
			panic("checks: prefilter word " + w + " is not lower-case ASCII with single inner spaces")
		}
		ks = append(ks, litGate(w))
	}
	return orGate(ks)
}

// regexGate derives a gate from re: literals every match contains.
func regexGate(re *regexp.Regexp) *gate {
	// regexp.Compile parses with syntax.Perl.
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		panic(err)
	}
	return deriveGate(t).gate()
}

// Bounds of the exact sets deriveGate keeps.
const (
	maxClassRunes = 6  // largest character class read as a set of literals
	maxExact      = 16 // most strings in an exact set
	maxExactLen   = 40 // longest string in an exact set
)

// derived is what deriveGate knows of an expression: either the exact set
// of (lower-case) strings it matches, or a gate every match satisfies.
type derived struct {
	exact []string // nil when unknown
	g     *gate
}

func (d derived) gate() *gate {
	if d.exact == nil {
		return d.g
	}
	ks := make([]*gate, 0, len(d.exact))
	for _, s := range d.exact {
		ks = append(ks, litGate(s))
	}
	return orGate(ks)
}

func exactly(ss ...string) derived { return derived{exact: ss} }

var unknown = derived{g: gateAlways}

// derivedMemo remembers deriveGate's results while the package's gates
// are made: windows derive the same parts of an expression again.
var derivedMemo = map[*syntax.Regexp]derived{}

func deriveGate(re *syntax.Regexp) derived {
	if d, ok := derivedMemo[re]; ok {
		return d
	}
	d := deriveGateOf(re)
	if !literals.frozen {
		derivedMemo[re] = d
	}
	return d
}

func deriveGateOf(re *syntax.Regexp) derived {
	switch re.Op {
	case syntax.OpLiteral:
		// A non-ASCII character that case-folds cannot be matched byte for
		// byte, so it splits the literal into pieces that each occur.
		fold := re.Flags&syntax.FoldCase != 0
		var parts []*gate
		var cur []byte
		split := false
		for _, r := range re.Rune {
			switch {
			case r < utf8.RuneSelf:
				cur = append(cur, byte(r))
			case fold && !caseless(r):
				parts = append(parts, litGate(string(cur)))
				cur = cur[:0]
				split = true
			default:
				cur = utf8.AppendRune(cur, r)
			}
		}
		if !split {
			return exactly(normalize(string(cur)))
		}
		parts = append(parts, litGate(string(cur)))
		return derived{g: andGate(parts)}
	case syntax.OpCharClass:
		var ss []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo+1 > maxClassRunes {
				return unknown
			}
			for r := lo; r <= hi; r++ {
				if isExotic(r) {
					continue // only matched in exotic text, where gates hold
				}
				if s := normalize(string(r)); !slices.Contains(ss, s) {
					ss = append(ss, s)
				}
			}
			if len(ss) > maxClassRunes {
				return unknown
			}
		}
		if ss == nil {
			// Only exotic characters: no match in other text.
			return derived{g: orGate(nil)}
		}
		return exactly(ss...)
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactly("")
	case syntax.OpCapture:
		return deriveGate(re.Sub[0])
	case syntax.OpQuest:
		d := deriveGate(re.Sub[0])
		if d.exact != nil && len(d.exact) < maxExact {
			return exactly(union(d.exact, []string{""})...)
		}
		return unknown
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		d := deriveGate(re.Sub[0])
		min := 1
		if re.Op == syntax.OpStar || (re.Op == syntax.OpRepeat && re.Min == 0) {
			min = 0
		}
		// Any run of white space reads as one space.
		if slices.Equal(d.exact, []string{" "}) {
			if min == 0 {
				return exactly("", " ")
			}
			return exactly(" ")
		}
		if min == 0 {
			return unknown
		}
		return derived{g: d.gate()}
	case syntax.OpConcat:
		// Cross the exact sets of consecutive parts while they stay small;
		// each finished run is a gate that must hold.
		var gs []*gate
		run := []string{""}
		for _, sub := range re.Sub {
			d := deriveGate(sub)
			if d.exact != nil {
				if x, ok := cross(run, d.exact); ok {
					run = x
					continue
				}
			}
			gs = append(gs, exactly(run...).gate())
			if d.exact != nil {
				run = d.exact
				continue
			}
			gs = append(gs, d.g)
			run = []string{""}
		}
		if len(gs) == 0 {
			return exactly(run...)
		}
		gs = append(gs, exactly(run...).gate())
		return derived{g: andGate(gs)}
	case syntax.OpAlternate:
		var all []string
		ds := make([]derived, 0, len(re.Sub))
		exact := true
		for _, sub := range re.Sub {
			d := deriveGate(sub)
			ds = append(ds, d)
			if d.exact == nil {
				exact = false
			} else {
				all = union(all, d.exact)
			}
		}
		if exact && len(all) <= maxExact {
			return exactly(all...)
		}
		ks := make([]*gate, 0, len(ds))
		for _, d := range ds {
			ks = append(ks, d.gate())
		}
		return derived{g: orGate(ks)}
	}
	// Any character: no literal is required.
	return unknown
}

// cross returns every a+b, if there are few enough.
func cross(as, bs []string) ([]string, bool) {
	if len(as)*len(bs) > maxExact {
		return nil, false
	}
	out := make([]string, 0, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			if len(a)+len(b) > maxExactLen {
				return nil, false
			}
			out = union(out, []string{normalize(a + b)})
		}
	}
	return out, true
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

func isExotic(r rune) bool { return r == 0x130 || r == 0x17F || r == 0x212A }

// caseless reports whether r has no other case.
func caseless(r rune) bool { return unicode.SimpleFold(r) == r }

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isWordByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
}

// A textScan is what one pass over a text found.
type textScan struct {
	bits   litBits
	exotic bool
	text   string
	lower  string // strings.ToLower(text), for exotic text only
	// runs bound the length of a match; see runs().
	runs     textRuns
	measured bool
	// hits are the occurrences of anchors of windowed expressions.
	hits []hit
	// bounds are the bounds on match lengths computed for the text.
	bounds []windowBound
}

// textRuns are the longest runs of white space, of other bytes and of
// base64 characters in a text, in bytes, and whether it is all ASCII.
type textRuns struct {
	space, other, base64 int
	ascii                bool
}

// textRuns returns the runs of the text, measured on first use.
func (sc *textScan) textRuns() textRuns {
	if !sc.measured {
		sc.runs, sc.measured = measure(sc.text), true
	}
	return sc.runs
}

// positions returns the occurrences in the text of the literals that are
// anchors of windowed expressions, in the order of their ends.
func (sc *textScan) positions() []hit { return sc.hits }

// read reads s once with the literal automaton.
func (sc *textScan) read(s string) {
	sc.readInto(s, nil)
}

// readProse reads prose text s as readInto does, and returns its stats;
// the scan keeps its runs.
func (sc *textScan) readProse(s string, arena *[]hit) proseStats {
	sc.text = s
	hits := *arena
	lo := len(hits)
	hits, st := automaton().scanProse(s, &sc.bits, hits)
	sc.hits = hits[lo:len(hits):len(hits)]
	*arena = hits
	sc.exotic = sc.bits.has(exoticLits[0]) || sc.bits.has(exoticLits[1]) || sc.bits.has(exoticLits[2])
	sc.runs = textRuns{space: st.space, other: st.other, base64: st.base64, ascii: !st.high}
	sc.measured = true
	return st
}

// readInto reads s, appending the occurrences of positional literals to
// arena, which the scans of one Check share.
func (sc *textScan) readInto(s string, arena *[]hit) {
	sc.text = s
	var hits []hit
	if arena != nil {
		hits = *arena
	}
	lo := len(hits)
	hits = automaton().scan(s, &sc.bits, hits)
	sc.hits = hits[lo:len(hits):len(hits)]
	if arena != nil {
		*arena = hits
	}
	for _, id := range exoticLits {
		if sc.bits.has(id) {
			sc.exotic = true
		}
	}
}

// lowered returns strings.ToLower of the text, for exotic text.
func (sc *textScan) lowered() string {
	if sc.lower == "" {
		sc.lower = strings.ToLower(sc.text)
	}
	return sc.lower
}

// gateMay reports whether gate g allows a match in s.
func gateMay(g *gate, s string) bool {
	var sc textScan
	sc.read(s)
	return sc.may(g)
}

// joinedGate turns g into a gate for texts joined by white space and
// read as one: a literal with a space in it may straddle two of the
// texts, so it becomes its space-free pieces, each of which lies within
// one text. The union of the texts' scans then decides the gate.
func joinedGate(g *gate) *gate {
	switch g.op {
	case gateLit:
		lit := literals.list[g.lit]
		if !strings.Contains(lit, " ") {
			return g
		}
		var ks []*gate
		for _, part := range strings.Split(lit, " ") {
			ks = append(ks, litGate(part))
		}
		return andGate(ks)
	case gateAnd, gateOr:
		ks := make([]*gate, 0, len(g.kids))
		for _, k := range g.kids {
			ks = append(ks, joinedGate(k))
		}
		if g.op == gateAnd {
			return andGate(ks)
		}
		return orGate(ks)
	}
	return g
}

// mayJoined reports whether gate g (a joinedGate) allows a match in the
// texts of scans joined by its separator.
func mayJoined(g *gate, scans ...*textScan) bool {
	var b litBits
	for _, sc := range scans {
		if sc.exotic {
			return true
		}
		b.or(&sc.bits)
	}
	return g.ok(&b)
}

// scanText reads s.
func scanText(s string) *textScan {
	sc := &textScan{}
	sc.read(s)
	return sc
}

// words reports whether the word-list prefilter g holds: for exotic text,
// as strings.ToLower(text) and mayMatch have it.
func (sc *textScan) words(det *detector) bool {
	if sc.exotic {
		return det.mayMatch(sc.lowered())
	}
	return det.anyGate.ok(&sc.bits)
}

// may reports whether gate g holds.
func (sc *textScan) may(g *gate) bool {
	return sc.exotic || g.ok(&sc.bits)
}

// acAutomaton is an Aho-Corasick automaton over the literal table, with
// ASCII letters folded to lower case and runs of white space read as one
// space.
type acAutomaton struct {
	class [256]uint8
	ncls  int
	// delta is the transition table, state*ncls+class. States are
	// numbered breadth first, so that the shallow states most text keeps
	// to share a few cache lines. An entry holds the start of the next
	// state's row (state*ncls) in its low rowBits bits, and above them
	// the index in out and pos of the literals that end in that state (0
	// for none).
	delta []uint32
	// out holds the literals that end in a state as words of a litBits,
	// and pos those of them that are positional.
	out [][]maskWord
	pos [][]uint16
}

// rowBits is the width of a row start in a transition.
const rowBits = 20

var automaton = sync.OnceValue(func() *acAutomaton {
	literals.frozen = true
	derivedMemo = nil
	return buildAutomaton(literals.list, positional)
})

// buildAutomaton builds the automaton of lits (normalized), of which
// those positional marks are positional.
func buildAutomaton(lits []string, positional map[int]bool) *acAutomaton {
	a := &acAutomaton{}
	a.ncls = 2 // class 0: a byte no literal holds; class 1: white space
	for _, c := range []byte(" \t\n\f\r") {
		a.class[c] = 1
	}
	for _, l := range lits {
		for i := 0; i < len(l); i++ {
			if c := l[i]; a.class[c] == 0 {
				a.class[c] = uint8(a.ncls)
				a.ncls++
			}
		}
	}
	if a.ncls > 255 {
		panic("checks: too many byte classes")
	}
	for c := 'A'; c <= 'Z'; c++ {
		a.class[c] = a.class[c+'a'-'A']
	}
	ncls := a.ncls
	// The trie, as a flat table of children (0 for none); spaceEnd marks
	// the nodes reached by white space, and own the literals ending at a
	// node.
	next := make([]int32, ncls, ncls*len(lits)*4)
	zeros := make([]int32, ncls)
	spaceEnd := []bool{false}
	own := map[int32][]uint16{}
	for id, l := range lits {
		st := int32(0)
		for i := 0; i < len(l); i++ {
			c := int32(a.class[l[i]])
			if next[st*int32(ncls)+c] == 0 {
				next[st*int32(ncls)+c] = int32(len(spaceEnd))
				next = append(next, zeros...)
				spaceEnd = append(spaceEnd, c == 1)
			}
			st = next[st*int32(ncls)+c]
		}
		own[st] = append(own[st], uint16(id))
	}
	n := len(spaceEnd)
	if n*ncls >= 1<<rowBits {
		panic("checks: too many automaton states")
	}
	// Breadth-first order, which failure links also need; children are
	// recognised by being deeper than their parent.
	order := make([]int32, 1, n)
	depth := make([]int32, n)
	for i := 0; i < len(order); i++ {
		st := order[i]
		for _, child := range next[int(st)*ncls : int(st+1)*ncls] {
			if child != 0 {
				order = append(order, child)
				depth[child] = depth[st] + 1
			}
		}
	}
	rank := make([]int32, n)
	for i, st := range order {
		rank[st] = int32(i)
	}
	// Failure links, folded into the table: a missing child becomes the
	// failure state's transition.
	fail := make([]int32, n)
	for _, st := range order {
		row := next[int(st)*ncls : int(st+1)*ncls]
		for c, child := range row {
			switch {
			case child != 0 && depth[child] == depth[st]+1:
				if st != 0 {
					fail[child] = next[int(fail[st])*ncls+c]
				}
			case st != 0:
				row[c] = next[int(fail[st])*ncls+c]
			}
		}
	}
	// The literals that end in each state: its own and its failure
	// state's, numbered as output lists.
	a.out = [][]maskWord{nil}
	a.pos = [][]uint16{nil}
	outIndex := make([]uint32, n) // by trie state
	var ids []uint16
	for _, st := range order {
		ids = ids[:0]
		for f := st; f != 0; f = fail[f] {
			ids = append(ids, own[f]...)
		}
		if len(ids) == 0 {
			continue
		}
		var ms []maskWord
		var ps []uint16
		for _, id := range ids {
			i := int(id) >> 6
			j := slices.IndexFunc(ms, func(m maskWord) bool { return m.i == i })
			if j < 0 {
				ms = append(ms, maskWord{i: i})
				j = len(ms) - 1
			}
			ms[j].bits |= 1 << (id & 63)
			if positional[int(id)] {
				ps = append(ps, id)
			}
		}
		outIndex[st] = uint32(len(a.out))
		a.out = append(a.out, ms)
		a.pos = append(a.pos, ps)
	}
	if len(a.out) >= 1<<(32-rowBits) {
		panic("checks: too many automaton output states")
	}
	// The table, renumbered.
	a.delta = make([]uint32, n*ncls)
	for st := 0; st < n; st++ {
		r := int(rank[st])
		for c := 0; c < ncls; c++ {
			t := next[st*ncls+c]
			a.delta[r*ncls+c] = uint32(int(rank[t])*ncls) | outIndex[t]<<rowBits
		}
		// A run of white space reads as one space: after white space,
		// more of it changes nothing. (Every state reached by white space
		// ends in it: its path is the longest suffix of the text read
		// that begins a literal.)
		if spaceEnd[st] || (st == 0 && next[1] == 0) {
			a.delta[r*ncls+1] = uint32(r * ncls)
		}
	}
	return a
}

// wordSet finds any of a few words in a text as the literal automaton
// reads it, and the exotic characters: a cheap first look, where reading
// the text with the whole automaton would cost more than the check.
type wordSet struct {
	build func() *acAutomaton
}

func newWordSet(words []string) *wordSet {
	lits := []string{"\u0130", "\u017f", "\u212a"} // the exotic characters first
	for _, w := range words {
		if n := normalize(w); !slices.Contains(lits, n) {
			lits = append(lits, n)
		}
	}
	return &wordSet{build: sync.OnceValue(func() *acAutomaton { return buildAutomaton(lits, nil) })}
}

// find reports whether s holds one of the words, and whether it is
// exotic.
func (ws *wordSet) find(s string) (found, exotic bool) {
	var b litBits
	ws.build().scan(s, &b, nil)
	exotic = b[0]&0b111 != 0
	b[0] &^= 0b111
	for _, w := range b {
		found = found || w != 0
	}
	return found, exotic
}

// scan adds the literals found in s to b and the occurrences of
// positional ones to hits.
func (a *acAutomaton) scan(s string, b *litBits, hits []hit) []hit {
	delta, class := a.delta, &a.class
	row := 0
	for i := 0; i < len(s); i++ {
		v := delta[row+int(class[s[i]])]
		row = int(v & (1<<rowBits - 1))
		if v >= 1<<rowBits {
			hits = a.found(int(v>>rowBits), i, b, hits)
		}
	}
	return hits
}

// scanProse is scan, also gathering the stats of a prose text
// (statsOf).
func (a *acAutomaton) scanProse(s string, b *litBits, hits []hit) ([]hit, proseStats) {
	return a.scan(s, b, hits), statsOf(s)
}

// found records the literals of output list o, which end at offset i.
func (a *acAutomaton) found(o, i int, b *litBits, hits []hit) []hit {
	for _, m := range a.out[o] {
		b[m.i] |= m.bits
	}
	for _, id := range a.pos[o] {
		hits = append(hits, hit{id, int32(i)})
	}
	return hits
}

// Byte classes for the loops that read every byte of a text.
const (
	byteSpace   = 1 << iota // \s
	byteBase64              // [A-Za-z0-9+/_\-]
	byteWord                // \w
	byteEscaped             // an ASCII character Visible escapes
	byteHigh                // part of a character outside ASCII
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if isSpaceByte(b) {
			t[c] |= byteSpace
		}
		if isBase64Byte(b) {
			t[c] |= byteBase64
		}
		if isWordByte(b) {
			t[c] |= byteWord
		}
		if b < utf8.RuneSelf && escaped(rune(b)) {
			t[c] |= byteEscaped
		}
		if b >= utf8.RuneSelf {
			t[c] |= byteHigh
		}
	}
	return t
}()

// measure returns the runs of s.
func measure(s string) textRuns {
	var r textRuns
	space, other, b64 := 0, 0, 0
	var high uint8
	for i := 0; i < len(s); i++ {
		f := byteClass[s[i]]
		high |= f
		if f&byteSpace != 0 {
			space++
			other = 0
			r.space = max(r.space, space)
		} else {
			other++
			space = 0
			r.other = max(r.other, other)
		}
		if f&byteBase64 != 0 {
			b64++
			r.base64 = max(r.base64, b64)
		} else {
			b64 = 0
		}
	}
	r.ascii = high&byteHigh == 0
	return r
}

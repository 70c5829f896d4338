package checks

import "unicode/utf8"

// Matchers for the references to tools and servers.
//
// findShadowing runs reToolRef, reWhenUsing and reServerRef over every
// text that mentions a tool, using or a server, which is most long texts,
// so these three are matched by hand: each function below returns what
// the expression's FindAllStringSubmatchIndex returns, for text that is
// not exotic (see prefilter.go; there (?i) also folds the Kelvin sign and
// the long s into the ASCII classes, and the regexp runs instead).
//
// Each follows the regexp package's leftmost-first rule: the match is the
// one that starts first, and from there the one a backtracking matcher
// finds first, trying alternatives in order and repetitions greedily.
// Where an expression could backtrack into a repetition, the comments say
// why no shorter repetition can lead to a match: in each case what
// follows the repetition cannot match a character of its class. \s is
// [\t\n\f\r ], \w and \b are ASCII, and an invalid byte reads as U+FFFD.
// TestRefMatchersMatchRegexp compares them with the expressions.

// isOpenQuote returns the length of the opening quote of reToolRef and
// reWhenUsing (["'`‘“]) at s[i:], or 0.
func isOpenQuote(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	switch s[i] {
	case '"', '\'', '`':
		return 1
	}
	if hasAt(s, i, "‘") || hasAt(s, i, "“") {
		return len("‘")
	}
	return 0
}

// isCloseQuote returns the length of the closing quote of reToolRef and
// reWhenUsing (["'`’”]) at s[i:], or 0.
func isCloseQuote(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	switch s[i] {
	case '"', '\'', '`':
		return 1
	}
	if hasAt(s, i, "’") || hasAt(s, i, "”") {
		return len("’")
	}
	return 0
}

func hasAt(s string, i int, sub string) bool { return len(s)-i >= len(sub) && s[i:i+len(sub)] == sub }

// wordAt reports whether s[i:] starts with word (lower-case ASCII), ASCII
// case folded.
func wordAt(s string, i int, word string) bool { return i <= len(s) && hasPrefixFold(s[i:], word) }

// spacesFrom returns the end of the run of \s that starts at i.
func spacesFrom(s string, i int) int {
	for i < len(s) && isSpaceByte(s[i]) {
		i++
	}
	return i
}

// nameRun returns the end of the run of [\w.-] that starts at i.
func nameRun(s string, i int) int {
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	return i
}

// wordBoundary reports whether \b holds at i. A byte of a non-ASCII
// character is not a word character, and neither is an invalid byte.
func wordBoundary(s string, i int) bool {
	before := i > 0 && isWordByte(s[i-1])
	after := i < len(s) && isWordByte(s[i])
	return before != after
}

func isLetterByte(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// findAllAt collects the leftmost-first matches of at, which returns the
// match starting at i (or nil). Only a quote or the start of a word can
// start a match of the three expressions (each starts with a quote, or
// with \b and a letter), so at is not asked about other bytes.
func findAllAt(s string, at func(s string, i int) []int) [][]int {
	var out [][]int
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case byteClass[c]&byteWord != 0:
			if !isLetterByte(c) || (i > 0 && byteClass[s[i-1]]&byteWord != 0) {
				i++
				continue
			}
		case c != '"' && c != '\'' && c != '`' && c != 0xE2: // 0xE2 starts ‘ and “
			i++
			continue
		}
		if m := at(s, i); m != nil {
			out = append(out, m)
			i = m[1] // matches are never empty
			continue
		}
		i++
	}
	return out
}

// findToolRefs is reToolRef.FindAllStringSubmatchIndex(s, -1):
//
//	(?:["'`‘“]([^"'`’”\n]{1,64})["'`’”]|\b([A-Za-z][\w.-]*\w))\s+(tool|function)\b
//	|\btool\s+(?:called|named)\s+["'`‘“]?([\w.-]+)
func findToolRefs(s string) [][]int { return findAllAt(s, toolRefAt) }

func toolRefAt(s string, i int) []int {
	// The first alternative: a name, then white space and the word from
	// j, whose start and end suffix returns (or -1).
	suffix := func(j int) (int, int) {
		k := spacesFrom(s, j)
		if k == j {
			return -1, -1
		}
		for _, w := range [...]string{"tool", "function"} {
			if wordAt(s, k, w) && wordBoundary(s, k+len(w)) {
				return k, k + len(w)
			}
		}
		return -1, -1
	}
	if q := isOpenQuote(s, i); q > 0 {
		// [^"'`’”\n]{1,64} then a closing quote. Every character of the
		// class is not a closing quote, so only the longest run, if it is
		// no longer than 64 characters, can be followed by one.
		j, n := i+q, 0
		for j < len(s) && n <= 64 {
			c := s[j]
			if c < utf8.RuneSelf {
				if c == '\n' || c == '"' || c == '\'' || c == '`' {
					break
				}
				j++
				n++
				continue
			}
			if isCloseQuote(s, j) > 0 {
				break
			}
			_, size := utf8.DecodeRuneInString(s[j:])
			j += size
			n++
		}
		if n >= 1 && n <= 64 {
			if c := isCloseQuote(s, j); c > 0 {
				if k, e := suffix(j + c); k >= 0 {
					return []int{i, e, i + q, j, -1, -1, k, e, -1, -1}
				}
			}
		}
		return nil // the other alternatives start with a letter
	}
	if !isLetterByte(s[i]) || !wordBoundary(s, i) {
		return nil
	}
	// [A-Za-z][\w.-]*\w then white space: [\w.-]* holds no white space,
	// so the name is the whole run, which must end in \w.
	if j := nameRun(s, i); j-i >= 2 && isWordByte(s[j-1]) {
		if k, e := suffix(j); k >= 0 {
			return []int{i, e, -1, -1, i, j, k, e, -1, -1}
		}
	}
	// tool\s+(?:called|named)\s+["'`‘“]?([\w.-]+)
	if !wordAt(s, i, "tool") {
		return nil
	}
	j := spacesFrom(s, i+len("tool"))
	if j == i+len("tool") {
		return nil
	}
	switch {
	case wordAt(s, j, "called"):
		j += len("called")
	case wordAt(s, j, "named"):
		j += len("named")
	default:
		return nil
	}
	k := spacesFrom(s, j)
	if k == j || k == len(s) {
		return nil
	}
	// An opening quote is taken if there is one; without it the name
	// would have to start at the quote, which is not in [\w.-].
	k += isOpenQuote(s, k)
	e := nameRun(s, k)
	if e == k {
		return nil
	}
	return []int{i, e, -1, -1, -1, -1, -1, -1, k, e}
}

// findWhenUsing is reWhenUsing.FindAllStringSubmatchIndex(s, -1):
//
//	\b(?:when|whenever|before|after|if|while)\s+(?:the\s+(?:user|model|assistant|agent)\s+)?
//	(?:using|calling|invoking|running|executing|uses|calls|invokes|runs)\s+(?:the\s+)?
//	(?:["'`‘“]([\w.-]+)["'`’”]|([\w.-]+))(\s+(?:tool|function|server)\b)?
func findWhenUsing(s string) [][]int { return findAllAt(s, whenUsingAt) }

func whenUsingAt(s string, i int) []int {
	if !isLetterByte(s[i]) || !wordBoundary(s, i) {
		return nil
	}
	// Each word is followed by white space, and no two words of an
	// alternation are both followed by it at the same place, so at most
	// one alternative of each fits.
	word := func(j int, words ...string) int {
		for _, w := range words {
			if wordAt(s, j, w) {
				if k := spacesFrom(s, j+len(w)); k > j+len(w) {
					return k
				}
			}
		}
		return -1
	}
	j := word(i, "when", "whenever", "before", "after", "if", "while")
	if j < 0 {
		return nil
	}
	verbs := []string{"using", "calling", "invoking", "running", "executing", "uses", "calls", "invokes", "runs"}
	// (?:the\s+(?:user|model|assistant|agent)\s+)? is taken when it fits;
	// without it the verb would have to start at "the", which is none.
	if k := word(j, "the"); k >= 0 {
		if k = word(k, "user", "model", "assistant", "agent"); k >= 0 {
			j = k
		}
	}
	j = word(j, verbs...)
	if j < 0 {
		return nil
	}
	// (?:the\s+)? is taken when the name fits after it; otherwise "the" is
	// the name.
	name := func(j int) []int {
		if q := isOpenQuote(s, j); q > 0 {
			// ["'`‘“]([\w.-]+)["'`’”]: the run must be followed by a
			// closing quote, which is not in [\w.-]; failing that, the
			// bare name cannot start at a quote.
			e := nameRun(s, j+q)
			c := isCloseQuote(s, e)
			if e == j+q || c == 0 {
				return nil
			}
			return []int{i, e + c, j + q, e, -1, -1, -1, -1}
		}
		e := nameRun(s, j)
		if e == j {
			return nil
		}
		return []int{i, e, -1, -1, j, e, -1, -1}
	}
	var m []int
	if k := word(j, "the"); k >= 0 {
		m = name(k)
	}
	if m == nil {
		if m = name(j); m == nil {
			return nil
		}
	}
	// (\s+(?:tool|function|server)\b)?
	if k := spacesFrom(s, m[1]); k > m[1] {
		for _, w := range [...]string{"tool", "function", "server"} {
			if wordAt(s, k, w) && wordBoundary(s, k+len(w)) {
				m[6], m[7] = m[1], k+len(w)
				m[1] = k + len(w)
				break
			}
		}
	}
	return m
}

// findServerRefs is reServerRef.FindAllStringSubmatchIndex(s, -1):
//
//	\b(?:the\s+)?["'`]?([A-Za-z][\w.-]*)["'`]?\s+(?:mcp\s+)?server\b
func findServerRefs(s string) [][]int { return findAllAt(s, serverRefAt) }

func serverRefAt(s string, i int) []int {
	if !wordBoundary(s, i) {
		return nil
	}
	isQuote := func(j int) bool { return j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '`') }
	// From j: ["'`]?([A-Za-z][\w.-]*)["'`]?\s+(?:mcp\s+)?server\b. Each
	// optional quote is taken if there is one: without it, the name (or
	// the white space) would have to start at the quote. The name is the
	// whole run of [\w.-], as neither a quote nor white space is in it;
	// "mcp" and its white space are taken if there, as "server" cannot
	// start at "mcp".
	rest := func(j int) []int {
		if isQuote(j) {
			j++
		}
		if j >= len(s) || !isLetterByte(s[j]) {
			return nil
		}
		e := nameRun(s, j)
		k := e
		if isQuote(k) {
			k++
		}
		l := spacesFrom(s, k)
		if l == k {
			return nil
		}
		if wordAt(s, l, "mcp") {
			if n := spacesFrom(s, l+len("mcp")); n > l+len("mcp") {
				l = n
			}
		}
		if !wordAt(s, l, "server") || !wordBoundary(s, l+len("server")) {
			return nil
		}
		return []int{i, l + len("server"), j, e}
	}
	// (?:the\s+)? is taken first.
	if wordAt(s, i, "the") {
		if j := spacesFrom(s, i+len("the")); j > i+len("the") {
			if m := rest(j); m != nil {
				return m
			}
		}
	}
	return rest(i)
}

package report

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// DefaultWidth is the width a table is wrapped to when none is given: the
// width of a terminal nobody resized, and of a CI log read in one.
const DefaultWidth = 80

// minWidth is the narrowest a table is wrapped to; a narrower width is
// read as this one.
const minWidth = 60

// minRoom is the fewest columns wrapped text is given after its lead: a
// lead wider than the line leaves this much, and the line is longer.
const minRoom = 20

// cells measures the columns a string takes on a terminal: East Asian
// wide characters take two, combining marks and other zero-width
// characters none, a grapheme cluster the width of its first visible
// rune. The condition is fixed, never read from the locale, so that a
// table is the same wherever it is written.
var cells = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// width is the number of columns s takes.
func width(s string) int { return cells.StringWidth(s) }

// wrap breaks text into lines at spaces: the first line at most first
// columns wide, every other at most rest (at least minRoom). A first line
// too narrow for the first word is left empty. The spaces between two words on
// one line are kept as they were; those where a line breaks are dropped.
// A word wider than its line is broken: after a URL's or a path's
// punctuation when there is some, else between grapheme clusters, never
// inside an escape that clean wrote (\x1b, \u202e); no other character is
// ever dropped. The text is expected to be cleaned already: wrap measures
// it, it does not escape it.
func wrap(text string, first, rest int) []string {
	first, rest = max(first, 0), max(rest, minRoom)
	var lines []string
	var line strings.Builder
	room, used := first, 0
	for text != "" {
		trimmed := strings.TrimLeft(text, " ")
		sep := text[:len(text)-len(trimmed)]
		if trimmed == "" {
			break
		}
		word := trimmed
		if i := strings.IndexByte(trimmed, ' '); i >= 0 {
			word = trimmed[:i]
		}
		text = trimmed[len(word):]
		n := width(word)
		if line.Len() > 0 && used+len(sep)+n <= room {
			line.WriteString(sep)
			line.WriteString(word)
			used += len(sep) + n
			continue
		}
		if line.Len() > 0 {
			lines = append(lines, line.String())
			line.Reset()
			room = rest
		}
		// A first line narrower than the others that cannot hold the
		// word stays empty: the word starts the next one.
		if n > room && room < rest && len(lines) == 0 {
			lines = append(lines, "")
			room = rest
		}
		// The word starts a line; break it while it is wider than one.
		for n > room {
			head := breakWord(word, room)
			lines = append(lines, head)
			room = rest
			word = word[len(head):]
			n = width(word)
		}
		line.WriteString(word)
		used = n
	}
	if line.Len() > 0 || len(lines) == 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// breakWord is the longest head of word that fits in room columns and
// ends where a break reads well: after / ? & = - , ; : or a dot, when
// one falls in the second half of the room, else at the last grapheme
// cluster that fits, moved back before an escape it would split. It is
// never empty, so that wrapping always moves on.
func breakWord(word string, room int) string {
	head := cells.Truncate(word, room, "")
	if head == "" {
		// A cluster wider than the room (a wide character in one column).
		head = cells.Truncate(word, 2, "")
		if head == "" {
			_, size := utf8.DecodeRuneInString(word)
			head = word[:size]
		}
		return head
	}
	if i := strings.LastIndexAny(head, "/?&=-,;:."); i >= 0 && i+1 < len(head) && width(head[:i+1]) > room/2 {
		return head[:i+1]
	}
	if i := escapeStart(head, word); i > 0 {
		return head[:i]
	}
	return head
}

// escapeStart is where an escape clean wrote starts when head, a prefix
// of word, ends inside it; -1 when it does not.
func escapeStart(head, word string) int {
	i := strings.LastIndexByte(head, '\\')
	if i < 0 || i+1 >= len(word) {
		return -1
	}
	n := 0
	switch word[i+1] {
	case 'x':
		n = 4 // \x1b
	case 'u':
		n = 6 // \u202e
	case 'n', 't', 'r':
		n = 2
	default:
		return -1
	}
	if i+n > len(head) && i+n <= len(word) {
		return i
	}
	return -1
}

// hang writes text after lead, wrapped to width with a hanging indent:
// every line after the first starts with indent spaces; when lead leaves
// less than minRoom columns, the text starts on the second line. A width
// of 0 wraps nothing: lead and text make one line.
func hang(lead, text string, indent, w int) []string {
	if w <= 0 {
		return []string{strings.TrimRight(lead+text, " ")}
	}
	first := w - width(stripANSI(lead))
	if first < minRoom {
		first = 0 // the text starts under the lead
	}
	lines := wrap(text, first, w-indent)
	pad := strings.Repeat(" ", indent)
	for i, l := range lines {
		if i == 0 {
			lines[i] = strings.TrimRight(lead+l, " ")
		} else {
			lines[i] = strings.TrimRight(pad+l, " ")
		}
	}
	return lines
}

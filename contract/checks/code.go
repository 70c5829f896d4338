package checks

import (
	"regexp"
	"strings"
)

// Code: text quoted as code (a Markdown code span or fenced block) is
// shown as syntax, not addressed to the model as instructions. A server
// that documents a chat format writes `[INST]`; one that documents a
// block editor's markup writes `<!-- wp:paragraph -->`. The checks for
// template tokens and hidden markup do not read them there: what the text
// claims unambiguously is that the syntax exists.

var (
	reFence    = regexp.MustCompile("(?s)(?:^|\n)[ \t]*(```|~~~).*?(?:\n[ \t]*(?:```|~~~)|$)")
	reCodeSpan = regexp.MustCompile("(`+)[^`\n]+?`+")
)

// codeSpans returns the [start, end) byte ranges of text quoted as code.
func codeSpans(text string) [][2]int {
	if !strings.ContainsAny(text, "`~") {
		return nil
	}
	var out [][2]int
	for _, m := range reFence.FindAllStringIndex(text, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	for _, m := range reCodeSpan.FindAllStringIndex(text, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	return out
}

// inCode reports whether text[start:end] lies within a code span or block.
func inCode(text string, start, end int) bool {
	for _, s := range codeSpans(text) {
		if s[0] <= start && end <= s[1] {
			return true
		}
	}
	return false
}

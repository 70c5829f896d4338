package exercise

import (
	"regexp/syntax"
	"strings"
)

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

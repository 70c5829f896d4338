package batch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/verifymcp/verifymcp/pipeline"
)

// Line is one target line of a batch file: the target and its options,
// as on scan's command line.
type Line struct {
	Line   int
	Target pipeline.Target
	Bin    string
	Args   []string
	Env    map[string]string
}

// ReadFile reads and parses a batch file; every error names FILE:LINE
// and is the user's (bad input).
func ReadFile(path string) ([]Line, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("batch file: %v", err)
	}
	return Parse(data, path, filepath.Dir(path))
}

// Parse parses the lines of a batch file named name; relative tarball
// paths are taken from dir. It reports every malformed line, the first in
// full.
func Parse(data []byte, name, dir string) ([]Line, error) {
	var out []Line
	var bad []string
	var first error
	for i, text := range strings.Split(string(data), "\n") {
		bl, ok, err := parseLine(strings.TrimSuffix(text, "\r"), dir)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("%s:%d: %w", name, i+1, err)
			}
			bad = append(bad, fmt.Sprintf("%d", i+1))
			continue
		}
		if ok {
			bl.Line = i + 1
			out = append(out, bl)
		}
	}
	switch {
	case len(bad) > 1:
		return nil, fmt.Errorf("%w (and %d more malformed lines: %s)", first, len(bad)-1, strings.Join(bad[1:], ", "))
	case first != nil:
		return nil, first
	case len(out) == 0:
		return nil, fmt.Errorf("%s: no target (want one per line: npm:NAME@VERSION, pkg:npm/NAME@VERSION or a .tgz path)", name)
	}
	return out, nil
}

// parseLine parses one line; ok is false for a blank or comment line.
func parseLine(text, dir string) (bl Line, ok bool, err error) {
	words, err := SplitWords(text)
	if err != nil || len(words) == 0 {
		return bl, false, err
	}
	raw := words[0]
	if strings.HasPrefix(raw, "-") {
		return bl, false, fmt.Errorf("%q: the target comes first, then its options", raw)
	}
	if (strings.HasSuffix(raw, ".tgz") || strings.HasSuffix(raw, ".tar.gz")) && !filepath.IsAbs(raw) && !strings.Contains(raw, ":") {
		raw = filepath.Join(dir, raw)
	}
	if bl.Target, err = pipeline.ParseTarget(raw); err != nil {
		return bl, false, err
	}
	var env []string
	for i := 1; i < len(words); i++ {
		opt, val, hasVal := strings.Cut(words[i], "=")
		switch opt {
		case "--arg", "--bin", "--env":
		default:
			// Only the option's name: a value may be a secret.
			return bl, false, fmt.Errorf("unknown option %q (a line takes --bin NAME, --arg VALUE, --env NAME=VALUE)", opt)
		}
		if !hasVal {
			if i+1 >= len(words) {
				return bl, false, fmt.Errorf("%s needs a value", opt)
			}
			i++
			val = words[i]
		}
		switch opt {
		case "--arg":
			bl.Args = append(bl.Args, val)
		case "--bin":
			if bl.Bin != "" {
				return bl, false, errors.New("--bin given twice")
			}
			bl.Bin = val
		case "--env":
			env = append(env, val)
		}
	}
	if len(env) > 0 {
		if bl.Env, err = pipeline.ParseEnv(env); err != nil {
			return bl, false, err
		}
	}
	return bl, true, nil
}

// SplitWords splits a line into blank-separated words. A word may be
// quoted with ' or " (no escapes inside); a word starting with # outside
// quotes starts a comment that runs to the end of the line.
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

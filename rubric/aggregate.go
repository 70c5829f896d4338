package rubric

import (
	"fmt"
	"path"
	"strings"
)

// Floods. A build that writes 500 files, or a server that looks up 300
// names, is one fact told 500 times; a reader (and a CI log) needs it told
// once, with how many and a few examples. From rubric v12 a finding that
// can repeat per item is emitted through one of the two folds below; under
// earlier versions both emit one finding per item, as those versions did.
// Scores count the items as before: folding changes what is listed, not
// what was measured.

// aggregateSince is the first rubric version that folds floods.
const aggregateSince = "12"

// foldKey names one fold: the code, the subject, and the group inside it
// (a directory for files; "" for a capped list).
type foldKey struct{ code, subject, group string }

// fold is a finding that stands for several items.
type fold struct {
	index    int // of the finding in p.findings; -1 until one is emitted
	count    int
	examples []string
	// summary writes the folded finding's message and evidence from the
	// count and the examples.
	summary func(count int, examples []string) (string, string)
}

// emitInDir emits one finding per item under rubric versions before v12;
// from v12 the items of one code, subject and directory fold into the first
// one's finding, whose message then gives their count and first examples.
// what names the items ("files").
func (p *probe) emitInDir(code, subject, file, what, message, ev string, summary func(dir string, count int, examples []string) string) {
	if !p.atLeast(aggregateSince) {
		p.emit(code, subject, message, ev)
		return
	}
	dir := path.Dir(file)
	k := foldKey{code, subject, dir}
	if f, ok := p.folds[k]; ok {
		f.count++
		if len(f.examples) < p.p.Aggregate.Examples {
			f.examples = append(f.examples, path.Base(file))
		}
		return
	}
	p.emit(code, subject, message, ev)
	p.fold(k, &fold{index: len(p.findings) - 1, count: 1, examples: []string{path.Base(file)},
		summary: func(n int, ex []string) (string, string) {
			return summary(dir, n, ex), p.clip(fmt.Sprintf("%d %s in %s: %s", n, what, dir, examplesText(ex, n)))
		}})
}

// emitCapped emits one finding per item under rubric versions before v12;
// from v12 a subject's first max_per_subject items of a code are findings
// of their own, and the rest fold into one more, which gives their count
// and first examples (item names each).
func (p *probe) emitCapped(code, subject, item, what, message, ev string) {
	if !p.atLeast(aggregateSince) {
		p.emit(code, subject, message, ev)
		return
	}
	if p.capped == nil {
		p.capped = map[foldKey]int{}
	}
	n := p.capped[foldKey{code: code, subject: subject}] + 1
	p.capped[foldKey{code: code, subject: subject}] = n
	if n <= p.p.Aggregate.MaxPerSubject {
		p.emit(code, subject, message, ev)
		return
	}
	k := foldKey{code, subject, "\x00more"}
	if f, ok := p.folds[k]; ok {
		f.count++
		if len(f.examples) < p.p.Aggregate.Examples {
			f.examples = append(f.examples, item)
		}
		return
	}
	p.emit(code, subject, message, ev)
	max := p.p.Aggregate.MaxPerSubject
	p.fold(k, &fold{index: len(p.findings) - 1, count: 1, examples: []string{item},
		summary: func(n int, ex []string) (string, string) {
			return fmt.Sprintf("%d more %s by %s than the %d listed one by one (parameters.aggregate.max_per_subject): %s",
					n, what, subject, max, examplesText(ex, n)),
				p.clip(fmt.Sprintf("%d more %s: %s", n, what, examplesText(ex, n)))
		}})
}

func (p *probe) fold(k foldKey, f *fold) {
	if p.folds == nil {
		p.folds = map[foldKey]*fold{}
	}
	p.folds[k] = f
	p.foldOrder = append(p.foldOrder, k)
}

// flushFolds writes the folded findings' messages: a fold of one item
// keeps the finding as it was emitted; a capped fold always speaks for
// the items past the cap.
func (p *probe) flushFolds() {
	for _, k := range p.foldOrder {
		f := p.folds[k]
		if f.count == 1 && !strings.HasPrefix(k.group, "\x00") {
			continue
		}
		p.findings[f.index].Message, p.findings[f.index].Evidence = f.summary(f.count, f.examples)
	}
}

// examplesText lists examples and says how many more there are.
func examplesText(ex []string, n int) string {
	s := strings.Join(ex, ", ")
	if n > len(ex) {
		s += fmt.Sprintf(" and %d more", n-len(ex))
	}
	return s
}

// validateAggregate checks parameters.aggregate: present exactly from
// rubric v12 on, with positive bounds.
func (r *Rubric) validateAggregate() []error {
	p := r.Params.Aggregate
	has := compareVersions(r.Version, aggregateSince) >= 0
	switch {
	case has && p == nil:
		return []error{fmt.Errorf("parameters.aggregate: missing, and rubric v%s folds floods of findings (from v%s on)", r.Version, aggregateSince)}
	case !has && p != nil:
		return []error{fmt.Errorf("parameters.aggregate: present, but rubric v%s is older than v%s, the first that folds floods", r.Version, aggregateSince)}
	case !has:
		return nil
	}
	var errs []error
	if p.MaxPerSubject < 1 {
		errs = append(errs, fmt.Errorf("parameters.aggregate.max_per_subject: %d, want at least 1", p.MaxPerSubject))
	}
	if p.Examples < 1 {
		errs = append(errs, fmt.Errorf("parameters.aggregate.examples: %d, want at least 1", p.Examples))
	}
	return errs
}

// short clips an example to 60 characters.
func short(s string) string {
	r := []rune(s)
	if len(r) <= 60 {
		return s
	}
	return string(r[:59]) + "…"
}

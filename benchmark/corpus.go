package benchmark

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/verifymcp/verifymcp/rubric"
)

// Directories of the corpus, relative to its root.
const (
	casesDir    = "cases"
	fixturesDir = "fixtures"
)

// LoadCorpus reads every case under dir/cases/synthetic and
// dir/cases/reviewed against the catalog of the rubric in force, and
// returns them sorted by kind and id. It is strict: if any case is refused,
// it returns no case and an error that reports every problem in every file
// at once, each as a *CaseError with its file and line. The harness itself
// reads the corpus with ReadCorpus, which refuses a case without refusing
// the others.
func LoadCorpus(dir string) ([]Case, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("benchmark corpus: %w", err)
	}
	return LoadCorpusFS(os.DirFS(dir))
}

// LoadCorpusFS is LoadCorpus over a file system whose root is the corpus.
func LoadCorpusFS(fsys fs.FS) ([]Case, error) {
	cases, err := ReadCorpusFS(fsys, rubric.Current())
	if err != nil {
		return nil, err
	}
	if err := Refusals(cases); err != nil {
		return nil, err
	}
	return cases, nil
}

// Refusals joins the refusals of every refused case, or returns nil when
// none was refused.
func Refusals(cases []Case) error {
	var errs []error
	for _, c := range cases {
		errs = append(errs, c.Refused...)
	}
	return errors.Join(errs...)
}

// ReadCorpus reads every case under dir/cases/synthetic and
// dir/cases/reviewed, checks each on its own and against the catalog of r
// (the rubric the run scores under), and returns them all sorted by kind
// and id. A case that cannot be scored as written is returned with Refused
// set, every problem of its file located by file and line; it does not
// refuse the others. Anything in cases/ that is not a case is returned as
// a refused case too, so that nothing in the corpus is silently skipped.
// The error is for a corpus that cannot be read at all.
func ReadCorpus(dir string, r *rubric.Rubric) ([]Case, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("benchmark corpus: %w", err)
	}
	return ReadCorpusFS(os.DirFS(dir), r)
}

// ReadCorpusFS is ReadCorpus over a file system whose root is the corpus.
func ReadCorpusFS(fsys fs.FS, r *rubric.Rubric) ([]Case, error) {
	if r == nil {
		return nil, errors.New("benchmark corpus: no rubric to read the cases against")
	}
	var cases []Case
	entries, err := fs.ReadDir(fsys, casesDir)
	if err != nil {
		return nil, fmt.Errorf("benchmark corpus: %w", err)
	}
	for _, e := range entries {
		name := path.Join(casesDir, e.Name())
		switch {
		case e.IsDir() && slices.Contains(Kinds(), Kind(e.Name())):
		case !e.IsDir() && e.Name() == "README.md":
			continue
		default:
			cases = append(cases, refusedFile(name, "", invalid("cases/ holds only synthetic/ and reviewed/ (and README.md)")))
			continue
		}
		kind := Kind(e.Name())
		files, err := fs.ReadDir(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("benchmark corpus: %w", err)
		}
		for _, f := range files {
			file := path.Join(name, f.Name())
			switch {
			case f.Name() == "README.md":
				continue
			case f.IsDir() || !strings.HasSuffix(f.Name(), ".yaml"):
				cases = append(cases, refusedFile(file, kind, invalid("a case is one file named ID.yaml; nothing else belongs in %s", name)))
				continue
			}
			data, err := fs.ReadFile(fsys, file)
			if err != nil {
				return nil, fmt.Errorf("benchmark corpus: %w", err)
			}
			c, decoded, err := parseCase(file, data)
			c.Refused = append(c.Refused, flatten(err)...)
			if decoded {
				c.Refused = append(c.Refused, c.checkLoaded(fsys, kind, strings.TrimSuffix(f.Name(), ".yaml"), r)...)
			}
			if len(c.Refused) > 0 {
				// Reported under its file's name and its directory's
				// kind: what the file says of itself may be what is wrong.
				c.ID, c.Kind = strings.TrimSuffix(f.Name(), ".yaml"), kind
			}
			cases = append(cases, c)
		}
	}
	files := map[string][]int{}
	for i, c := range cases {
		files[c.ID] = append(files[c.ID], i)
	}
	for _, idx := range files {
		if len(idx) < 2 {
			continue
		}
		// Neither file is the case of that id: both are refused, each
		// naming the others.
		for _, i := range idx {
			var others []string
			for _, j := range idx {
				if j != i {
					others = append(others, cases[j].File)
				}
			}
			cases[i].Refused = append(cases[i].Refused, cases[i].errorf("id", invalid("id %q is also the id of %s", cases[i].ID, strings.Join(others, ", "))))
		}
	}
	SortCases(cases)
	return cases, nil
}

// flatten lists the problems an error joins, one located problem each.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, joined := err.(interface{ Unwrap() []error })
	// The error's own type decides, not what it wraps: a join of located
	// problems is flattened into them.
	if _, located := err.(*CaseError); located || !joined { //nolint:errorlint // see above
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// refusedFile is a refused case for a file that is no case.
func refusedFile(file string, kind Kind, err error) Case {
	return Case{ID: strings.TrimSuffix(path.Base(file), ".yaml"), Kind: kind, File: file, Refused: []error{&CaseError{File: file, Err: err}}}
}

// checkLoaded checks what a decoded case must agree with in the corpus:
// the directory of its kind, its file name, its fixture, and the catalog
// of the rubric the run scores under.
func (c Case) checkLoaded(fsys fs.FS, dir Kind, stem string, r *rubric.Rubric) []error {
	var errs []error
	if c.Kind != dir {
		errs = append(errs, c.errorf("kind", invalid("kind %q, but the file is in %s", c.Kind, path.Join(casesDir, string(dir)))))
	}
	if c.ID != stem {
		errs = append(errs, c.errorf("id", invalid("id %q, but the file is named %s.yaml; they must agree", c.ID, stem)))
	}
	if c.Kind == KindSynthetic {
		if err := c.checkFixture(fsys); err != nil {
			errs = append(errs, err)
		}
		if err := c.checkCapture(fsys); err != nil {
			errs = append(errs, err)
		}
	}
	return append(errs, c.CheckCatalog(r)...)
}

// CheckCatalog checks a case against the reason-code catalog of r, the
// rubric the run scores under. Every expected code must be in the catalog:
// the scanner cannot emit any other, so a typo would be charged to it as a
// false negative. Every scope entry must cover at least one code of the
// catalog: one that covers none makes the case read 0/0/0 whatever the
// scanner does. And every measurement the scope covers must be expected: a
// measurement fires whenever it was made, whatever its value, so it is
// matched as "the measurement was made", and a case that left it out would
// read it as a false positive. Entries that are not codes or prefixes at
// all are Validate's to report.
func (c Case) CheckCatalog(r *rubric.Rubric) []error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, c.errorf(field, invalid(format, args...)))
	}
	measured := map[string]bool{}
	for i, s := range c.Scope {
		if !prefixPattern.MatchString(s) && !codePattern.MatchString(s) {
			continue
		}
		field := fmt.Sprintf("scope[%d]", i)
		covered := 0
		for _, def := range r.Codes {
			if !scopeCovers(s, def.Code) {
				continue
			}
			covered++
			if def.Kind == rubric.KindMeasurement && !slices.Contains(c.Expected, def.Code) && !measured[def.Code] {
				measured[def.Code] = true
				add(field, "%q covers %s, and %s is a measurement: it fires whenever the measurement was made, whatever its value, so it is matched as \"the measurement was made\". Expect it, or narrow the scope to leave it out",
					s, def.Code, def.Code)
			}
		}
		if covered > 0 {
			continue
		}
		if !strings.HasSuffix(s, ".") && slices.ContainsFunc(r.Codes, func(d rubric.CodeDef) bool { return strings.HasPrefix(d.Code, s+".") }) {
			add(field, "%q covers no code of rubric %s; as a prefix it needs its trailing dot: %q", s, r.Version, s+".")
		} else {
			add(field, "%q covers no code of rubric %s (verifymcp rubric show lists them)", s, r.Version)
		}
	}
	for i, code := range c.Expected {
		if !codePattern.MatchString(code) {
			continue
		}
		if _, ok := r.Code(code); !ok {
			add(fmt.Sprintf("expected[%d]", i), "%s is not in the catalog of rubric %s, so the scanner cannot emit it (verifymcp rubric explain CODE says what a code claims)", code, r.Version)
		}
	}
	return errs
}

// SortCases orders cases by kind (synthetic first), then id.
func SortCases(cs []Case) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Kind != cs[j].Kind {
			return kindRank(cs[i].Kind) < kindRank(cs[j].Kind)
		}
		return cs[i].ID < cs[j].ID
	})
}

func kindRank(k Kind) int {
	if i := slices.Index(Kinds(), k); i >= 0 {
		return i
	}
	return len(Kinds())
}

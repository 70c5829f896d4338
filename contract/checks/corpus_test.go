package checks

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// corpusFile is testdata/corpus.yaml.
type corpusFile struct {
	Surfaces []struct {
		ID       string `yaml:"id"`
		Target   string `yaml:"target"`
		Findings []struct {
			Code    string `yaml:"code"`
			Subject string `yaml:"subject"`
			Field   string `yaml:"field"`
			Verdict *bool  `yaml:"verdict"`
			Why     string `yaml:"why"`
			line    int
		} `yaml:"findings"`
	} `yaml:"surfaces"`
}

// corpusExtra are the surfaces of the corpus kept in judge/testdata/surfaces
// and recorded nowhere else.
var corpusExtra = []string{"sequential-thinking"}

// reviewed is one listed finding and its verdict.
type reviewed struct {
	true bool
	why  string
}

func readCorpusFile(t testing.TB) (map[string]map[string]reviewed, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf corpusFile
	if err := yaml.Unmarshal(b, &cf); err != nil {
		t.Fatalf("testdata/corpus.yaml: %v", err)
	}
	listed := map[string]map[string]reviewed{}
	targets := map[string]string{}
	for _, s := range cf.Surfaces {
		if _, dup := listed[s.ID]; dup {
			t.Fatalf("testdata/corpus.yaml: surface %s listed twice", s.ID)
		}
		listed[s.ID] = map[string]reviewed{}
		targets[s.ID] = s.Target
		for _, f := range s.Findings {
			if f.Verdict == nil || strings.TrimSpace(f.Why) == "" {
				t.Fatalf("testdata/corpus.yaml: %s %s %s %s: a listed finding needs a verdict and why", s.ID, f.Code, f.Subject, f.Field)
			}
			listed[s.ID][f.Code+" "+f.Subject+" "+f.Field] = reviewed{*f.Verdict, f.Why}
		}
	}
	return listed, targets
}

// TestRealSurfaceCorpus holds Check to the reviewed corpus: on every real
// surface it raises exactly the findings testdata/corpus.yaml lists, each
// with why it is true (or, if one were reviewed as wrong, why not), and
// nothing else.
func TestRealSurfaceCorpus(t *testing.T) {
	listed, targets := readCorpusFile(t)
	surfaces := loadCorpus(t, corpusExtra)
	if len(surfaces) < 25 {
		t.Fatalf("%d surfaces, the corpus needs at least 25", len(surfaces))
	}
	seen := map[string]bool{}
	for _, s := range surfaces {
		seen[s.ID] = true
		want, ok := listed[s.ID]
		if !ok {
			t.Errorf("%s (%s): not in testdata/corpus.yaml; review its findings and list it", s.ID, s.Target)
			continue
		}
		if targets[s.ID] != s.Target {
			t.Errorf("%s: testdata/corpus.yaml names %s, the recording %s", s.ID, targets[s.ID], s.Target)
		}
		fs := Check(s.C)
		checkInvariants(t, s.C, fs)
		got := map[string]Finding{}
		for _, f := range fs {
			got[f.Code+" "+f.Kind+":"+f.Subject+" "+f.Field] = f
		}
		for k, f := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: unreviewed finding %s\n    evidence %q\n    %s", s.ID, k, f.Evidence, f.Message)
			}
		}
		for k := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: reviewed finding %s is no longer raised", s.ID, k)
			}
		}
	}
	for id := range listed {
		if !seen[id] {
			t.Errorf("testdata/corpus.yaml lists %s, which is not a surface of the corpus", id)
		}
	}
}

// BenchmarkCorpus runs Check over every surface of the corpus and prints,
// per code, the findings on the corpus, how many are reviewed as true, the
// false discovery rate, and how many of the published attack examples
// (TestCheck's) the code catches.
func BenchmarkCorpus(b *testing.B) {
	listed, _ := readCorpusFile(b)
	surfaces := loadCorpus(b, corpusExtra)
	tools := 0
	for _, s := range surfaces {
		tools += len(s.C.Tools)
	}
	b.Run("table", func(b *testing.B) {
		printCorpusTable(os.Stdout, surfaces, listed)
		b.SkipNow()
	})
	b.Run("check", func(b *testing.B) {
		b.ReportMetric(float64(tools), "tools")
		for b.Loop() {
			for _, s := range surfaces {
				Check(s.C)
			}
		}
	})
}

func printCorpusTable(w io.Writer, surfaces []corpusSurface, listed map[string]map[string]reviewed) {
	type row struct{ findings, justified, examples int }
	rows := map[string]*row{}
	for _, ci := range CheckCodes() {
		rows[ci.Code] = &row{}
	}
	tools := 0
	for _, s := range surfaces {
		tools += len(s.C.Tools)
		for _, f := range Check(s.C) {
			r := rows[f.Code]
			r.findings++
			if rv := listed[s.ID][f.Code+" "+f.Kind+":"+f.Subject+" "+f.Field]; rv.true && rv.why != "" {
				r.justified++
			}
		}
	}
	for _, ex := range publishedExamples() {
		for _, code := range ex.codes {
			if slices.ContainsFunc(Check(ex.c), func(f Finding) bool { return f.Code == code }) {
				rows[code].examples++
			}
		}
	}
	want := map[string]int{}
	for _, ex := range publishedExamples() {
		for _, code := range ex.codes {
			want[code]++
		}
	}
	codes := make([]string, 0, len(rows))
	for c := range rows {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	fmt.Fprintf(w, "corpus: %d surfaces, %d tools; published examples: %d\n", len(surfaces), tools, len(publishedExamples()))
	fmt.Fprintf(w, "| code | findings | justified | FDR | published examples caught |\n|---|---|---|---|---|\n")
	for _, c := range codes {
		r := rows[c]
		fdr := "-"
		if r.findings > 0 {
			fdr = fmt.Sprintf("%.0f%%", 100*float64(r.findings-r.justified)/float64(r.findings))
		}
		ex := "-"
		if want[c] > 0 {
			ex = fmt.Sprintf("%d/%d", r.examples, want[c])
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s |\n", c, r.findings, r.justified, fdr, ex)
	}
}

package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// SchemaVersion identifies the JSON form of Report. v2: fn counts every
// expected code not emitted, fn_of_which_signal_unavailable is part of it
// (by the signal that produces each code), and refused cases are listed.
const SchemaVersion = "verifymcp.cases/v2"

// Sources of a run's observations.
const (
	// SourceScan: every case was scanned by this run.
	SourceScan = "scan"
	// SourceStore: stored runs were rescored under the run's rubric; nothing
	// was re-run.
	SourceStore = "store"
)

// RunInfo is what a run records about itself.
type RunInfo struct {
	Date          time.Time `json:"date"`
	RubricVersion string    `json:"rubric_version"`
	RubricHash    string    `json:"rubric_hash,omitempty"`
	ToolVersion   string    `json:"tool_version"`
	Source        string    `json:"source"`
}

// Report is one run of the harness over a corpus.
type Report struct {
	SchemaVersion string   `json:"schema_version"`
	Run           RunInfo  `json:"run"`
	Signals       []Signal `json:"signals"`
	// Kinds holds one summary per kind of case, always both kinds; they are
	// never merged into one figure.
	Kinds []KindSummary `json:"kinds"`
	Cases []CaseResult  `json:"cases"`
}

// Signal is the availability of one evidence signal across the run's
// scans: how many cases saw it in each state.
type Signal struct {
	Name       string                 `json:"name"`
	ThirdParty bool                   `json:"third_party"`
	States     map[evidence.State]int `json:"states"`
}

// KindSummary sums the compared cases of one kind.
type KindSummary struct {
	Kind Kind `json:"kind"`
	// Cases counts every case of the kind, refused ones included.
	Cases    int `json:"cases"`
	Compared int `json:"compared"`
	// Failed are the ids of cases that could not be compared.
	Failed []string `json:"failed"`
	// Refused are the ids of cases refused when the corpus was read.
	Refused []string `json:"refused"`
	// Withdrawn are the ids of cases withdrawn by a dispute, or while an
	// open dispute asks for it: compared and listed, counted in nothing.
	Withdrawn []string `json:"withdrawn"`
	Counts    Counts   `json:"counts"`
	// FalseDiscoveryRate is FP/(TP+FP): the share of in-scope findings
	// nobody expected. Nil when there was no in-scope finding.
	FalseDiscoveryRate *float64 `json:"false_discovery_rate"`
	// Publishable holds when the kind has cases, every one was compared
	// and every one is publishable; NotPublishable lists the others' ids.
	// A withdrawn case does not hold it back: a result is published
	// without it, listing it as withdrawn.
	Publishable    bool          `json:"publishable"`
	NotPublishable []string      `json:"not_publishable"`
	Codes          []CodeSummary `json:"codes"`
	// Forms splits the kind by form (static captures, live), each form of
	// the kind that has cases; see FormSummary.
	Forms []FormSummary `json:"forms"`
}

// CodeSummary is the counts of one code over a kind's compared cases.
type CodeSummary struct {
	Code   string `json:"code"`
	Counts Counts `json:"counts"`
}

// NewReport sums results into a report: the signal availability, and per
// kind the totals, the counts per code and the false discovery rate.
func NewReport(info RunInfo, results []CaseResult) Report {
	rep := Report{SchemaVersion: SchemaVersion, Run: info, Signals: []Signal{}, Kinds: []KindSummary{}, Cases: nonNil(results)}
	sort.SliceStable(rep.Cases, func(i, j int) bool {
		a, b := rep.Cases[i], rep.Cases[j]
		if a.Kind != b.Kind {
			return kindRank(a.Kind) < kindRank(b.Kind)
		}
		return a.ID < b.ID
	})
	signals := map[string]*Signal{}
	for _, r := range rep.Cases {
		for name, s := range r.Signals {
			sig := signals[name]
			if sig == nil {
				sig = &Signal{Name: name, States: map[evidence.State]int{}}
				signals[name] = sig
			}
			sig.ThirdParty = sig.ThirdParty || s.ThirdParty
			sig.States[s.State]++
		}
	}
	for _, name := range sortedKeys(signals) {
		rep.Signals = append(rep.Signals, *signals[name])
	}
	for _, k := range Kinds() {
		rep.Kinds = append(rep.Kinds, withForms(summarize(k, rep.Cases), rep.Cases))
	}
	return rep
}

func summarize(k Kind, results []CaseResult) KindSummary {
	ks := KindSummary{Kind: k, Failed: []string{}, Refused: []string{}, Withdrawn: []string{}, NotPublishable: []string{}, Codes: []CodeSummary{}}
	codes := map[string]*Counts{}
	count := func(code string, c Counts) {
		if codes[code] == nil {
			codes[code] = &Counts{}
		}
		codes[code].add(c)
	}
	for _, r := range results {
		if r.Kind != k {
			continue
		}
		ks.Cases++
		if !r.Publishable && r.Withdrawn == "" {
			ks.NotPublishable = append(ks.NotPublishable, r.ID)
		}
		if len(r.Refused) > 0 {
			ks.Refused = append(ks.Refused, r.ID)
			continue
		}
		if r.Error != "" {
			ks.Failed = append(ks.Failed, r.ID)
			continue
		}
		if r.Withdrawn != "" {
			ks.Withdrawn = append(ks.Withdrawn, r.ID)
			continue
		}
		ks.Compared++
		ks.Counts.add(r.Counts)
		for _, m := range r.TP {
			count(m.Code, Counts{TP: 1})
		}
		for _, m := range r.FP {
			count(m.Code, Counts{FP: 1})
		}
		for _, m := range r.FN {
			c := Counts{FN: 1}
			if m.SignalUnavailable {
				c.FNUnavailable = 1
			}
			count(m.Code, c)
		}
	}
	for _, code := range sortedKeys(codes) {
		ks.Codes = append(ks.Codes, CodeSummary{Code: code, Counts: *codes[code]})
	}
	if d := ks.Counts.TP + ks.Counts.FP; d > 0 {
		fdr := float64(ks.Counts.FP) / float64(d)
		ks.FalseDiscoveryRate = &fdr
	}
	ks.Publishable = ks.Cases > 0 && len(ks.NotPublishable) == 0
	return ks
}

// ScanFunc produces the observation of one case's resolved target: a
// pipeline scan scored under the run's rubric, or a stored bundle
// rescored. An error is recorded as the case's and counts in nothing.
type ScanFunc func(ctx context.Context, c Case, t ScanTarget) (Observed, error)

// RunCases resolves each case's target (packing fixtures from corpusDir
// into tmpDir), calls scan, compares under cat (the catalog of the rubric
// in force; see Compare), and returns the report. A case refused when the
// corpus was read is reported as refused and neither resolved nor scanned.
// It stops only when ctx is done; any other failure is recorded against
// its case.
func RunCases(ctx context.Context, info RunInfo, cases []Case, corpusDir, tmpDir string, scan ScanFunc, cat *rubric.Rubric) (Report, error) {
	results := make([]CaseResult, 0, len(cases))
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		if len(c.Refused) > 0 {
			results = append(results, Compare(c, ScanTarget{}, Observed{}, info.RubricVersion, cat))
			continue
		}
		t, err := c.ResolveTarget(corpusDir, tmpDir)
		var o Observed
		if err == nil {
			o, err = scan(ctx, c, t)
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return Report{}, cerr
			}
			o = Observed{Error: err.Error()}
		}
		results = append(results, Compare(c, t, o, info.RubricVersion, cat))
	}
	return NewReport(info, results), nil
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// kindTitles head each kind's section of the table.
var kindTitles = map[Kind]string{
	KindSynthetic: "SYNTHETIC FIXTURES",
	KindReviewed:  "REVIEWED PACKAGES",
}

// legend explains the columns; it is part of every table.
const legend = `Matching is by reason code within each case's scope, never by value, and a code
counts once per case however many subjects it names; a measurement matches when the
measurement was made, whatever its value.
  TP                expected and emitted
  FP                emitted within the scope, expected by nobody
  FN                expected and not emitted, whatever the state of any signal
  OF-WHICH-UNAVAIL  of those FN, the ones whose producing signal was not observed
                    (unavailable, error, not assessed, not recorded); part of FN
Findings outside a case's scope are listed and counted in nothing. A case refused when
the corpus was read is listed with its file, line and why, and counted in nothing.
False discovery rate = FP / (TP + FP), per kind of case; the kinds are never pooled.
`

// WriteTable writes the report for people: the run record, one section per
// kind of case (cases, codes, totals and false discovery rate), what keeps
// results from being published, and each case's codes.
func WriteTable(w io.Writer, rep Report) error {
	ew := &errWriter{w: w}
	p := func(format string, args ...any) { fmt.Fprintf(ew, format, args...) }

	byKind := map[Kind]int{}
	refused := 0
	for _, r := range rep.Cases {
		byKind[r.Kind]++
		if len(r.Refused) > 0 {
			refused++
		}
	}
	p("verifymcp cases: %s (synthetic %d, reviewed %d)", plural(len(rep.Cases), "case"), byKind[KindSynthetic], byKind[KindReviewed])
	if refused > 0 {
		p(", %d refused when the corpus was read", refused)
	}
	p("\n")
	p("date:    %s\n", rep.Run.Date.UTC().Format(time.RFC3339))
	if rep.Run.RubricHash != "" {
		p("rubric:  %s (%s)\n", rep.Run.RubricVersion, rep.Run.RubricHash)
	} else {
		p("rubric:  %s\n", rep.Run.RubricVersion)
	}
	p("tool:    %s\n", rep.Run.ToolVersion)
	switch rep.Run.Source {
	case SourceStore:
		p("source:  stored runs rescored under rubric %s; nothing was re-run\n", rep.Run.RubricVersion)
	default:
		p("source:  every case scanned by this run\n")
	}
	if hasCaptures(rep) {
		p("         static captures scored from their recorded files, with no engine and no network\n")
	}
	p("signals (cases by state during their scan):\n")
	if len(rep.Signals) == 0 {
		p("  none recorded\n")
	}
	writeSignalRows(ew, rep.Signals)
	p("\n%s", legend)

	for _, ks := range rep.Kinds {
		writeKind(ew, rep, ks)
	}

	flagged := false
	for _, r := range rep.Cases {
		if len(r.NotPublishable) == 0 {
			continue
		}
		if !flagged {
			p("\nNOT PUBLISHABLE\n")
			flagged = true
		}
		for _, why := range r.NotPublishable {
			p("  %s: %s\n", r.ID, why)
		}
	}

	if len(rep.Cases) > 0 {
		p("\nCASES (out of scope: emitted outside the case's scope, counted in nothing)\n")
	}
	for _, r := range rep.Cases {
		kind := string(r.Kind)
		if kind == "" {
			kind = "no kind"
		}
		if len(r.Refused) > 0 {
			p("\n%s (%s) %s\n", r.ID, kind, r.File)
			list(ew, "refused", r.Refused)
			continue
		}
		p("\n%s (%s, %s) %s\n", r.ID, kind, formLabel(r), r.Target)
		list(ew, "reviewer", []string{r.Reviewer + ", under rubric " + r.ReviewedUnder})
		if r.Withdrawn != "" {
			list(ew, "withdrawn", []string{r.Withdrawn})
		}
		for i, d := range r.DisputeLog {
			line := fmt.Sprintf("%d. %s, raised by %s on %s: %s", i+1, d.State(), d.RaisedBy, d.Date, oneLine(d.ClaimText()))
			if a := strings.TrimSpace(d.Answer); a != "" {
				line += "; answered by " + d.AnsweredBy + " on " + d.AnsweredOn + ": " + oneLine(a)
			}
			list(ew, "dispute", []string{line})
		}
		if rep.Run.Source == SourceStore && r.RunID != "" && resultForm(r) == FormLive {
			list(ew, "stored run", []string{r.RunID + " of " + r.ScannedAt.UTC().Format(time.RFC3339) + " by verifymcp " + r.ScanToolVersion})
		}
		list(ew, "scope", []string{strings.Join(r.Scope, ", ")})
		if r.Error != "" {
			list(ew, "not compared", []string{r.Error})
			continue
		}
		list(ew, "TP", matches(r.TP))
		list(ew, "FP", matches(r.FP))
		list(ew, "FN", missed(r.FN))
		if len(r.Unverified) > 0 {
			list(ew, "unverified", unverified(r.Unverified))
		}
		list(ew, "out of scope", matches(r.OutOfScope))
	}
	return ew.err
}

// writeSignalRows writes one row per signal: its cases by state, and
// whether a third party gives it.
func writeSignalRows(ew *errWriter, signals []Signal) {
	var rows [][]string
	for _, s := range signals {
		var parts []string
		for _, st := range []evidence.State{evidence.StateObserved, evidence.StateUnavailable, evidence.StateError, evidence.StateNotAssessed} {
			if n := s.States[st]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", st, n))
			}
		}
		for _, st := range sortedKeys(stringStates(s.States)) {
			if !evidence.State(st).Valid() {
				parts = append(parts, fmt.Sprintf("%s %d", st, s.States[evidence.State(st)]))
			}
		}
		party := ""
		if s.ThirdParty {
			party = "third party"
		}
		rows = append(rows, []string{"  " + s.Name, strings.Join(parts, ", "), party})
	}
	columns(ew, rows, 0)
}

// writeKind writes the section of rep for one kind of case, ks: its
// cases' counts, its codes' counts and its totals.
func writeKind(ew *errWriter, rep Report, ks KindSummary) {
	p := func(format string, args ...any) { fmt.Fprintf(ew, format, args...) }
	p("\n%s: %s, %d compared\n", kindTitles[ks.Kind], plural(ks.Cases, "case"), ks.Compared)
	if ks.Cases == 0 {
		if ks.Kind == KindReviewed {
			p("  none yet: reviewed cases are added by people (benchmark/README.md says how)\n")
		} else {
			p("  none\n")
		}
		return
	}
	writeForms(ew, ks)
	rows := [][]string{{"CASE", "TP", "FP", "FN", "OF-WHICH-UNAVAIL", "PUBLISHABLE"}}
	for _, r := range rep.Cases {
		switch {
		case r.Kind != ks.Kind:
		case len(r.Refused) > 0:
			rows = append(rows, []string{r.ID, "-", "-", "-", "-", "no (refused)"})
		case r.Error != "":
			rows = append(rows, []string{r.ID, "-", "-", "-", "-", "no (not compared)"})
		case r.Withdrawn != "":
			rows = append(rows, append([]string{r.ID + " (withdrawn)"}, append(countCells(r.Counts), "no (withdrawn)")...))
		default:
			rows = append(rows, append([]string{r.ID}, append(countCells(r.Counts), yesNo(r.Publishable))...))
		}
	}
	columns(ew, rows, 4)
	p("\n")
	rows = [][]string{{"CODE", "TP", "FP", "FN", "OF-WHICH-UNAVAIL"}}
	for _, cs := range ks.Codes {
		rows = append(rows, append([]string{cs.Code}, countCells(cs.Counts)...))
	}
	rows = append(rows, append([]string{"TOTAL"}, countCells(ks.Counts)...))
	columns(ew, rows, 4)
	if ks.FalseDiscoveryRate != nil {
		p("false discovery rate, FP/(TP+FP): %.1f%% (%d of %s)\n", 100**ks.FalseDiscoveryRate, ks.Counts.FP, plural(ks.Counts.TP+ks.Counts.FP, "in-scope finding"))
	} else {
		p("false discovery rate, FP/(TP+FP): undefined (no in-scope finding)\n")
	}
	if len(ks.Failed) > 0 {
		p("not compared: %s\n", strings.Join(ks.Failed, ", "))
	}
	if len(ks.Refused) > 0 {
		p("refused when the corpus was read: %s\n", strings.Join(ks.Refused, ", "))
	}
	if len(ks.Withdrawn) > 0 {
		p("withdrawn, counted in no total: %s\n", strings.Join(ks.Withdrawn, ", "))
	}
	if ks.Publishable {
		p("publishable: yes\n")
	} else {
		p("publishable: no (%s not publishable: %s)\n", plural(len(ks.NotPublishable), "case"), strings.Join(ks.NotPublishable, ", "))
	}
}

// oneLine folds text onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// unverified names the in-scope signals that were not observed, each with
// its state: what they would have found is unknown, not clean.
func unverified(ns []NamedSignal) []string {
	parts := make([]string, 0, len(ns))
	for _, n := range ns {
		parts = append(parts, n.Name+" ("+string(n.State)+")")
	}
	return []string{strings.Join(parts, ", ") + ": not observed, so that part of the scope is unverified, not clean"}
}

func stringStates(m map[evidence.State]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// maxSubjects is how many subjects of one code a table line names.
const maxSubjects = 4

func match(m Match) string {
	var subj []string
	for i, s := range m.Subjects {
		if i == maxSubjects {
			subj = append(subj, fmt.Sprintf("%d more", len(m.Subjects)-maxSubjects))
			break
		}
		if s == "" {
			s = "the package"
		}
		subj = append(subj, s)
	}
	if m.Measurement {
		return m.Code + " (measurement made: " + strings.Join(subj, ", ") + ")"
	}
	return m.Code + " (" + strings.Join(subj, ", ") + ")"
}

func matches(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = match(m)
	}
	return out
}

func missed(ms []Missed) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		var sig []string
		for _, s := range m.Signals {
			sig = append(sig, s.Name+" "+string(s.State))
		}
		what := "producing signal unknown"
		if len(sig) > 0 {
			what = "producing signal " + strings.Join(sig, ", ")
		}
		if m.Measurement {
			what = "measurement not made; " + what
		}
		out[i] = m.Code + " (" + what + ")"
	}
	return out
}

// list writes a labelled list of codes: "none", one code on the label's
// line, or one code a line below it.
func list(w io.Writer, label string, items []string) {
	label = fmt.Sprintf("  %-14s", label+":")
	switch len(items) {
	case 0:
		fmt.Fprintf(w, "%s none\n", label)
	case 1:
		fmt.Fprintf(w, "%s %s\n", label, items[0])
	default:
		fmt.Fprintf(w, "%s\n", strings.TrimRight(label, " "))
		for _, it := range items {
			fmt.Fprintf(w, "    %s\n", it)
		}
	}
}

func countCells(c Counts) []string {
	return []string{strconv.Itoa(c.TP), strconv.Itoa(c.FP), strconv.Itoa(c.FN), strconv.Itoa(c.FNUnavailable)}
}

// columns writes rows as aligned columns two spaces apart, with no
// trailing blanks: the first column left-aligned, the next numeric ones
// right-aligned, any after them left-aligned.
func columns(w io.Writer, rows [][]string, numeric int) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 && i <= numeric {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// errWriter keeps the first write error, so the table code can print
// freely and report it once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

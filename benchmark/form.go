package benchmark

import (
	"fmt"
	"io"
)

// FormSummary is the part of a kind's summary made of the cases of one
// form: static captures, reproducible in full, or live cases, which depend
// on the world. The kind's totals are the sum of its forms'; the forms are
// shown apart so that a reader can tell a result any machine reproduces
// from one that observed the world at a moment.
type FormSummary struct {
	Form string `json:"form"`
	// DependsOnWorld marks the live form: its cases were installed and run
	// in a sandbox, so their results depend on the engine and image, on
	// what was reachable and on timing.
	DependsOnWorld bool `json:"depends_on_world"`
	// Cases, Compared, Failed, Refused, Withdrawn, Counts and
	// FalseDiscoveryRate are as in KindSummary, over this form's cases.
	Cases              int      `json:"cases"`
	Compared           int      `json:"compared"`
	Failed             []string `json:"failed"`
	Refused            []string `json:"refused"`
	Withdrawn          []string `json:"withdrawn"`
	Counts             Counts   `json:"counts"`
	FalseDiscoveryRate *float64 `json:"false_discovery_rate"`
}

// forms is the order forms are listed in.
var forms = []string{FormCapture, FormLive}

// withForms sets ks.Forms from results: one summary per form of ks's kind
// that has cases.
func withForms(ks KindSummary, results []CaseResult) KindSummary {
	ks.Forms = []FormSummary{}
	for _, f := range forms {
		var of []CaseResult
		for _, r := range results {
			if r.Kind == ks.Kind && resultForm(r) == f {
				of = append(of, r)
			}
		}
		if len(of) == 0 {
			continue
		}
		s := summarize(ks.Kind, of)
		ks.Forms = append(ks.Forms, FormSummary{Form: f, DependsOnWorld: f == FormLive, Cases: s.Cases, Compared: s.Compared,
			Failed: s.Failed, Refused: s.Refused, Withdrawn: s.Withdrawn, Counts: s.Counts, FalseDiscoveryRate: s.FalseDiscoveryRate})
	}
	return ks
}

// resultForm is r's form; a result that names none (written before forms
// were recorded) was live.
func resultForm(r CaseResult) string {
	if r.Form == "" {
		return FormLive
	}
	return r.Form
}

// formTitles name each form in the table.
var formTitles = map[string]string{
	FormCapture: "static captures",
	FormLive:    "live",
}

// formNotes say in the table what each form's figures rest on.
var formNotes = map[string]string{
	FormCapture: "scored from recorded files with no engine and no network: reproducible on any machine",
	FormLive:    "installed and run in the sandbox: depends on the world (engine and image, reachability, timing)",
}

// writeForms writes a kind's split by form: one line per form, its counts
// and what its figures rest on.
func writeForms(w io.Writer, ks KindSummary) {
	rows := [][]string{}
	for _, f := range ks.Forms {
		fdr := "undefined"
		if f.FalseDiscoveryRate != nil {
			fdr = fmt.Sprintf("%.1f%%", 100**f.FalseDiscoveryRate)
		}
		rows = append(rows, []string{"  " + formTitles[f.Form] + ":", plural(f.Cases, "case"), fmt.Sprintf("%d compared", f.Compared),
			fmt.Sprintf("TP %d  FP %d  FN %d  FDR %s", f.Counts.TP, f.Counts.FP, f.Counts.FN, fdr), formNotes[f.Form]})
	}
	columns(w, rows, 0)
}

// formLabel names r's form in a case's heading: a live case is marked as
// depending on the world.
func formLabel(r CaseResult) string {
	if resultForm(r) == FormCapture {
		return "static capture"
	}
	return "live: depends on the world"
}

// hasCaptures says whether rep holds a static capture.
func hasCaptures(rep Report) bool {
	for _, r := range rep.Cases {
		if resultForm(r) == FormCapture {
			return true
		}
	}
	return false
}

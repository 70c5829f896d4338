package benchmark_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/benchmark"
)

// TestReviewerIsAPerson: a reviewer is a name and a way to reach them; a
// role, team, organisation or tool is refused, and says which word made it
// one. The names are plainly examples.
func TestReviewerIsAPerson(t *testing.T) {
	for _, ok := range []string{
		"Ada Lovelace <ada@lovelace.example>",
		"Ada Lovelace (github:adalovelace)",
		"María José García-López <mj.garcia@example.es>",
		"李雷 <li.lei@example.cn>",
		"Jean-Luc O'Neill (gitlab:jl-oneill)",
		"Aisha Bello (codeberg:abello)",
		"Grace B. Hopper <grace@example.org>",
		"pending",
	} {
		if _, err := benchmark.ParseReviewer(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, tc := range []struct{ reviewer, why string }{
		{"Benchmark Review Group <review@example.org>", `"benchmark"`},
		{"Review Group <review@example.org>", `"review"`},
		{"Ada's Reading Group <group@example.org>", `"group"`},
		{"GitHub Copilot (github:copilot)", `"github"`},
		{"Security Team <security@example.com>", `"security"`},
		{"Acme Corp <mcp@acme.example>", `"corp"`},
		{"renovate[bot] (github:renovate)", `"renovate"`},
		{"mcp-helper[bot] (github:mcp-helper)", `"bot"`},
		{"OpenAI GPT-4 <gpt@example.com>", `"openai"`},
		{"The Maintainers <maint@example.org>", `"maintainers"`},
		{"Northwind Foundation <hello@northwind.example>", `"foundation"`},
		{"CISA <central@example.gov>", "acronym"},
		{"Claude <claude@example.com>", `"claude"`},
		{"Ada Lovelace", "a name and a way to reach them"},
		{"ada@lovelace.example", "a name and a way to reach them"},
		{"Ada Lovelace <not an address>", "not an email address"},
		{"Ada Lovelace (twitter:ada)", "not a code-host handle"},
		{" <ada@lovelace.example>", "no name"},
		{"TBD <tbd@example.org>", "acronym"},
		{"", "missing"},
	} {
		_, err := benchmark.ParseReviewer(tc.reviewer)
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: error %v, want one saying %s", tc.reviewer, err, tc.why)
		}
	}
}

// TestProvenanceAndSelection: a provenance is a record, not a placeholder,
// and a reviewed case says when it was selected (or that it is unknown).
func TestProvenanceAndSelection(t *testing.T) {
	for _, tc := range []struct{ name, data, msg string }{
		{"tbd", replace(validReviewed, "Reported by a user on 2026-01-05, reviewed before any scan.", "TBD"), "is a placeholder"},
		{"todo_sentence", replace(validReviewed, "Reported by a user on 2026-01-05, reviewed before any scan.", "TODO write how it was chosen"), "is a placeholder"},
		{"two_words", replace(validReviewed, "Reported by a user on 2026-01-05, reviewed before any scan.", "User report"), "write a sentence"},
		{"no_selection_date", replace(validReviewed, "selected: 2026-01-05\n", ""), "selected: missing"},
		{"bad_selection_date", replace(validReviewed, "selected: 2026-01-05", "selected: last week"), "want the date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := benchmark.LoadCorpusFS(corpus(map[string]string{"cases/reviewed/example.yaml": tc.data}))
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want %q", err, tc.msg)
			}
		})
	}
	if _, err := benchmark.LoadCorpusFS(corpus(map[string]string{"cases/reviewed/example.yaml": replace(validReviewed, "selected: 2026-01-05", "selected: unknown")})); err != nil {
		t.Errorf("selected: unknown refused: %v", err)
	}
}

// reviewedCase returns the valid reviewed case, changed by fn.
func reviewedCase(t *testing.T, data string) benchmark.Case {
	t.Helper()
	cases, err := benchmark.LoadCorpusFS(corpus(map[string]string{"cases/reviewed/example.yaml": data}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.ID == "example" {
			return c
		}
	}
	t.Fatal("no example case")
	return benchmark.Case{}
}

func observedCrash(runAt time.Time) benchmark.Observed {
	return benchmark.Observed{RunID: "run-now", Date: runAt, RubricVersion: "5", Name: "example-mcp", Version: "1.2.3",
		Args: []string{"--stdio"}, EnvNames: []string{"API_TOKEN"},
		Findings: []benchmark.Emitted{{Code: "pkg.session.start_crashed"}}}
}

// TestSelectedAfterScoring: a reviewed case whose target the store scanned
// before the date it was selected is flagged and not publishable; one
// scanned first after it is not flagged.
func TestSelectedAfterScoring(t *testing.T) {
	c := reviewedCase(t, replace(validReviewed, "Ada Lovelace <ada@lovelace.example>", "Ada Lovelace <ada@lovelace.example>"))
	target := benchmark.ScanTarget{Name: "example-mcp", Version: "1.2.3"}
	o := observedCrash(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	o.FirstScan = &benchmark.ScanRef{RunID: "run-early", Date: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	r := benchmark.Compare(c, target, o, "5", nil)
	if r.SelectedAfterScoring == nil || r.Publishable || !strings.Contains(strings.Join(r.NotPublishable, "\n"), "selected after scoring: its target was scanned on 2026-01-02 (run run-early), before it was selected on 2026-01-05") {
		t.Errorf("scanned before selection: %+v %q", r.SelectedAfterScoring, r.NotPublishable)
	}
	o.FirstScan = &benchmark.ScanRef{RunID: "run-later", Date: time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)}
	if r := benchmark.Compare(c, target, o, "5", nil); r.SelectedAfterScoring != nil || !r.Publishable {
		t.Errorf("scanned after selection: %+v %q, want publishable", r.SelectedAfterScoring, r.NotPublishable)
	}
	unknown := reviewedCase(t, replace(validReviewed, "selected: 2026-01-05", "selected: unknown"))
	if r := benchmark.Compare(unknown, target, o, "5", nil); r.Publishable || !strings.Contains(strings.Join(r.NotPublishable, "\n"), "not recorded") {
		t.Errorf("selected unknown: %q, want not publishable", r.NotPublishable)
	}
}

const withdrawalRequested = `disputes:
  - raised_by: Example MCP's author
    date: 2026-03-02
    claim: The server does not crash at start; it needs API_TOKEN, which the case gives a placeholder for.
    withdrawal_requested: true`

const withdrawnDispute = `disputes:
  - raised_by: Grace Hopper
    date: 2026-03-02
    claim: The crash is the placeholder token's, not the server's.
    status: withdrawn
    answer: Agreed; the case is withdrawn.
    answered_by: Ada Lovelace
    answered_on: 2026-03-04`

const upheldDispute = `disputes:
  - raised_by: Grace Hopper
    date: 2026-03-02
    claim: The crash is the placeholder token's, not the server's.
    status: upheld
    answer: It crashes before reading the token; the stack trace shows it.
    answered_by: Ada Lovelace
    answered_on: 2026-03-04`

// TestDisputes: statuses are checked; an open dispute that asks for
// withdrawal, and a withdrawn case, count in no total and the run says so
// by id; an upheld one stays, with the disagreement on record.
func TestDisputes(t *testing.T) {
	for _, tc := range []struct{ name, disputes, msg string }{
		{"unknown_status", strings.Replace(upheldDispute, "status: upheld", "status: rejected", 1), `status "rejected"`},
		{"answered_without_status", strings.Replace(upheldDispute, "    status: upheld\n", "", 1), "status: missing"},
		{"upheld_without_answer", strings.Replace(upheldDispute, "    answer: It crashes before reading the token; the stack trace shows it.\n", "", 1), "answer: missing"},
		{"no_claim", strings.Replace(withdrawalRequested, "    claim: The server does not crash at start; it needs API_TOKEN, which the case gives a placeholder for.\n", "", 1), "claim: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := benchmark.LoadCorpusFS(corpus(map[string]string{"cases/reviewed/example.yaml": replace(validReviewed, "disputes: []", tc.disputes)}))
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want %q", err, tc.msg)
			}
		})
	}
	target := benchmark.ScanTarget{Name: "example-mcp", Version: "1.2.3"}
	o := observedCrash(time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name, disputes string
		withdrawn      bool
	}{
		{"withdrawal_requested_while_open", withdrawalRequested, true},
		{"withdrawn", withdrawnDispute, true},
		{"upheld", upheldDispute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := reviewedCase(t, replace(validReviewed, "disputes: []", tc.disputes))
			r := benchmark.Compare(c, target, o, "5", nil)
			rep := benchmark.NewReport(benchmark.RunInfo{RubricVersion: "5"}, []benchmark.CaseResult{r})
			ks := rep.Kinds[1]
			if got := r.Withdrawn != ""; got != tc.withdrawn {
				t.Fatalf("withdrawn %q, want %v", r.Withdrawn, tc.withdrawn)
			}
			if tc.withdrawn {
				if ks.Compared != 0 || ks.Counts.TP != 0 || len(ks.Withdrawn) != 1 || ks.Withdrawn[0] != "example" {
					t.Errorf("totals %+v, want the case counted in nothing and listed as withdrawn", ks)
				}
				var table strings.Builder
				if err := benchmark.WriteTable(&table, rep); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(table.String(), "withdrawn, counted in no total: example") {
					t.Errorf("the table does not say the case is withdrawn:\n%s", table.String())
				}
				return
			}
			if ks.Compared != 1 || ks.Counts.TP != 1 || !r.Publishable || len(r.DisputeLog) != 1 || r.DisputeLog[0].State() != benchmark.DisputeUpheld {
				t.Errorf("upheld: totals %+v, publishable %v (%q), log %+v", ks.Counts, r.Publishable, r.NotPublishable, r.DisputeLog)
			}
		})
	}
}

// TestPublish: a publishable kind is written with its ledger entry; one
// that is not is refused with every reason and nothing of it is written;
// an earlier publication that counted a case since withdrawn needs
// republication.
func TestPublish(t *testing.T) {
	target := benchmark.ScanTarget{Name: "example-mcp", Version: "1.2.3"}
	run := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	good := benchmark.Compare(reviewedCase(t, validReviewed), target, observedCrash(run), "5", nil)
	pending := reviewedCase(t, replace(validReviewed, "Ada Lovelace <ada@lovelace.example>", "pending"))
	pending.ID = "pending-one"
	bad := benchmark.Compare(pending, target, observedCrash(run), "5", nil)

	dir := t.TempDir()
	refused := benchmark.NewReport(benchmark.RunInfo{RubricVersion: "5", Date: run}, []benchmark.CaseResult{good, bad})
	res, err := benchmark.Publish(dir, refused, run)
	if !errors.Is(err, benchmark.ErrRefused) || !strings.Contains(err.Error(), "pending-one: no person has signed the case") {
		t.Fatalf("publish with a pending case: %v", err)
	}
	if len(res.Written) != 0 {
		t.Errorf("wrote %v for a refused kind", res.Written)
	}
	if _, err := os.Stat(filepath.Join(dir, "package", "reviewed.json")); !os.IsNotExist(err) {
		t.Errorf("reviewed.json written for a refused kind: %v", err)
	}

	ok := benchmark.NewReport(benchmark.RunInfo{RubricVersion: "5", Date: run}, []benchmark.CaseResult{good})
	if res, err = benchmark.Publish(dir, ok, run); err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Written, ",") != "package/reviewed.json,package/reviewed.txt,publications.json" {
		t.Errorf("written %v", res.Written)
	}
	var published benchmark.Report
	data, _ := os.ReadFile(filepath.Join(dir, "package", "reviewed.json"))
	if err := json.Unmarshal(data, &published); err != nil || len(published.Cases) != 1 {
		t.Fatalf("published report: %v %+v", err, published)
	}
	pc := published.Cases[0]
	if pc.Reviewer != "Ada Lovelace <ada@lovelace.example>" || pc.Provenance == "" || pc.Selected != "2026-01-05" || pc.ReviewedUnder != "5" || published.Run.Date.IsZero() {
		t.Errorf("published case lacks its reviewer, provenance, selection, rubric or run date: %+v", pc)
	}

	// The case is withdrawn after that publication: the next run lists
	// the publication as needing republication, and publishes without it.
	withdrawn := benchmark.Compare(reviewedCase(t, replace(validReviewed, "disputes: []", withdrawnDispute)), target, observedCrash(run.AddDate(0, 0, 5)), "5", nil)
	later := benchmark.NewReport(benchmark.RunInfo{RubricVersion: "5", Date: run.AddDate(0, 0, 5)}, []benchmark.CaseResult{withdrawn})
	res, err = benchmark.Publish(dir, later, run.AddDate(0, 0, 5))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Republish) != 1 || !strings.Contains(res.Republish[0], "published on 2026-03-01 (package/reviewed.json) counted case example, withdrawn on 2026-03-04") {
		t.Errorf("republish %q", res.Republish)
	}
	data, _ = os.ReadFile(filepath.Join(dir, benchmark.LedgerFile))
	var led benchmark.Ledger
	if err := json.Unmarshal(data, &led); err != nil || len(led.Publications) != 2 || len(led.Publications[1].Cases) != 0 || len(led.Publications[1].Withdrawn) != 1 {
		t.Errorf("ledger %v %+v", err, led)
	}
}

// replace replaces old, which must be there, once.
func replace(base, old, new string) string {
	if !strings.Contains(base, old) {
		panic("fixture lacks " + old)
	}
	return strings.Replace(base, old, new, 1)
}

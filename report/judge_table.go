package report

import (
	"math"
	"strconv"

	"github.com/verifymcp/verifymcp/evidence"
)

// judgeUnknown says what stays unknown when the judge did not answer.
const judgeUnknown = "whether the tool surface tries to steer the agent is unknown, not absent"

// judgeNoVerdict is written for an observed judgment with no verdict.
const judgeNoVerdict = "no verdict: the judge found nothing in the listed surface (an LLM judgment, not a proof)"

// zeroTemperature is what the judge sends for a temperature of 0: the
// smallest positive float32, because an API reads an absent temperature
// as its default.
const zeroTemperature = float64(math.SmallestNonzeroFloat32)

// judge writes the JUDGE section: who judged the tool surface, how and
// when, and one line per verdict; or, when the judge's signal was not
// observed, that its verdict is unverified (or not assessed) and why.
func (t *table) judge(rep Report) {
	t.line("")
	j := rep.Judge
	if j == nil {
		t.line("JUDGE  not collected: this evidence predates the LLM judge; its verdict is unverified")
		return
	}
	t.line("JUDGE  an LLM's reading of the tool surface, pinned and cached; not a deterministic check")
	name := padName("judge")
	if j.Status != StatusObserved || j.Result == nil {
		state := clean(j.State)
		if j.Reason != "" {
			state += " (" + clean(j.Reason) + ")"
		}
		label, unknown := labelUnverified, judgeUnknown
		if j.State == string(evidence.StateNotAssessed) {
			label, unknown = labelNotAssessed, "the judge was not asked"
		}
		t.grid([][]string{{name, label, "signal " + clean(j.Signal) + " is " + state + ": " + unknown}})
		return
	}
	r := j.Result
	t.grid([][]string{{name, labelObserved, orDash(clean(r.Model)) + " @ " + orDash(clean(r.Endpoint)) + "  " + plural(len(r.Verdicts), "verdict")}})
	t.detail(judgeRows(r, rep.Rubric.Version))
	if len(r.Verdicts) == 0 {
		t.line("    " + judgeNoVerdict)
		return
	}
	rows := [][]string{{"TOOL", "CODE", "EVIDENCE", "RATIONALE"}}
	for _, v := range r.Verdicts {
		tool := clean(v.Tool)
		if v.Tool == "" {
			tool = "(server instructions)"
		}
		rows = append(rows, []string{tool, orDash(clean(v.Code)), clean(strconv.Quote(v.Evidence)), orDash(clean(v.Rationale))})
	}
	t.detail(rows)
}

// judgeRows are the pins of a judgment: specification, rubric, when and
// how it was asked, and which surface.
func judgeRows(r *JudgeResult, scoredUnder string) [][]string {
	spec := "v" + orDash(clean(r.SpecVersion)) + ", prompt v" + orDash(clean(r.PromptVersion))
	if r.SpecDigest != "" {
		spec += "  " + clean(r.SpecDigest)
	}
	rubric := "asked under rubric v" + orDash(clean(r.RubricVersion))
	if r.RubricVersion != scoredUnder {
		rubric += " (this report is scored under rubric v" + clean(scoredUnder) + ")"
	}
	at := "unknown"
	if r.FetchedAt != nil {
		at = *r.FetchedAt
	}
	answer := "asked " + at
	if r.CacheHit {
		answer = "cache hit (answered " + at + ")"
	}
	temp := "temperature " + num(r.Temperature)
	if r.Temperature == zeroTemperature {
		temp = "temperature 0 (sent as 1e-45)"
	}
	surface := orDash(clean(r.SchemaHash))
	if r.CacheKey != "" {
		surface += "  cache key " + clean(r.CacheKey)
	}
	return [][]string{
		{"judge spec", spec},
		{"rubric", rubric},
		{"answer", answer},
		{"sampling", temp + ", seed " + strconv.Itoa(r.Seed)},
		{"surface", surface},
	}
}

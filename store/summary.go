package store

import (
	"encoding/json"

	"github.com/verifymcp/verifymcp/rubric"
)

// A result's summary is what comparing a later result with it needs, and
// nothing else: its reason codes (sorted, each once), its dimensions' id,
// weight, state and score, and its composite. It is the JSON of a
// baselineResult, so that the decoder that reads a stored result as a
// baseline reads a summary the same way and finds the same values; a
// result is around 9 KiB of findings' messages and evidence, its summary
// a few hundred bytes. Schema 4 stores it beside the result, written by
// the same statement from the same rubric.Result; results saved before
// have none, and rescoring decodes the result itself for those.

// encodeSummary returns res's summary: exactly json.Marshal of
// summaryOf(res), built without reflection.
func encodeSummary(res *rubric.Result) ([]byte, error) {
	b, ok := appendSummary(make([]byte, 0, 64+48*len(res.Dimensions)+32*len(res.Findings)), res)
	if !ok {
		return json.Marshal(summaryOf(res))
	}
	return b, nil
}

// summaryOf is res's summary as a value.
func summaryOf(res *rubric.Result) baselineResult {
	s := baselineResult{Score: res.Score}
	codes := make([]string, 0, len(res.Findings))
	for _, f := range res.Findings {
		codes = append(codes, f.Code)
	}
	for _, c := range sortedUnique(codes) {
		s.Findings = append(s.Findings, baselineFinding{Code: c})
	}
	for _, d := range res.Dimensions {
		s.Dimensions = append(s.Dimensions, baselineDimension{ID: d.ID, Weight: d.Weight, State: d.State, Score: d.Score})
	}
	return s
}

// appendSummary appends res's summary to b; ok is false for a value
// encoding/json refuses (a NaN or infinite number), which summaryOf's
// json.Marshal then reports.
func appendSummary(b []byte, res *rubric.Result) ([]byte, bool) {
	ok := true
	codes := make([]string, 0, len(res.Findings))
	for i := range res.Findings {
		codes = append(codes, res.Findings[i].Code)
	}
	codes = sortedUnique(codes)
	b = append(b, `{"findings":`...)
	if len(codes) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range codes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"code":`...)
			b = appendJSONString(b, c)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"dimensions":`...)
	if len(res.Dimensions) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range res.Dimensions {
			if i > 0 {
				b = append(b, ',')
			}
			b, ok = appendDimensionScore(b, &res.Dimensions[i], ok)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b, ok = appendComposite(b, res.Score, ok)
	return append(b, '}'), ok
}

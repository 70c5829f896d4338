package store

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

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
	b = appendArray(b, len(codes), len(codes) == 0, func(b []byte, i int) []byte {
		b = append(b, `{"code":`...)
		b = appendJSONString(b, codes[i])
		return append(b, '}')
	})
	b = append(b, `,"dimensions":`...)
	b = appendArray(b, len(res.Dimensions), len(res.Dimensions) == 0, func(b []byte, i int) []byte {
		b, ok = appendDimensionScore(b, &res.Dimensions[i], ok)
		return append(b, '}')
	})
	b, ok = appendComposite(b, res.Score, ok)
	return append(b, '}'), ok
}

// parseSummary reads data into s when it is a summary exactly as
// appendSummary writes it, with strings of plain ASCII (no escapes), and
// reports whether it was; for anything else (a result saved before
// summaries, another spelling of the same JSON, a damaged value) it
// returns false, leaving *s zero, and the caller decodes data in full.
// What it accepts, it reads as unmarshal would. Codes found in codes
// (sorted) and dimension ids found in dims are shared with them rather
// than allocated: a baseline mostly names what the new result names.
func parseSummary(data []byte, s *baselineResult, codes []string, dims []rubric.DimensionScore) bool {
	p := summaryParser{decoder: decoder{data: data}, codes: codes, dims: dims}
	*s = baselineResult{}
	if !p.summary(s) {
		*s = baselineResult{}
		return false
	}
	return true
}

// summaryParser reads a summary with the decoder's cursor, literals and
// number grammar, and none of its reflection.
type summaryParser struct {
	decoder
	codes []string
	dims  []rubric.DimensionScore
}

func (p *summaryParser) summary(s *baselineResult) bool {
	ok := p.literal(`{"findings":`) && p.list(func() bool {
		if !p.literal(`{"code":`) {
			return false
		}
		c, ok := p.name(p.code)
		s.Findings = append(s.Findings, baselineFinding{Code: c})
		return ok && p.literal("}")
	}) && p.literal(`,"dimensions":`) && p.list(func() bool {
		var d baselineDimension
		var st string
		ok := p.literal(`{"id":`)
		if ok {
			d.ID, ok = p.name(p.dimension)
		}
		if ok = ok && p.literal(`,"weight":`); ok {
			d.Weight, ok = p.num()
		}
		if ok = ok && p.literal(`,"state":`); ok {
			st, ok = p.name(p.state)
			d.State = rubric.State(st)
		}
		if ok = ok && p.literal(`,"score":`); ok {
			d.Score, ok = p.num()
		}
		s.Dimensions = append(s.Dimensions, d)
		return ok && p.literal("}")
	}) && p.literal(`,"score":`)
	if !ok {
		return false
	}
	if !p.literal("null") {
		v, ok := p.num()
		if !ok {
			return false
		}
		s.Score = &v
	}
	return p.literal("}") && p.i == len(p.data)
}

// list consumes null or a non-empty array whose items item consumes.
func (p *summaryParser) list(item func() bool) bool {
	if p.literal("null") {
		return true
	}
	if !p.literal("[") {
		return false
	}
	for item() {
		if p.literal("]") {
			return true
		}
		if !p.literal(",") {
			return false
		}
	}
	return false
}

// name consumes a quoted string of bytes JSON takes as they are,
// returning the string known returns for them, or a new one.
func (p *summaryParser) name(known func([]byte) (string, bool)) (string, bool) {
	if !p.literal(`"`) {
		return "", false
	}
	start := p.i
	for p.i < len(p.data) && p.data[p.i] != '"' {
		if c := p.data[p.i]; c >= utf8.RuneSelf || !jsonSafe[c] {
			return "", false
		}
		p.i++
	}
	if p.i == len(p.data) {
		return "", false
	}
	b := p.data[start:p.i]
	p.i++
	if s, ok := known(b); ok {
		return s, true
	}
	return string(b), true
}

func (p *summaryParser) code(b []byte) (string, bool) {
	i, ok := slices.BinarySearch(p.codes, string(b))
	if !ok {
		return "", false
	}
	return p.codes[i], true
}

func (p *summaryParser) dimension(b []byte) (string, bool) {
	for i := range p.dims {
		if id := p.dims[i].ID; id == string(b) {
			return id, true
		}
	}
	return "", false
}

func (p *summaryParser) state(b []byte) (string, bool) {
	for _, s := range [...]rubric.State{rubric.StateScored, rubric.StateZeroPoint, rubric.StateDropped} {
		if string(s) == string(b) {
			return string(s), true
		}
	}
	return "", false
}

// num consumes a number in JSON's grammar (decoder.number).
func (p *summaryParser) num() (float64, bool) {
	tok, err := p.number()
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	return v, err == nil
}

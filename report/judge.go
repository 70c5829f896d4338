package report

import "github.com/verifymcp/verifymcp/evidence"

// JudgeCheck is the LLM judge's verdict on the tool surface, in the shape
// of a supply-chain check: its signal's state and, only when observed, the
// judgment. A judge that was not observed is unverified, never clean.
type JudgeCheck struct {
	Check
	Result *JudgeResult `json:"result"` // nil unless observed
}

// JudgeResult is one judgment with everything that pins it. The judge is
// an LLM, not a deterministic check, so the report carries who answered,
// how it was asked, under which judge specification and rubric, about
// which surface, whether it came from the cache, and when.
type JudgeResult struct {
	Model    string `json:"model"`
	Endpoint string `json:"endpoint"`
	// Temperature is as sent: 0 is sent as the smallest positive float32.
	Temperature   float64 `json:"temperature"`
	Seed          int     `json:"seed"`
	SpecVersion   string  `json:"spec_version"`
	PromptVersion string  `json:"prompt_version"`
	SpecDigest    string  `json:"spec_digest"`
	// RubricVersion is the rubric the judge was asked under, which need
	// not be the one the report is scored under.
	RubricVersion string `json:"rubric_version"`
	SchemaHash    string `json:"schema_hash"`
	CacheHit      bool   `json:"cache_hit"`
	CacheKey      string `json:"cache_key"`
	// FetchedAt is when the model answered (UTC, RFC 3339), earlier than
	// the run on a cache hit; nil only when the evidence did not record it.
	FetchedAt *string `json:"fetched_at"`
	// Verdicts is never nil: [] means the judge found nothing in the
	// surface it was shown, an LLM's judgment and not a proof.
	Verdicts []JudgeVerdict `json:"verdicts"`
}

// JudgeVerdict is one verdict: a code of the judge specification about one
// tool ("" for the server instructions), with the judge's quote.
type JudgeVerdict struct {
	Tool      string `json:"tool"`
	Code      string `json:"code"`
	Evidence  string `json:"evidence"`
	Rationale string `json:"rationale"`
}

// buildJudge builds the judge section from the bundle and the report's
// signals. It is nil only when the bundle carries neither a judge result
// nor the judge signal: evidence from before the judge.
func buildJudge(b *evidence.Bundle, signals map[string]Signal) *JudgeCheck {
	_, recorded := signals[evidence.SignalJudge]
	if b.Judge == nil && !recorded {
		return nil
	}
	out := &JudgeCheck{Check: checkOf(b, signals, evidence.SignalJudge, b.Judge != nil)}
	// A result whose signal was not observed is not shown: it would read
	// as the verdict of a judge that did not answer in this run.
	if out.Status != StatusObserved {
		return out
	}
	jr := b.Judge
	out.Result = &JudgeResult{
		Model: jr.Model, Endpoint: endpoint(jr.Endpoint), Temperature: jr.Temperature, Seed: jr.Seed,
		SpecVersion: jr.SpecVersion, PromptVersion: jr.PromptVersion, SpecDigest: jr.SpecDigest,
		RubricVersion: jr.RubricVersion, SchemaHash: jr.SchemaHash, CacheHit: jr.CacheHit, CacheKey: jr.CacheKey,
		FetchedAt: timePtr(&jr.FetchedAt), Verdicts: make([]JudgeVerdict, 0, len(jr.Verdicts)),
	}
	for _, v := range jr.Verdicts {
		out.Result.Verdicts = append(out.Result.Verdicts, JudgeVerdict{Tool: v.Tool, Code: v.Code, Evidence: v.Evidence, Rationale: v.Rationale})
	}
	return out
}

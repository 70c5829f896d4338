package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/judge"
	"github.com/verifymcp/verifymcp/sandbox"
)

// Judger asks the LLM judge about a contract under a rubric version.
type Judger interface {
	Judge(ctx context.Context, c *contract.Contract, rubricVersion string) (*judge.Result, error)
}

// judgeContract runs the LLM judge over the captured contract and turns its
// outcome into the judge signal; it never fails the run.
func (p *Pipeline) judgeContract(ctx context.Context, c *contract.Contract) (*evidence.JudgeResult, evidence.Signal) {
	sig := evidence.Signal{ThirdParty: true}
	switch {
	case p.cfg.Supply.Skip["judge"]:
		return nil, skipped("judge")
	case p.cfg.Judge == nil:
		sig.State, sig.Reason = evidence.StateUnavailable, "no LLM judge configured"
		return nil, sig
	case c == nil:
		sig.State, sig.Reason = evidence.StateError, "not run: no contract was captured"
		return nil, sig
	case len(c.Tools) == 0 && c.Instructions == "":
		sig.State, sig.Reason = evidence.StateNotAssessed, "nothing to judge: the server lists no tools and gives no instructions"
		return nil, sig
	}
	start := time.Now()
	r, err := p.cfg.Judge.Judge(ctx, c, p.cfg.Rubric.Version)
	sig.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		sig.Reason = sandbox.Redact(err.Error(), nil)
		switch {
		case errors.Is(err, judge.ErrBadAnswer):
			sig.State = evidence.StateError
		case errors.Is(err, judge.ErrNotConfigured):
			sig.State = evidence.StateUnavailable
			sig.Reason = "no LLM judge configured: no API key (VERIFYMCP_JUDGE_API_KEY) and no cached verdict for this surface"
		case errors.Is(err, judge.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
			sig.State = evidence.StateUnavailable
		default:
			sig.State = evidence.StateError
		}
		return nil, sig
	}
	sig.State, sig.Endpoint, sig.Cached, sig.Authenticated = evidence.StateObserved, r.Endpoint, r.CacheHit, !r.CacheHit
	at := r.FetchedAt.UTC()
	sig.FetchedAt = &at
	out := &evidence.JudgeResult{
		Model: r.Model, Endpoint: r.Endpoint, Temperature: float64(r.Temperature), Seed: r.Seed,
		SpecVersion: r.SpecVersion, PromptVersion: r.PromptVersion, SpecDigest: r.SpecDigest,
		RubricVersion: r.RubricVersion, SchemaHash: r.SchemaHash,
		CacheHit: r.CacheHit, CacheKey: r.CacheKey, FetchedAt: at, Verdicts: []evidence.JudgeVerdict{},
	}
	for _, v := range r.Verdicts {
		out.Verdicts = append(out.Verdicts, evidence.JudgeVerdict{Tool: v.Tool, Code: v.Code, Evidence: v.Evidence, Rationale: v.Rationale})
	}
	return out, sig
}

// Package judge looks for tool poisoning in an MCP server's declared
// contract, in two layers.
//
// The first layer, Check, is deterministic, always on and does no I/O: it
// reads every text an agent is shown (server instructions, names, titles
// and descriptions of tools, prompts and resources, and every description
// inside input and output schemas) and reports findings for hidden text
// (invisible, direction-changing and tag characters, encoded blobs, HTML
// comments), instruction-like text aimed at the model, references that
// try to change how other tools behave (shadowing), parameters that ask
// for credentials, and tools that hand back the process environment or
// read caller-chosen paths without a stated confinement. Each finding is
// a reason code under pkg.contract. with a bounded, quoted evidence span;
// CheckCodes lists them and the rules are written next to each check. The
// checks are versioned (checks.Version, checks.Digest), a rubric pins the
// version it scores, and testdata/corpus.yaml holds them to 34 real
// surfaces, every finding justified.
//
// The second layer, Judge, asks an LLM behind any OpenAI-compatible
// endpoint (go-openai) to judge the tool surface under a versioned judge
// specification (Spec: prompt, response JSON Schema, verdict codes). The
// surface is untrusted text: it is fenced by per-call random delimiters
// that cannot occur in it, the answer must follow the strict JSON Schema,
// and every verdict must name a listed tool, use a code of the spec and
// quote a span that occurs in that tool's text, or the whole answer is
// rejected (ErrBadAnswer). Answers are cached by a key over everything
// that determines them, with the raw request and response kept for audit,
// so a rescoring run makes no call.
//
// Errors map to signal states in the pipeline: ErrUnavailable (no answer:
// network, timeout, rate limit or 5xx after retries, rejected credential)
// and ErrNotConfigured (no API key) are "unavailable"; ErrBadAnswer and
// anything else are "error".
package judge

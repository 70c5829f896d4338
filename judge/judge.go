package judge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// Errors the judge returns; the pipeline turns them into signal states.
var (
	// ErrUnavailable: the endpoint did not answer usefully (network
	// error, timeout, 429 or 5xx after retries, rejected credential,
	// unknown model). State: unavailable. It is internal/thirdparty's
	// sentinel, so the pipeline maps it like any third party's.
	ErrUnavailable = thirdparty.ErrUnavailable
	// ErrNotConfigured: no API key is configured. State: unavailable,
	// never clean. It wraps thirdparty.ErrNoCredential.
	ErrNotConfigured = fmt.Errorf("judge not configured: %w", thirdparty.ErrNoCredential)
	// ErrBadAnswer: the endpoint answered, but not with a usable verdict
	// list (refusal, truncated, not JSON, not the schema, an unknown code
	// or tool, or a quote that is not in the tool's text). State: error.
	ErrBadAnswer = errors.New("judge: unusable answer")
)

// Defaults of Options.
const (
	// DefaultBaseURL is OpenAI's API.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultModel is a dated snapshot, so that verdicts stay comparable;
	// it supports strict structured output, temperature and seed.
	DefaultModel     = "gpt-4o-2024-08-06"
	DefaultMaxTokens = 4096
	DefaultTimeout   = 2 * time.Minute
	// DefaultCacheTTL keeps verdicts for a year: the key already holds
	// everything that determines them, so age alone does not stale them.
	DefaultCacheTTL = 365 * 24 * time.Hour
	// CacheNamespace is the judge's namespace in the cache.
	CacheNamespace = "judge"
)

// ZeroTemperature is what a Temperature of 0 is sent as. go-openai omits a
// temperature of exactly 0 (omitempty), and the API's default is 1, so 0
// would silently become 1; the smallest positive float32 is sent instead,
// which every server treats as greedy decoding.
const ZeroTemperature float32 = math.SmallestNonzeroFloat32

// Cache is what the judge needs of a cache: the cache package's SQLite
// cache satisfies it.
type Cache interface {
	Get(ctx context.Context, namespace, key string) (value []byte, storedAt time.Time, ok bool, err error)
	Put(ctx context.Context, namespace, key string, value []byte, ttl time.Duration) error
}

// Options configure a Judge. Only APIKey is needed for the real endpoint.
type Options struct {
	// BaseURL is an OpenAI-compatible API base including its version
	// path (".../v1"); DefaultBaseURL when empty.
	BaseURL string
	// APIKey is sent as a bearer token; without one, Judge answers
	// ErrNotConfigured (an endpoint that needs no key takes any value).
	// It is never logged, stored or cached.
	APIKey string
	// Model is the model name; DefaultModel when empty. It must accept
	// temperature and seed (reasoning models do not).
	Model string
	// Temperature is sent as is, except 0, sent as ZeroTemperature.
	Temperature float32
	// Seed is always sent, 0 included.
	Seed int
	// MaxTokens bounds the answer (max_completion_tokens);
	// DefaultMaxTokens when 0.
	MaxTokens int
	// Timeout bounds one judgment, retries included; DefaultTimeout when 0.
	Timeout time.Duration
	// Retry is how 429, 5xx and network errors are retried;
	// thirdparty.DefaultRetry when zero.
	Retry thirdparty.Retry
	// Cache stores verdicts; nil disables caching.
	Cache Cache
	// CacheTTL is how long a verdict is kept; DefaultCacheTTL when 0.
	CacheTTL time.Duration
	// HTTPClient sends the requests; a new client when nil.
	HTTPClient *http.Client
	// Spec is the judge specification; SpecV1 when nil.
	Spec *Spec
	// Logger receives cache failures (the key is never logged);
	// slog.Default when nil.
	Logger *slog.Logger
}

// Judge asks an LLM to judge tool surfaces. It is safe for concurrent use.
type Judge struct {
	opts     Options
	client   *openai.Client
	endpoint string
	rand     io.Reader
}

// New returns a judge. It fails only on options that cannot work (a base
// URL that is not http or https); a missing API key is reported by Judge,
// as the unavailable state of the signal.
func New(opts Options) (*Judge, error) {
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("judge: base URL %q is not an http(s) URL", redactEndpoint(opts.BaseURL))
	}
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	if opts.Temperature == 0 {
		opts.Temperature = ZeroTemperature
	}
	if opts.MaxTokens == 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Retry == (thirdparty.Retry{}) {
		opts.Retry = thirdparty.DefaultRetry
	}
	if opts.CacheTTL == 0 {
		opts.CacheTTL = DefaultCacheTTL
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Spec == nil {
		opts.Spec = SpecV1
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg := openai.DefaultConfig(opts.APIKey)
	cfg.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	cfg.HTTPClient = &doer{hc: opts.HTTPClient, retry: opts.Retry}
	return &Judge{opts: opts, client: openai.NewClientWithConfig(cfg), endpoint: redactEndpoint(opts.BaseURL), rand: rand.Reader}, nil
}

// Verdict is one problem the judge found.
type Verdict struct {
	// Tool is the tool's name, or "" for the server instructions.
	Tool string `json:"tool"`
	Code string `json:"code"`
	// Evidence is the model's quote, checked to occur in the tool's text,
	// at most checks.EvidenceMaxChars characters.
	Evidence  string `json:"evidence"`
	Rationale string `json:"rationale"`
}

// Result is one judgment, fresh or from the cache.
type Result struct {
	Model         string  `json:"model"`
	SpecVersion   string  `json:"spec_version"`
	PromptVersion string  `json:"prompt_version"`
	SpecDigest    string  `json:"spec_digest"`
	RubricVersion string  `json:"rubric_version"`
	SchemaHash    string  `json:"schema_hash"`
	Temperature   float32 `json:"temperature"`
	Seed          int     `json:"seed"`
	CacheHit      bool    `json:"cache_hit"`
	CacheKey      string  `json:"cache_key"`
	// Verdicts is never nil: empty means judged, nothing found.
	Verdicts []Verdict `json:"verdicts"`
	// Request and Response are the raw bodies of the call that produced
	// the verdicts, for audit (no credential: the key travels in a header).
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
	// Endpoint is the base URL asked, without credentials or query.
	Endpoint string `json:"endpoint"`
	// FetchedAt is when the answer was obtained (earlier than the run when
	// it came from the cache).
	FetchedAt time.Time `json:"fetched_at"`
}

// KeyInput is everything that determines a judgment.
type KeyInput struct {
	SchemaHash    string
	RubricVersion string
	SpecVersion   string
	PromptVersion string
	SpecDigest    string
	Model         string
	Endpoint      string
	Temperature   float32
	Seed          int
	MaxTokens     int
}

// CacheKey is the hex SHA-256 over the parts of k, each length-prefixed so
// that no two inputs collide.
func CacheKey(k KeyInput) string {
	return thirdparty.CacheKey("verifymcp.judge.key/1", k.SchemaHash, k.RubricVersion, k.SpecVersion, k.PromptVersion,
		k.SpecDigest, k.Model, k.Endpoint, strconv.FormatFloat(float64(k.Temperature), 'g', -1, 32),
		strconv.Itoa(k.Seed), strconv.Itoa(k.MaxTokens))
}

// key returns the cache key input of a judgment of a surface with schema
// hash h.
func (j *Judge) key(h, rubricVersion string) KeyInput {
	s := j.opts.Spec
	return KeyInput{SchemaHash: h, RubricVersion: rubricVersion, SpecVersion: s.Version, PromptVersion: s.PromptVersion,
		SpecDigest: s.Digest, Model: j.opts.Model, Endpoint: j.endpoint, Temperature: j.opts.Temperature,
		Seed: j.opts.Seed, MaxTokens: j.opts.MaxTokens}
}

// Judge judges the tool surface of c under rubricVersion. A cached
// judgment is returned without any request (even when no API key is
// configured: it is evidence fetched earlier, with its date). Otherwise it
// asks the endpoint once (with retries), validates the answer, caches it
// and returns it. The surface is identified by c.SchemaHash, computed when
// empty.
func (j *Judge) Judge(ctx context.Context, c *contract.Contract, rubricVersion string) (*Result, error) {
	if c == nil {
		return nil, errors.New("judge: no contract")
	}
	// The stored schema hash is trusted when set, as the contract package
	// intends: contract.Normalize fills it, and recomputing it costs more
	// than the whole cache lookup.
	h := c.SchemaHash
	if h == "" {
		var err error
		if h, err = contract.Hash(c); err != nil {
			return nil, fmt.Errorf("judge: %w", err)
		}
	}
	ki := j.key(h, rubricVersion)
	key := CacheKey(ki)
	if r := j.lookup(ctx, key); r != nil {
		return r, nil
	}
	if j.opts.APIKey == "" {
		return nil, ErrNotConfigured
	}
	ctx, cancel := context.WithTimeout(ctx, j.opts.Timeout)
	defer cancel()
	r, err := j.ask(ctx, c)
	if err != nil {
		return nil, err
	}
	r.Model, r.SpecVersion, r.PromptVersion, r.SpecDigest = ki.Model, ki.SpecVersion, ki.PromptVersion, ki.SpecDigest
	r.RubricVersion, r.SchemaHash, r.Temperature, r.Seed = rubricVersion, h, ki.Temperature, ki.Seed
	r.CacheKey, r.Endpoint = key, j.endpoint
	j.store(context.WithoutCancel(ctx), key, r)
	return r, nil
}

// cacheFormat versions the stored form of a judgment: this line, then
// three sections, each its length in decimal, a newline, the bytes and a
// newline: the result's JSON without the raw bodies, the raw request and
// the raw response. Keeping the bodies out of the JSON spares a lookup
// from scanning them (they hold the whole surface).
const cacheFormat = "verifymcp.judge.cache/1\n"

func encodeCached(r *Result) ([]byte, error) {
	meta := *r
	meta.CacheHit, meta.CacheKey, meta.Request, meta.Response = false, "", nil, nil
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(cacheFormat)
	for _, sec := range [][]byte{m, r.Request, r.Response} {
		b.WriteString(strconv.Itoa(len(sec)))
		b.WriteByte('\n')
		b.Write(sec)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

func decodeCached(b []byte) (*Result, error) {
	rest, ok := bytes.CutPrefix(b, []byte(cacheFormat))
	if !ok {
		return nil, errors.New("not a judge cache entry")
	}
	var secs [3][]byte
	for i := range secs {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		n, err := strconv.Atoi(string(line))
		if !ok || err != nil || n < 0 || n+1 > len(after) || after[n] != '\n' {
			return nil, errors.New("judge cache entry: bad section")
		}
		secs[i], rest = after[:n], after[n+1:]
	}
	var r Result
	if err := json.Unmarshal(secs[0], &r); err != nil {
		return nil, err
	}
	r.Request, r.Response = secs[1], secs[2]
	if r.Verdicts == nil {
		r.Verdicts = []Verdict{}
	}
	return &r, nil
}

func (j *Judge) lookup(ctx context.Context, key string) *Result {
	if j.opts.Cache == nil {
		return nil
	}
	b, _, ok, err := j.opts.Cache.Get(ctx, CacheNamespace, key)
	if err != nil {
		j.opts.Logger.Warn("judge cache lookup failed", "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	r, err := decodeCached(b)
	if err != nil {
		j.opts.Logger.Warn("judge cache entry unreadable, judging again", "key", key, "err", err)
		return nil
	}
	r.CacheHit, r.CacheKey = true, key
	return r
}

func (j *Judge) store(ctx context.Context, key string, r *Result) {
	if j.opts.Cache == nil {
		return
	}
	b, err := encodeCached(r)
	if err == nil {
		err = j.opts.Cache.Put(ctx, CacheNamespace, key, b, j.opts.CacheTTL)
	}
	if err != nil {
		j.opts.Logger.Warn("judge cache store failed", "err", err)
	}
}

// ask makes the call and validates its answer.
func (j *Judge) ask(ctx context.Context, c *contract.Contract) (*Result, error) {
	s := renderSurface(c)
	begin, end, err := fences(j.rand, s.text)
	if err != nil {
		return nil, err
	}
	spec := j.opts.Spec
	system := strings.NewReplacer(placeholderBegin, begin, placeholderEnd, end, placeholderCodes, spec.codeList()).Replace(spec.Prompt)
	seed := j.opts.Seed
	req := openai.ChatCompletionRequest{
		Model: j.opts.Model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: begin + "\n" + s.text + "\n" + end},
		},
		MaxCompletionTokens: j.opts.MaxTokens,
		Temperature:         j.opts.Temperature,
		Seed:                &seed,
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: spec.SchemaName, Schema: spec.Schema, Strict: true,
			},
		},
	}
	ex := &exchange{}
	resp, err := j.client.CreateChatCompletion(withExchange(ctx, ex), req)
	fetched := time.Now().UTC()
	if err != nil {
		return nil, j.classify(ctx, ex, err)
	}
	verdicts, err := parseAnswer(resp, spec, s)
	if err != nil {
		return nil, err
	}
	return &Result{Verdicts: verdicts, Request: compact(ex.request), Response: compact(ex.response), FetchedAt: fetched}, nil
}

// classify maps a failed call to the judge's errors.
func (j *Judge) classify(ctx context.Context, ex *exchange, err error) error {
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrBadAnswer) {
		return fmt.Errorf("judge %s: %w", j.endpoint, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("judge %s: %w: %v", j.endpoint, ErrUnavailable, ctx.Err())
	}
	status := ex.status
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("judge %s: %w: credential rejected (HTTP %d)", j.endpoint, ErrUnavailable, status)
	case status == http.StatusNotFound:
		return fmt.Errorf("judge %s: %w: endpoint or model %q not found", j.endpoint, ErrUnavailable, j.opts.Model)
	case status == http.StatusTooManyRequests || status >= 500:
		return fmt.Errorf("judge %s: %w: HTTP %d", j.endpoint, ErrUnavailable, status)
	case status >= 200 && status < 300:
		// The endpoint answered, but not with a chat completion.
		return fmt.Errorf("judge %s: %w: %v", j.endpoint, ErrBadAnswer, err)
	case status != 0:
		return fmt.Errorf("judge %s: request rejected (HTTP %d): %w", j.endpoint, status, err)
	}
	return fmt.Errorf("judge %s: %w: %v", j.endpoint, ErrUnavailable, err)
}

// redactEndpoint drops credentials and the query from a base URL.
func redactEndpoint(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.IndexAny(s, "?@"); i >= 0 {
			return s[:i]
		}
		return s
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return strings.TrimRight(u.String(), "/")
}

package supplychain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// DefaultSocketEndpoint is Socket's public API; requests go to its /v0/purl.
const DefaultSocketEndpoint = "https://api.socket.dev"

// DefaultSocketTTL is how long a Socket answer is reused. It is short
// because Socket flags new malware within hours of publication, and a stale
// "no alert" must not outlive that.
const DefaultSocketTTL = 6 * time.Hour

// ErrCredentialRejected: the third party refused the configured credential
// (401, 403 without a rate limit). It wraps thirdparty.ErrUnavailable, so the signal is
// unavailable and never clean; the reason names the cause.
var ErrCredentialRejected = fmt.Errorf("%w: credential rejected", thirdparty.ErrUnavailable)

const (
	// socketBatch is the number of purls sent in one request: Socket
	// refuses batches over 1024 with a 400.
	socketBatch = 1000
	// socketMaxBody bounds one answer; alerts carry props, so a large tree
	// can answer several megabytes.
	socketMaxBody = 64 << 20
	// socketCacheNamespace is the cache namespace of Socket answers.
	socketCacheNamespace = "socket"
)

// socketMalwareTypes are the alert types that make SocketResult.Malware
// true. "malware" is Socket's confirmed known malware; "gptMalware" is its
// AI-detected potential malware. Both stay in Alerts with their type, so a
// rubric can weigh them apart. Typosquat (didYouMean, gptDidYouMean),
// protestware (troll), obfuscatedFile, gptSecurity and gptAnomaly are risks,
// not malware verdicts, and do not set it.
var socketMalwareTypes = map[string]bool{
	"malware":    true,
	"gptMalware": true,
}

// SocketOptions configures a Socket client.
type SocketOptions struct {
	// Endpoint is the API base URL; DefaultSocketEndpoint when empty. A
	// trailing /v0 is accepted.
	Endpoint string
	// APIKey is the Socket API key (the caller reads SOCKET_API_KEY or
	// SOCKET_SECURITY_API_KEY). Empty means the signal is unavailable.
	APIKey string
	// Cache stores answers for TTL (DefaultSocketTTL when zero); nil
	// disables caching. Refresh skips the lookup but still stores.
	Cache   thirdparty.Cache
	TTL     time.Duration
	Refresh bool
	// HTTPClient sends the requests; a client with a 60 s timeout when nil.
	HTTPClient *http.Client
	// Retry is the retry policy for 429, 5xx and network errors;
	// thirdparty.DefaultRetry when zero.
	Retry thirdparty.Retry
}

// Socket asks Socket's package API for alerts and scores of a package and
// its installed tree. It is safe for concurrent use.
type Socket struct {
	endpoint string
	key      string
	cache    thirdparty.Cache
	ttl      time.Duration
	refresh  bool
	hc       *http.Client
	retry    thirdparty.Retry
}

// NewSocket returns a Socket client for opts.
func NewSocket(opts SocketOptions) *Socket {
	s := &Socket{
		endpoint: strings.TrimRight(opts.Endpoint, "/"),
		key:      opts.APIKey,
		cache:    opts.Cache,
		ttl:      opts.TTL,
		refresh:  opts.Refresh,
		hc:       opts.HTTPClient,
		retry:    opts.Retry,
	}
	if s.endpoint == "" {
		s.endpoint = DefaultSocketEndpoint
	}
	if s.ttl <= 0 {
		s.ttl = DefaultSocketTTL
	}
	if s.hc == nil {
		s.hc = &http.Client{Timeout: 60 * time.Second}
	}
	if s.retry.Attempts == 0 {
		s.retry = thirdparty.DefaultRetry
	}
	return s
}

// Endpoint returns the API base URL the client asks.
func (s *Socket) Endpoint() string { return s.endpoint }

// Scan asks Socket about the scanned package and its installed tree. purls
// holds the package URL of the scanned package first, then those of the
// tree (repeats are dropped); target names the scanned package in errors.
// npm (pkg:npm/...) and PyPI (pkg:pypi/..., as package ecosystem writes
// them) are both asked about; a PyPI artifact is matched to its purl
// by the PEP 503 form of its name, so Socket's spelling of a project does
// not matter, and its alerts name the package in that form.
// When purls is empty and target is a package URL, it alone is asked
// about. Every alert on any package is kept, with its package and version;
// Scores are the scanned package's.
//
// Errors: thirdparty.ErrNoCredential when no key is configured (no request is made);
// ErrCredentialRejected on 401 and 403; thirdparty.ErrUnavailable when Socket does not
// answer after retries, answers something unreadable, or has no analysis of
// the scanned package itself. A dependency Socket does not know contributes
// no alerts.
func (s *Socket) Scan(ctx context.Context, target string, purls []string) (*evidence.SocketResult, Fetch, error) {
	fetch := Fetch{Endpoint: s.endpoint}
	if s.key == "" {
		return nil, fetch, fmt.Errorf("socket: %w (SOCKET_API_KEY)", thirdparty.ErrNoCredential)
	}
	fetch.Authenticated = true
	purls = socketPurls(purls)
	if len(purls) == 0 && strings.HasPrefix(target, "pkg:") {
		purls = []string{target}
	}
	if len(purls) == 0 {
		return nil, fetch, fmt.Errorf("socket %s: no package URL to ask about", target)
	}
	if target == "" {
		target = purls[0]
	}
	key := thirdparty.CacheKey(append([]string{"socket/1", s.endpoint}, purls...)...)

	if s.cache != nil && !s.refresh {
		var res evidence.SocketResult
		if auth, at, ok := loadAnswer(ctx, s.cache, socketCacheNamespace, key, &res); ok {
			fetch.Cached, fetch.FetchedAt, fetch.Authenticated = true, at, auth
			return &res, fetch, nil
		}
	}

	var arts []socketArtifact
	var unknown []socketPurlError
	for start := 0; start < len(purls); start += socketBatch {
		batch := purls[start:min(start+socketBatch, len(purls))]
		a, u, err := s.post(ctx, batch)
		if err != nil {
			return nil, fetch, err
		}
		arts = append(arts, a...)
		unknown = append(unknown, u...)
	}
	fetch.FetchedAt = time.Now().UTC()

	res, err := socketResult(target, purls[0], arts, unknown)
	if err != nil {
		return nil, fetch, err
	}
	if len(unknown) > 0 {
		slog.Debug("socket has no analysis of some packages of the tree", "target", target, "packages", len(unknown))
	}
	if s.cache != nil {
		storeAnswer(ctx, s.cache, socketCacheNamespace, key, true, res, s.ttl)
	}
	return res, fetch, nil
}

// socketPurls drops empty and repeated purls, keeping the order. A pypi
// purl repeats another when it names the same project (PEP 503 form) and
// version however it is spelled; other purls repeat only when identical.
func socketPurls(purls []string) []string {
	out := make([]string, 0, len(purls))
	seen := map[string]bool{}
	for _, p := range purls {
		k := p
		if strings.HasPrefix(strings.ToLower(p), "pkg:pypi/") {
			k = ecosystem.PurlKey(p)
		}
		if p == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

// socketArtifact is one line of the /v0/purl answer: an artifact, or a
// control frame (_type "purlError" or "summary") carrying value.
type socketArtifact struct {
	Kind  string          `json:"_type"`
	Value json.RawMessage `json:"value"`

	Type      string        `json:"type"`
	Namespace string        `json:"namespace"`
	Name      string        `json:"name"`
	Version   string        `json:"version"`
	InputPurl string        `json:"inputPurl"`
	Score     *socketScore  `json:"score"`
	Alerts    []socketAlert `json:"alerts"`
}

type socketScore struct {
	SupplyChain   *float64 `json:"supplyChain"`
	Quality       *float64 `json:"quality"`
	Maintenance   *float64 `json:"maintenance"`
	Vulnerability *float64 `json:"vulnerability"`
	License       *float64 `json:"license"`
	Overall       *float64 `json:"overall"`
}

type socketAlert struct {
	Key      string `json:"key"`
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Category string `json:"category"`
}

type socketPurlError struct {
	Error     string `json:"error"`
	InputPurl string `json:"inputPurl"`
}

// post sends one batch and parses the newline-delimited answer.
func (s *Socket) post(ctx context.Context, batch []string) ([]socketArtifact, []socketPurlError, error) {
	u := s.endpoint
	if !strings.HasSuffix(u, "/v0") {
		u += "/v0"
	}
	// alerts=true adds the alerts; purlErrors=true reports a purl Socket
	// does not know as a frame instead of leaving it out silently.
	u += "/purl?alerts=true&purlErrors=true"
	type component struct {
		Purl string `json:"purl"`
	}
	body := struct {
		Components []component `json:"components"`
	}{Components: make([]component, len(batch))}
	for i, p := range batch {
		body.Components[i].Purl = p
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, nil, fmt.Errorf("socket purl: %w", err)
	}
	resp, err := s.retry.Do(ctx, s.hc, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/x-ndjson, application/json")
		req.Header.Set("User-Agent", "verifymcp")
		// Socket takes the key as the basic-auth user with an empty password.
		req.SetBasicAuth(s.key, "")
		return req, nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("socket purl: %w", err)
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, nil, fmt.Errorf("socket purl: %w: %s%s", ErrCredentialRejected, resp.Status, socketErrorMessage(resp.Body))
	case resp.StatusCode == http.StatusBadRequest:
		// Our request was wrong (a purl Socket cannot parse, a batch too
		// large): our failure, not Socket's.
		return nil, nil, fmt.Errorf("socket purl: request refused: %s%s", resp.Status, socketErrorMessage(resp.Body))
	case resp.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("socket purl: %w: %s%s", thirdparty.ErrUnavailable, resp.Status, socketErrorMessage(resp.Body))
	}

	data, err := io.ReadAll(io.LimitReader(resp.Body, socketMaxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("socket purl: %w: reading answer: %v", thirdparty.ErrUnavailable, err)
	}
	if len(data) > socketMaxBody {
		return nil, nil, fmt.Errorf("socket purl: %w: answer larger than %d bytes", thirdparty.ErrUnavailable, socketMaxBody)
	}
	return parseSocketStream(data)
}

// parseSocketStream reads the newline-delimited JSON answer. Any line that
// is not an artifact or a known frame makes the whole answer unusable: a
// skipped line could be the one that carries a malware alert.
func parseSocketStream(data []byte) ([]socketArtifact, []socketPurlError, error) {
	var arts []socketArtifact
	var unknown []socketPurlError
	dec := json.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		var a socketArtifact
		err := dec.Decode(&a)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("socket purl: %w: malformed answer (item %d): %v", thirdparty.ErrUnavailable, n, err)
		}
		switch a.Kind {
		case "":
			if a.Name == "" || a.Type == "" {
				return nil, nil, fmt.Errorf("socket purl: %w: malformed answer (item %d): artifact without type or name", thirdparty.ErrUnavailable, n)
			}
			arts = append(arts, a)
		case "purlError":
			var pe socketPurlError
			if err := json.Unmarshal(a.Value, &pe); err != nil || pe.InputPurl == "" {
				return nil, nil, fmt.Errorf("socket purl: %w: malformed purlError frame (item %d)", thirdparty.ErrUnavailable, n)
			}
			unknown = append(unknown, pe)
		default:
			// The summary frame and frames added later carry nothing we use.
		}
	}
	return arts, unknown, nil
}

// socketResult turns the artifacts into evidence. The scanned package
// (targetPurl) must be among them: without it Socket has said nothing about
// it.
func socketResult(target, targetPurl string, arts []socketArtifact, unknown []socketPurlError) (*evidence.SocketResult, error) {
	tkey := ecosystem.PurlKey(targetPurl)
	for _, u := range unknown {
		if u.InputPurl == targetPurl || ecosystem.PurlKey(u.InputPurl) == tkey {
			return nil, fmt.Errorf("socket purl: %w: Socket has no analysis of %s: %s", thirdparty.ErrUnavailable, target, u.Error)
		}
	}
	res := &evidence.SocketResult{Alerts: []evidence.SocketAlert{}}
	found := false
	for _, a := range arts {
		isTarget := a.InputPurl == targetPurl || artifactKey(a) == tkey
		pkg := artifactName(a)
		if isTarget && !found {
			found = true
			res.Scores = a.Score.scores()
		}
		for _, al := range a.Alerts {
			if al.Type == "" {
				continue
			}
			res.Alerts = append(res.Alerts, evidence.SocketAlert{
				Type:     al.Type,
				Severity: al.Severity,
				Category: al.Category,
				Package:  pkg,
				Version:  a.Version,
				Target:   isTarget,
			})
			if socketMalwareTypes[al.Type] {
				res.Malware = true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("socket purl: %w: the answer has no artifact for %s", thirdparty.ErrUnavailable, target)
	}
	sort.SliceStable(res.Alerts, func(i, j int) bool {
		a, b := res.Alerts[i], res.Alerts[j]
		if a.Target != b.Target {
			return a.Target
		}
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Type < b.Type
	})
	return res, nil
}

// scores names Socket's scores as the evidence does (snake case).
func (sc *socketScore) scores() map[string]float64 {
	if sc == nil {
		return nil
	}
	m := map[string]float64{}
	for name, v := range map[string]*float64{
		"supply_chain":  sc.SupplyChain,
		"quality":       sc.Quality,
		"maintenance":   sc.Maintenance,
		"vulnerability": sc.Vulnerability,
		"license":       sc.License,
		"overall":       sc.Overall,
	} {
		if v != nil {
			m[name] = *v
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// artifactName is the package name as its ecosystem writes it
// (@scope/name for scoped npm packages; a PyPI project in its PEP 503
// form, as the OSV evidence names it).
func artifactName(a socketArtifact) string {
	if e, ok := ecosystem.Known(a.Type); ok {
		return e.PurlName(a.Namespace, a.Name)
	}
	if a.Namespace == "" {
		return a.Name
	}
	return a.Namespace + "/" + a.Name
}

// artifactKey and ecosystem.PurlKey give the same string for an artifact
// and the purl that names it: type/name@version, name unescaped; a pypi
// name in PEP 503 form and its version in lower case, so every spelling
// of a project and release gives one key.
func artifactKey(a socketArtifact) string {
	typ := strings.ToLower(a.Type)
	if e, ok := ecosystem.Known(typ); ok {
		return typ + "/" + e.Key(artifactName(a), a.Version)
	}
	return typ + "/" + artifactName(a) + "@" + a.Version
}

// socketErrorMessage returns ": message" from Socket's error body
// ({"error":{"message":...}}), or "" when there is none.
func socketErrorMessage(r io.Reader) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	data, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if json.Unmarshal(data, &body) != nil || body.Error.Message == "" {
		return ""
	}
	msg := body.Error.Message
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return ": " + msg
}

// storedAnswer is how a third-party answer is kept in the cache: the
// evidence, and whether a credential was sent to get it.
type storedAnswer struct {
	Authenticated bool            `json:"authenticated"`
	Result        json.RawMessage `json:"result"`
}

// loadAnswer reads a cached answer into v. A cache that fails or holds
// something unreadable is a miss: the third party is asked again.
func loadAnswer(ctx context.Context, c thirdparty.Cache, namespace, key string, v any) (authenticated bool, storedAt time.Time, ok bool) {
	data, at, ok, err := c.Get(ctx, namespace, key)
	if err != nil {
		slog.Warn("cache read failed; asking the third party", "namespace", namespace, "err", err)
		return false, time.Time{}, false
	}
	if !ok {
		return false, time.Time{}, false
	}
	var sa storedAnswer
	if err := json.Unmarshal(data, &sa); err != nil || len(sa.Result) == 0 || json.Unmarshal(sa.Result, v) != nil {
		slog.Warn("cached answer unreadable; asking the third party", "namespace", namespace)
		return false, time.Time{}, false
	}
	return sa.Authenticated, at.UTC(), true
}

// storeAnswer caches v. A failed write costs a later request, not this
// answer, so it is logged and otherwise ignored.
func storeAnswer(ctx context.Context, c thirdparty.Cache, namespace, key string, authenticated bool, v any, ttl time.Duration) {
	res, err := json.Marshal(v)
	if err == nil {
		var data []byte
		data, err = json.Marshal(storedAnswer{Authenticated: authenticated, Result: res})
		if err == nil {
			err = c.Put(ctx, namespace, key, data, ttl)
		}
	}
	if err != nil {
		slog.Warn("cache write failed", "namespace", namespace, "err", err)
	}
}

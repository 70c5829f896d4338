package supplytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Socket is a fake Socket API on loopback: POST /v0/purl with the key as
// the basic-auth user, a JSON body of components (npm and pypi purls), and
// a newline-delimited answer built from the recorded artifacts in
// supplychain/testdata/socket/*.ndjson. A purl it does not know gets a
// purlError frame when purlErrors=true is asked for. A missing or wrong key
// gets 401, another path 404, each with Socket's error body.
type Socket struct {
	s         *server
	key       string
	artifacts map[string]map[string]any // by "name@version", name with its scope
	bodies    map[int][]byte            // error bodies by status
	purlError string

	mu   sync.Mutex
	seen []SocketRequest
}

// SocketRequest is what the fake recorded of one request.
type SocketRequest struct {
	Method, Path string
	Query        url.Values
	// User is the basic-auth user (Socket's key); HasAuth says whether
	// basic auth was sent at all.
	User    string
	HasAuth bool
	// Purls are the components' purls in the order sent.
	Purls []string
}

// NewSocket starts a fake Socket API that accepts key. It panics when the
// recorded data cannot be read.
func NewSocket(key string) *Socket {
	rec := Recorded("socket")
	s := &Socket{
		key:       key,
		artifacts: map[string]map[string]any{},
		bodies: map[int][]byte{
			http.StatusUnauthorized:        mustRead(rec, "unauthorized.json"),
			http.StatusForbidden:           mustRead(rec, "forbidden.json"),
			http.StatusTooManyRequests:     mustRead(rec, "too-many-requests.json"),
			http.StatusInternalServerError: mustRead(rec, "server-error.json"),
		},
		purlError: string(mustRead(rec, "purl-error.json")),
	}
	files, err := fs.Glob(rec, "*.ndjson")
	if err != nil || len(files) == 0 {
		panic(fmt.Errorf("supplytest: no Socket answers (*.ndjson) in the recorded data: %w", err))
	}
	for _, f := range files {
		sc := bufio.NewScanner(bytes.NewReader(mustRead(rec, f)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var a map[string]any
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				panic(fmt.Errorf("supplytest: socket/%s: %w", f, err))
			}
			name, _ := a["name"].(string)
			version, _ := a["version"].(string)
			if ns, ok := a["namespace"].(string); ok && ns != "" {
				name = ns + "/" + name
			}
			if typ, _ := a["type"].(string); typ == "pypi" {
				name = "pypi/" + pep503(name)
			}
			s.artifacts[name+"@"+version] = a
		}
	}
	s.s = newServer(api{
		observe: s.observe,
		fail:    func(w http.ResponseWriter, _ *http.Request, f Fault) { s.fail(w, f.Status) },
		headers: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
		},
		serve: http.HandlerFunc(s.serve),
	})
	return s
}

// URL returns the API base URL (supplychain.SocketOptions.Endpoint).
func (s *Socket) URL() string { return s.s.url() }

// Close stops the fake; it then refuses connections. It is idempotent.
func (s *Socket) Close() { s.s.close() }

// Requests returns how many requests the fake received, faulted or not.
func (s *Socket) Requests() int { return s.s.count() }

// Seen returns the requests received so far, in order.
func (s *Socket) Seen() []SocketRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SocketRequest(nil), s.seen...)
}

// SetFault sets how the next requests misbehave; Fault{} ends it.
func (s *Socket) SetFault(f Fault) { s.s.setFault(f) }

// Intercept offers every request to i first; nil removes it.
func (s *Socket) Intercept(i Interceptor) { s.s.setIntercept(i) }

type socketBody struct {
	Components []struct {
		Purl string `json:"purl"`
	} `json:"components"`
}

func (s *Socket) observe(r *http.Request, body []byte) {
	var b socketBody
	_ = json.Unmarshal(body, &b)
	user, _, hasAuth := r.BasicAuth()
	req := SocketRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), User: user, HasAuth: hasAuth}
	for _, c := range b.Components {
		req.Purls = append(req.Purls, c.Purl)
	}
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
}

// fail writes Socket's error answer for status; a 429 asks to retry at
// once, so clients' retries stay fast.
func (s *Socket) fail(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "0")
	}
	w.WriteHeader(status)
	if b, ok := s.bodies[status]; ok {
		_, _ = w.Write(b)
		return
	}
	fmt.Fprintf(w, `{"error":{"message":%q,"details":null}}`, http.StatusText(status))
}

func (s *Socket) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v0/purl" {
		s.fail(w, http.StatusNotFound)
		return
	}
	if user, _, ok := r.BasicAuth(); !ok || user != s.key {
		s.fail(w, http.StatusUnauthorized)
		return
	}
	var body socketBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.fail(w, http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for _, c := range body.Components {
		a, ok := s.artifacts[socketPurlName(c.Purl)]
		if !ok {
			if q.Get("purlErrors") == "true" {
				fmt.Fprint(w, strings.Replace(s.purlError, `"PURL"`, fmt.Sprintf("%q", c.Purl), 1))
			}
			continue
		}
		out := make(map[string]any, len(a))
		for k, v := range a {
			out[k] = v
		}
		// Socket echoes the purl as it was sent.
		out["inputPurl"] = c.Purl
		if q.Get("alerts") != "true" {
			delete(out, "alerts")
		}
		_ = enc.Encode(out)
	}
}

// socketPurlName turns pkg:npm/%40scope/name@1.0.0 into
// @scope/name@1.0.0, and pkg:pypi/Some_Name@1.0 into pypi/some-name@1.0
// (Socket finds a PyPI project under any spelling of its name).
func socketPurlName(purl string) string {
	if rest, ok := strings.CutPrefix(purl, "pkg:pypi/"); ok {
		name, version, _ := strings.Cut(rest, "@")
		if v, err := url.PathUnescape(version); err == nil {
			version = v
		}
		return "pypi/" + pep503(name) + "@" + version
	}
	p := strings.TrimPrefix(purl, "pkg:npm/")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	return p
}

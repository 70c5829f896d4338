package supplytest_test

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// fake is what every fake offers.
type fake interface {
	URL() string
	Close()
	Requests() int
	SetFault(supplytest.Fault)
	Intercept(supplytest.Interceptor)
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url, user, body string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, "")
	}
	// No redirects: the fakes' 301s are part of what is checked.
	c := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

const fsQuery = `{"queries":[
	{"package":{"name":"@modelcontextprotocol/server-filesystem","ecosystem":"npm"},"version":"2025.3.28"},
	{"package":{"name":"@modelcontextprotocol/server-filesystem","ecosystem":"npm"},"version":"2025.7.1"},
	{"package":{"name":"@modelcontextprotocol/sdk","ecosystem":"npm"},"version":"1.24.0"}]}`

type batch struct {
	Results []struct {
		Vulns []struct {
			ID       string `json:"id"`
			Modified string `json:"modified"`
		} `json:"vulns"`
		NextPageToken string `json:"next_page_token"`
	} `json:"results"`
}

func ids(t *testing.T, body string) [][]string {
	t.Helper()
	var b batch
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("querybatch answer %q: %v", body, err)
	}
	var out [][]string
	for _, r := range b.Results {
		got := []string{}
		for _, v := range r.Vulns {
			got = append(got, v.ID)
		}
		out = append(out, got)
	}
	return out
}

func TestOSV(t *testing.T) {
	o := supplytest.NewOSV()
	t.Cleanup(o.Close)

	a := do(t, http.MethodPost, o.URL()+"/v1/querybatch", "", fsQuery)
	want := [][]string{{"GHSA-hc55-p739-j48w", "GHSA-q66q-fx2p-7w4m"}, {}, {"GHSA-8r9q-7v3j-jr4g"}}
	if got := ids(t, a.body); a.status != 200 || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("querybatch: %d %v, want 200 %v", a.status, got, want)
	}

	rec, err := os.ReadFile(filepath.Join("..", "testdata", "osv", "records", "MAL-2025-47604.json"))
	if err != nil {
		t.Fatal(err)
	}
	if a := do(t, http.MethodGet, o.URL()+"/v1/vulns/MAL-2025-47604", "", ""); a.status != 200 || a.body != string(rec) {
		t.Errorf("record: %d %.80q, want 200 and the recorded file", a.status, a.body)
	}
	if a := do(t, http.MethodGet, o.URL()+"/v1/vulns/GHSA-0000-0000-0000", "", ""); a.status != 404 || !strings.Contains(a.body, `"code":5`) {
		t.Errorf("unknown record: %d %s, want OSV's 404", a.status, a.body)
	}

	o.SetPageSize(1)
	a = do(t, http.MethodPost, o.URL()+"/v1/querybatch", "", fsQuery)
	var b batch
	json.Unmarshal([]byte(a.body), &b)
	if got := ids(t, a.body); len(b.Results) != 3 || !slices.Equal(got[0], []string{"GHSA-hc55-p739-j48w"}) || b.Results[0].NextPageToken != "1" {
		t.Errorf("paged: %s, want the first vulnerability and next_page_token 1", a.body)
	}
	if n := o.Batches(); n != 2 {
		t.Errorf("Batches = %d, want 2", n)
	}
	if n := o.Requests(); n != 4 {
		t.Errorf("Requests = %d, want 4", n)
	}
}

func TestWriteOfflineDB(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	if err := supplytest.WriteOfflineDB(dir, nil, mtime); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(supplytest.OfflineDBZip))
	st, err := os.Stat(p)
	if err != nil || !st.ModTime().Equal(mtime) {
		t.Fatalf("stat %s: %v, %v; want modified at %v", p, st, err, mtime)
	}
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	want := []string{"GHSA-8r9q-7v3j-jr4g.json", "GHSA-hc55-p739-j48w.json", "GHSA-q66q-fx2p-7w4m.json", "GHSA-w48q-cv73-mx4w.json", "MAL-2025-47604.json"}
	if !slices.Equal(names, want) {
		t.Errorf("zip holds %v, want %v", names, want)
	}

	// The PyPI records go to their own ecosystem's zip, as osv.dev
	// exports them.
	pz, err := zip.OpenReader(filepath.Join(dir, filepath.FromSlash(supplytest.OfflineDBZipFor("PyPI"))))
	if err != nil {
		t.Fatal(err)
	}
	defer pz.Close()
	names = nil
	for _, f := range pz.File {
		names = append(names, f.Name)
	}
	want = []string{"GHSA-j8r2-6x86-q33q.json", "GHSA-mh33-7rrq-662w.json", "GHSA-x84v-xcm2-53pg.json", "PYSEC-2023-74.json"}
	if !slices.Equal(names, want) {
		t.Errorf("PyPI zip holds %v, want %v", names, want)
	}
}

func TestSocket(t *testing.T) {
	const key = "sktsec_test"
	s := supplytest.NewSocket(key)
	t.Cleanup(s.Close)
	url := s.URL() + "/v0/purl?alerts=true&purlErrors=true"
	body := `{"components":[{"purl":"pkg:npm/%40example-mcp/notes-server@0.4.0"},{"purl":"pkg:npm/unknown@1.0.0"}]}`

	a := do(t, http.MethodPost, url, key, body)
	lines := strings.Split(strings.TrimSpace(a.body), "\n")
	if a.status != 200 || a.header.Get("Content-Type") != "application/x-ndjson" || len(lines) != 2 {
		t.Fatalf("answer %d %s:\n%s\nwant 200, NDJSON, two lines", a.status, a.header.Get("Content-Type"), a.body)
	}
	var art struct {
		Namespace, Name, InputPurl string
		Alerts                     []any
	}
	if err := json.Unmarshal([]byte(lines[0]), &art); err != nil || art.Namespace != "@example-mcp" || art.Name != "notes-server" || art.InputPurl != "pkg:npm/%40example-mcp/notes-server@0.4.0" || len(art.Alerts) == 0 {
		t.Errorf("artifact %s (%v), want notes-server with its alerts and the purl echoed", lines[0], err)
	}
	if want := `{"_type":"purlError","value":{"error":"Package not found","inputPurl":"pkg:npm/unknown@1.0.0"}}`; lines[1] != want {
		t.Errorf("unknown purl: %s, want %s", lines[1], want)
	}

	if a := do(t, http.MethodPost, url, "sktsec_wrong", body); a.status != 401 || !strings.Contains(a.body, `"error"`) {
		t.Errorf("wrong key: %d %s, want Socket's 401", a.status, a.body)
	}
	if a := do(t, http.MethodPost, url, "", body); a.status != 401 {
		t.Errorf("no key: %d, want 401", a.status)
	}
	seen := s.Seen()
	if len(seen) != 3 || s.Requests() != 3 {
		t.Fatalf("%d requests seen, %d counted, want 3", len(seen), s.Requests())
	}
	if r := seen[0]; r.Method != "POST" || r.Path != "/v0/purl" || r.Query.Get("alerts") != "true" || r.User != key || !r.HasAuth || len(r.Purls) != 2 {
		t.Errorf("first request recorded as %+v", r)
	}
	if r := seen[2]; r.HasAuth || r.User != "" {
		t.Errorf("request without auth recorded as %+v", r)
	}
}

func TestGitHub(t *testing.T) {
	for _, prefix := range []string{"/", "/api/v3/"} {
		t.Run(strings.Trim(prefix, "/")+"_prefix", func(t *testing.T) {
			g := supplytest.NewGitHub(prefix)
			t.Cleanup(g.Close)
			if !strings.HasSuffix(g.URL(), prefix) {
				t.Errorf("URL %s does not end with %s", g.URL(), prefix)
			}
			a := do(t, http.MethodGet, g.URL()+"repos/ModelContextProtocol/Servers", "", "")
			var repo struct {
				FullName string `json:"full_name"`
			}
			json.Unmarshal([]byte(a.body), &repo)
			if a.status != 200 || repo.FullName != "modelcontextprotocol/servers" || a.header.Get("X-RateLimit-Remaining") == "" {
				t.Errorf("repository: %d %q, want 200 with the recorded body and GitHub's headers", a.status, repo.FullName)
			}
			a = do(t, http.MethodGet, g.URL()+"repos/example-mcp/notes-server", "", "")
			if loc := a.header.Get("Location"); a.status != 301 || !strings.HasSuffix(loc, prefix+"repositories/812345678") {
				t.Errorf("renamed: %d to %q, want 301 to %srepositories/812345678", a.status, loc, prefix)
			}
			a = do(t, http.MethodGet, g.URL()+"repositories/812345678", "", "")
			json.Unmarshal([]byte(a.body), &repo)
			if a.status != 200 || repo.FullName != "example-mcp/mcp-notes" {
				t.Errorf("by id: %d %q, want the renamed repository", a.status, repo.FullName)
			}
			if a := do(t, http.MethodGet, g.URL()+"repos/modelcontextprotocol/nope", "", ""); a.status != 404 || !strings.Contains(a.body, "Not Found") {
				t.Errorf("missing: %d %s, want GitHub's 404", a.status, a.body)
			}
			if prefix != "/" {
				if a := do(t, http.MethodGet, strings.TrimSuffix(g.URL(), prefix)+"/repos/modelcontextprotocol/servers", "", ""); a.status != 404 {
					t.Errorf("outside the prefix: %d, want 404", a.status)
				}
			}
		})
	}

	t.Run("rate_limits", func(t *testing.T) {
		g := supplytest.NewGitHub("/")
		t.Cleanup(g.Close)
		u := g.URL() + "repos/modelcontextprotocol/servers"
		reset := time.Now().Add(2 * time.Hour)
		g.SetFault(supplytest.GitHubRateLimit(1, reset))
		a := do(t, http.MethodGet, u, "", "")
		if a.status != 403 || a.header.Get("X-RateLimit-Remaining") != "0" || a.header.Get("X-RateLimit-Reset") != strconv.FormatInt(reset.Unix(), 10) || !strings.Contains(a.body, "API rate limit exceeded") {
			t.Errorf("primary: %d %v %s", a.status, a.header, a.body)
		}
		if a := do(t, http.MethodGet, u, "", ""); a.status != 200 {
			t.Errorf("after the limit: %d, want 200", a.status)
		}
		g.SetFault(supplytest.GitHubSecondaryRateLimit(0, 30*time.Second))
		a = do(t, http.MethodGet, u, "", "")
		if a.status != 403 || a.header.Get("Retry-After") != "30" || !strings.Contains(a.body, "secondary rate limit") {
			t.Errorf("secondary: %d %v %s", a.status, a.header, a.body)
		}
	})
}

// TestFaults checks the shared machinery through each fake: a fault for
// the next requests then normal answers, a fault limited to a path, an
// interceptor, and a closed fake refusing connections.
func TestFaults(t *testing.T) {
	const key = "k"
	fakes := []struct {
		name string
		new  func() fake
		// ok is a request the fake answers with 200.
		method, path, user, body string
	}{
		{"osv", func() fake { return supplytest.NewOSV() }, http.MethodGet, "/v1/vulns/MAL-2025-47604", "", ""},
		{"socket", func() fake { return supplytest.NewSocket(key) }, http.MethodPost, "/v0/purl", key, `{"components":[{"purl":"pkg:npm/zod@4.6.7"}]}`},
		{"github", func() fake { return supplytest.NewGitHub("/") }, http.MethodGet, "/repos/modelcontextprotocol/servers", "", ""},
	}
	for _, fk := range fakes {
		t.Run(fk.name, func(t *testing.T) {
			f := fk.new()
			t.Cleanup(f.Close)
			base := strings.TrimSuffix(f.URL(), "/")
			get := func() answer { return do(t, fk.method, base+fk.path, fk.user, fk.body) }

			f.SetFault(supplytest.RateLimited(2))
			var got []int
			for range 3 {
				got = append(got, get().status)
			}
			if !slices.Equal(got, []int{429, 429, 200}) {
				t.Errorf("RateLimited(2): statuses %v, want 429 429 200", got)
			}

			f.SetFault(supplytest.Fault{Status: 500, Path: "/elsewhere"})
			if a := get(); a.status != 200 {
				t.Errorf("fault on another path: %d, want 200", a.status)
			}
			f.SetFault(supplytest.Malformed())
			if a := get(); a.status != 200 || json.Valid([]byte(strings.SplitN(a.body, "\n", 2)[0])) {
				t.Errorf("Malformed: %d %q, want 200 and a cut body", a.status, a.body)
			}
			f.SetFault(supplytest.Fault{})

			f.Intercept(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n != 5 {
					return false
				}
				w.WriteHeader(http.StatusTeapot)
				return true
			})
			if a, b := get(), get(); a.status != http.StatusTeapot || b.status != 200 {
				t.Errorf("interceptor of request 5: %d then %d, want 418 then 200", a.status, b.status)
			}
			if n := f.Requests(); n != 7 {
				t.Errorf("Requests = %d, want 7", n)
			}

			f.Close()
			f.Close() // idempotent
			req, _ := http.NewRequestWithContext(t.Context(), fk.method, base+fk.path, strings.NewReader(fk.body))
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("closed fake answered %d", resp.StatusCode)
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("closed fake: %v, want connection refused", err)
			}
		})
	}
}

// A slow fake lets a client give up, and Close ends the wait at once.
func TestSlow(t *testing.T) {
	o := supplytest.NewOSV()
	o.SetFault(supplytest.Slow(time.Minute))
	c := &http.Client{Timeout: 50 * time.Millisecond}
	if resp, err := c.Get(o.URL() + "/v1/vulns/MAL-2025-47604"); err == nil {
		resp.Body.Close()
		t.Fatalf("slow fake answered %d within 50ms", resp.StatusCode)
	}
	start := time.Now()
	o.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v with an answer held back", d)
	}
}

package supplychain_test

import (
	"bufio"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain"
)

const (
	provWheel = "example_mcp-1.0.0-py3-none-any.whl"
	provSdist = "example_mcp-1.0.0.tar.gz"
)

// recordedHTTP reads a recorded answer under testdata/pypi/recorded: a
// "# GET url" line, the status line, the headers; the bodies were empty.
func recordedHTTP(t *testing.T, name string) (int, http.Header) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "pypi", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	status, h := 0, http.Header{}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "HTTP/"):
			if status, err = strconv.Atoi(strings.Fields(line)[1]); err != nil {
				t.Fatal(err)
			}
		default:
			k, v, _ := strings.Cut(line, ":")
			h.Add(k, strings.TrimSpace(v))
		}
	}
	if status == 0 {
		t.Fatalf("%s: no status line", name)
	}
	return status, h
}

func writtenBody(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pypi", "written", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// integrityIndex serves /integrity/<project>/<version>/<file>/provenance
// from answers keyed by file name, and counts requests.
type integrityAnswer struct {
	status int
	header http.Header
	body   []byte
}

func integrityIndex(t *testing.T, answers map[string]integrityAnswer) (*supplychain.PyPI, *atomic.Int32, *[]string) {
	t.Helper()
	var n atomic.Int32
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		mu.Unlock()
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/integrity/"), "/")
		if len(parts) != 4 || parts[3] != "provenance" {
			http.NotFound(w, r)
			return
		}
		a, ok := answers[parts[2]]
		if !ok {
			a = answers["*"]
		}
		for k, vs := range a.header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if a.body != nil {
			w.Header().Set("Content-Type", "application/vnd.pypi.integrity.v1+json")
			w.Header().Del("Content-Length")
		}
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
	}))
	t.Cleanup(srv.Close)
	p := supplychain.NewPyPI(&http.Client{Timeout: 2 * time.Second}, srv.URL).WithRetry(thirdPartyRetry)
	return p, &n, &paths
}

func TestPyPIProvenance(t *testing.T) {
	ctx := t.Context()
	attested := integrityAnswer{status: 200, body: writtenBody(t, "provenance.attested.json")}
	none := integrityAnswer{status: 404, body: writtenBody(t, "provenance.none.json")}

	t.Run("attested_file_names_its_publisher", func(t *testing.T) {
		p, _, paths := integrityIndex(t, map[string]integrityAnswer{provWheel: attested})
		got, err := p.Provenance(ctx, "Example_MCP", "1.0.0", provWheel)
		if err != nil {
			t.Fatal(err)
		}
		want := &supplychain.PyPIProvenance{
			Project: "example-mcp", Version: "1.0.0", Filename: provWheel, URL: got.URL,
			State:          supplychain.PyPIProvenanceAttested,
			Publishers:     []supplychain.PyPIPublisher{{Kind: "GitHub", Repository: "example-org/example-mcp", Workflow: "release.yml", Environment: "pypi"}},
			Attestations:   1,
			PredicateTypes: []string{"https://docs.pypi.org/attestations/publish/v1"},
			Subjects:       map[string]string{provWheel: "9f2c4e1b7a0d3c5e8f6a2b4d1c3e5f7a9b0c2d4e6f8a1b3c5d7e9f0a2b4c6d8e"},
		}
		if d := resultDiff(want, got); d != "" {
			t.Errorf("provenance (-want +got):%s", d)
		}
		if (*paths)[0] != "/integrity/example-mcp/1.0.0/"+provWheel+"/provenance" {
			t.Errorf("asked %s, want the PEP 503 name in the Integrity API path", (*paths)[0])
		}
	})

	t.Run("pypi_404_message_is_none", func(t *testing.T) {
		p, _, _ := integrityIndex(t, map[string]integrityAnswer{"*": none})
		got, err := p.Provenance(ctx, "example-mcp", "1.0.0", provWheel)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != supplychain.PyPIProvenanceNone || !strings.Contains(got.Reason, "No provenance available") {
			t.Errorf("state %q reason %q, want none with PyPI's message", got.State, got.Reason)
		}
	})

	t.Run("recorded_empty_404_is_unserved_not_none", func(t *testing.T) {
		// What pypi.org answered this machine (through its intermediary)
		// for a wheel the index lists, and for a 2018 wheel.
		for _, rec := range []string{"integrity.mcp-server-time-2026.10.19.whl.http", "integrity.requests-2.19.0.whl.http"} {
			status, h := recordedHTTP(t, rec)
			p, _, _ := integrityIndex(t, map[string]integrityAnswer{"*": {status: status, header: h}})
			got, err := p.Provenance(ctx, "mcp-server-time", "2026.10.19", "mcp_server_time-2026.10.19-py3-none-any.whl")
			if err != nil {
				t.Fatalf("%s: %v", rec, err)
			}
			if got.State != supplychain.PyPIProvenanceUnserved || got.Reason == "" {
				t.Errorf("%s: state %q, want unserved with a reason", rec, got.State)
			}
		}
	})

	t.Run("failures_are_unavailable_never_none", func(t *testing.T) {
		for name, a := range map[string]integrityAnswer{
			"disabled_403":       {status: 403, body: writtenBody(t, "provenance.disabled.json")},
			"server_error":       {status: 503},
			"rate_limited":       {status: 429, header: http.Header{"Retry-After": {"0"}}},
			"html_200":           {status: 200, body: []byte("<!doctype html><title>Mirror</title>")},
			"object_without_any": {status: 200, body: []byte(`{"version": 1, "attestation_bundles": []}`)},
			"unknown_version":    {status: 200, body: []byte(`{"version": 2, "attestation_bundles": [{"publisher": {"kind": "GitHub"}, "attestations": [{}]}]}`)},
		} {
			t.Run(name, func(t *testing.T) {
				p, _, _ := integrityIndex(t, map[string]integrityAnswer{"*": a})
				got, err := p.Provenance(ctx, "example-mcp", "1.0.0", provWheel)
				if got != nil || !errors.Is(err, thirdparty.ErrUnavailable) || !errors.Is(err, supplychain.ErrRegistryUnreachable) {
					t.Fatalf("Provenance = %+v, %v; want ErrUnavailable", got, err)
				}
			})
		}
	})

	t.Run("bad_input_makes_no_request", func(t *testing.T) {
		p, n, _ := integrityIndex(t, map[string]integrityAnswer{"*": attested})
		for _, in := range [][3]string{{"bad name!", "1.0", provWheel}, {"example-mcp", "1.0", "../x.whl"}, {"example-mcp", "", provWheel}} {
			if _, err := p.Provenance(ctx, in[0], in[1], in[2]); !errors.Is(err, supplychain.ErrBadName) {
				t.Errorf("Provenance%v: %v, want ErrBadName", in, err)
			}
		}
		if n.Load() != 0 {
			t.Errorf("%d requests, want none", n.Load())
		}
	})

	t.Run("release_and_metadata", func(t *testing.T) {
		rel := &supplychain.PyPIRelease{Name: "example-mcp", Version: "1.0.0", Files: []supplychain.PyPIFile{{Filename: provWheel}, {Filename: provSdist}}}
		tests := []struct {
			name         string
			answers      map[string]integrityAnswer
			wantProv     bool
			wantUnserved []string
		}{
			{"one_file_attested", map[string]integrityAnswer{provWheel: attested, provSdist: none}, true, nil},
			{"every_file_none_is_observed", map[string]integrityAnswer{"*": none}, false, nil},
			{"unserved_file_keeps_it_unserved", map[string]integrityAnswer{provWheel: none, "*": {status: 404}}, false, []string{"provenance"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				p, _, _ := integrityIndex(t, tc.answers)
				provs, err := p.ReleaseProvenance(ctx, rel)
				if err != nil {
					t.Fatal(err)
				}
				meta := &evidence.RegistryMeta{Ecosystem: "pypi", Unserved: []string{"provenance"}}
				observed := supplychain.ApplyPyPIProvenance(meta, provs)
				if meta.Provenance != tc.wantProv || observed != (tc.wantUnserved == nil) {
					t.Errorf("Provenance %v observed %v, want %v %v", meta.Provenance, observed, tc.wantProv, tc.wantUnserved == nil)
				}
				if d := resultDiff(tc.wantUnserved, meta.Unserved); d != "" {
					t.Errorf("unserved (-want +got):%s", d)
				}
				pubs := supplychain.PyPIPublishers(provs)
				if tc.wantProv != (len(pubs) == 1 && pubs[0].Repository == "example-org/example-mcp") {
					t.Errorf("publishers %+v", pubs)
				}
			})
		}
		t.Run("no_answers_stay_unserved", func(t *testing.T) {
			meta := &evidence.RegistryMeta{}
			if supplychain.ApplyPyPIProvenance(meta, nil) || meta.Provenance || len(meta.Unserved) != 1 {
				t.Errorf("meta %+v, want provenance unserved", meta)
			}
		})
		t.Run("an_error_ends_the_release", func(t *testing.T) {
			p, _, _ := integrityIndex(t, map[string]integrityAnswer{provWheel: attested, "*": {status: 500}})
			if provs, err := p.ReleaseProvenance(ctx, rel); provs != nil || !errors.Is(err, thirdparty.ErrUnavailable) {
				t.Errorf("ReleaseProvenance = %v, %v; want no partial answer and ErrUnavailable", provs, err)
			}
		})
	})
}

package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/supplychain"
)

// npmFake resolves every name to one version whose package.json declares
// mcpName.
type npmFake struct {
	mcpName string
	asked   []string
}

func (f *npmFake) Resolve(_ context.Context, name, spec string) (*supplychain.Version, error) {
	f.asked = append(f.asked, name+"@"+spec)
	manifest, _ := json.Marshal(map[string]string{"name": name, "version": spec, "mcpName": f.mcpName})
	return &supplychain.Version{Name: name, Version: spec, Requested: spec, Integrity: "sha512-x", Manifest: manifest}, nil
}

func (f *npmFake) Registry() string { return "https://registry.npmjs.org/" }

// registryFake serves recorded server.json files of the official MCP
// registry's API (supplychain/testdata/mcpregistry) at /v0.1.
func registryFake(t *testing.T, records map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name, file := range records {
			if strings.HasPrefix(r.URL.EscapedPath(), "/v0.1/servers/"+strings.ReplaceAll(name, "/", "%2F")+"/versions/") {
				data, err := os.ReadFile("../supplychain/testdata/mcpregistry/" + file)
				if err != nil {
					t.Error(err)
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"server":` + string(data) + `,"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true,"publishedAt":"2025-10-20T00:00:00Z"}}}`))
				return
			}
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"title":"Not Found","status":404,"detail":"Server not found"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRegistryNameTargets(t *testing.T) {
	for _, tc := range []struct{ in, name, spec, err string }{
		{in: "io.github.upstash/context7", name: "io.github.upstash/context7", spec: "latest"},
		{in: "registry:io.github.upstash/context7@1.0.0", name: "io.github.upstash/context7", spec: "1.0.0"},
		{in: "registry:not-a-name", err: "invalid target"},
		{in: "@scope/pkg@1.0.0", name: ""},
	} {
		tg, err := ParseTarget(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tg.MCPRegistryName != tc.name || (tc.name != "" && tg.Spec != tc.spec):
			t.Errorf("%s: registry name %q spec %q", tc.in, tg.MCPRegistryName, tg.Spec)
		}
	}

	srv := registryFake(t, map[string]string{
		"io.github.upstash/context7":        "context7-1.0.0.server.json",
		"ac.tandem/docs-mcp":                "tandem-docs-mcp-0.3.2.server.json",
		"io.github.domdomegg/time-mcp-pypi": "time-mcp-pypi-1.0.6.server.json",
	})
	npm := &npmFake{mcpName: "io.github.upstash/context7"}
	p := testPipeline(Config{Resolver: npm, MCPRegistry: supplychain.NewMCPRegistry(srv.Client(), srv.URL)})
	tg, _ := ParseTarget("io.github.upstash/context7")
	rt, err := p.Resolve(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	e := rt.mcpRegistry
	if rt.Name != "@upstash/context7-mcp" || rt.Version != "1.0.26" || e == nil || e.Name != "io.github.upstash/context7" || e.Version != "1.0.0" ||
		e.Package != "npm:@upstash/context7-mcp@1.0.26" || !e.MCPNameMatches || e.Status != "active" {
		t.Errorf("resolved %s@%s through %+v", rt.Name, rt.Version, e)
	}
	if len(rt.RegistryEnv) != 1 || rt.RegistryEnv[0] != "CONTEXT7_API_KEY" {
		t.Errorf("environment names %v", rt.RegistryEnv)
	}
	// A package whose package.json claims another name: recorded, not hidden.
	npm.mcpName = "io.github.someone/else"
	rt, err = p.Resolve(context.Background(), tg)
	if err != nil || rt.mcpRegistry.MCPNameMatches || rt.mcpRegistry.MCPName != "io.github.someone/else" {
		t.Errorf("mismatched mcpName: %v %+v", err, rt.mcpRegistry)
	}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"ac.tandem/docs-mcp", supplychain.ErrRemoteOnly},
		{"io.github.nobody/nothing", supplychain.ErrServerNotFound},
	} {
		tg, _ := ParseTarget(tc.in)
		if _, err := p.Resolve(context.Background(), tg); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.in, err, tc.want)
		}
	}
	if _, err := testPipeline(Config{Resolver: npm}).Resolve(context.Background(), tg); !errors.Is(err, ErrUnsupported) {
		t.Errorf("no registry configured: %v", err)
	}
}

// TestRegistryNamePyPI: an entry whose package is a PyPI package run over
// stdio resolves to that exact release on the configured index, and its
// description's mcp-name marker claims the entry's name.
func TestRegistryNamePyPI(t *testing.T) {
	srv := registryFake(t, map[string]string{"io.github.domdomegg/time-mcp-pypi": "time-mcp-pypi-1.0.6.server.json"})
	project, err := os.ReadFile("testdata/pypi/time-mcp-pypi.project.json")
	if err != nil {
		t.Fatal(err)
	}
	index := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pypi/time-mcp-pypi/json":
			_, _ = w.Write(project)
		case "/pypi/time-mcp-pypi/1.0.6/json":
			// The release document, derived from the project document
			// (see testdata/pypi/README.md).
			var doc map[string]any
			if err := json.Unmarshal(project, &doc); err != nil {
				t.Error(err)
			}
			doc["info"].(map[string]any)["version"] = "1.0.6"
			doc["urls"] = doc["releases"].(map[string]any)["1.0.6"]
			delete(doc, "releases")
			_ = json.NewEncoder(w).Encode(doc)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(index.Close)
	p := testPipeline(Config{Resolver: &npmFake{}, PyPI: supplychain.NewPyPI(index.Client(), index.URL), MCPRegistry: supplychain.NewMCPRegistry(srv.Client(), srv.URL)})
	tg, err := ParseTarget("io.github.domdomegg/time-mcp-pypi")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := p.Resolve(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	e := rt.mcpRegistry
	if rt.Target.Ecosystem != "pypi" || rt.Name != "time-mcp-pypi" || rt.Version != "1.0.6" || len(rt.FileIntegrities()) != 2 || e == nil ||
		e.Package != "pypi:time-mcp-pypi@1.0.6" || e.MCPName != "io.github.domdomegg/time-mcp-pypi" || !e.MCPNameMatches {
		t.Errorf("resolved %s:%s@%s (%d files) through %+v", rt.Target.Ecosystem, rt.Name, rt.Version, len(rt.FileIntegrities()), e)
	}
	if ecosystemOf(rt) != "pypi" {
		t.Errorf("ecosystem %s", ecosystemOf(rt))
	}
}

package supplytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// MCPEntry is one version of a server the fake MCP registry lists: a
// recorded server.json under supplychain/testdata/mcpregistry and the
// registry's official metadata for it.
type MCPEntry struct {
	// File is the server.json record, for example
	// "azure-mcp-2.0.5.server.json"; the server's name and version are
	// read from it.
	File string
	// Status is active (when empty), deprecated or deleted.
	Status string
	// Latest marks the version "latest" answers.
	Latest bool
	// PublishedAt is the registry's publish time (RFC 3339); a fixed
	// date when empty.
	PublishedAt string
}

// MCPRegistry is a fake MCP registry API on loopback: GET
// /v0.1/servers/{serverName}/versions (every version, newest first as
// given, deleted ones only with include_deleted=true), GET
// /v0.1/servers/{serverName}/versions/{version} ("latest" included), the
// same under /v0, huma's problem+json 404 for an unknown server and the Go
// ServeMux's plain-text 404 for a path it does not route, as the official
// registry (modelcontextprotocol/registry) answers.
type MCPRegistry struct {
	s       *server
	entries map[string][]mcpRecord // server name -> versions, newest first
	noList  bool

	mu   sync.Mutex
	seen []string
}

type mcpRecord struct {
	entry   MCPEntry
	version string
	raw     json.RawMessage
}

// NewMCPRegistry starts a fake MCP registry serving entries, each read
// from the recorded data (it panics when one cannot be read).
func NewMCPRegistry(entries ...MCPEntry) *MCPRegistry {
	rec := Recorded("mcpregistry")
	m := &MCPRegistry{entries: map[string][]mcpRecord{}}
	for _, e := range entries {
		raw := mustRead(rec, e.File)
		var sj struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if err := json.Unmarshal(raw, &sj); err != nil || sj.Name == "" {
			panic(fmt.Errorf("supplytest: mcpregistry/%s is not a server.json: %v", e.File, err))
		}
		m.entries[sj.Name] = append(m.entries[sj.Name], mcpRecord{entry: e, version: sj.Version, raw: raw})
	}
	m.s = newServer(api{
		observe: func(r *http.Request, _ []byte) {
			m.mu.Lock()
			m.seen = append(m.seen, r.URL.RequestURI())
			m.mu.Unlock()
		},
		fail: func(w http.ResponseWriter, _ *http.Request, f Fault) {
			mcpProblem(w, f.Status, "upstream unavailable")
		},
		headers: func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Content-Type", "application/json") },
		serve:   http.HandlerFunc(m.serve),
	})
	return m
}

// Recorded MCP registry entries, as the official registry would list them.
var (
	// MCPAzure is com.microsoft/azure: 2.0.5 (latest) and 2.0.4, each
	// listing the nuget package Azure.Mcp and the npm package @azure/mcp.
	MCPAzure = []MCPEntry{
		{File: "azure-mcp-2.0.5.server.json", Latest: true, PublishedAt: "2026-11-18T21:04:12.512331Z"},
		{File: "azure-mcp-2.0.4.server.json", PublishedAt: "2026-11-04T19:30:55.108742Z"},
	}
	// MCPClickHouse is io.github.ClickHouse/mcp-clickhouse 0.4.0, listing
	// the PyPI package mcp-clickhouse and an oci image.
	MCPClickHouse = []MCPEntry{{File: "mcp-clickhouse-0.4.0.server.json", Latest: true, PublishedAt: "2026-07-02T09:12:40.201544Z"}}
)

// WithoutList makes the fake serve no versions list, as registries before
// it (and partial mirrors) do: only single versions answer.
func (m *MCPRegistry) WithoutList() *MCPRegistry {
	m.noList = true
	return m
}

// URL is the registry's base URL (http://127.0.0.1:port).
func (m *MCPRegistry) URL() string { return m.s.url() }

// Close stops the fake.
func (m *MCPRegistry) Close() { m.s.close() }

// Requests counts the requests the fake received.
func (m *MCPRegistry) Requests() int { return m.s.count() }

// Seen lists the request URIs received, in order.
func (m *MCPRegistry) Seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// SetFault makes the fake misbehave (see Fault).
func (m *MCPRegistry) SetFault(f Fault) { m.s.setFault(f) }

func mcpProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"title":%q,"status":%d,"detail":%q}`, http.StatusText(status), status, detail)
}

func (m *MCPRegistry) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	var rest string
	switch {
	case strings.HasPrefix(p, "/v0.1/servers/"):
		rest = strings.TrimPrefix(p, "/v0.1/servers/")
	case strings.HasPrefix(p, "/v0/servers/"):
		rest = strings.TrimPrefix(p, "/v0/servers/")
	}
	parts := strings.Split(rest, "/")
	if r.Method != http.MethodGet || rest == "" || len(parts) < 2 || len(parts) > 3 || parts[1] != "versions" || (len(parts) == 2 && m.noList) {
		http.NotFound(w, r)
		return
	}
	name, err := url.PathUnescape(parts[0])
	if err != nil {
		mcpProblem(w, http.StatusBadRequest, "Invalid server name encoding")
		return
	}
	deleted := r.URL.Query().Get("include_deleted") == "true"
	var list []mcpRecord
	for _, rec := range m.entries[name] {
		if rec.entry.Status == "deleted" && !deleted {
			continue
		}
		list = append(list, rec)
	}
	if len(parts) == 2 {
		if len(list) == 0 {
			mcpProblem(w, http.StatusNotFound, "Server not found")
			return
		}
		servers := make([]json.RawMessage, len(list))
		for i, rec := range list {
			servers[i] = rec.response()
		}
		body, _ := json.Marshal(map[string]any{"servers": servers, "metadata": map[string]any{"count": len(servers)}})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
		return
	}
	version, err := url.PathUnescape(parts[2])
	if err != nil {
		mcpProblem(w, http.StatusBadRequest, "Invalid version encoding")
		return
	}
	for _, rec := range list {
		if (version == "latest" && rec.entry.Latest) || version == rec.version {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(rec.response())
			return
		}
	}
	mcpProblem(w, http.StatusNotFound, "Server not found")
}

// response is the record as a ServerResponse, with the registry's
// official metadata.
func (rec mcpRecord) response() json.RawMessage {
	status := rec.entry.Status
	if status == "" {
		status = "active"
	}
	at := rec.entry.PublishedAt
	if at == "" {
		at = "2026-10-01T12:00:00.000000Z"
	}
	body, _ := json.Marshal(map[string]any{
		"server": rec.raw,
		"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{
			"status": status, "publishedAt": at, "updatedAt": at, "isLatest": rec.entry.Latest,
		}},
	})
	return body
}

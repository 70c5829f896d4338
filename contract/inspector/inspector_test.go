package inspector

import "testing"

// TestParse: a recording's pages are read whatever else they carry
// (mcp-grafana's tools/list page has ttlMs and cacheScope beside tools),
// and a server whose tools/list did not answer is not listed.
func TestParse(t *testing.T) {
	rec := `{"id":"x","target":"pypi:x==1.0","ecosystem":"pypi","wire_results":{
		"initialize":{"protocolVersion":"2025-11-25","serverInfo":{"name":"x","version":"1.0"},"instructions":"Use it."},
		"tools/list":[{"ttlMs":0,"cacheScope":"private","tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c"},
			{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}],
		"prompts/list":{"errors":["no prompts capability"]},
		"resources/list":null}}`
	r, err := Parse([]byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Listed || r.Ecosystem != "pypi" || r.ProtocolVersion != "2025-11-25" || len(r.Contract.Tools) != 2 ||
		r.Contract.Tools[1].Name != "b" || r.Contract.Instructions != "Use it." {
		t.Errorf("recording %+v, contract %+v", r, r.Contract)
	}
	r, err = Parse([]byte(`{"id":"y","target":"npm:y@1.0.0","wire_results":{"initialize":null,"tools/list":null}}`))
	if err != nil || r.Listed || r.Ecosystem != "npm" {
		t.Errorf("unlisted: %+v, %v", r, err)
	}
}

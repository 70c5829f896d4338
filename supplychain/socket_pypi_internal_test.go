package supplychain

import "testing"

// An artifact Socket names in another spelling than the purl sent (and
// echoes another input purl) is still the target: PyPI names compare in
// PEP 503 form, versions without case.
func TestSocketResult_pypi_target_by_normalized_name(t *testing.T) {
	arts := []socketArtifact{
		{Type: "pypi", Name: "mcp-server-time", Version: "1.0.0RC1", InputPurl: "pkg:pypi/mcp-server-time@1.0.0rc1",
			Alerts: []socketAlert{{Type: "envVars"}}, Score: &socketScore{Overall: ptr(0.5)}},
		{Type: "pypi", Name: "Typing_Extensions", Version: "4.16.0", InputPurl: "pkg:pypi/typing-extensions@4.16.0",
			Alerts: []socketAlert{{Type: "gptMalware"}}},
	}
	res, err := socketResult("MCP.Server.Time", "pkg:pypi/MCP_Server_Time@1.0.0rc1", arts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scores["overall"] != 0.5 || !res.Malware {
		t.Errorf("result %+v, want the target's score and the dependency's malware", res)
	}
	if a := res.Alerts[0]; !a.Target || a.Package != "mcp-server-time" {
		t.Errorf("first alert %+v, want the target's", a)
	}
	if a := res.Alerts[1]; a.Target || a.Package != "typing-extensions" {
		t.Errorf("second alert %+v, want typing-extensions, not the target", a)
	}
	// A purlError for another spelling of the target is the target's.
	if _, err := socketResult("x", "pkg:pypi/Foo_Bar@1.0", nil, []socketPurlError{{Error: "Package not found", InputPurl: "pkg:pypi/foo-bar@1.0"}}); err == nil {
		t.Error("purlError for the target in another spelling was not the target's")
	}
}

func ptr(f float64) *float64 { return &f }

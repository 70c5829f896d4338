// Package inspector reads the project's MCP Inspector recordings
// (bench/inspector/record.sh; the fields are described in
// bench/inspector/README.md) into contracts, with the parsers the sandbox
// uses on the wire, so that a listing recorded outside the sandbox can be
// checked and compared like one captured in it.
package inspector

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/verifymcp/verifymcp/contract"
)

// Recording is one server's recording.
type Recording struct {
	ID     string
	Target string
	// Ecosystem is "npm" or "pypi" ("npm" for recordings made before the
	// recorder read PyPI).
	Ecosystem string
	// Listed is false for a server that did not answer tools/list; then
	// Contract is nil.
	Listed   bool
	Contract *contract.Contract
	// ProtocolVersion is what the server answered initialize with.
	ProtocolVersion string
	// Unsupported maps a list method the recorder found unsupported to
	// why ("the server declared the resources capability but answered
	// resources/templates/list with {"code":-32601,...}").
	Unsupported map[string]string
	// InstallScripts are the packages of the installed tree that declare
	// install scripts ("esbuild@0.28.2"), as the recorder read the tree.
	InstallScripts []string
	// NonJSONStdout are the lines the server wrote to stdout that were not
	// JSON-RPC.
	NonJSONStdout []string
}

// ReadFile reads one recording.
func ReadFile(path string) (Recording, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Recording{}, err
	}
	r, err := Parse(b)
	if err != nil {
		return Recording{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Parse reads a recording from its JSON: the contract is built from what
// the server wrote on the wire (wire_results), every page of every list.
func Parse(b []byte) (Recording, error) {
	var rec struct {
		ID        string                     `json:"id"`
		Target    string                     `json:"target"`
		Ecosystem string                     `json:"ecosystem"`
		Raw       map[string]json.RawMessage `json:"wire_results"`
		Tree      struct {
			InstallScripts []string `json:"install_scripts"`
		} `json:"tree"`
		NonJSON []string `json:"server_non_json_stdout"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return Recording{}, err
	}
	out := Recording{ID: rec.ID, Target: rec.Target, Ecosystem: rec.Ecosystem, InstallScripts: rec.Tree.InstallScripts,
		NonJSONStdout: rec.NonJSON, Unsupported: map[string]string{}}
	var printed map[string]json.RawMessage
	if err := json.Unmarshal(b, &printed); err != nil {
		return Recording{}, err
	}
	for _, m := range []string{"prompts/list", "resources/list", "resources/templates/list"} {
		var u struct {
			Unsupported string `json:"unsupported"`
		}
		if raw, ok := printed[m]; ok && json.Unmarshal(raw, &u) == nil && u.Unsupported != "" {
			out.Unsupported[m] = u.Unsupported
		}
	}
	if out.Ecosystem == "" {
		out.Ecosystem = "npm"
	}
	var init json.RawMessage
	wire := map[string][]json.RawMessage{}
	for k, v := range rec.Raw {
		if k == "initialize" {
			init = v
			continue
		}
		if len(v) == 0 || v[0] != '[' {
			// null, or {"errors": [...]}: not listed or not supported.
			continue
		}
		var pages []json.RawMessage
		if err := json.Unmarshal(v, &pages); err != nil {
			return Recording{}, fmt.Errorf("%s: %w", k, err)
		}
		wire[k] = pages
	}
	if len(wire["tools/list"]) == 0 {
		return out, nil
	}
	c := &contract.Contract{}
	if len(init) > 0 && string(init) != "null" {
		var w struct {
			ServerInfo      json.RawMessage `json:"serverInfo"`
			Instructions    string          `json:"instructions"`
			ProtocolVersion string          `json:"protocolVersion"`
		}
		if err := json.Unmarshal(init, &w); err != nil {
			return Recording{}, fmt.Errorf("initialize: %w", err)
		}
		if len(w.ServerInfo) > 0 {
			var err error
			if c.ServerInfo, err = contract.ParseImplementation(w.ServerInfo); err != nil {
				return Recording{}, err
			}
		}
		c.Instructions = w.Instructions
		out.ProtocolVersion = w.ProtocolVersion
	}
	each := func(method, key string, f func(json.RawMessage) error) error {
		for _, page := range wire[method] {
			// A page may carry other members (nextCursor, ttlMs, _meta).
			var p map[string]json.RawMessage
			if err := json.Unmarshal(page, &p); err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
			var items []json.RawMessage
			if raw, ok := p[key]; ok && string(raw) != "null" {
				if err := json.Unmarshal(raw, &items); err != nil {
					return fmt.Errorf("%s: %s: %w", method, key, err)
				}
			}
			for _, it := range items {
				if err := f(it); err != nil {
					return fmt.Errorf("%s: %w", method, err)
				}
			}
		}
		return nil
	}
	var err error
	for _, m := range contract.ListMethods {
		if err == nil {
			err = each(m, contract.ListKey(m), func(r json.RawMessage) error { return contract.AddListItem(c, m, r) })
		}
	}
	if err != nil {
		return Recording{}, err
	}
	if err := contract.Normalize(c); err != nil {
		return Recording{}, err
	}
	out.Listed, out.Contract = true, c
	return out, nil
}

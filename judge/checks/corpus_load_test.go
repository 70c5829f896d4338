package checks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
)

// The real-surface corpus: the contracts of pinned, published servers, as
// the servers sent them. Most come from the MCP Inspector recordings of
// the real-server regression set (sandbox/testdata/realservers, recorded
// by bench/inspector/record.sh); the rest are captures kept in
// judge/testdata/surfaces. testdata/corpus.yaml lists, per surface, every
// finding Check raises on it with why it is true.

// realServersDir holds the regression set's Inspector recordings;
// testdata/corpus holds those of the servers only the corpus needs
// (testdata/corpus/servers.txt).
var realServersDir = filepath.Join("..", "..", "sandbox", "testdata", "realservers")

// corpusSurface is one surface of the corpus.
type corpusSurface struct {
	ID     string
	Target string
	C      *contract.Contract
}

// loadCorpus reads every listable Inspector recording and every extra
// surface the corpus file names.
func loadCorpus(t testing.TB, extra []string) []corpusSurface {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(realServersDir, "*.inspector.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s: %v", realServersDir, err)
	}
	more, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.inspector.json"))
	if err != nil || len(more) == 0 {
		t.Fatalf("no recordings in testdata/corpus: %v", err)
	}
	files = append(files, more...)
	var out []corpusSurface
	for _, f := range files {
		s, ok, err := readRecording(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if ok {
			out = append(out, s)
		}
	}
	for _, name := range extra {
		out = append(out, corpusSurface{ID: name, Target: "judge/testdata/surfaces/" + name + ".json", C: loadSurface(t, name)})
	}
	slices.SortFunc(out, func(a, b corpusSurface) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// readRecording turns an Inspector recording into a contract with the
// parsers the sandbox uses on the wire; ok is false for a server that did
// not list.
func readRecording(path string) (corpusSurface, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return corpusSurface{}, false, err
	}
	var rec struct {
		ID     string                       `json:"id"`
		Target string                       `json:"target"`
		Init   json.RawMessage              `json:"-"`
		Wire   map[string][]json.RawMessage `json:"-"`
		Raw    map[string]json.RawMessage   `json:"wire_results"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return corpusSurface{}, false, err
	}
	// A server that did not list has null results.
	rec.Wire = map[string][]json.RawMessage{}
	for k, v := range rec.Raw {
		if k == "initialize" {
			rec.Init = v
			continue
		}
		var pages []json.RawMessage
		if v[0] == '{' {
			// {"errors": [...]}: the method is not supported.
			continue
		}
		if err := json.Unmarshal(v, &pages); err != nil {
			return corpusSurface{}, false, fmt.Errorf("%s: %w", k, err)
		}
		rec.Wire[k] = pages
	}
	if len(rec.Wire["tools/list"]) == 0 {
		return corpusSurface{}, false, nil
	}
	c := &contract.Contract{}
	if len(rec.Init) > 0 && string(rec.Init) != "null" {
		var w struct {
			ServerInfo   json.RawMessage `json:"serverInfo"`
			Instructions string          `json:"instructions"`
		}
		if err := json.Unmarshal(rec.Init, &w); err != nil {
			return corpusSurface{}, false, fmt.Errorf("initialize: %w", err)
		}
		if len(w.ServerInfo) > 0 {
			if c.ServerInfo, err = contract.ParseImplementation(w.ServerInfo); err != nil {
				return corpusSurface{}, false, err
			}
		}
		c.Instructions = w.Instructions
	}
	each := func(method, key string, f func(json.RawMessage) error) error {
		for _, page := range rec.Wire[method] {
			var p map[string][]json.RawMessage
			if err := json.Unmarshal(page, &p); err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
			for _, it := range p[key] {
				if err := f(it); err != nil {
					return fmt.Errorf("%s: %w", method, err)
				}
			}
		}
		return nil
	}
	err = each("tools/list", "tools", func(r json.RawMessage) error {
		x, err := contract.ParseTool(r)
		c.Tools = append(c.Tools, x)
		return err
	})
	if err == nil {
		err = each("prompts/list", "prompts", func(r json.RawMessage) error {
			x, err := contract.ParsePrompt(r)
			c.Prompts = append(c.Prompts, x)
			return err
		})
	}
	if err == nil {
		err = each("resources/list", "resources", func(r json.RawMessage) error {
			x, err := contract.ParseResource(r)
			c.Resources = append(c.Resources, x)
			return err
		})
	}
	if err == nil {
		err = each("resources/templates/list", "resourceTemplates", func(r json.RawMessage) error {
			x, err := contract.ParseTemplate(r)
			c.Templates = append(c.Templates, x)
			return err
		})
	}
	if err != nil {
		return corpusSurface{}, false, err
	}
	if err := contract.Normalize(c); err != nil {
		return corpusSurface{}, false, err
	}
	return corpusSurface{ID: rec.ID, Target: rec.Target, C: c}, true, nil
}

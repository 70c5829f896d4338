package checks

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/inspector"
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
	r, err := inspector.ReadFile(path)
	if err != nil || !r.Listed {
		return corpusSurface{}, false, err
	}
	return corpusSurface{ID: r.ID, Target: r.Target, C: r.Contract}, true, nil
}

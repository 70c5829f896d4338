package realcorpus

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/rubric"
)

var update = flag.Bool("update", false, "rewrite the corpus table in docs/signals/contract.md")

const (
	docPath  = "../../docs/signals/contract.md"
	docBegin = "<!-- realcorpus:table -->\n"
	docEnd   = "<!-- /realcorpus:table -->"
)

// table renders the doc's section: the corpus's size, then the per-code
// table over every server, its listing and its scan.
func table(t *testing.T) string {
	t.Helper()
	servers, err := Load(".")
	if err != nil {
		t.Fatal(err)
	}
	js, unscanned, err := JudgeSide(".", servers, "")
	if err != nil {
		t.Fatal(err)
	}
	count := map[Part]int{}
	for _, s := range servers {
		count[Part{s.Side, s.Ecosystem}]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Rubric v%s, contract checks %s; %d servers (tuning: npm %d, PyPI %d; held out: npm %d, PyPI %d)",
		rubric.Current().Version, contractChecksVersion(), len(servers),
		count[Part{SideTuning, "npm"}], count[Part{SideTuning, "pypi"}], count[Part{SideHeldOut, "npm"}], count[Part{SideHeldOut, "pypi"}])
	if len(unscanned) > 0 {
		fmt.Fprintf(&b, "; %d not yet scanned in the sandbox (their listing only): %s", len(unscanned), strings.Join(unscanned, ", "))
	}
	b.WriteString(".\n\n")
	b.WriteString(Markdown(Table(js), count))
	return b.String()
}

func contractChecksVersion() string {
	pin, _ := rubric.Current().ContractChecks()
	return pin.Version
}

// TestTableDoc: the table in docs/signals/contract.md is the one this
// build computes from the corpus and its review; -update rewrites it.
func TestTableDoc(t *testing.T) {
	got := table(t)
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", docPath, strings.TrimSpace(docBegin), docEnd)
	}
	if *update {
		doc = doc[:i+len(docBegin)] + got + doc[j:]
		if err := os.WriteFile(docPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if have := doc[i+len(docBegin) : j]; have != got {
		t.Errorf("%s is stale: run go test ./benchmark/realcorpus -run TestTableDoc -update\nhave:\n%s\nwant:\n%s", filepath.Base(docPath), have, got)
	}
}

// BenchmarkRealCorpus computes the findings of every server of the corpus
// (its listing under this build's checks and rubric, its scan snapshot),
// judges them against the review and prints the per-code table.
func BenchmarkRealCorpus(b *testing.B) {
	servers, err := Load(".")
	if err != nil {
		b.Fatal(err)
	}
	var out string
	for b.Loop() {
		js, _, err := JudgeSide(".", servers, "")
		if err != nil {
			b.Fatal(err)
		}
		count := map[Part]int{}
		for _, s := range servers {
			count[Part{s.Side, s.Ecosystem}]++
		}
		out = Markdown(Table(js), count)
	}
	b.Logf("%d servers\n%s", len(servers), out)
}

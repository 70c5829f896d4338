// Command importscans writes the corpus's scans/ID.json from the bundles a
// verifymcp data directory holds: for each server of the corpus, the
// newest bundle of its exact target, scored under the rubric in force.
// The bundles are the evidence (kept in the data directory, not in the
// repository); scans/ is the snapshot the per-code table reads.
//
//	verifymcp batch --data-dir /tmp/rc benchmark/realcorpus/servers.txt
//	go run ./benchmark/realcorpus/importscans -data /tmp/rc
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/benchmark/realcorpus"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

func main() {
	data := flag.String("data", "", "the verifymcp data directory whose bundles/ holds the scans")
	corpus := flag.String("corpus", "benchmark/realcorpus", "the corpus directory")
	side := flag.String("side", "", "import only this side (tuning or heldout); all by default")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "importscans: -data is required")
		os.Exit(2)
	}
	if err := run(*data, *corpus, *side); err != nil {
		fmt.Fprintln(os.Stderr, "importscans:", err)
		os.Exit(1)
	}
}

func key(eco, name, version string) string {
	if eco == "pypi" {
		name = strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(name))
	}
	return eco + ":" + name + "@" + version
}

func run(data, corpus, side string) error {
	servers, err := realcorpus.Load(corpus)
	if err != nil {
		return err
	}
	byKey := map[string]realcorpus.Server{}
	for _, s := range servers {
		if side == "" || s.Side == side {
			byKey[key(s.Ecosystem, s.Name, s.Version)] = s
		}
	}
	files, err := filepath.Glob(filepath.Join(data, "bundles", "*.json"))
	if err != nil {
		return err
	}
	newest := map[string]*evidence.Bundle{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		b, err := evidence.Decode(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		s, ok := byKey[key(b.Target.Ecosystem, b.Target.Name, b.Target.Version)]
		if !ok {
			continue
		}
		if old := newest[s.ID]; old == nil || b.Run.Date.After(old.Run.Date) {
			newest[s.ID] = b
		}
	}
	r := rubric.Current()
	ids := make([]string, 0, len(newest))
	for id := range newest {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if err := os.MkdirAll(filepath.Join(corpus, "scans"), 0o755); err != nil {
		return err
	}
	for _, id := range ids {
		b := newest[id]
		res := rubric.Evaluate(b, r)
		sc := realcorpus.Scan{ID: id, Target: b.Target.Requested, RunID: b.Run.ID, Date: b.Run.Date.UTC().Format("2006-01-02T15:04:05Z"),
			ToolVersion: b.Run.Tool.Version, RubricVersion: res.RubricVersion, Outcome: string(b.Sandbox.Outcome),
			Signals: map[string]evidence.State{}, Findings: []realcorpus.ScanFinding{}}
		for name, sig := range b.Signals {
			sc.Signals[name] = sig.State
		}
		for _, f := range res.Findings {
			if strings.HasPrefix(f.Code, "pkg.contract.") {
				continue // the listing gives these (realcorpus.ListingFindings)
			}
			sc.Findings = append(sc.Findings, realcorpus.ScanFinding{Code: f.Code, Kind: string(f.Kind), Severity: string(f.Severity),
				Subject: f.Subject, Message: f.Message, Evidence: f.Evidence})
		}
		out, err := json.MarshalIndent(sc, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(corpus, "scans", id+".json"), append(out, '\n'), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "importscans: %d scans of %d servers written to %s\n", len(ids), len(byKey), filepath.Join(corpus, "scans"))
	return nil
}

// Command findings lists the findings the scanner raises on one side of
// the real-surface corpus, with the review's verdict where there is one:
// the reviewer's tool. It reads the listing of every server (the contract
// codes, computed now by this build) and its scan snapshot (scans/ID.json).
//
//	go run ./benchmark/realcorpus/findings -side tuning -min medium
//	go run ./benchmark/realcorpus/findings -side heldout -unreviewed -format yaml
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/verifymcp/verifymcp/benchmark/realcorpus"
	"github.com/verifymcp/verifymcp/rubric"
)

func main() {
	corpus := flag.String("corpus", "benchmark/realcorpus", "the corpus directory")
	side := flag.String("side", "", "tuning or heldout (required: the held-out side is read once, at the end)")
	min := flag.String("min", "info", "the lowest severity listed")
	prefix := flag.String("code", "", "list only codes with this prefix")
	unreviewed := flag.Bool("unreviewed", false, "list only findings with no verdict")
	format := flag.String("format", "text", "text, or yaml: review entries to fill in")
	flag.Parse()
	if *side != realcorpus.SideTuning && *side != realcorpus.SideHeldOut {
		fmt.Fprintln(os.Stderr, "findings: -side tuning or -side heldout")
		os.Exit(2)
	}
	if err := run(*corpus, *side, rubric.Severity(*min), *prefix, *unreviewed, *format); err != nil {
		fmt.Fprintln(os.Stderr, "findings:", err)
		os.Exit(1)
	}
}

func run(corpus, side string, min rubric.Severity, prefix string, unreviewed bool, format string) error {
	servers, err := realcorpus.Load(corpus)
	if err != nil {
		return err
	}
	js, _, err := realcorpus.JudgeSide(corpus, servers, side)
	if err != nil {
		return err
	}
	for _, j := range js {
		if rubric.Severity(j.Severity).Rank() < min.Rank() || !strings.HasPrefix(j.Code, prefix) || unreviewed && j.Verdict != "" {
			continue
		}
		switch format {
		case "yaml":
			fmt.Fprintf(os.Stdout, "  - server: %s\n    code: %s\n    subject: %q\n", j.Server, j.Code, j.Subject)
			if j.Field != "" {
				fmt.Fprintf(os.Stdout, "    field: %s\n", j.Field)
			}
			fmt.Fprintf(os.Stdout, "    verdict: \n    why: \"\"  # %s | %s\n", j.Severity, oneLine(j.Evidence))
		default:
			v := j.Verdict
			if v == "" {
				v = "UNREVIEWED"
			} else if j.Mechanical {
				v += " (mechanical)"
			}
			fmt.Fprintf(os.Stdout, "%-8s %s  %s  %s %s\n    evidence: %s\n    message:  %s\n    verdict:  %s\n", strings.ToUpper(j.Severity), j.Server, j.Code, j.Subject, j.Field,
				oneLine(j.Evidence), oneLine(j.Message), v)
		}
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

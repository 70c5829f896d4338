// Command realcorpus applies the selection rule of
// benchmark/realcorpus/README.md ("The selection rule", frozen 2026-12-06)
// and records the corpus it selects. Standard library only.
//
//	go run ./bench/realcorpus population -readme AWESOME_README.md -seed SEED.json -servers-readme SERVERS_README.md   # rule 1, amendment 1
//	go run ./bench/realcorpus select                                                 # rules 2 to 5 and 8
//	sudo go run ./bench/realcorpus run                                               # rules 6 and 7
//
// population reads the sources of rule 1 and amendment 1 (as read
// elsewhere: the awesome list's README.md and modelcontextprotocol/servers'
// README.md at their pinned commits, and the registry seed) and writes
// benchmark/realcorpus/population.tsv. select reads population.tsv,
// asks registry.npmjs.org and pypi.org for the documents rule 2 names, and
// writes candidates.tsv (in rule order, versions pinned) and dropped.tsv
// (every item or package that gave no candidate, and why). run records the
// candidates in rule order with bench/inspector/record.sh until the quotas
// are met, filling candidates.tsv's outcome column and writing servers.txt
// and split.tsv; it is resumable (a candidate with an outcome is skipped).
package main

import (
	"context"
	"fmt"
	"os"
)

const usageText = `usage:
  realcorpus population -readme FILE -seed FILE [-o population.tsv]
  realcorpus select [-population FILE] [-o candidates.tsv] [-dropped dropped.tsv] [-cache DIR] [-force]
  realcorpus run [flags]   (root; see -h)
  realcorpus outcomes [-dir DIR]   (outcomes computed again from the recordings)
  realcorpus population-toolsdk [-repo GITDIR]   (amendment 2: population.tsv += toolsdk rows)
  realcorpus add-source [-source toolsdk]   (amendment 2: those rows into candidates.tsv, dropped.tsv)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usageText)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "population":
		err = cmdPopulation(os.Args[2:])
	case "select":
		err = cmdSelect(os.Args[2:])
	case "run":
		err = cmdRun(os.Args[2:])
	case "outcomes":
		err = cmdOutcomes(os.Args[2:])
	case "population-toolsdk":
		err = cmdPopulationToolsdk(os.Args[2:])
	case "add-source":
		err = cmdAddSource(os.Args[2:])
	default:
		fmt.Fprint(os.Stderr, usageText)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "realcorpus:", err)
		os.Exit(1)
	}
}

var _ = context.Background

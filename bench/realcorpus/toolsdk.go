package main

// Amendment 2: the packages of toolsdk-ai/awesome-mcp-registry.
//
//	go run ./bench/realcorpus population-toolsdk -repo GITDIR [-commit C]   # population.tsv += source toolsdk
//	go run ./bench/realcorpus add-source [-source toolsdk]                   # candidates.tsv, dropped.tsv += that source
//
// population-toolsdk reads, from a git copy of the registry at the pinned
// commit, every packages/**/*.json and of each only `packageName` and
// `runtime` (the files also carry descriptions; they are not decoded into
// anything and not kept), and writes one population row per file whose
// runtime is node (npm) or python (PyPI), in path order, after the rows of
// the other sources (which are kept as they are).
//
// add-source applies rules 2, 4 and 5 to those rows against the existing
// candidates.tsv without asking a registry: like the seed's packages they
// count as named (rule 2), so the name is the package; a name that is not a
// valid package name, or that an earlier corpus holds (rule 4), goes to
// dropped.tsv; a name that is already a candidate gets the row as one more
// source (its pinned version and outcome untouched); every other name is a
// new candidate, put in rule order (rule 5) with its id, and with no version
// yet: "run" asks the registry for it when the candidate's turn comes
// (rule 3, the latest version on that first lookup, pinned then), and a name
// the registry does not have goes to dropped.tsv then. So the registries
// are asked only about the packages the run takes, in rule order.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const toolsdkCommit = "7b25d5c70c873bd97851ed422fcadd971957ef8b"

func gitOut(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func cmdPopulationToolsdk(args []string) error {
	fs := flag.NewFlagSet("population-toolsdk", flag.ExitOnError)
	repo := fs.String("repo", "/work/.mirror/toolsdk-ai+awesome-mcp-registry/repo", "a git copy of toolsdk-ai/awesome-mcp-registry")
	commit := fs.String("commit", toolsdkCommit, "the commit amendment 2 pins")
	out := fs.String("o", "benchmark/realcorpus/population.tsv", "population.tsv (its rows of other sources are kept)")
	_ = fs.Parse(args) // ExitOnError: Parse exits on a bad flag
	if *commit != toolsdkCommit {
		return fmt.Errorf("population-toolsdk: amendment 2 pins %s", toolsdkCommit)
	}
	ls, err := gitOut(*repo, "ls-tree", "-r", "--name-only", *commit, "--", "packages")
	if err != nil {
		return err
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(ls)), "\n") {
		if strings.HasPrefix(f, "packages/") && strings.HasSuffix(f, ".json") {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	var rows []popRow
	count := map[string]int{}
	for _, f := range files {
		b, err := gitOut(*repo, "show", *commit+":"+f)
		if err != nil {
			return err
		}
		// Only these two fields are decoded.
		var p struct {
			PackageName *string `json:"packageName"`
			Runtime     *string `json:"runtime"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if p.Runtime == nil || p.PackageName == nil {
			count["no runtime or packageName"]++
			continue
		}
		eco := map[string]string{"node": "npm", "python": "pypi"}[*p.Runtime]
		if eco == "" {
			count["runtime "+*p.Runtime]++
			continue
		}
		count[eco]++
		rows = append(rows, popRow{Source: "toolsdk", Ref: f, Ecosystem: eco, Package: *p.PackageName})
	}
	old, header, err := readTSV(*out)
	if err != nil {
		return err
	}
	if strings.Join(header, "\t") != strings.Join(popHeader, "\t") {
		return fmt.Errorf("%s: header %q", *out, header)
	}
	var all [][]string
	for _, r := range old {
		if r["source"] == "toolsdk" {
			continue
		}
		f := make([]string, len(popHeader))
		for i, h := range popHeader {
			f[i] = r[h]
		}
		all = append(all, f)
	}
	for _, r := range rows {
		all = append(all, r.fields())
	}
	if err := writeTSV(*out, popHeader, len(all), func(i int) []string { return all[i] }); err != nil {
		return err
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("toolsdk %s: %d package files;", (*commit)[:12], len(files))
	for _, k := range keys {
		fmt.Printf(" %s %d;", k, count[k])
	}
	fmt.Printf(" population rows now %d\n", len(all))
	return nil
}

// namedRow: a population row whose package counts as named (rule 2: the
// seed's; amendment 2: the toolsdk registry's), as ECOSYSTEM, NAME (npm
// lower case, PyPI PEP 503) and its source label.
func namedRow(r map[string]string) (eco, name, src string, ok bool) {
	switch r["source"] {
	case "seed":
		src = "seed:" + r["ref"]
	case "toolsdk":
		src = "toolsdk:" + r["ref"]
	default:
		return "", "", "", false
	}
	eco = r["ecosystem"]
	name = strings.ToLower(strings.TrimSpace(r["package"]))
	if eco == "pypi" {
		name = pep503(strings.TrimSpace(r["package"]))
	}
	return eco, name, src, true
}

func validName(eco, n string) bool {
	if eco == "pypi" {
		return pypiNameRE.MatchString(n)
	}
	return npmNameRE.MatchString(n)
}

func cmdAddSource(args []string) error {
	fs := flag.NewFlagSet("add-source", flag.ExitOnError)
	source := fs.String("source", "toolsdk", "the population source to add (amendment 2: toolsdk)")
	pop := fs.String("population", "benchmark/realcorpus/population.tsv", "population.tsv")
	candPath := fs.String("candidates", "benchmark/realcorpus/candidates.tsv", "candidates.tsv (pinned versions and outcomes are kept)")
	dropPath := fs.String("dropped", "benchmark/realcorpus/dropped.tsv", "dropped.tsv")
	_ = fs.Parse(args) // ExitOnError: Parse exits on a bad flag
	if *source != "toolsdk" {
		return fmt.Errorf("add-source: only toolsdk (amendment 2) is a source added after selection")
	}
	rows, _, err := readTSV(*pop)
	if err != nil {
		return err
	}
	list, err := readCandidates(*candPath)
	if err != nil {
		return err
	}
	drows, _, err := readTSV(*dropPath)
	if err != nil {
		return err
	}
	prior, err := reviewed("sandbox/testdata/realservers/*.inspector.json", "contract/checks/testdata/corpus/*.inspector.json")
	if err != nil {
		return err
	}
	byKey := map[string]*candidate{}
	used := map[string]bool{}
	have := map[string]bool{} // sources already applied (the command can be run again)
	for _, c := range list {
		byKey[c.Eco+":"+c.Name] = c
		used[c.ID] = true
		for _, s := range c.Sources {
			have[c.Eco+" "+s] = true
		}
	}
	for _, d := range drows {
		have[d["ecosystem"]+" "+d["source"]+":"+d["ref"]] = true
	}
	// Recording files of ids no candidate has (none expected) stay reserved.
	if files, _ := filepath.Glob("benchmark/realcorpus/recordings/*.inspector.json"); files != nil {
		for _, f := range files {
			used[strings.TrimSuffix(filepath.Base(f), ".inspector.json")] = true
		}
	}
	var newDrops [][]string
	var fresh []*candidate
	n := map[string]int{}
	for _, r := range rows {
		if r["source"] != *source {
			continue
		}
		eco, name, src, _ := namedRow(r)
		if have[eco+" "+src] {
			n["already applied"]++
			continue
		}
		drop := func(reason string) {
			newDrops = append(newDrops, []string{r["source"], r["ref"], eco, "", "", reason})
			n["dropped"]++
		}
		if !validName(eco, name) {
			drop(fmt.Sprintf("no name counts (rule 2): %s: not a valid %s name (packageName %q)", name, eco, r["package"]))
			continue
		}
		key := eco + ":" + name
		if f, ok := prior[key]; ok {
			drop("already reviewed (rule 4): " + key + " is in " + f)
			continue
		}
		if c, ok := byKey[key]; ok {
			c.Sources = append(c.Sources, src)
			n["source added to a candidate"]++
			continue
		}
		c := &candidate{Eco: eco, Name: name, Sources: []string{src}, Evidence: "toolsdk package (" + src + ")"}
		c.Hash = sha(key)
		c.Side, c.SplitByte = splitOf(eco, name)
		byKey[key] = c
		list = append(list, c)
		fresh = append(fresh, c)
		n["new "+eco]++
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Hash < list[j].Hash })
	assignFreshIDs(fresh, used)
	if err := writeCandidates(*candPath, list); err != nil {
		return err
	}
	all := make([][]string, 0, len(drows)+len(newDrops))
	for _, d := range drows {
		f := make([]string, len(dropHeader))
		for i, h := range dropHeader {
			f[i] = d[h]
		}
		all = append(all, f)
	}
	all = append(all, newDrops...)
	if err := writeTSV(*dropPath, dropHeader, len(all), func(i int) []string { return all[i] }); err != nil {
		return err
	}
	eco := map[string]int{}
	for _, c := range list {
		eco[c.Eco]++
	}
	fmt.Printf("add-source %s: %v; candidates now npm %d, pypi %d (%d without a version yet)\n", *source, n, eco["npm"], eco["pypi"], nNoVersion(list))
	return nil
}

// assignFreshIDs gives ids to the new candidates only (the recorded ones
// keep theirs), by bench/inspector's rule, in rule order, npm first as
// assignIDs does; used holds the ids taken, and gets the new ones.
func assignFreshIDs(fresh []*candidate, used map[string]bool) {
	sort.SliceStable(fresh, func(i, j int) bool {
		if fresh[i].Eco != fresh[j].Eco {
			return fresh[i].Eco == "npm"
		}
		return fresh[i].Hash < fresh[j].Hash
	})
	for _, c := range fresh {
		var id string
		if c.Eco == "npm" {
			id = npmSlug(c.Name)
			if used[id] && strings.HasPrefix(c.Name, "@") {
				scope := strings.SplitN(c.Name[1:], "/", 2)[0]
				id = npmSlug("@x/"+scope) + "-" + id
			}
		} else {
			id = c.Name
			if used[id] {
				id = "pypi-" + id
			}
		}
		for base, i := id, 2; used[id]; i++ {
			id = fmt.Sprintf("%s-%d", base, i)
		}
		used[id] = true
		c.ID = id
	}
}

func nNoVersion(list []*candidate) int {
	n := 0
	for _, c := range list {
		if c.Version == "" {
			n++
		}
	}
	return n
}

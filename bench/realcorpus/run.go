package main

// run: rules 6 and 7. Each candidate, in rule order, is recorded by
// bench/inspector/record.sh (one candidate per invocation, at most -workers
// at once) until the quotas are met or the candidates run out. The outcome
// of each goes into candidates.tsv as soon as it is known, with servers.txt
// and split.tsv written again; a candidate that has an outcome is not
// recorded again (the run is resumable), except "not recorded" ones.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

type runOpts struct {
	dir, record, toolchain, logdir string
	cache                          string
	workers, quotaNPM, quotaPyPI   int
	commitEvery                    int
	commit                         bool
	maxPer                         time.Duration
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var o runOpts
	fs.StringVar(&o.dir, "dir", "benchmark/realcorpus", "the corpus directory (candidates.tsv, recordings/, trees/, servers.txt, split.tsv)")
	fs.StringVar(&o.record, "record", "bench/inspector/record.sh", "the recorder")
	fs.StringVar(&o.toolchain, "toolchain", "/var/tmp/verifymcp-realcorpus-toolchain", "record.sh TOOLCHAIN (kept between recordings; outside /tmp)")
	fs.StringVar(&o.logdir, "logdir", "/tmp/realcorpus-run", "progress.log and one log per recording")
	fs.IntVar(&o.workers, "workers", 2, "recordings at once")
	fs.IntVar(&o.quotaNPM, "npm", 110, "npm servers wanted in the corpus (rule 7)")
	fs.IntVar(&o.quotaPyPI, "pypi", 60, "PyPI servers wanted in the corpus (rule 7)")
	fs.IntVar(&o.commitEvery, "commit-every", 30, "commit after this many new outcomes")
	fs.BoolVar(&o.commit, "commit", true, "commit the recordings and files as they come (git add of these paths only)")
	fs.DurationVar(&o.maxPer, "max-per", 90*time.Minute, "a recording that takes longer is ended (outcome: timed out)")
	fs.StringVar(&o.cache, "cache", "/tmp/realcorpus-registry-cache", "registry answers kept here (for candidates with no version yet: amendment 2)")
	_ = fs.Parse(args) // ExitOnError: Parse exits on a bad flag
	if os.Geteuid() != 0 {
		return fmt.Errorf("run: needs root (record.sh uses unshare)")
	}
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run: start it at the repository root")
	}
	for _, d := range []string{filepath.Join(o.dir, "recordings"), filepath.Join(o.dir, "trees"), filepath.Join(o.logdir, "logs"), filepath.Join(o.logdir, "lines")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	r := &runner{o: o, candPath: filepath.Join(o.dir, "candidates.tsv"), dropPath: filepath.Join(o.dir, "dropped.tsv")}
	var err error
	r.list, err = readCandidates(r.candPath)
	if err != nil {
		return err
	}
	drows, _, err := readTSV(r.dropPath)
	if err != nil {
		return err
	}
	for _, d := range drows {
		f := make([]string, len(dropHeader))
		for i, h := range dropHeader {
			f[i] = d[h]
		}
		r.drops = append(r.drops, f)
	}
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return err
	}
	r.reg = newRegistry(o.cache)
	logf, err := os.OpenFile(filepath.Join(o.logdir, "progress.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	var logMu sync.Mutex
	r.logp = func(format string, a ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(logf, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, a...))
	}
	r.quota = map[string]int{"npm": o.quotaNPM, "pypi": o.quotaPyPI}
	r.inCorpus = relabel(r.list, r.quota)
	r.logp("start: pid %d; %d candidates; in corpus so far: npm %d/%d, pypi %d/%d; workers %d", os.Getpid(), len(r.list), r.inCorpus["npm"], r.quota["npm"], r.inCorpus["pypi"], r.quota["pypi"], o.workers)

	r.cond = sync.NewCond(&r.mu)
	r.inflightC = map[*candidate]bool{}
	r.running = map[*candidate]*exec.Cmd{}
	r.attempted = map[*candidate]bool{}
	r.lookupFailed = map[*candidate]bool{}
	r.stopOnSignal()
	return r.run()
}

// runner is the state of one run: the candidates and dropped rows as the
// files will hold them, the recordings in flight and the outcomes not yet
// committed. mu guards it once the recordings start; cond is signalled
// whenever a recording ends or the run is stopping.
type runner struct {
	o                  runOpts
	reg                *registry
	candPath, dropPath string
	list               []*candidate
	drops              [][]string
	quota, inCorpus    map[string]int
	logp               func(format string, a ...any)

	mu           sync.Mutex
	cond         *sync.Cond
	inflightC    map[*candidate]bool
	running      map[*candidate]*exec.Cmd
	total        int
	attempted    map[*candidate]bool
	lookupFailed map[*candidate]bool
	stopping     bool
	done         int
	pending      []*candidate // outcomes not yet committed
}

// save writes candidates.tsv, dropped.tsv, servers.txt and split.tsv
// again, with the corpus counts brought up to date.
func (r *runner) save() error {
	for eco, n := range relabel(r.list, r.quota) {
		r.inCorpus[eco] = n
	}
	if err := writeCandidates(r.candPath, r.list); err != nil {
		return err
	}
	if err := writeTSV(r.dropPath, dropHeader, len(r.drops), func(i int) []string { return append([]string{}, r.drops[i]...) }); err != nil {
		return err
	}
	return writeCorpusFiles(r.o.dir, r.list)
}

// commit commits the files and the pending candidates' recordings, when
// -commit is on and there are pending outcomes; final marks the run's last
// commit.
func (r *runner) commit(final bool) {
	o := r.o
	if !o.commit || len(r.pending) == 0 {
		return
	}
	paths := []string{filepath.Join(o.dir, "candidates.tsv"), filepath.Join(o.dir, "dropped.tsv"), filepath.Join(o.dir, "servers.txt"), filepath.Join(o.dir, "split.tsv")}
	for _, c := range r.pending {
		for _, p := range []string{filepath.Join(o.dir, "recordings", c.ID+".inspector.json"), filepath.Join(o.dir, "trees", c.ID+".txt")} {
			if _, err := os.Stat(p); err == nil {
				paths = append(paths, p)
			}
		}
	}
	msg := fmt.Sprintf("benchmark/realcorpus: %d more candidates recorded or looked up (rules 3, 6); in the corpus: npm %d, PyPI %d", len(r.pending), r.inCorpus["npm"], r.inCorpus["pypi"])
	if final {
		msg += "; the run's last commit"
	}
	if err := gitCommit(paths, msg); err != nil {
		r.logp("commit failed (kept for the next one): %v", err)
		return
	}
	r.logp("committed: %s", msg)
	r.pending = nil
}

// pick returns the first candidate in rule order that has no outcome and
// that its ecosystem may still need: fewer servers of that ecosystem
// before it in rule order are in the corpus (or being recorded, counted as
// if they will list) than the quota. Rule 7 applied per ecosystem in rule
// order: whatever comes after the quota is met is not taken.
func (r *runner) pick() *candidate {
	before := map[string]int{}
	for _, c := range r.list {
		b := baseOutcome(c.Outcome)
		switch {
		case b == "in corpus", r.inflightC[c]:
			before[c.Eco]++
			continue
		case r.attempted[c] || (b != "" && !strings.HasPrefix(b, "not recorded")):
			continue
		}
		if before[c.Eco] < r.quota[c.Eco] {
			return c
		}
	}
	return nil
}

// stopOnSignal ends the recordings in flight on SIGINT, SIGTERM or SIGHUP,
// and stops the run.
func (r *runner) stopOnSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		r.mu.Lock()
		r.stopping = true
		r.logp("signal %v: ending the recordings in flight (their candidates stay without an outcome)", s)
		for _, cmd := range r.running {
			if cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // gone already is fine
			}
		}
		r.cond.Broadcast()
		r.mu.Unlock()
	}()
}

// run records candidates, at most -workers at once, until none is left to
// pick or the run is stopped; then gives the candidates left the outcome
// "not recorded", writes the files and commits them.
func (r *runner) run() error {
	r.mu.Lock()
	for !r.stopping {
		if r.total >= r.o.workers {
			r.cond.Wait()
			continue
		}
		c := r.pick()
		if c == nil {
			if r.total == 0 {
				break
			}
			r.cond.Wait()
			continue
		}
		r.attempted[c] = true
		r.inflightC[c] = true
		r.total++
		go r.record(c)
	}
	for r.total > 0 {
		r.cond.Wait()
	}
	if !r.stopping {
		r.markNotRecorded()
	}
	if err := r.save(); err != nil {
		r.mu.Unlock()
		return err
	}
	r.commit(true)
	r.mu.Unlock()
	r.logp("end%s: in corpus npm %d/%d, pypi %d/%d", map[bool]string{true: " (interrupted)", false: ""}[r.stopping], r.inCorpus["npm"], r.quota["npm"], r.inCorpus["pypi"], r.quota["pypi"])
	return nil
}

// markNotRecorded gives each candidate without an outcome the reason it
// was not recorded: what was not recorded when the run was not stopped
// had its ecosystem's quota met first, unless its recording or lookup
// failed.
func (r *runner) markNotRecorded() {
	for _, c := range r.list {
		if c.Outcome == "" {
			c.Outcome = "not recorded (quota met)"
			if c.Version == "" {
				c.Outcome = "not recorded (quota met): the registry was not asked, so no version is pinned"
			}
			if r.attempted[c] {
				c.Outcome = "not recorded: the recorder failed (see its log)"
			}
			if r.lookupFailed[c] {
				c.Outcome = "not recorded: the registry lookup failed (see progress.log)"
			}
			r.pending = append(r.pending, c)
		}
	}
}

// release ends c's turn without a recording. r.mu is held.
func (r *runner) release(c *candidate) {
	delete(r.inflightC, c)
	r.total--
	r.cond.Broadcast()
}

// record records c (looking its version up first when it has none),
// records its outcome and commits every -commit-every outcomes.
func (r *runner) record(c *candidate) {
	o := r.o
	start := time.Now()
	if c.Version == "" && !r.pinVersion(c) {
		return
	}
	r.mu.Lock()
	if r.stopping {
		r.release(c)
		r.mu.Unlock()
		return
	}
	r.logp("record start %s (id %s, rank %s)", targetOf(c), c.ID, rankOf(r.list, c))
	cmd := recordCmd(o, c)
	r.running[c] = cmd
	r.mu.Unlock()
	outcome := recordOne(o, c, cmd)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, c)
	delete(r.inflightC, c)
	r.total--
	defer r.cond.Broadcast()
	if r.stopping {
		return
	}
	if outcome == "" {
		r.logp("record %s:%s: the recorder failed; no outcome (see %s)", c.Eco, c.Name, logPath(o, c))
		return
	}
	c.Outcome = outcome
	r.done++
	r.pending = append(r.pending, c)
	if err := r.save(); err != nil {
		r.logp("writing the files: %v", err)
	}
	r.logp("record done %s -> %s (%.0fs); in corpus: npm %d/%d, pypi %d/%d", targetOf(c), outcome, time.Since(start).Seconds(), r.inCorpus["npm"], r.quota["npm"], r.inCorpus["pypi"], r.quota["pypi"])
	if len(r.pending) >= o.commitEvery {
		r.commit(false)
	}
}

// pinVersion applies amendment 2 to c, a candidate added without a
// registry lookup: it gets its version now, on its first lookup (rule 3),
// pinned; a name the registry does not have is no candidate (rule 2) and
// goes to dropped.tsv. It reports whether c is to be recorded; when not,
// c's turn has ended.
func (r *runner) pinVersion(c *candidate) bool {
	d, err := r.reg.lookup(c.Eco, c.Name)
	r.mu.Lock()
	switch {
	case err != nil:
		r.lookupFailed[c] = true
		r.logp("lookup %s:%s failed (no outcome; tried again in the next run): %v", c.Eco, c.Name, err)
	case !d.Found || d.Version == "":
		why := c.Name + ": not on " + c.Eco
		if d.Found {
			why = c.Name + ": the registry marks no latest version"
		}
		for _, src := range c.Sources {
			s, ref, _ := strings.Cut(src, ":")
			r.drops = append(r.drops, []string{s, ref, c.Eco, "", "", "no name counts (rule 2): " + why})
		}
		for i, x := range r.list {
			if x == c {
				r.list = append(r.list[:i:i], r.list[i+1:]...)
				break
			}
		}
		r.logp("lookup %s:%s: %s; to dropped.tsv", c.Eco, c.Name, why)
		r.pending = append(r.pending, c)
		if err := r.save(); err != nil {
			r.logp("writing the files: %v", err)
		}
	default:
		c.Version = d.Version
		r.logp("lookup %s:%s: latest %s, pinned (rule 3)", c.Eco, c.Name, c.Version)
		if err := r.save(); err != nil {
			r.logp("writing the files: %v", err)
		}
	}
	if c.Version == "" || r.stopping {
		r.release(c)
		r.mu.Unlock()
		return false
	}
	r.mu.Unlock()
	return true
}

// cmdOutcomes computes every recorded candidate's outcome again from its
// recording (after a change to classify); outcomes that came from the
// recorder's log (no recording) are kept.
func cmdOutcomes(args []string) error {
	fs := flag.NewFlagSet("outcomes", flag.ExitOnError)
	dir := fs.String("dir", "benchmark/realcorpus", "the corpus directory")
	qNPM := fs.Int("npm", 110, "npm quota (rule 7)")
	qPyPI := fs.Int("pypi", 60, "PyPI quota (rule 7)")
	_ = fs.Parse(args) // ExitOnError: Parse exits on a bad flag
	path := filepath.Join(*dir, "candidates.tsv")
	list, err := readCandidates(path)
	if err != nil {
		return err
	}
	changed := 0
	for _, c := range list {
		base := baseOutcome(c.Outcome)
		if base == "" || strings.HasPrefix(base, "not recorded") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(*dir, "recordings", c.ID+".inspector.json"))
		if err != nil {
			continue
		}
		if o := classify(b); o != "" && o != base {
			fmt.Printf("%s:%s: %s\n    -> %s\n", c.Eco, c.Name, base, o)
			c.Outcome = o
			changed++
		}
	}
	fmt.Printf("%d outcomes changed\n", changed)
	relabel(list, map[string]int{"npm": *qNPM, "pypi": *qPyPI})
	if err := writeCandidates(path, list); err != nil {
		return err
	}
	return writeCorpusFiles(*dir, list)
}

// beyondPrefix marks a recorded candidate that comes after its ecosystem's
// cut-off in rule order (the quota was met by candidates before it, some of
// them added by amendment 2): it is not in the corpus; what its recording
// gave follows the prefix.
const beyondPrefix = "beyond the quota (rule 7, after amendment 2); as recorded: "

func baseOutcome(o string) string { return strings.TrimPrefix(o, beyondPrefix) }

// relabel applies rule 7 per ecosystem in rule order: walking the
// candidates of an ecosystem in order, once the quota is in the corpus and
// every candidate before that point has an outcome, each later candidate
// that was recorded is beyond the quota. Labels are computed again from
// the recorded outcomes each time (so a cut-off that moves moves them). It
// returns the servers in the corpus per ecosystem.
func relabel(list []*candidate, quota map[string]int) map[string]int {
	count := map[string]int{}
	gap := map[string]bool{}
	cut := map[string]bool{}
	for _, c := range list {
		b := baseOutcome(c.Outcome)
		recorded := b != "" && !strings.HasPrefix(b, "not recorded")
		if cut[c.Eco] {
			if recorded {
				c.Outcome = beyondPrefix + b
			}
			continue
		}
		c.Outcome = b
		switch {
		case b == "in corpus":
			count[c.Eco]++
		case !recorded:
			gap[c.Eco] = true
		}
		if count[c.Eco] >= quota[c.Eco] && !gap[c.Eco] {
			cut[c.Eco] = true
		}
	}
	in := map[string]int{}
	for _, c := range list {
		if c.Outcome == "in corpus" {
			in[c.Eco]++
		}
	}
	return in
}

func rankOf(list []*candidate, c *candidate) string {
	for i, x := range list {
		if x == c {
			return fmt.Sprint(i + 1)
		}
	}
	return "?"
}

func logPath(o runOpts, c *candidate) string {
	return filepath.Join(o.logdir, "logs", c.ID+".log")
}

// targetOf is the candidate's pinned target in verifymcp's batch-list form.
func targetOf(c *candidate) string {
	if c.Eco == "pypi" {
		return "pypi:" + c.Name + "==" + c.Version
	}
	return "npm:" + c.Name + "@" + c.Version
}

func recordCmd(o runOpts, c *candidate) *exec.Cmd {
	lines := filepath.Join(o.logdir, "lines", c.ID+".txt")
	if err := os.WriteFile(lines, []byte(targetOf(c)+"  # id: "+c.ID+"\n"), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "record %s: %v (the recorder will fail without its list)\n", c.ID, err)
	}
	cmd := exec.Command("bash", o.record, c.ID)
	cmd.Env = append(os.Environ(),
		"SERVERS="+lines,
		"OUT="+filepath.Join(o.dir, "recordings"),
		"TREES="+filepath.Join(o.dir, "trees"),
		"TOOLCHAIN="+o.toolchain,
		"RETRY_ENV=1",
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// recordOne runs the recorder for one candidate and returns its outcome
// ("" when the recorder itself failed).
func recordOne(o runOpts, c *candidate, cmd *exec.Cmd) string {
	rec := filepath.Join(o.dir, "recordings", c.ID+".inspector.json")
	os.Remove(rec)
	os.Remove(filepath.Join(o.dir, "trees", c.ID+".txt"))
	lf, err := os.Create(logPath(o, c))
	if err != nil {
		return ""
	}
	defer lf.Close()
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(lf, "start:", err)
		return ""
	}
	timedOut := false
	timer := time.AfterFunc(o.maxPer, func() {
		timedOut = true
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // gone already is fine
		time.AfterFunc(30*time.Second, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	})
	err = cmd.Wait()
	timer.Stop()
	fmt.Fprintf(lf, "record.sh: %v\n", err)
	if timedOut {
		os.Remove(rec)
		return fmt.Sprintf("timed out: the recording took over %s", o.maxPer)
	}
	if b, err := os.ReadFile(rec); err == nil {
		return classify(b)
	}
	log, _ := os.ReadFile(logPath(o, c))
	return classifyLog(string(log))
}

var (
	configRE = regexp.MustCompile(`(?i)usage:|\brequired\b|\bmissing\b|not (been )?set|not configured|not provided|must (be )?(set|provide|specify|supply|configure)|please (set|provide|specify|configure)|api[ _-]?key|access[ _-]?token|credentials?|environment variable|the following arguments|no such option|unrecognized arguments`)
	detailRE = regexp.MustCompile(`(?i)error|exception|required|missing|not set|must|usage|invalid|cannot|can't|failed|denied|refused|not found`)
	// loadRE: the server's code could not even load or start against its
	// installed dependencies (a crash, whatever configuration it has).
	loadRE  = regexp.MustCompile(`(?i)ModuleNotFoundError|ImportError|cannot import name|SyntaxError|ERR_MODULE_NOT_FOUND|ERR_REQUIRE_ESM|ERR_PACKAGE_PATH_NOT_EXPORTED|Cannot find (module|package)|TypeError: \S+\(\) (got an unexpected keyword|no longer accepts|missing \d+ required)|AttributeError: ('\w+' object|module '[\w.]+') has no attribute`)
	excRE   = regexp.MustCompile(`^\s*(\| )?([A-Za-z_][\w.]*(Error|Exception|Exit)|Error)\b[^(]*?:`)
	noiseRE = regexp.MustCompile(`(?i)^\s*(\| )?(Traceback \(most recent call last\)|During handling of the above exception|The above exception was the direct cause|\+ Exception Group Traceback)`)
)

func oneLine(s string, n int) string {
	s = clean(strings.Join(strings.Fields(s), " "))
	if len([]rune(s)) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}

// detail picks the line of a server's stderr that says most: the last that
// names an error, else the last.
func detail(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if excRE.MatchString(lines[i]) && !noiseRE.MatchString(lines[i]) {
			return oneLine(lines[i], 160)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if detailRE.MatchString(lines[i]) && strings.TrimSpace(lines[i]) != "" && !noiseRE.MatchString(lines[i]) {
			return oneLine(lines[i], 160)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return oneLine(lines[i], 160)
		}
	}
	return "no output on stderr"
}

// classify reads a recording and says why the candidate is in the corpus or
// not (rule 6: tools/list answered).
func classify(b []byte) string {
	var r struct {
		Listable       *bool           `json:"listable"`
		NotListable    string          `json:"not_listable"`
		InstallCommand string          `json:"install_command"`
		Summary        map[string]any  `json:"summary"`
		ToolsList      json.RawMessage `json:"tools/list"`
		StderrHead     []string        `json:"server_stderr_head"`
		NonJSON        []string        `json:"server_non_json_stdout"`
		Exit           *struct {
			Code   *int
			Signal *string
		} `json:"server_exit_after_initialize_run"`
		Retry *struct {
			Names []string `json:"env_names_added"`
		} `json:"env_retry"`
		Initialize json.RawMessage    `json:"initialize"`
		Seconds    map[string]float64 `json:"inspector_seconds"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return ""
	}
	if r.InstallCommand != "" {
		return oneLine(r.NotListable, 220)
	}
	if r.Listable != nil && !*r.Listable {
		out := append(append([]string{}, r.StderrHead...), r.NonJSON...)
		d := detail(out)
		also := ""
		if r.Retry != nil {
			also = ", also with " + strings.Join(r.Retry.Names, ", ") + " set to placeholder"
		}
		switch {
		case r.Exit == nil:
			return "timed out: no answer to initialize and the server did not exit" + also + ": " + d
		case r.Seconds["initialize"] >= 110:
			return fmt.Sprintf("timed out: no answer to initialize within the Inspector's connect timeout (%.0f s)%s: %s", r.Seconds["initialize"], also, d)
		case !loadRE.MatchString(strings.Join(out, "\n")) && (r.Retry != nil || configRE.MatchString(strings.Join(out, "\n"))):
			return "needs configuration: exited without answering initialize" + also + ": " + d
		default:
			how := "exited"
			if r.Exit.Code != nil {
				how = fmt.Sprintf("exited with code %d", *r.Exit.Code)
			} else if r.Exit.Signal != nil {
				how = "killed by " + *r.Exit.Signal
			}
			return "crashed: " + how + " without answering initialize" + also + ": " + d
		}
	}
	switch v := r.Summary["tools/list"].(type) {
	case float64:
		return "in corpus"
	case string:
		var t map[string]any
		_ = json.Unmarshal(r.ToolsList, &t) // a malformed record leaves t empty: the plain outcome below
		if v == "unsupported" {
			if u, _ := t["unsupported"].(string); strings.Contains(u, "no tools capability") {
				return "no tools capability (tools/list not answered)"
			}
			return "tools/list unsupported (-32601)"
		}
		e, _ := json.Marshal(t["error"])
		return "tools/list failed: " + oneLine(string(e), 160)
	}
	return ""
}

// classifyLog: no recording was written (npm install failure, no entry
// point): the recorder's log says why.
func classifyLog(log string) string {
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		if strings.Contains(l, ": install failed:") {
			var errs []string
			for _, x := range lines[i+1:] {
				if strings.HasPrefix(x, "npm error") && !strings.Contains(x, "A complete log") && !strings.Contains(x, "/.npm/_logs/") {
					errs = append(errs, strings.TrimSpace(strings.TrimPrefix(x, "npm error")))
				}
			}
			if len(errs) > 3 {
				errs = errs[:3]
			}
			return "install failed: " + oneLine(strings.Join(errs, "; "), 200)
		}
		if strings.Contains(l, "record-lib.js bin:") {
			return "no entry point: " + oneLine(strings.TrimPrefix(l[strings.Index(l, "record-lib.js bin:"):], "record-lib.js bin: "), 200)
		}
	}
	return ""
}

// writeCorpusFiles writes servers.txt (the corpus in verifymcp's batch-list
// format, as recorded: placeholders only) and split.tsv (rule 8) from the
// candidates in the corpus, in rule order.
func writeCorpusFiles(dir string, list []*candidate) error {
	var sb strings.Builder
	sb.WriteString(`# The real-surface corpus (benchmark/realcorpus/README.md): the candidates of
# candidates.tsv whose tools/list answered when bench/inspector/record.sh
# recorded them, in rule order, in verifymcp's batch-list format. No
# arguments; --env only where rule 6's one retry set names the server's
# output asked for, each to the value "placeholder" (never a credential).
# Each line's comment: id, ecosystem, side (rule 8). Written by
# "go run ./bench/realcorpus run"; recordings in recordings/ID.inspector.json.
`)
	var split [][]string
	// Rule 9 moves recorded in split.tsv are kept (side, date, reason).
	moved := map[string][]string{}
	if rows, _, err := readTSV(filepath.Join(dir, "split.tsv")); err == nil {
		for _, r := range rows {
			if r["moved_date"] != "" {
				moved[r["ecosystem"]+":"+r["name"]] = []string{r["side"], r["moved_date"], r["reason"]}
			}
		}
	}
	npmIDs := map[string]bool{}
	for _, c := range list {
		if c.Outcome == "in corpus" && c.Eco == "npm" {
			npmIDs[npmSlug(c.Name)] = true
		}
	}
	for _, c := range list {
		if c.Outcome != "in corpus" {
			continue
		}
		line := targetOf(c)
		if envs, err := envNamesOf(filepath.Join(dir, "recordings", c.ID+".inspector.json")); err == nil {
			for _, e := range envs {
				line += " --env " + e + "=placeholder"
			}
		}
		derived := npmSlug(c.Name)
		if c.Eco == "pypi" {
			derived = c.Name
			if npmIDs[derived] {
				derived = "pypi-" + derived
			}
		}
		if derived != c.ID {
			line += "  # id: " + c.ID
		}
		if m, ok := moved[c.Eco+":"+c.Name]; ok {
			fmt.Fprintf(&sb, "\n# %s: %s, %s (moved %s, rule 9)\n%s\n", c.ID, c.Eco, m[0], m[1], line)
			split = append(split, []string{c.Eco, c.Name, c.Version, c.ID, m[0], m[1], m[2]})
			continue
		}
		fmt.Fprintf(&sb, "\n# %s: %s, %s\n%s\n", c.ID, c.Eco, c.Side, line)
		_, b := splitOf(c.Eco, c.Name)
		split = append(split, []string{c.Eco, c.Name, c.Version, c.ID, c.Side, "", fmt.Sprintf("rule 8: first byte of sha256(verifymcp-split-v1:%s:%s) is %d, %d mod 3 = %d", c.Eco, c.Name, b, b, b%3)})
	}
	if err := os.WriteFile(filepath.Join(dir, "servers.txt.tmp"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, "servers.txt.tmp"), filepath.Join(dir, "servers.txt")); err != nil {
		return err
	}
	return writeTSV(filepath.Join(dir, "split.tsv"), []string{"ecosystem", "name", "version", "id", "side", "moved_date", "reason"}, len(split), func(i int) []string { return split[i] })
}

func envNamesOf(rec string) ([]string, error) {
	b, err := os.ReadFile(rec)
	if err != nil {
		return nil, err
	}
	var r struct {
		EnvNames []string `json:"env_names"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	sort.Strings(r.EnvNames)
	return r.EnvNames, nil
}

// gitCommit commits these paths only (other people's staged work is left
// alone), trying again while another commit holds the index.
func gitCommit(paths []string, msg string) error {
	var last error
	for i := 0; i < 20; i++ {
		if i > 0 {
			time.Sleep(time.Duration(3+i) * time.Second)
		}
		add := exec.Command("git", append([]string{"add", "--"}, paths...)...)
		var out bytes.Buffer
		add.Stdout, add.Stderr = &out, &out
		if err := add.Run(); err != nil {
			last = fmt.Errorf("git add: %v: %s", err, strings.TrimSpace(out.String()))
			continue
		}
		out.Reset()
		ci := exec.Command("git", append([]string{"commit", "-q", "-m", msg, "--"}, paths...)...)
		ci.Stdout, ci.Stderr = &out, &out
		if err := ci.Run(); err != nil {
			if strings.Contains(out.String(), "nothing to commit") || strings.Contains(out.String(), "no changes added") {
				return nil
			}
			last = fmt.Errorf("git commit: %v: %s", err, strings.TrimSpace(out.String()))
			continue
		}
		return nil
	}
	return last
}

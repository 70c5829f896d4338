// Command scanbench measures the wall time of each phase of a cold and a
// warm sandboxed scan, beside the unsandboxed baseline the issue names:
// `npx @modelcontextprotocol/inspector --cli node <entry> --method tools/list`
// on the same machine. It drives the real verifymcp binary, reads the phase
// timings from the evidence bundles the scans saved, and prints medians.
//
//	go run ./bench/scanbench -bin bin/verifymcp -runs 5
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"github.com/verifymcp/verifymcp/bench/internal/benchutil"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type bundle struct {
	Run struct {
		ID string `json:"id"`
	} `json:"run"`
	Signals map[string]struct {
		DurationMS int64 `json:"duration_ms"`
	} `json:"signals"`
	Sandbox struct {
		Outcome string `json:"outcome"`
	} `json:"sandbox"`
	Install struct {
		FetchMS   int64 `json:"fetch_ms"`
		ScriptsMS int64 `json:"scripts_ms"`
		TreeCache *struct {
			Hit bool `json:"hit"`
		} `json:"tree_cache"`
	} `json:"install"`
	Session struct {
		StartMS     int64 `json:"start_ms"`
		HandshakeMS int64 `json:"handshake_ms"`
		ListMS      int64 `json:"list_ms"`
	} `json:"session"`
}

type sample struct {
	wall                                     time.Duration
	resolve, fetch, scripts, start, hs, list int64
	outcome                                  string
	treeHit                                  bool
	sinkRSS                                  int64
}

var rssRe = regexp.MustCompile(`observer memory rss_bytes=(\d+)`)

func maxRSS(ss []sample) int64 {
	var m int64
	for _, s := range ss {
		if s.sinkRSS > m {
			m = s.sinkRSS
		}
	}
	return m
}

func main() {
	bin := flag.String("bin", "bin/verifymcp", "verifymcp binary")
	pkg := flag.String("pkg", "@modelcontextprotocol/server-everything", "npm package")
	version := flag.String("version", "2026.8.31", "exact version")
	entry := flag.String("entry", "dist/index.js", "entry file inside the package, for the baseline")
	runs := flag.Int("runs", 5, "warm scans and baseline runs")
	colds := flag.Int("cold", 1, "cold scans (caches removed before each)")
	flag.Parse()

	abs, err := filepath.Abs(*bin)
	benchutil.Check(err)
	data, err := os.MkdirTemp("", "scanbench-data")
	benchutil.Check(err)
	defer os.RemoveAll(data)
	target := "npm:" + *pkg + "@" + *version

	scan := func(extra ...string) sample {
		start := time.Now()
		// -v: the observer's memory is logged for --verbose only.
		args := append([]string{"scan", "-v", "--format", "json", "--data-dir", data}, extra...)
		cmd := exec.Command(abs, append(args, target)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			fmt.Fprintf(os.Stderr, "scan failed: %v\n%s\n", err, stderr.String())
			os.Exit(1)
		}
		s := lastBundle(data, wall)
		if m := rssRe.FindStringSubmatch(stderr.String()); m != nil {
			s.sinkRSS, _ = strconv.ParseInt(m[1], 10, 64)
		}
		return s
	}

	fmt.Printf("scanbench: %s, %d cold and %d warm scans, %d baseline runs (%s)\n", target, *colds, *runs, *runs, time.Now().UTC().Format(time.RFC3339))
	var cold, warm, bare, noIdle []sample
	for i := 0; i < *colds; i++ {
		prune := exec.Command(abs, "sandbox", "prune", "--cache", "--data-dir", data)
		if out, err := prune.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "prune: %v\n%s", err, out)
			os.Exit(1)
		}
		cold = append(cold, scan())
	}
	for i := 0; i < *runs; i++ {
		warm = append(warm, scan())
		noIdle = append(noIdle, scan("--idle", "0"))
		bare = append(bare, scan("--no-behavior"))
	}

	// The baseline: the package installed on the host, listed by the
	// inspector CLI, unsandboxed.
	base, err := os.MkdirTemp("", "scanbench-baseline")
	benchutil.Check(err)
	defer os.RemoveAll(base)
	benchutil.Run(base, "npm", "init", "-y")
	benchutil.Run(base, "npm", "install", "--no-audit", "--no-fund", *pkg+"@"+*version, "@modelcontextprotocol/inspector")
	entryPath := filepath.Join(base, "node_modules", *pkg, *entry)
	benchutil.Run(base, "npx", "-y", "@modelcontextprotocol/inspector", "--cli", "node", entryPath, "--method", "tools/list") // warm npx
	var baseline []time.Duration
	for i := 0; i < *runs; i++ {
		start := time.Now()
		benchutil.Run(base, "npx", "-y", "@modelcontextprotocol/inspector", "--cli", "node", entryPath, "--method", "tools/list")
		baseline = append(baseline, time.Since(start))
	}

	fmt.Println()
	fmt.Printf("%-6s %8s %8s %8s %8s %8s %9s %6s %8s\n", "scan", "wall", "resolve", "fetch", "scripts", "start", "handshake", "list", "tree")
	show := func(name string, ss []sample) {
		for _, s := range ss {
			fmt.Printf("%-6s %7.2fs %6dms %6dms %6dms %6dms %7dms %4dms %8v  (%s)\n", name, s.wall.Seconds(), s.resolve, s.fetch, s.scripts, s.start, s.hs, s.list, hitStr(s.treeHit), s.outcome)
		}
	}
	show("cold", cold)
	show("warm", warm)
	show("w-idle0", noIdle)
	show("w-bare", bare)
	wm := benchutil.Median(walls(warm))
	bm := benchutil.Median(baseline)
	nb := benchutil.Median(walls(bare))
	ni := benchutil.Median(walls(noIdle))
	fmt.Println()
	fmt.Printf("cold scan (median):                             %.2fs\n", benchutil.Median(walls(cold)).Seconds())
	fmt.Printf("warm scan, behaviour watched, --idle 2s:        %.2fs\n", wm.Seconds())
	fmt.Printf("warm scan, behaviour watched, --idle 0:         %.2fs\n", ni.Seconds())
	fmt.Printf("warm scan, --no-behavior:                       %.2fs\n", nb.Seconds())
	fmt.Printf("behaviour capture cost (idle 0 - no-behavior):  %.0fms\n", float64((ni - nb).Milliseconds()))
	fmt.Printf("sink resident memory (max over warm scans):     %.1f MiB (target: under 30 MB)\n", float64(maxRSS(warm))/(1<<20))
	fmt.Printf("unsandboxed inspector tools/list:               %.2fs (median of %s)\n", bm.Seconds(), benchutil.Durs(baseline))
	fmt.Printf("warm scan / baseline:                           %.2fx with behaviour, %.2fx without (target: at most 2x)\n", wm.Seconds()/bm.Seconds(), nb.Seconds()/bm.Seconds())
}

func hitStr(b bool) string {
	if b {
		return "hit"
	}
	return "miss"
}

func lastBundle(data string, wall time.Duration) sample {
	raw := benchutil.NewestBundle(data)
	var b bundle
	benchutil.Check(json.Unmarshal(raw, &b))
	s := sample{wall: wall, resolve: b.Signals["registry"].DurationMS, fetch: b.Install.FetchMS, scripts: b.Install.ScriptsMS,
		start: b.Session.StartMS, hs: b.Session.HandshakeMS, list: b.Session.ListMS, outcome: b.Sandbox.Outcome}
	if b.Install.TreeCache != nil {
		s.treeHit = b.Install.TreeCache.Hit
	}
	return s
}

func walls(ss []sample) []time.Duration {
	var out []time.Duration
	for _, s := range ss {
		out = append(out, s.wall)
	}
	return out
}

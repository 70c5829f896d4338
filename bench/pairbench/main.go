// Command pairbench measures a warm default scan (behaviour watched, the
// idle watch, every third party asked) of real servers against the
// unsandboxed MCP Inspector CLI listing the same server, in alternating
// pairs so that both see the same machine load, and a scan from a second,
// empty data directory of a package another store already cached.
//
//	go run ./bench/pairbench -bin bin/verifymcp -pairs 5
//
// The Inspector runs `node <entry> [args]` of the same exact version,
// installed on the host with --ignore-scripts (no package code runs at
// install); it is the reference the figures are printed beside.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/bench/internal/benchutil"
)

type server struct {
	pkg, version, entry string
	args                []string
}

var servers = []server{
	{"@modelcontextprotocol/server-memory", "2026.8.31", "dist/index.js", nil},
	{"@modelcontextprotocol/server-everything", "2026.8.31", "dist/index.js", nil},
	{"@modelcontextprotocol/server-filesystem", "2026.8.31", "dist/index.js", []string{"/tmp"}},
}

const inspector = "@modelcontextprotocol/inspector@2.12.0"

func main() {
	bin := flag.String("bin", "bin/verifymcp", "verifymcp binary")
	pairs := flag.Int("pairs", 5, "alternating pairs (scan, Inspector listing) per server")
	flag.Parse()
	abs, err := filepath.Abs(*bin)
	benchutil.Check(err)
	data, err := os.MkdirTemp("", "pairbench-data")
	benchutil.Check(err)
	defer os.RemoveAll(data)
	base, err := os.MkdirTemp("", "pairbench-inspector")
	benchutil.Check(err)
	defer os.RemoveAll(base)

	pkgs := []string{inspector}
	for _, s := range servers {
		pkgs = append(pkgs, s.pkg+"@"+s.version)
	}
	benchutil.Run(base, "npm", "init", "-y")
	benchutil.Run(base, "npm", append([]string{"install", "--ignore-scripts", "--no-audit", "--no-fund"}, pkgs...)...)
	cli := filepath.Join(base, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	if _, err := os.Stat(cli); err != nil {
		cli = filepath.Join(base, "node_modules", ".bin", "mcp-inspector")
	}

	// scan returns the scan's wall time and that time less its idle watch
	// (read from the bundle it stored), the fixed window of watching after
	// the listing that the Inspector does not do.
	scan := func(dir string, s server) (time.Duration, time.Duration) {
		args := []string{"scan", "--format", "json", "-o", os.DevNull, "--data-dir", dir}
		for _, a := range s.args {
			args = append(args, "--arg", a)
		}
		args = append(args, "npm:"+s.pkg+"@"+s.version)
		start := time.Now()
		cmd := exec.Command(abs, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		// Exit 1 is a gate failing on a finding: still a complete scan.
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				fmt.Fprintf(os.Stderr, "scan %s: %v\n%s", s.pkg, err, stderr.String())
				os.Exit(1)
			}
		}
		wall := time.Since(start)
		return wall, wall - idleOf(dir)
	}
	// The reference, as earlier figures and the issue measured it: npx
	// starting the locally installed Inspector. The Inspector started by
	// node directly (no npx) is printed beside it.
	list := func(s server, npx bool) time.Duration {
		args := append([]string{"--cli", "node", filepath.Join(base, "node_modules", s.pkg, s.entry)}, s.args...)
		args = append(args, "--method", "tools/list")
		start := time.Now()
		if npx {
			benchutil.Run(base, "npx", append([]string{"-y", "@modelcontextprotocol/inspector"}, args...)...)
		} else {
			benchutil.Run(base, "node", append([]string{cli}, args...)...)
		}
		return time.Since(start)
	}

	fmt.Printf("pairbench: %d pairs per server, %s (%s)\n\n", *pairs, inspector, time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("%-50s %7s %11s %7s %12s %7s %10s %7s\n", "server (medians)", "scan", "npx inspect", "ratio", "node inspect", "ratio", "scan-idle", "ratio")
	var rows []string
	for _, s := range servers {
		_, _ = scan(data, s) // warm the caches
		list(s, true)
		var sc, si, in, nd []time.Duration
		for range *pairs {
			w, ni := scan(data, s)
			sc, si = append(sc, w), append(si, ni)
			in = append(in, list(s, true))
			nd = append(nd, list(s, false))
		}
		ms, mi, mn, mx := benchutil.Median(sc), benchutil.Median(in), benchutil.Median(nd), benchutil.Median(si)
		fmt.Printf("%-50s %6.2fs %10.2fs %6.2fx %11.2fs %6.2fx %9.2fs %6.2fx\n", s.pkg+"@"+s.version, ms.Seconds(), mi.Seconds(), ms.Seconds()/mi.Seconds(), mn.Seconds(), ms.Seconds()/mn.Seconds(), mx.Seconds(), mx.Seconds()/mi.Seconds())
		rows = append(rows, fmt.Sprintf("  %s: scans %s; npx %s; node %s", s.pkg, benchutil.Durs(sc), benchutil.Durs(in), benchutil.Durs(nd)))
	}
	fmt.Println("target: scan at most 1.0x the npx Inspector listing, measured in alternating pairs")
	fmt.Println("scan-idle: the scan less its idle watch (2 s after the listing, kept at full length), against the npx listing")
	fmt.Println(strings.Join(rows, "\n"))

	// A second store: a fresh data directory scanning a package whose tree
	// another store cached, against a warm scan of the first.
	s := servers[0]
	var warm, fresh []time.Duration
	for range *pairs {
		w, _ := scan(data, s)
		warm = append(warm, w)
		dir, err := os.MkdirTemp("", "pairbench-second")
		benchutil.Check(err)
		f, _ := scan(dir, s)
		fresh = append(fresh, f)
		os.RemoveAll(dir)
	}
	mw, mf := benchutil.Median(warm), benchutil.Median(fresh)
	fmt.Printf("\nsecond data directory, %s already cached by another: %.2fs against %.2fs warm, %.2fx (target: at most 1.2x); fresh %s, warm %s\n",
		s.pkg, mf.Seconds(), mw.Seconds(), mf.Seconds()/mw.Seconds(), benchutil.Durs(fresh), benchutil.Durs(warm))
}

// idleOf returns the idle watch of the newest bundle stored under dir.
func idleOf(dir string) time.Duration {
	raw := benchutil.NewestBundle(dir)
	var b struct {
		Behavior *struct {
			Watches []struct {
				Phase  string `json:"phase"`
				IdleMS int64  `json:"idle_ms"`
			} `json:"watches"`
		} `json:"behavior"`
	}
	benchutil.Check(json.Unmarshal(raw, &b))
	if b.Behavior != nil {
		for _, w := range b.Behavior.Watches {
			if w.Phase == "run" {
				return time.Duration(w.IdleMS) * time.Millisecond
			}
		}
	}
	return 0
}

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
	"errors"
	"flag"
	"fmt"
	"github.com/verifymcp/verifymcp/bench/internal/benchutil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
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

	scan := func(dir string, s server) time.Duration {
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
		return time.Since(start)
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
	fmt.Printf("%-50s %7s %11s %7s %12s %7s\n", "server (medians)", "scan", "npx inspect", "ratio", "node inspect", "ratio")
	var rows []string
	for _, s := range servers {
		scan(data, s) // warm the caches
		list(s, true)
		var sc, in, nd []time.Duration
		for range *pairs {
			sc = append(sc, scan(data, s))
			in = append(in, list(s, true))
			nd = append(nd, list(s, false))
		}
		ms, mi, mn := benchutil.Median(sc), benchutil.Median(in), benchutil.Median(nd)
		fmt.Printf("%-50s %6.2fs %10.2fs %6.2fx %11.2fs %6.2fx\n", s.pkg+"@"+s.version, ms.Seconds(), mi.Seconds(), ms.Seconds()/mi.Seconds(), mn.Seconds(), ms.Seconds()/mn.Seconds())
		rows = append(rows, fmt.Sprintf("  %s: scans %s; npx %s; node %s", s.pkg, benchutil.Durs(sc), benchutil.Durs(in), benchutil.Durs(nd)))
	}
	fmt.Println("target: scan at most 1.0x the npx Inspector listing, measured in alternating pairs")
	fmt.Println(strings.Join(rows, "\n"))

	// A second store: a fresh data directory scanning a package whose tree
	// another store cached, against a warm scan of the first.
	s := servers[0]
	var warm, fresh []time.Duration
	for range *pairs {
		warm = append(warm, scan(data, s))
		dir, err := os.MkdirTemp("", "pairbench-second")
		benchutil.Check(err)
		fresh = append(fresh, scan(dir, s))
		os.RemoveAll(dir)
	}
	mw, mf := benchutil.Median(warm), benchutil.Median(fresh)
	fmt.Printf("\nsecond data directory, %s already cached by another: %.2fs against %.2fs warm, %.2fx (target: at most 1.2x); fresh %s, warm %s\n",
		s.pkg, mf.Seconds(), mw.Seconds(), mf.Seconds()/mw.Seconds(), benchutil.Durs(fresh), benchutil.Durs(warm))
}

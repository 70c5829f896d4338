//go:build linux

// Command sinkd runs the network sink as a container's only process: it
// installs the redirect rules in its network namespace, then serves, with
// control lines on stdin and events on stdout. The product wires the same
// two calls into its own binary; this one exists so that the Docker tests
// can build a helper image from the sink package alone.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/verifymcp/verifymcp/sandbox/sink"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("sinkd", flag.ContinueOnError)
	tcpPort := fs.Int("tcp-port", sink.DefaultTCPPort, "port redirected TCP arrives on")
	udpPort := fs.Int("udp-port", sink.DefaultUDPPort, "port redirected UDP arrives on")
	advertise := fs.String("advertise", "", "address DNS answers give out (default: IPv4 of eth0)")
	noInstall := fs.Bool("no-install", false, "do not install the nftables rules")
	memLimit := fs.Int64("mem-limit", 24<<20, "soft Go memory limit in bytes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// A soft limit keeps the garbage collector ahead of bursts of large
	// captures, so that resident memory stays near the live set.
	debug.SetMemoryLimit(*memLimit)
	cfg := sink.Config{TCPPort: *tcpPort, UDPPort: *udpPort}
	if *advertise != "" {
		if cfg.Advertise = net.ParseIP(*advertise); cfg.Advertise == nil {
			fmt.Fprintf(os.Stderr, "sinkd: bad -advertise %q\n", *advertise)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if !*noInstall {
		if err := sink.Install(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "sinkd:", err)
			return 1
		}
	}
	if err := sink.Serve(ctx, cfg, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sinkd:", err)
		return 1
	}
	return 0
}

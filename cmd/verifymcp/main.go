// Command verifymcp scans one exact published MCP server package in a
// hardened Docker sandbox and reports its contract, reason codes and score.
package main

import (
	"context"
	"os"

	"github.com/verifymcp/verifymcp/cmd/verifymcp/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// Command buildweb builds the config scan's browser page into a folder
// (make web: bin/web). See package web.
//
//	go run ./web/buildweb -o bin/web -version v1.2.3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/verifymcp/verifymcp/web"
)

func main() {
	out := flag.String("o", "bin/web", "folder to write the page into")
	version := flag.String("version", "0.1.0-dev", "tool version the page's reports name")
	flag.Parse()
	if err := web.Build(context.Background(), *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "buildweb:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "buildweb: wrote", *out)
}

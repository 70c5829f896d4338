package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

// unsetVersion is Version's value in a build that did not set it with
// -ldflags (see cli.go).
const unsetVersion = "0.1.0-dev"

// A build that did not set Version with -ldflags (`go install
// github.com/verifymcp/verifymcp/cmd/verifymcp@v1.2.3`, or `go build` in a
// clone) still names the code it is: every result carries the tool
// version.
func init() { Version = buildVersion(Version, debug.ReadBuildInfo) }

// buildVersion returns set when the build set it; else the module version
// the go command recorded (v1.2.3 from go install, a pseudo-version from
// go build in a clone); else, when that is "(devel)", the unset version
// with the commit, if the build recorded one.
func buildVersion(set string, read func() (*debug.BuildInfo, bool)) string {
	if set != unsetVersion {
		return set
	}
	bi, ok := read()
	if !ok {
		return set
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return set
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return set + "+" + rev
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tool, rubric, evidence and report schema versions and the sandbox recipe",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r := rubric.Current()
			fmt.Fprintf(g.stdout, "verifymcp %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(g.stdout, "rubric:   %s (%s); known: %s\n", r.Version, r.Hash, strings.Join(rubric.Versions(), ", "))
			fmt.Fprintf(g.stdout, "evidence: %s\n", evidence.SchemaVersion)
			fmt.Fprintf(g.stdout, "report:   %s\n", report.SchemaVersion)
			fmt.Fprintf(g.stdout, "sandbox:  %s\n", image.Ref())
			fmt.Fprintf(g.stdout, "helper:   %s\n", helperLine(sandbox.HelperArches()))
			return nil
		},
	}
}

// helperLine says which engines this binary can supply the helper for.
func helperLine(arches []string) string {
	if len(arches) == 0 {
		return "none for any engine; set " + sandbox.HelperBinaryEnv + " to a static Linux build for the engine's architecture"
	}
	for i, a := range arches {
		arches[i] = "linux/" + a
	}
	return "for " + strings.Join(arches, " and ") + " engines (others: set " + sandbox.HelperBinaryEnv + ")"
}

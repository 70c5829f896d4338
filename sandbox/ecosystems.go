package sandbox

import (
	"context"
	"hash"

	"github.com/verifymcp/verifymcp/ecosystem"
	"github.com/verifymcp/verifymcp/evidence"
)

// installer is the sandbox's part of one package ecosystem: what a scan
// runs on, the install phase's drivers and their entry-point rule, the
// run phase's environment and the tree-cache key. install.go (npm) and
// pyinstall.go (PyPI) hold the two; installers is the one table that
// names them. What is not the sandbox's (names, pins, package URLs,
// lockfiles) is asked of package ecosystem.
type installer interface {
	// scan runs Scan for a target of the ecosystem: s.scan on the image
	// the ecosystem's target needs.
	scan(ctx context.Context, s *Sandbox, runID string, t Target) (*Result, error)
	// install runs the install phase (see Sandbox.install).
	install(ctx context.Context, s *Sandbox, r *run, tree string, t Target, watchReady func() (observer, error)) (*evidence.Install, *targetInfo, []byte, string, error)
	// chooseBin picks the entry point the run phase starts.
	chooseBin(t Target, tgt *targetInfo) (*evidence.Bin, error)
	// baseEnv is the run phase's environment before the target's
	// variables: HOME and a PATH with the tree's executables first.
	baseEnv() []string
	// treeKey writes what identifies the fetched tree of t to h (see
	// Sandbox.treeKey).
	treeKey(s *Sandbox, h hash.Hash, t Target)
}

var installers = map[string]installer{"npm": npmInstaller{}, "pypi": pypiInstaller{}}

// installerOf is the installer of t's ecosystem ("" is npm's).
func installerOf(t Target) installer { return installers[ecosystem.MustOf(t.Ecosystem).Name()] }

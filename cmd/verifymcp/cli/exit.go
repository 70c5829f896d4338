package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/supplychain"
)

// Exit codes, documented in the README and in `verifymcp --help`.
const (
	// ExitOK: the command completed. For scan, a report was produced; what
	// the report found does not change the exit code unless --fail-on asks.
	ExitOK = 0
	// ExitGate: --fail-on: a finding at or above its severity was raised
	// (the report was written all the same).
	ExitGate = 1
	// ExitInternal: an unexpected error in verifymcp itself.
	ExitInternal = 70
	// ExitUsage: bad input: unknown flag, malformed target or package name,
	// unreadable or malformed file, unknown reason code or rubric version.
	ExitUsage = 2
	// ExitNotFound: the package, or the version asked for, is not in the registry.
	ExitNotFound = 3
	// ExitRegistry: the registry could not be reached or answered with an error.
	ExitRegistry = 4
	// ExitEngine: the Docker engine is missing, unreachable or failed a request.
	ExitEngine = 5
	// ExitImage: the sandbox image is missing and could not be built.
	ExitImage = 6
	// ExitInterrupted: stopped by SIGINT or SIGTERM (after cleaning up).
	ExitInterrupted = 130
)

const exitCodesHelp = `Exit codes:
  0    the command completed (scan: a report was produced, whatever it found,
       unless --fail-on says otherwise)
  1    --fail-on: a finding at or above that severity was raised (the report lists them)
  2    bad input: flag, target, package name, file, reason code or rubric version
  3    package or version not found in the registry
  4    registry unreachable or failing, from this machine or from the sandbox
       (TLS verification, DNS, refused or reset connections, 5xx); nothing is stored
  5    Docker engine missing, unreachable or failing (its networks included)
  6    sandbox or helper image missing and could not be built (no static Linux
       helper binary for the engine's architecture: see VERIFYMCP_HELPER_BINARY)
  70   internal error in verifymcp
  130  interrupted by SIGINT/SIGTERM (containers, networks and volumes removed)`

// usageError marks errors caused by what the user typed.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// gateError is --fail-on's verdict: the report was written, and named
// the findings that failed the gate.
type gateError struct{ tripped []string }

func (e gateError) Error() string {
	return fmt.Sprintf("--fail-on: %s", strings.Join(e.tripped, ", "))
}

// engineError and imageError mark infrastructure failures.
type engineError struct{ err error }

func (e engineError) Error() string { return e.err.Error() }
func (e engineError) Unwrap() error { return e.err }

// Is makes an engine failure met before the pipeline ran (connecting,
// the image) one with the pipeline's own: pipeline.ErrSandbox.
func (e engineError) Is(target error) bool { return target == pipeline.ErrSandbox }

type imageError struct{ err error }

func (e imageError) Error() string { return e.err.Error() }
func (e imageError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ue usageError
	var ee engineError
	var ie imageError
	var env *sandbox.EnvironmentError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, new(gateError)):
		return ExitGate
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &ue),
		errors.Is(err, pipeline.ErrBadTarget),
		errors.Is(err, pipeline.ErrUnsupported),
		errors.Is(err, supplychain.ErrBadName),
		errors.Is(err, sandbox.ErrBadBin),
		errors.Is(err, pipeline.ErrBadOption),
		errors.Is(err, batch.ErrVariant),
		errors.Is(err, store.ErrNotFound),
		errors.Is(err, supplychain.ErrBadServerName),
		errors.Is(err, supplychain.ErrRemoteOnly),
		errors.Is(err, supplychain.ErrNoScannablePackage):
		return ExitUsage
	case errors.Is(err, supplychain.ErrPackageNotFound), errors.Is(err, supplychain.ErrVersionNotFound),
		errors.Is(err, supplychain.ErrServerNotFound), errors.Is(err, supplychain.ErrServerDeleted):
		return ExitNotFound
	case errors.Is(err, supplychain.ErrRegistryUnreachable):
		return ExitRegistry
	case errors.As(err, &env):
		// An environment fault met in the sandbox: the engine's networking
		// (5), or the registry and the network beyond it (4).
		if env.Engine() {
			return ExitEngine
		}
		return ExitRegistry
	case errors.As(err, &ie), errors.Is(err, pipeline.ErrImage):
		return ExitImage
	case errors.As(err, &ee), errors.Is(err, pipeline.ErrSandbox):
		return ExitEngine
	default:
		return ExitInternal
	}
}

var _ = evidence.StateObserved

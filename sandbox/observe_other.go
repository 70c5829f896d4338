//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"io"
)

// ErrObserverNotLinux is returned by Observe on any system but Linux. The
// observer (the network sink and the exec tracer, which need nftables,
// network namespaces and ptrace) only ever runs inside the helper
// container, which is always a Linux binary for the engine's architecture
// (see SelectHelper); the scanner on the host never runs it.
var ErrObserverNotLinux = errors.New("the observer (network sink and exec tracer) runs only in the Linux helper container")

// Observe is the observer's program; see observe.go. On this system it
// returns ErrObserverNotLinux.
func Observe(ctx context.Context, in io.Reader, out io.Writer, caFile string) error {
	return ErrObserverNotLinux
}

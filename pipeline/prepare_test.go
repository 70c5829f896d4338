package pipeline

import (
	"errors"
	"io/fs"
	"testing"
)

// TestMarkKeepsMessageAndChain: a preparation failure says what failed in
// its own words, is the class the exit code is read from, and still
// carries its cause.
func TestMarkKeepsMessageAndChain(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "/proc/self/exe", Err: fs.ErrNotExist}
	err := mark(ErrImage, cause)
	if got, want := err.Error(), cause.Error(); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if !errors.Is(err, ErrImage) || errors.Is(err, ErrSandbox) {
		t.Errorf("errors.Is(ErrImage, ErrSandbox) = %v, %v; want true, false", errors.Is(err, ErrImage), errors.Is(err, ErrSandbox))
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Error("the cause is lost")
	}
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/pipeline/batch"
	"github.com/verifymcp/verifymcp/sandbox"
)

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "existing.json")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An unwritable directory: mode bits stop a user, not root; /proc
	// stops root too.
	unwritable := filepath.Join(dir, "ro")
	if err := os.Mkdir(unwritable, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		unwritable = "/proc"
	}
	tests := []struct {
		name string
		path string
		want string // "" for ok, else a part of the usage error
	}{
		{"stdout", "", ""},
		{"a new file", filepath.Join(dir, "report.json"), ""},
		{"an existing file", file, ""},
		{"a device", os.DevNull, ""},
		{"a directory", dir, "is a directory"},
		{"a directory that does not exist", filepath.Join(dir, "nodir", "report.json"), "its directory"},
		{"under a regular file", filepath.Join(file, "report.json"), "is not a directory"},
		{"an unwritable directory", filepath.Join(unwritable, "report.json"), "cannot write in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOutput(tt.path)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkOutput(%q) = %v, want nil", tt.path, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("checkOutput(%q) = %v, want an error with %q", tt.path, err, tt.want)
			case tt.want != "" && exitCode(err) != ExitUsage:
				t.Errorf("checkOutput(%q): exit %d, want %d", tt.path, exitCode(err), ExitUsage)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 2 {
				t.Errorf("checkOutput left files behind: %v", entries)
			}
		})
	}
}

func TestWriteOutputAtomic(t *testing.T) {
	dir := t.TempDir()
	g := &globals{stdout: io.Discard}
	failing := func(w io.Writer) error {
		io.WriteString(w, `{"partial":`)
		return errors.New("encode report: boom")
	}
	ok := func(w io.Writer) error { _, err := io.WriteString(w, "report\n"); return err }

	fresh := filepath.Join(dir, "fresh.json")
	if err := g.writeOutput(fresh, failing); err == nil {
		t.Fatal("writeOutput with a failing writer returned nil")
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed write left %s (stat: %v)", fresh, err)
	}

	kept := filepath.Join(dir, "kept.json")
	if err := os.WriteFile(kept, []byte("earlier report\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := g.writeOutput(kept, failing); err == nil {
		t.Fatal("writeOutput with a failing writer returned nil")
	}
	if data, _ := os.ReadFile(kept); string(data) != "earlier report\n" {
		t.Errorf("a failed write changed the existing file to %q", data)
	}
	if err := g.writeOutput(kept, ok); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(kept)
	if data, _ := os.ReadFile(kept); err != nil || string(data) != "report\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("after a good write: %q, mode %v, %v; want the report, mode 0640", data, fi.Mode().Perm(), err)
	}
	if err := g.writeOutput(fresh, ok); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new report file: %v, %v; want mode 0644", fi, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestExitCodeOfEnvironmentFaults(t *testing.T) {
	tests := []struct {
		kind sandbox.FaultKind
		want int
	}{
		{sandbox.FaultTLS, ExitRegistry},
		{sandbox.FaultDNS, ExitRegistry},
		{sandbox.FaultUnreachable, ExitRegistry},
		{sandbox.FaultRegistry, ExitRegistry},
		{sandbox.FaultEgress, ExitEngine},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			// As the pipeline and batch wrap it.
			err := fmt.Errorf("1 of 1 targets could not be scanned; first, list.txt:1 npm:x@1: install x@1.0.0: %w",
				&sandbox.EnvironmentError{Kind: tt.kind, Cause: "cause", Fix: "fix"})
			if got := exitCode(err); got != tt.want {
				t.Errorf("exitCode = %d, want %d", got, tt.want)
			}
			if got := batch.ErrorOutcome(err); got != string(tt.kind) {
				t.Errorf("errorOutcome = %q, want %q", got, tt.kind)
			}
		})
	}
}

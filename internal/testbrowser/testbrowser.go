// Package testbrowser finds the browser the tests render pages in:
// Debian's chromium, which scripts/setup.sh installs.
package testbrowser

import (
	"os/exec"
	"testing"
)

// Chromium returns chromium's path. Under -short a machine without it
// skips the test (make unit asks for no set-up); otherwise its absence
// fails the test: make test runs scripts/setup.sh first, which installs it.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testing.Short() {
		t.Skip("-short: chromium is installed by scripts/setup.sh, which make test runs first")
	}
	t.Fatal("chromium is not installed: run scripts/setup.sh, which installs Debian's chromium (apt-get install -y chromium); pages are tested in a real browser")
	return ""
}

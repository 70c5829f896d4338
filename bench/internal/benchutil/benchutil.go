// Package benchutil holds what the benchmark programs under bench/ share.
package benchutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Median returns the middle of d (the upper one of an even count), 0 for
// none.
func Median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	c := slices.Clone(d)
	slices.Sort(c)
	return c[len(c)/2]
}

// Durs writes d as seconds with two decimals, separated by spaces.
func Durs(d []time.Duration) string {
	out := make([]string, 0, len(d))
	for _, x := range d {
		out = append(out, fmt.Sprintf("%.2fs", x.Seconds()))
	}
	return strings.Join(out, " ")
}

// Run runs name with args in dir, and exits with its output when it fails.
func Run(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		os.Exit(1)
	}
}

// Check exits with err, if any.
func Check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// NewestBundle returns the bundle file last written under the data
// directory dir: the one of the scan that just ran.
func NewestBundle(dir string) []byte {
	files, err := filepath.Glob(filepath.Join(dir, "bundles", "*.json"))
	Check(err)
	if len(files) == 0 {
		Check(fmt.Errorf("no bundle stored under %s", dir))
	}
	newest := slices.MaxFunc(files, func(a, b string) int {
		sa, _ := os.Stat(a)
		sb, _ := os.Stat(b)
		return sa.ModTime().Compare(sb.ModTime())
	})
	raw, err := os.ReadFile(newest)
	Check(err)
	return raw
}

package layers

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "redraw the graph in docs/layout.md")

const module = "github.com/verifymcp/verifymcp"

// graph is every package of the module (all build tags, the js/wasm page
// included) with the module's packages it imports, tests excluded.
func graph(t *testing.T) (root string, imports map[string][]string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root = filepath.Dir(strings.TrimSpace(string(out)))
	imports = map[string][]string{}
	for _, env := range [][]string{nil, {"GOOS=js", "GOARCH=wasm"}} {
		cmd := exec.Command("go", "list", "-tags", "docker,postgres,embedhelpers", "-e", "-json=ImportPath,Imports", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, stderr.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			var p struct {
				ImportPath string
				Imports    []string
			}
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
			for _, imp := range p.Imports {
				if rest, ok := strings.CutPrefix(imp, module+"/"); ok && !contains(imports[name], rest) {
					imports[name] = append(imports[name], rest)
				}
			}
			if _, ok := imports[name]; !ok {
				imports[name] = nil
			}
		}
	}
	for _, v := range imports {
		sort.Strings(v)
	}
	return root, imports
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// tierOf is the tier a package is in: the entry naming it, else the
// longest "/..." entry above it; -1 when none.
func tierOf(pkg string) int {
	best, bestLen := -1, -1
	for i, tr := range Tiers {
		for _, p := range tr.Packages {
			if p == pkg {
				return i
			}
			if prefix, ok := strings.CutSuffix(p, "/..."); ok && strings.HasPrefix(pkg, prefix+"/") && len(prefix) > bestLen {
				best, bestLen = i, len(prefix)
			}
		}
	}
	return best
}

func TestImportsGoDown(t *testing.T) {
	root, imports := graph(t)
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		tp := tierOf(p)
		if tp < 0 {
			t.Errorf("package %s is in no tier: place it in layers.Tiers (internal/layers/layers.go)", p)
			continue
		}
		for _, imp := range imports[p] {
			if ti := tierOf(imp); ti >= tp {
				t.Errorf("%s (tier %d, %s) imports %s (tier %d, %s): imports go to lower tiers only", p, tp, Tiers[tp].Name, imp, ti, Tiers[ti].Name)
			}
		}
	}
	doc := filepath.Join(root, "docs", "layout.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- graph: go test ./internal/layers -update -->\n", "<!-- end of graph -->\n"
	i, j := bytes.Index(data, []byte(begin)), bytes.Index(data, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("docs/layout.md has no graph between %q and %q", begin, end)
	}
	want := draw(pkgs, imports)
	if got := string(data[i+len(begin) : j]); got != want {
		if *update {
			data = append(append(append([]byte{}, data[:i+len(begin)]...), want...), data[j:]...)
			if err := os.WriteFile(doc, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/layout.md does not draw the module's graph: go test ./internal/layers -update")
	}
}

// draw is the graph as docs/layout.md shows it: tier by tier, each
// package with the module's packages it imports.
func draw(pkgs []string, imports map[string][]string) string {
	var b strings.Builder
	b.WriteString("| tier | package | imports of this module |\n|---|---|---|\n")
	for i := len(Tiers) - 1; i >= 0; i-- {
		for _, p := range pkgs {
			if tierOf(p) != i {
				continue
			}
			imps := make([]string, len(imports[p]))
			for k, imp := range imports[p] {
				imps[k] = "`" + imp + "`"
			}
			fmt.Fprintf(&b, "| %d %s | `%s` | %s |\n", i, Tiers[i].Name, p, strings.Join(imps, ", "))
		}
	}
	return b.String()
}

func TestTierOf(t *testing.T) {
	for pkg, want := range map[string]int{"pkgspec": 0, "internal/testdiff": 0, "bench/scanbench": 8, "bench/internal/benchutil": 0, "nothing": -1} {
		if got := tierOf(pkg); got != want {
			t.Errorf("tierOf(%q) = %d, want %d", pkg, got, want)
		}
	}
}

package checks

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionPinsDigest fails when the checks' code changed without a new
// Version: the digest recorded for the running Version must be the running
// Digest.
func TestVersionPinsDigest(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "digests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pinned := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, d, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("testdata/digests.txt: %q is not \"version digest\"", line)
		}
		if _, dup := pinned[v]; dup {
			t.Fatalf("testdata/digests.txt: version %s listed twice", v)
		}
		pinned[v] = strings.TrimSpace(d)
	}
	got := Digest()
	want, ok := pinned[Version]
	switch {
	case !ok:
		t.Fatalf("checks version %s has no digest in testdata/digests.txt; add the line %q", Version, Version+" "+got)
	case want != got:
		t.Fatalf("the checks' code changed (digest %s) but Version is still %s, pinned at %s: "+
			"a change that can change a finding needs a new Version (and a rubric that adopts it)", got, Version, want)
	}
}

// TestDigestIgnoresComments: editing a comment is not a new version; a
// pattern is.
func TestDigestIgnoresComments(t *testing.T) {
	src, err := sources.ReadFile("injection.go")
	if err != nil {
		t.Fatal(err)
	}
	d1 := digestOf(t, string(src))
	d2 := digestOf(t, strings.Replace(string(src), "// Instruction-like text aimed at the model", "// Instruction-like text, edited", 1))
	d3 := digestOf(t, strings.Replace(string(src), `"disregard"`, `"dis-regard"`, 1))
	if d1 != d2 {
		t.Error("a comment edit moved the digest")
	}
	if d1 == d3 {
		t.Error("a pattern edit did not move the digest")
	}
}

// digestOf is Digest with injection.go replaced by src.
func digestOf(t *testing.T, src string) string {
	t.Helper()
	names, err := sources.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range names {
		if files[e.Name()], err = sources.ReadFile(e.Name()); err != nil {
			t.Fatal(err)
		}
	}
	files["injection.go"] = []byte(src)
	d, err := digestSources(files)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDigestCoversEveryFile: every source of the package that declares
// anything is in the digest, so a new file of patterns cannot escape it.
// A file of comments only (doc.go, the package's documentation) cannot
// change a finding, and the digest leaves comments out.
func TestDigestCoversEveryFile(t *testing.T) {
	all, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	embedded := map[string]bool{}
	names, err := sources.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range names {
		embedded[e.Name()] = true
	}
	for _, f := range all {
		if strings.HasSuffix(f, "_test.go") || embedded[f] {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(parsed.Decls) > 0 {
			t.Errorf("%s is not embedded in sources (version.go's go:embed line): the digest does not cover it", f)
		}
	}
}

package checks

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"sort"
	"sync"
)

// Version is the version of the contract checks: of what Check reports
// for a given contract. It moves whenever a change to this package can
// change a finding (a pattern, a word list, a rule, a message), and a
// rubric pins the version it scores (parameters.contract_checks), so that
// scoring stays a function of the evidence and the rubric version: a
// rubric that adopts new checks recomputes their findings from the stored
// contract, and one that pins other checks than these cannot run them.
//
// Version 1 is the checks of rubrics v5 and v6 (the implementation before
// the real-surface corpus). Version 2: shadowing names only another
// server's tools and servers, arbitrary_path only top-level host paths
// with server-wide confinement, concealment without statements of fact,
// environment despite a scope word. Version 3 (issue 33): chat-template
// tokens in capitals and not quoted as code; comments that hold a message;
// no credential in a value the server issued or in a parameter its own
// text says is not the secret; product folders are not host paths, and an
// upload's or download's local file is one however named; the same
// parameter judged alike on every tool of a server; the server's own
// configuration (capability.configuration); hidden.encoded medium.
const Version = "3"

// sources are this package's code, for Digest.
//
//go:embed capability.go check.go code.go hidden.go injection.go version.go
var sources embed.FS

var digest = sync.OnceValue(func() string {
	names, err := sources.ReadDir(".")
	if err != nil {
		panic(err)
	}
	files := map[string][]byte{}
	for _, e := range names {
		if files[e.Name()], err = sources.ReadFile(e.Name()); err != nil {
			panic(err)
		}
	}
	d, err := digestSources(files)
	if err != nil {
		panic(err)
	}
	return d
})

// digestSources is Digest over the named Go sources.
func digestSources(files map[string][]byte) (string, error) {
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	fset := token.NewFileSet()
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, files[name], 0) // without comments
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&buf, fset, stripped(f)); err != nil {
			return "", err
		}
		h.Write([]byte(name + "\x00"))
		h.Write(buf.Bytes())
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// stripped returns f without its comments, which parser.ParseFile without
// ParseComments leaves out of the tree but keeps as the package doc.
func stripped(f *ast.File) *ast.File {
	f.Doc, f.Comments = nil, nil
	return f
}

// Digest is "sha256:" and the hex SHA-256 of the checks' code without its
// comments: their patterns, word lists and rules. A change that moves the
// digest without moving Version fails the package's tests
// (TestVersionPinsDigest), so a rubric's pin of (Version, Digest) names
// exactly one set of checks; editing a comment moves neither.
func Digest() string { return digest() }

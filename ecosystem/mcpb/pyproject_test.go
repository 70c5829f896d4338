package mcpb_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
	"github.com/verifymcp/verifymcp/pkgspec"
)

const uvManifest = `{"manifest_version": "0.4", "name": "x", "version": "1.0.0", "description": "d",
 "author": {"name": "a"}, "server": {"type": "uv", "entry_point": "src/server.py"}}`

func TestPyProject(t *testing.T) {
	for _, tc := range []struct {
		name, pyproject string
		uvLock          bool
		want            *mcpb.PyProject
		err             error
	}{
		{name: "the packer's example", pyproject: `[project]
name = "hello-world-uv"
version = "1.0.0"
requires-python = ">=3.10"
dependencies = ["mcp>=1.0.0"]
`, want: &mcpb.PyProject{Name: "hello-world-uv", Version: "1.0.0", RequiresPython: ">=3.10", Dependencies: []string{"mcp>=1.0.0"}}},
		{name: "dev group and a lock", uvLock: true, pyproject: `[project]
name = "p"
version = "0.1.0"
dependencies = ["httpx>=0.27", "pydantic[email]==2.9.2; python_version >= '3.9'"]
[dependency-groups]
dev = ["pytest>=8"]
test = ["coverage"]
[tool.uv]
dev-dependencies = ["ruff>=0.8.1"]
`, want: &mcpb.PyProject{Name: "p", Version: "0.1.0", UVLock: true,
			Dependencies: []string{"httpx>=0.27", "pydantic[email]==2.9.2; python_version >= '3.9'"}, Dev: []string{"ruff>=0.8.1", "pytest>=8"}}},
		{name: "a build system that uv is told not to install", pyproject: `[project]
name = "p"
dependencies = []
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
[tool.uv]
package = false
`, want: &mcpb.PyProject{Name: "p", Dependencies: []string{}}},
		{name: "a package", pyproject: `[project]
name = "Acme.Server"
version = "2.0.1"
dynamic = ["dependencies"]
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
`, want: &mcpb.PyProject{Name: "Acme.Server", Version: "2.0.1", Package: true}},
		{name: "a package by tool.uv.package", pyproject: "[project]\nname = \"p\"\nversion = \"1\"\n[tool.uv]\npackage = true\n",
			want: &mcpb.PyProject{Name: "p", Version: "1", Package: true}},
		{name: "no pyproject", err: mcpb.ErrMalformed},
		{name: "not toml", pyproject: "[project\nname=", err: mcpb.ErrMalformed},
		{name: "no name", pyproject: "[project]\nversion = \"1\"\n", err: mcpb.ErrMalformed},
		{name: "no project: Poetry's", pyproject: "[build-system]\nrequires = [\"poetry-core\"]\n[tool.poetry]\nname = \"p\"\n[tool.poetry.dependencies]\nmcp = \"^1.0\"\n",
			want: &mcpb.PyProject{NoProject: true}},
		{name: "dynamic dependencies of no package", pyproject: "[project]\nname = \"p\"\ndynamic = [\"dependencies\"]\n", err: mcpb.ErrUnsupportedProject},
		{name: "a package of a dynamic version", pyproject: "[project]\nname = \"p\"\ndynamic = [\"version\"]\n[build-system]\nrequires = [\"hatchling\"]\n", err: mcpb.ErrUnsupportedProject},
		{name: "sources", pyproject: "[project]\nname = \"p\"\ndependencies = [\"lib\"]\n[tool.uv.sources]\nlib = { git = \"https://example.com/lib\" }\n", err: mcpb.ErrUnsupportedProject},
		{name: "an included group", pyproject: "[project]\nname = \"p\"\n[dependency-groups]\ndev = [{include-group = \"test\"}]\ntest = [\"pytest\"]\n", err: mcpb.ErrUnsupportedProject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []file{{name: "manifest.json", body: uvManifest}, {name: "src/server.py", body: "print()\n"}}
			if tc.pyproject != "" {
				files = append(files, file{name: "pyproject.toml", body: tc.pyproject})
			}
			if tc.uvLock {
				files = append(files, file{name: "uv.lock", body: "version = 1\n"})
			}
			b, err := open(buildZip(t, files), mcpb.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.PyProject()
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("PyProject() = %+v, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PyProject (-want +got):\n%s", diff)
			}
		})
	}
}

// A uv bundle's tree is the pylock.toml its dependencies were resolved
// into: OSV is asked about its PyPI packages.
func TestOSVPackagesPylock(t *testing.T) {
	lock := `lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.11"

[[packages]]
name = "Pydantic_Core"
version = "2.27.1"
index = "https://pypi.org/simple"

[[packages]]
name = "mcp"
version = "1.27.0"

[[packages]]
name = "local"
directory = { path = "." }

[[packages]]
name = "mcp"
version = "1.27.0"
`
	got := mcpb.Ecosystem{}.OSVPackages([]byte(lock))
	want := []pkgspec.OSVPackage{
		{Ecosystem: "PyPI", Name: "mcp", Version: "1.27.0", Purl: "pkg:pypi/mcp@1.27.0"},
		{Ecosystem: "PyPI", Name: "pydantic-core", Version: "2.27.1", Purl: "pkg:pypi/pydantic-core@2.27.1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OSVPackages (-want +got):\n%s", diff)
	}
	if got := (mcpb.Ecosystem{}).OSVPackages([]byte("lock-version = [")); got != nil {
		t.Errorf("OSVPackages of a malformed pylock = %v, want none", got)
	}
}

// TestSdist: a package's bundle is its sdist, every file under
// NAME-VERSION/, named as PEP 625 says.
func TestSdist(t *testing.T) {
	b, err := open(buildZip(t, []file{{name: "manifest.json", body: uvManifest}, {name: "pyproject.toml", body: "[project]\nname = \"Acme.Server\"\n"},
		{name: "src/acme_server/__init__.py", body: "x = 1\n"}}), mcpb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	name, err := b.Sdist(&buf, &mcpb.PyProject{Name: "Acme.Server", Version: "2.0.1"})
	if err != nil || name != "acme_server-2.0.1.tar.gz" {
		t.Fatalf("Sdist = %q, %v", name, err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var files []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			files = append(files, h.Name)
		}
	}
	want := []string{"acme_server-2.0.1/manifest.json", "acme_server-2.0.1/pyproject.toml", "acme_server-2.0.1/src/acme_server/__init__.py"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("sdist files (-want +got):\n%s", diff)
	}
}

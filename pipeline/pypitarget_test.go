package pipeline

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/pypi"
)

// pyMeta is core metadata with the given name and version, and a body.
func pyMeta(name, version string) string {
	return "Metadata-Version: 2.4\nName: " + name + "\nVersion: " + version +
		"\nSummary: a test\nRequires-Dist: mcp>=1.0\n\n# " + name + "\n\nA description: with a colon.\n"
}

// writeZip writes a zip of the entries (name, body) at dir/file.
func writeZip(t *testing.T, dir, file string, entries ...[2]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, buf.Bytes()
}

// writeTarGz writes a gzipped tar of the entries at dir/file.
func writeTarGz(t *testing.T, dir, file string, entries ...[2]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o644, Size: int64(len(e[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, buf.Bytes()
}

func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestParseTargetPyPI(t *testing.T) {
	dir := t.TempDir()
	whl, _ := writeZip(t, dir, "mcp_server_time-2025.9.25-py3-none-any.whl",
		[2]string{"mcp_server_time/__init__.py", ""},
		[2]string{"mcp_server_time-2025.9.25.dist-info/METADATA", pyMeta("mcp-server-time", "2025.9.25")},
		[2]string{"mcp_server_time-2025.9.25.dist-info/entry_points.txt", "[console_scripts]\nmcp-server-time = mcp_server_time:main\n"})
	sdist, _ := writeTarGz(t, dir, "mcp_server_fetch-2025.4.7.tar.gz",
		[2]string{"mcp_server_fetch-2025.4.7/pyproject.toml", "[project]\nname = \"mcp-server-fetch\"\n"},
		[2]string{"mcp_server_fetch-2025.4.7/src/mcp_server_fetch.egg-info/PKG-INFO", pyMeta("other", "0.0.1")},
		[2]string{"mcp_server_fetch-2025.4.7/PKG-INFO", pyMeta("mcp-server-fetch", "2025.4.7")})
	zipSdist, _ := writeZip(t, dir, "Legacy.Pkg-1.0.zip",
		[2]string{"Legacy.Pkg-1.0/setup.py", "from setuptools import setup\nsetup()\n"},
		[2]string{"Legacy.Pkg-1.0/PKG-INFO", pyMeta("Legacy.Pkg", "1.0")})
	npmTarGz, _ := writeTarGz(t, dir, "acme-weather-1.2.3.tar.gz",
		[2]string{"package/package.json", `{"name":"acme-weather","version":"1.2.3"}`})

	tests := []struct {
		name    string
		in      string
		want    Target
		wantErr error
		errHas  string
	}{
		// pypi: requirements.
		{name: "exact pin", in: "pypi:mcp-server-fetch==2025.4.7",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-fetch", Spec: "==2025.4.7"}},
		{name: "name as written, not normalised", in: "pypi:MCP_Server.Fetch==1.0",
			want: Target{Ecosystem: "pypi", Name: "MCP_Server.Fetch", Spec: "==1.0"}},
		{name: "latest", in: "pypi:mcp-server-time",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-time", Spec: ""}},
		{name: "specifier set", in: "pypi:mcp>=1.2,<2",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: ">=1.2,<2"}},
		{name: "specifier set with spaces", in: "pypi:mcp >= 1.2 , < 2",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: ">=1.2,<2"}},
		{name: "compatible release", in: "pypi:mcp~=1.4",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: "~=1.4"}},
		{name: "arbitrary equality", in: "pypi:mcp===1.0-custom",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: "===1.0-custom"}},
		{name: "wildcard", in: "pypi:mcp==1.*",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: "==1.*"}},
		{name: "PEP 508 parentheses", in: "pypi:mcp (>=1.2)",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: ">=1.2"}},
		{name: "extras refused", in: "pypi:mcp[cli]==1.0", wantErr: ErrBadTarget, errHas: "extras ([cli])"},
		{name: "markers refused", in: "pypi:mcp==1.0; python_version>='3.10'", wantErr: ErrBadTarget, errHas: "environment markers"},
		{name: "pypi @ is a URL", in: "pypi:mcp@1.0", wantErr: ErrBadTarget, errHas: "pypi:mcp==VERSION"},
		{name: "bad version", in: "pypi:mcp==not a version", wantErr: ErrBadTarget},
		{name: "bad pep 440 version", in: "pypi:mcp==1.0.0.dev1.post", wantErr: ErrBadTarget, errHas: "invalid version"},
		{name: "wildcard with >=", in: "pypi:mcp>=1.*", wantErr: ErrBadTarget, errHas: "wildcard"},
		{name: "~= with one number", in: "pypi:mcp~=1", wantErr: ErrBadTarget, errHas: "at least two"},
		{name: "empty clause", in: "pypi:mcp>=1,,<2", wantErr: ErrBadTarget, errHas: "empty clause"},
		{name: "no operator", in: "pypi:mcp 1.0", wantErr: ErrBadTarget, errHas: "not a version specifier"},
		{name: "empty", in: "pypi:", wantErr: ErrBadTarget, errHas: "no project name"},
		{name: "bad name", in: "pypi:-mcp==1.0", wantErr: ErrBadTarget},
		{name: "name with a trailing dot", in: "pypi:mcp.==1.0", wantErr: ErrBadTarget},
		{name: "pip option", in: "pypi:--index-url https://x mcp", wantErr: ErrBadTarget, errHas: "options are not read"},
		{name: "bare requirement hints at pypi:", in: "mcp-server-fetch==2025.4.7", wantErr: ErrBadTarget, errHas: "write pypi:mcp-server-fetch==2025.4.7"},

		// uvx:
		{name: "uvx name", in: "uvx:mcp-server-git",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-git", Spec: ""}},
		{name: "uvx ==", in: "uvx:mcp-server-git==2025.7.1",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-git", Spec: "==2025.7.1"}},
		{name: "uvx @version", in: "uvx:mcp-server-git@2025.7.1",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-git", Spec: "==2025.7.1"}},
		{name: "uvx @latest", in: "uvx:mcp-server-git@latest",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-git", Spec: ""}},
		{name: "uvx range", in: "uvx:mcp-server-git>=2025",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-git", Spec: ">=2025"}},
		{name: "uvx --from refused", in: "uvx:--from mcp-server-git==1.0 mcp-server-git", wantErr: ErrBadTarget, errHas: "uvx options are not read"},
		{name: "uvx command after the package", in: "uvx:mcp-server-git serve", wantErr: ErrBadTarget, errHas: "--arg"},
		{name: "uvx @ with a range", in: "uvx:mcp@>=1", wantErr: ErrBadTarget, errHas: "not one version"},
		{name: "uvx @ empty", in: "uvx:mcp@", wantErr: ErrBadTarget, errHas: "empty version"},
		{name: "uvx @ bad version", in: "uvx:mcp@banana", wantErr: ErrBadTarget},
		{name: "uvx extras", in: "uvx:mcp[cli]", wantErr: ErrBadTarget, errHas: "extras"},

		// purls.
		{name: "purl", in: "pkg:pypi/mcp-server-fetch@2025.4.7",
			want: Target{Ecosystem: "pypi", Name: "mcp-server-fetch", Spec: "==2025.4.7"}},
		{name: "purl normalised by packageurl-go", in: "pkg:pypi/Django_Thing@1.0",
			want: Target{Ecosystem: "pypi", Name: "django-thing", Spec: "==1.0"}},
		{name: "purl latest", in: "pkg:pypi/mcp",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: ""}},
		{name: "purl local version", in: "pkg:pypi/mcp@1.0%2Blocal.1",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: "==1.0+local.1"}},
		{name: "purl repository_url of PyPI", in: "pkg:pypi/mcp@1.0?repository_url=https://pypi.org/simple",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: "==1.0"}},
		{name: "purl repository_url of PyPI, bare host", in: "pkg:pypi/mcp@1.0?repository_url=pypi.org",
			want: Target{Ecosystem: "pypi", Name: "mcp", Spec: "==1.0"}},
		{name: "purl repository_url of a mirror", in: "pkg:pypi/mcp@1.0?repository_url=https://mirror.example.com/simple",
			wantErr: ErrUnsupported, errHas: "--index-url"},
		{name: "purl file_name", in: "pkg:pypi/mcp@1.0?file_name=mcp-1.0-py3-none-any.whl",
			wantErr: ErrUnsupported, errHas: "one distribution file"},
		{name: "purl checksum", in: "pkg:pypi/mcp@1.0?checksum=sha256:ab", wantErr: ErrUnsupported, errHas: "not verified"},
		{name: "purl subpath", in: "pkg:pypi/mcp@1.0#mcp/server.py", wantErr: ErrUnsupported, errHas: "subpath"},
		{name: "purl namespace", in: "pkg:pypi/acme/mcp@1.0", wantErr: ErrBadTarget, errHas: "no namespace"},
		{name: "purl range", in: "pkg:pypi/mcp@%3E%3D1.0", wantErr: ErrBadTarget, errHas: "not one version"},
		{name: "purl bad version", in: "pkg:pypi/mcp@banana", wantErr: ErrBadTarget},
		{name: "purl bad name", in: "pkg:pypi/-mcp@1.0", wantErr: ErrBadTarget},

		// Local distributions.
		{name: "wheel", in: whl,
			want: Target{Ecosystem: "pypi", Name: "mcp-server-time", Spec: "==2025.9.25", File: whl}},
		{name: "sdist .tar.gz by content", in: sdist,
			want: Target{Ecosystem: "pypi", Name: "mcp-server-fetch", Spec: "==2025.4.7", File: sdist}},
		{name: "sdist .zip", in: zipSdist,
			want: Target{Ecosystem: "pypi", Name: "Legacy.Pkg", Spec: "==1.0", File: zipSdist}},
		{name: "npm .tar.gz by content", in: npmTarGz,
			want: Target{Ecosystem: "npm", File: npmTarGz}},
		{name: "missing wheel", in: filepath.Join(dir, "nope-1.0-py3-none-any.whl"), wantErr: ErrBadTarget, errHas: "nope-1.0-py3-none-any.whl"},
		{name: "missing zip", in: filepath.Join(dir, "nope-1.0.zip"), wantErr: ErrBadTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ParseTarget(%q) = %+v, %v; want error %v", tt.in, got, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("error %q does not mention %q", err, tt.errHas)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one line", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tt.in, err)
			}
			tt.want.Raw = tt.in
			if d := targetDiff(tt.want, got); d != "" {
				t.Errorf("ParseTarget(%q) (-want +got):%s", tt.in, d)
			}
		})
	}
}

func TestReadWheel(t *testing.T) {
	dir := t.TempDir()
	p, data := writeZip(t, dir, "mcp_server_git-2025.7.1-1build-py3-none-any.whl",
		[2]string{"mcp_server_git/__init__.py", ""},
		[2]string{"mcp_server_git-2025.7.1.dist-info/METADATA", pyMeta("mcp-server-git", "2025.7.1")})
	d, err := readWheel(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.kind != "wheel" || d.name != "mcp-server-git" || d.version != "2025.7.1" || d.sha256 != hexSHA256(data) ||
		!bytes.Equal(d.data, data) || !strings.HasPrefix(string(d.metadata), "Metadata-Version: 2.4\n") {
		t.Errorf("readWheel = %+v", d)
	}

	tests := []struct {
		name, file string
		entries    [][2]string
		errHas     string
	}{
		{"not a wheel name", "mcp.whl", nil, "not a wheel file name"},
		{"no METADATA", "a-1.0-py3-none-any.whl", [][2]string{{"a/__init__.py", ""}}, "no *.dist-info/METADATA"},
		{"METADATA too deep", "a-1.0-py3-none-any.whl", [][2]string{{"x/a-1.0.dist-info/METADATA", pyMeta("a", "1.0")}}, "no *.dist-info/METADATA"},
		{"two METADATA", "a-1.0-py3-none-any.whl", [][2]string{{"a-1.0.dist-info/METADATA", pyMeta("a", "1.0")}, {"b-1.0.dist-info/METADATA", pyMeta("a", "1.0")}}, "more than one"},
		{"name disagrees", "a-1.0-py3-none-any.whl", [][2]string{{"a-1.0.dist-info/METADATA", pyMeta("b", "1.0")}}, "file name says a, its METADATA b"},
		{"version disagrees", "a-1.0-py3-none-any.whl", [][2]string{{"a-1.0.dist-info/METADATA", pyMeta("a", "1.1")}}, "version 1.0, its METADATA 1.1"},
		{"no Name", "a-1.0-py3-none-any.whl", [][2]string{{"a-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nVersion: 1.0\n"}}, "Name"},
		{"no Version", "a-1.0-py3-none-any.whl", [][2]string{{"a-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: a\n"}}, "Version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := writeZip(t, t.TempDir(), tt.file, tt.entries...)
			_, err := readWheel(p)
			if !errors.Is(err, ErrBadTarget) || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("readWheel = %v; want ErrBadTarget mentioning %q", err, tt.errHas)
			}
		})
	}
	notZip := filepath.Join(dir, "a-1.0-py3-none-any.whl")
	if err := os.WriteFile(notZip, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readWheel(notZip); !errors.Is(err, ErrBadTarget) || !strings.Contains(err.Error(), "not a zip") {
		t.Errorf("readWheel(not a zip) = %v", err)
	}
}

func TestReadSdist(t *testing.T) {
	dir := t.TempDir()
	p, data := writeTarGz(t, dir, "mcp_atlassian-0.11.9.tar.gz",
		[2]string{"mcp_atlassian-0.11.9/PKG-INFO", pyMeta("mcp-atlassian", "0.11.9")})
	d, err := readSdist(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.kind != "sdist" || d.name != "mcp-atlassian" || d.version != "0.11.9" || d.sha256 != hexSHA256(data) || !bytes.Equal(d.data, data) {
		t.Errorf("readSdist = %+v", d)
	}
	if d2, err := readLocalDist(p); err != nil || d2.kind != "sdist" {
		t.Errorf("readLocalDist = %+v, %v", d2, err)
	}

	noInfo, _ := writeTarGz(t, dir, "x-1.0.tar.gz", [2]string{"x-1.0/setup.py", ""})
	rootInfo, _ := writeTarGz(t, dir, "y-1.0.tar.gz", [2]string{"PKG-INFO", pyMeta("y", "1.0")})
	badInfo, _ := writeTarGz(t, dir, "z-1.0.tar.gz", [2]string{"z-1.0/PKG-INFO", "Name: not valid!\nVersion: 1\n"})
	notGzip := filepath.Join(dir, "w-1.0.tar.gz")
	if err := os.WriteFile(notGzip, []byte("plain"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, errHas string }{
		{noInfo, "no PKG-INFO"}, {rootInfo, "no PKG-INFO"}, {badInfo, "PKG-INFO: Name"}, {notGzip, "not a gzip tarball"},
		{filepath.Join(dir, "missing.tar.gz"), "missing.tar.gz"},
	} {
		if _, err := readSdist(tt.path); !errors.Is(err, ErrBadTarget) || !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("readSdist(%s) = %v; want ErrBadTarget mentioning %q", filepath.Base(tt.path), err, tt.errHas)
		}
	}
	// A .tar.gz without PKG-INFO is left to the npm reader.
	if isSdist(noInfo) || isSdist(notGzip) || !isSdist(p) {
		t.Errorf("isSdist: wrong answer")
	}
}

func TestPyPIPurl(t *testing.T) {
	for _, tt := range []struct{ name, version, want string }{
		{"mcp-server-fetch", "2025.4.7", "pkg:pypi/mcp-server-fetch@2025.4.7"},
		{"MCP_Server.Fetch", "1.0", "pkg:pypi/mcp-server-fetch@1.0"},
		{"mcp", "1.0+local.1", "pkg:pypi/mcp@1.0%2Blocal.1"},
		{"mcp", "1!2.0", "pkg:pypi/mcp@1!2.0"},
	} {
		got := pypi.Ecosystem{}.Purl(tt.name, tt.version)
		if got != tt.want {
			t.Errorf("PyPIPurl(%q, %q) = %q, want %q", tt.name, tt.version, got, tt.want)
		}
		// ParseTarget reads it back to the normalised name and an exact pin.
		pt, err := ParseTarget(got)
		if err != nil || pt.Ecosystem != "pypi" || pt.Name != strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(tt.name)) || pt.Spec != "=="+tt.version {
			t.Errorf("ParseTarget(%q) = %+v, %v", got, pt, err)
		}
	}
}

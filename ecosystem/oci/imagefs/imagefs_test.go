package imagefs

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/oci"

	"github.com/google/go-cmp/cmp"
)

// fsEntry is one entry of a container filesystem tar.
type fsEntry struct {
	name, body, link string
	typ              byte
}

// exportTar writes a tar as the engine's container export does: paths
// without a leading "/", directories, regular files and symlinks.
func exportTar(t *testing.T, entries []fsEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.typ, Linkname: e.link}
		if e.typ == 0 {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const debianOSRelease = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
`

// A dpkg status file as Debian 12 writes it (abridged to three packages,
// fields as dpkg writes them), with one package removed but for its
// configuration files, which is not installed.
const dpkgStatus = `Package: base-files
Essential: yes
Status: install ok installed
Priority: required
Section: admin
Installed-Size: 358
Maintainer: Santiago Vila <sanvila@debian.org>
Architecture: amd64
Multi-Arch: foreign
Version: 12.4+deb12u6
Replaces: base, dpkg (<= 1.15.0), miscutils
Provides: base
Pre-Depends: awk
Breaks: debian-security-support (<< 2019.04.25), initscripts (<< 2.88dsf-13.3), sendfile (<< 2.1b.20080616-5.2~)
Conffiles:
 /etc/debian_version 9a0e8e4ec8ae5c9ad2ed2bd0f4c1a6b7
Description: Debian base system miscellaneous files
 This package contains the basic filesystem hierarchy of a Debian system, and
 several important miscellaneous files.
Homepage: https://tracker.debian.org/pkg/base-files

Package: libssl3
Status: install ok installed
Priority: optional
Section: libs
Installed-Size: 6304
Maintainer: Debian OpenSSL Team <pkg-openssl-devel@alioth-lists.debian.net>
Architecture: amd64
Multi-Arch: same
Source: openssl
Version: 3.0.11-1~deb12u2
Depends: libc6 (>= 2.34)
Description: Secure Sockets Layer toolkit - shared libraries
 This package is part of the OpenSSL project's implementation of the SSL
 and TLS cryptographic protocols for secure communication over the
 Internet.
Homepage: https://www.openssl.org/

Package: nano
Status: deinstall ok config-files
Priority: important
Section: editors
Installed-Size: 2812
Maintainer: Jordi Mallach <jordi@debian.org>
Architecture: amd64
Version: 7.2-1+deb12u1
Conffiles:
 /etc/nanorc 98a0c1d8b5ee7a4ff8a3bd8ff2d2e8a1
Description: small, friendly text editor inspired by Pico
`

// distroless keeps one status file per package in status.d, without a
// Status field.
const distrolessTzdata = `Package: tzdata
Version: 2024a-0+deb12u1
Architecture: all
Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>
Installed-Size: 3351
Section: localization
Priority: required
Multi-Arch: foreign
Homepage: https://www.iana.org/time-zones
Description: time zone and daylight-saving time data
`

const alpineOSRelease = `NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.20.3
PRETTY_NAME="Alpine Linux v3.20"
HOME_URL="https://alpinelinux.org/"
BUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"
`

// An apk installed database as Alpine 3.20 writes it (two packages).
const apkInstalled = `C:Q1Ssp5zaS0tqE/5wk0fWxXDrCSmsk=
P:musl
V:1.2.5-r0
A:x86_64
S:411323
I:647168
T:the musl c library (libc) implementation
U:https://musl.libc.org/
L:MIT
o:musl
m:Timo Teräs <timo.teras@iki.fi>
t:1712058634
c:4fe5bc9a9ab1e1e95ab10f3fe6fb7e0bf21ef8c6
p:so:libc.musl-x86_64.so.1=1
F:lib
R:ld-musl-x86_64.so.1
a:0:0:755
Z:Q1pr14d9D0uM5OlqjIvY98IEWH2Eo=

C:Q1Fwq3fIu8LRUYIuwdsxnLqDIMNF0=
P:libcrypto3
V:3.3.2-r0
A:x86_64
S:1802390
I:4935680
T:Crypto library from openssl
U:https://www.openssl.org/
L:Apache-2.0
o:openssl
m:Ariadne Conill <ariadne@dereferenced.org>
t:1725289522
c:2d3b1e0f3c3b1a9d1b8d1c0c5e0f3d6e7a1b2c3d
D:so:libc.musl-x86_64.so.1
p:so:libcrypto.so.3=3
`

const wheelMetadata = `Metadata-Version: 2.1
Name: requests
Version: 2.31.0
Summary: Python HTTP for Humans.
Home-page: https://requests.readthedocs.io
Author: Kenneth Reitz
Author-email: me@kennethreitz.org
License: Apache 2.0
Requires-Python: >=3.7
Requires-Dist: charset-normalizer (<4,>=2)
Requires-Dist: idna (<4,>=2.5)
Requires-Dist: urllib3 (<3,>=1.21.1)
Requires-Dist: certifi (>=2017.4.17)
`

const packageLock = `{
  "name": "fetch-mcp",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {"name": "fetch-mcp", "version": "1.0.0", "dependencies": {"express": "^4.18.2"}},
    "node_modules/express": {"version": "4.18.2", "resolved": "https://registry.npmjs.org/express/-/express-4.18.2.tgz", "integrity": "sha512-5/PsL6iGPdfQ/lKM1UuielYgv3BUoJfz1aUwU9vHZ+J7gyvwdQXFEBIEIaxeGf0GIcreATNyBExtalisDbuMqQ=="}
  }
}`

func TestInventory(t *testing.T) {
	tests := []struct {
		name    string
		entries []fsEntry
		want    *oci.Contents
	}{
		{
			name: "debian_node_python",
			entries: []fsEntry{
				{name: "etc/", typ: tar.TypeDir},
				{name: "etc/os-release", typ: tar.TypeSymlink, link: "../usr/lib/os-release"},
				{name: "usr/lib/os-release", body: debianOSRelease},
				{name: "bin/bash", body: "\x7fELF"},
				{name: "bin/sh", typ: tar.TypeSymlink, link: "dash"},
				{name: "var/lib/dpkg/status", body: dpkgStatus},
				{name: "app/package.json", body: `{"name":"fetch-mcp","version":"1.0.0"}`},
				{name: "app/package-lock.json", body: packageLock},
				{name: "app/node_modules/express/package.json", body: `{"name":"express","version":"4.18.2","description":"Fast, unopinionated, minimalist web framework"}`},
				{name: "app/node_modules/@modelcontextprotocol/sdk/package.json", body: `{"name":"@modelcontextprotocol/sdk","version":"1.0.1"}`},
				{name: "usr/lib/python3/dist-packages/requests-2.31.0.dist-info/METADATA", body: wheelMetadata},
				{name: "usr/lib/python3/dist-packages/requests/__init__.py", body: "# requests\n"},
			},
			want: &oci.Contents{
				Packages: []oci.Package{
					{Purl: "pkg:deb/debian/base-files@12.4%2Bdeb12u6?arch=amd64&distro=bookworm", Ecosystem: "Debian:12", Name: "base-files", Version: "12.4+deb12u6", Location: "var/lib/dpkg/status", Extractor: "os/dpkg"},
					{Purl: "pkg:deb/debian/libssl3@3.0.11-1~deb12u2?arch=amd64&distro=bookworm&source=openssl", Ecosystem: "Debian:12", Name: "libssl3", Version: "3.0.11-1~deb12u2", Location: "var/lib/dpkg/status", Extractor: "os/dpkg"},
					{Purl: "pkg:pypi/requests@2.31.0", Ecosystem: "PyPI", Name: "requests", Version: "2.31.0", Location: "usr/lib/python3/dist-packages/requests-2.31.0.dist-info/METADATA", Extractor: "python/wheelegg"},
					{Purl: "pkg:npm/%40modelcontextprotocol/sdk@1.0.1", Ecosystem: "npm", Name: "@modelcontextprotocol/sdk", Version: "1.0.1", Location: "app/node_modules/@modelcontextprotocol/sdk/package.json", Extractor: "javascript/packagejson"},
					{Purl: "pkg:npm/express@4.18.2", Ecosystem: "npm", Name: "express", Version: "4.18.2", Location: "app/node_modules/express/package.json", Extractor: "javascript/packagejson"},
					{Purl: "pkg:npm/express@4.18.2", Ecosystem: "npm", Name: "express", Version: "4.18.2", Location: "app/package-lock.json", Extractor: "javascript/packagelockjson"},
				},
				OSRelease: oci.OSRelease{ID: "debian", VersionID: "12"},
				HasBash:   true, HasSh: true, Files: 9, Skipped: []string{},
			},
		},
		{
			name: "distroless",
			entries: []fsEntry{
				{name: "etc/os-release", body: debianOSRelease},
				{name: "var/lib/dpkg/status.d/tzdata", body: distrolessTzdata},
				{name: "var/lib/dpkg/status.d/tzdata.md5sums", body: "d41d8cd98f00b204e9800998ecf8427e  usr/share/zoneinfo/UTC\n"},
			},
			want: &oci.Contents{
				Packages: []oci.Package{
					{Purl: "pkg:deb/debian/tzdata@2024a-0%2Bdeb12u1?arch=all&distro=bookworm", Ecosystem: "Debian:12", Name: "tzdata", Version: "2024a-0+deb12u1", Location: "var/lib/dpkg/status.d/tzdata", Extractor: "os/dpkg"},
				},
				OSRelease: oci.OSRelease{ID: "debian", VersionID: "12"}, Files: 3, Skipped: []string{},
			},
		},
		{
			name: "alpine",
			entries: []fsEntry{
				{name: "etc/os-release", body: alpineOSRelease},
				{name: "bin/busybox", body: "\x7fELF"},
				{name: "bin/sh", typ: tar.TypeSymlink, link: "/bin/busybox"},
				{name: "lib/apk/db/installed", body: apkInstalled},
			},
			want: &oci.Contents{
				Packages: []oci.Package{
					{Purl: "pkg:apk/alpine/libcrypto3@3.3.2-r0?arch=x86_64&distro=3.20.3&origin=openssl", Ecosystem: "Alpine:v3.20", Name: "libcrypto3", Version: "3.3.2-r0", Location: "lib/apk/db/installed", Extractor: "os/apk"},
					{Purl: "pkg:apk/alpine/musl@1.2.5-r0?arch=x86_64&distro=3.20.3&origin=musl", Ecosystem: "Alpine:v3.20", Name: "musl", Version: "1.2.5-r0", Location: "lib/apk/db/installed", Extractor: "os/apk"},
				},
				OSRelease: oci.OSRelease{ID: "alpine", VersionID: "3.20.3"}, HasSh: true, Files: 3, Skipped: []string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Inventory(context.Background(), bytes.NewReader(exportTar(t, tt.entries)), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Inventory (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInventoryLimits(t *testing.T) {
	entries := []fsEntry{
		{name: "etc/os-release", body: debianOSRelease},
		{name: "var/lib/dpkg/status", body: dpkgStatus},
		{name: "app/node_modules/a/package.json", body: `{"name":"a","version":"1.0.0"}`},
		{name: "app/node_modules/b/package.json", body: `{"name":"b","version":"1.0.0"}`},
	}
	for _, lim := range []Limits{{Bytes: 1000}, {Files: 2}} {
		_, err := Inventory(context.Background(), bytes.NewReader(exportTar(t, entries)), lim)
		if !errors.Is(err, ErrLimit) {
			t.Errorf("Inventory with %+v: error %v, want ErrLimit", lim, err)
		}
	}
	if _, err := Inventory(context.Background(), bytes.NewReader(exportTar(t, entries)), Limits{Files: 4}); err != nil {
		t.Errorf("Inventory within its limits: %v", err)
	}
	if _, err := Inventory(context.Background(), bytes.NewReader([]byte("not a tar, not a tar, not a tar")), Limits{}); err == nil {
		t.Error("Inventory accepted a stream that is not a tar")
	}
}

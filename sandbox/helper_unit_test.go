package sandbox

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// unitELF is the smallest ELF file debug/elf reads: a 64-bit header for
// machine, and, when interp is set, a PT_INTERP program header (what makes
// a binary dynamically linked). pad makes two files of one kind differ.
func unitELF(t *testing.T, machine elf.Machine, order binary.ByteOrder, osabi elf.OSABI, interp bool, pad string) []byte {
	t.Helper()
	data := elf.ELFDATA2LSB
	if order == binary.BigEndian {
		data = elf.ELFDATA2MSB
	}
	h := elf.Header64{
		Ident:     [elf.EI_NIDENT]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(data), byte(elf.EV_CURRENT), byte(osabi)},
		Type:      uint16(elf.ET_EXEC),
		Machine:   uint16(machine),
		Version:   uint32(elf.EV_CURRENT),
		Ehsize:    64,
		Phentsize: 56,
	}
	if interp {
		h.Phoff, h.Phnum = 64, 1
	}
	var buf bytes.Buffer
	if err := binary.Write(&buf, order, h); err != nil {
		t.Fatal(err)
	}
	if interp {
		if err := binary.Write(&buf, order, elf.Prog64{Type: uint32(elf.PT_INTERP)}); err != nil {
			t.Fatal(err)
		}
	}
	buf.WriteString(pad)
	return buf.Bytes()
}

func unitWrite(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func unitGzip(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func unitRef(data []byte) string {
	sum := sha256.Sum256(data)
	return helperImageRef(hex.EncodeToString(sum[:]))
}

func TestELFArch(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	for _, tc := range []struct {
		name    string
		data    []byte
		want    string
		wantErr string
	}{
		{"amd64", unitELF(t, elf.EM_X86_64, le, elf.ELFOSABI_NONE, false, ""), "amd64", ""},
		{"arm64", unitELF(t, elf.EM_AARCH64, le, elf.ELFOSABI_NONE, false, ""), "arm64", ""},
		{"ppc64le", unitELF(t, elf.EM_PPC64, le, elf.ELFOSABI_NONE, false, ""), "ppc64le", ""},
		{"big-endian ppc64", unitELF(t, elf.EM_PPC64, be, elf.ELFOSABI_NONE, false, ""), "ppc64", ""},
		{"Linux OS ABI", unitELF(t, elf.EM_AARCH64, le, elf.ELFOSABI_LINUX, false, ""), "arm64", ""},
		{"dynamically linked", unitELF(t, elf.EM_X86_64, le, elf.ELFOSABI_NONE, true, ""), "", ErrHelperNotStatic.Error()},
		{"FreeBSD", unitELF(t, elf.EM_X86_64, le, elf.ELFOSABI_FREEBSD, false, ""), "", "for FREEBSD, not Linux"},
		{"unknown machine", unitELF(t, elf.EM_SPARCV9, le, elf.ELFOSABI_NONE, false, ""), "", "EM_SPARCV9, which verifymcp has no helper for"},
		{"shell script", []byte("#!/bin/sh\necho hi\n"), "", "not an ELF executable"},
		// A macOS build, which is what `go build` gives on a Mac.
		{"Mach-O", []byte("\xcf\xfa\xed\xfe\x0c\x00\x00\x01rest of a mach-o header"), "", "not an ELF executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := elfArch(bytes.NewReader(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("elfArch = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("elfArch = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestEngineArch(t *testing.T) {
	for in, want := range map[string]string{"amd64": "amd64", "x86_64": "amd64", "arm64": "arm64", "aarch64": "arm64", " AArch64 ": "arm64", "s390x": "s390x"} {
		if got := EngineArch(in); got != want {
			t.Errorf("EngineArch(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSelectHelper: the explicit binary wins and must match the engine;
// then this program when it is a static Linux build for the engine's
// architecture; then the embedded build; else an error saying how to get
// one.
func TestSelectHelper(t *testing.T) {
	le := binary.LittleEndian
	amd64 := unitELF(t, elf.EM_X86_64, le, elf.ELFOSABI_NONE, false, "self")
	amd64Cgo := unitELF(t, elf.EM_X86_64, le, elf.ELFOSABI_NONE, true, "cgo")
	otherAMD64 := unitELF(t, elf.EM_X86_64, le, elf.ELFOSABI_NONE, false, "explicit")
	arm64 := unitELF(t, elf.EM_AARCH64, le, elf.ELFOSABI_NONE, false, "arm64")
	embeddedARM64 := unitELF(t, elf.EM_AARCH64, le, elf.ELFOSABI_NONE, false, "embedded")
	embeddedAMD64 := unitELF(t, elf.EM_X86_64, le, elf.ELFOSABI_NONE, false, "embedded")

	selfPath := unitWrite(t, "verifymcp", amd64)
	cgoPath := unitWrite(t, "verifymcp-cgo", amd64Cgo)
	explicitPath := unitWrite(t, "verifymcp-linux-amd64", otherAMD64)
	arm64Path := unitWrite(t, "verifymcp-linux-arm64", arm64)
	dynamicPath := unitWrite(t, "dynamic", amd64Cgo)
	macPath := unitWrite(t, "verifymcp-darwin", []byte("\xcf\xfa\xed\xfe\x0c\x00\x00\x01not elf"))

	linux := func(arch, path string) thisBinary {
		return thisBinary{"linux", arch, func() (string, error) { return path, nil }}
	}
	darwin := thisBinary{"darwin", "arm64", func() (string, error) { return macPath, nil }}
	both := map[string][]byte{"amd64": unitGzip(t, embeddedAMD64), "arm64": unitGzip(t, embeddedARM64)}
	onlyARM64 := map[string][]byte{"arm64": unitGzip(t, embeddedARM64)}
	mislabelled := map[string][]byte{"arm64": unitGzip(t, embeddedAMD64)}

	for _, tc := range []struct {
		name     string
		arch     string
		explicit string
		self     thisBinary
		embedded map[string][]byte
		// want is the binary picked, and source where it came from; or
		// else the error wanted (is) or its text (errText).
		want    []byte
		source  string
		is      error
		errText []string
	}{
		{name: "linux/amd64 on an amd64 engine is its own helper", arch: "amd64", self: linux("amd64", selfPath), embedded: onlyARM64, want: amd64, source: selfPath},
		{name: "the explicit binary wins", arch: "amd64", explicit: explicitPath, self: linux("amd64", selfPath), embedded: both, want: otherAMD64, source: explicitPath},
		{name: "an explicit binary of another architecture is refused", arch: "amd64", explicit: arm64Path, self: linux("amd64", selfPath), embedded: both,
			errText: []string{"linux/arm64", "engine runs linux/amd64"}},
		{name: "an explicit dynamic binary is refused", arch: "amd64", explicit: dynamicPath, self: linux("amd64", selfPath), is: ErrHelperNotStatic},
		{name: "an explicit macOS binary is refused", arch: "arm64", explicit: macPath, self: darwin, embedded: both, errText: []string{HelperBinaryEnv, "not an ELF executable"}},
		{name: "an explicit binary that is not there is an error", arch: "arm64", explicit: filepath.Join(t.TempDir(), "missing"), self: darwin, embedded: both, is: os.ErrNotExist},
		{name: "linux/amd64 on an arm64 engine uses the embedded build", arch: "aarch64", self: linux("amd64", selfPath), embedded: onlyARM64, want: embeddedARM64, source: "embedded linux/arm64 build"},
		{name: "darwin on an arm64 engine uses the embedded build", arch: "arm64", self: darwin, embedded: both, want: embeddedARM64, source: "embedded linux/arm64 build"},
		{name: "darwin on an amd64 engine uses the embedded build", arch: "x86_64", self: darwin, embedded: both, want: embeddedAMD64, source: "embedded linux/amd64 build"},
		{name: "a cgo build falls back to the embedded build", arch: "amd64", self: linux("amd64", cgoPath), embedded: both, want: embeddedAMD64, source: "embedded linux/amd64 build"},
		{name: "a cgo build without an embedded build is refused", arch: "amd64", self: linux("amd64", cgoPath), is: ErrHelperNotStatic, errText: []string{HelperBinaryEnv}},
		{name: "an embedded build of the wrong architecture is refused", arch: "arm64", self: darwin, embedded: mislabelled, errText: []string{"embedded linux/arm64 build", "built for linux/amd64"}},
		{name: "darwin without embedded builds says how to get one", arch: "arm64", self: darwin, is: ErrNoHelper,
			errText: []string{"linux/arm64", "darwin/arm64", HelperBinaryEnv, "GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build", "release"}},
		{name: "linux/amd64 on an arm64 engine without embedded builds says how to get one", arch: "arm64", self: linux("amd64", selfPath), is: ErrNoHelper,
			errText: []string{"GOARCH=arm64"}},
		{name: "an engine architecture with no embedded build", arch: "s390x", self: linux("amd64", selfPath), embedded: both, is: ErrNoHelper},
		{name: "an engine that did not say its architecture", arch: "", explicit: explicitPath, self: linux("amd64", selfPath), embedded: both, is: ErrNoHelper,
			errText: []string{"did not say its architecture"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := selectHelper(EngineArch(tc.arch), tc.explicit, tc.self, tc.embedded)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("selectHelper picked %s, want an error", h.Source)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("error %q is not %v", err, tc.is)
				}
				for _, s := range tc.errText {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Source != tc.source || h.Ref != unitRef(tc.want) || h.Arch != EngineArch(tc.arch) {
				t.Errorf("picked %s (%s, %s), want %s (%s, %s)", h.Source, h.Ref, h.Arch, tc.source, unitRef(tc.want), EngineArch(tc.arch))
			}
			var got bytes.Buffer
			if err := h.copyTo(&got); err != nil || !bytes.Equal(got.Bytes(), tc.want) {
				t.Errorf("copyTo wrote %d bytes, %v; want the %d bytes picked", got.Len(), err, len(tc.want))
			}
		})
	}
}

// TestSelectHelperArchError: a wrong architecture is a *HelperArchError
// naming both.
func TestSelectHelperArchError(t *testing.T) {
	path := unitWrite(t, "verifymcp", unitELF(t, elf.EM_AARCH64, binary.LittleEndian, elf.ELFOSABI_NONE, false, ""))
	_, err := selectHelper("amd64", path, thisBinary{"darwin", "arm64", nil}, nil)
	var ae *HelperArchError
	if !errors.As(err, &ae) || ae.Arch != "arm64" || ae.Engine != "amd64" || ae.Source != path {
		t.Errorf("error = %v, want a HelperArchError for %s: arm64 against amd64", err, path)
	}
}

// TestHelperChangedSinceLoad: a binary replaced after it was hashed (an
// upgrade mid-command), by one as long, shorter or longer, does not build
// an image under the old one's tag: copying it fails, and the build
// context streamed from it has no end, so the engine reading it fails too.
// The one loaded streams a context that holds its Dockerfile and its bytes.
func TestHelperChangedSinceLoad(t *testing.T) {
	v1 := unitELF(t, elf.EM_X86_64, binary.LittleEndian, elf.ELFOSABI_NONE, false, "v1")
	for name, v2 := range map[string][]byte{
		"same length": unitELF(t, elf.EM_X86_64, binary.LittleEndian, elf.ELFOSABI_NONE, false, "v2"),
		"shorter":     v1[:len(v1)-1],
		"longer":      append(slices.Clone(v1), 0),
	} {
		t.Run(name, func(t *testing.T) {
			path := unitWrite(t, "verifymcp", v1)
			h, err := LoadHelper(path)
			if err != nil {
				t.Fatal(err)
			}
			var ctx bytes.Buffer
			if err := h.buildContext(&ctx); err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{}
			tr := tar.NewReader(&ctx)
			for {
				hd, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				files[hd.Name], _ = io.ReadAll(tr)
			}
			if !bytes.Equal(files["verifymcp"], v1) || !strings.Contains(string(files["Dockerfile"]), "COPY verifymcp /verifymcp") {
				t.Errorf("build context: %d bytes of the binary (want %d), Dockerfile %q", len(files["verifymcp"]), len(v1), files["Dockerfile"])
			}

			if err := os.WriteFile(path, v2, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := h.copyTo(io.Discard); err == nil || !strings.Contains(err.Error(), "changed since this command started") {
				t.Errorf("copyTo after the binary changed = %v, want an error", err)
			}
			ctx.Reset()
			if err := h.buildContext(&ctx); !errors.Is(err, errHelperChanged) {
				t.Errorf("buildContext after the binary changed = %v, want errHelperChanged", err)
			}
			if ctx.Len() > 1024+int(h.size)+2048 {
				t.Errorf("the context went on past the binary: %d bytes", ctx.Len())
			}
			tr = tar.NewReader(&ctx)
			for {
				if _, err = tr.Next(); err != nil {
					break
				}
				_, _ = io.Copy(io.Discard, tr)
			}
			if err == nil || errors.Is(err, io.EOF) {
				t.Errorf("reading the context of a changed binary ended with %v, want an error", err)
			}
		})
	}
}

// TestHelperRealBinaries runs the checks on real binaries: a program
// cross-built with CGO_ENABLED=0 for each architecture (a static ELF for
// it, refused for the other), and the system's dynamically linked ls.
func TestHelperRealBinaries(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Fatalf("no go command to cross-build with: %v", err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"main.go": "package main\n\nfunc main() {}\n", "go.mod": "module static\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run("linux/"+arch, func(t *testing.T) {
			out := filepath.Join(dir, "static-"+arch)
			cmd := exec.Command(goBin, "build", "-o", out, ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOTOOLCHAIN=local", "GOFLAGS=")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, b)
			}
			h, err := selectHelper(arch, out, thisBinary{"darwin", "arm64", nil}, nil)
			if err != nil || h.Arch != arch {
				t.Fatalf("selectHelper(%s, the linux/%s build) = %v, %v; want it picked", arch, arch, h, err)
			}
			other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[arch]
			var ae *HelperArchError
			if _, err := selectHelper(other, out, thisBinary{"linux", other, nil}, nil); !errors.As(err, &ae) {
				t.Errorf("the linux/%s build against a linux/%s engine: %v, want a HelperArchError", arch, other, err)
			}
		})
	}
	t.Run("dynamically linked ls", func(t *testing.T) {
		if _, err := os.Stat("/bin/ls"); err != nil {
			t.Skipf("no /bin/ls to test with: %v", err)
		}
		if _, err := LoadHelper("/bin/ls"); !errors.Is(err, ErrHelperNotStatic) {
			t.Errorf("LoadHelper(/bin/ls) = %v, want ErrHelperNotStatic", err)
		}
	})
}

// TestEmbeddedHelperFiles: with the tag embedhelpers, each release binary
// carries the Linux builds it is not itself (a file name ending in a
// GOARCH would quietly limit a file to that architecture). go list reads
// the build constraints without the embedded files being there.
func TestEmbeddedHelperFiles(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for platform, want := range map[string][]string{
		"linux/amd64":  {"helper_arm64_embed.go"},
		"linux/arm64":  {"helper_amd64_embed.go"},
		"darwin/amd64": {"helper_amd64_embed.go", "helper_arm64_embed.go"},
		"darwin/arm64": {"helper_amd64_embed.go", "helper_arm64_embed.go"},
	} {
		t.Run(platform, func(t *testing.T) {
			goos, goarch, _ := strings.Cut(platform, "/")
			cmd := exec.Command(goBin, "list", "-e", "-tags", "embedhelpers", "-f", `{{join .GoFiles "\n"}}`, ".")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			var got []string
			for _, f := range strings.Fields(string(out)) {
				if strings.HasSuffix(f, "_embed.go") {
					got = append(got, f)
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("embedded helper files for %s: %v, want %v", platform, got, want)
			}
		})
	}
	// Without the tag, no binary embeds anything.
	cmd := exec.Command(goBin, "list", "-f", `{{join .GoFiles "\n"}}`, ".")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil || strings.Contains(string(out), "_embed.go") {
		t.Errorf("go list without the tag: %v\n%s", err, out)
	}
}

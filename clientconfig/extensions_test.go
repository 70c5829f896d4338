package clientconfig

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// claudeFixture is a Claude Desktop data directory with a config file and
// four installed extensions: one enabled, one disabled (its settings hold
// a token), one whose manifest.json is cut short and one whose
// manifest.json is a link out of its bundle. Its JSON files end in .in,
// so that what walks testdata for client config files (the web page's
// test) does not take a manifest for one; claudeDir copies it, drops the
// .in, and makes the link and a .DS_Store there.
const claudeFixture = "testdata/claude-desktop-extensions/Claude"

// claudeDir is a copy of claudeFixture, ready to read.
func claudeDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Claude")
	if err := os.CopyFS(dir, os.DirFS(claudeFixture)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".json.in") {
			return err
		}
		return os.Rename(p, strings.TrimSuffix(p, ".in"))
	})
	if err != nil {
		t.Fatal(err)
	}
	ext := filepath.Join(dir, "Claude Extensions")
	if err := os.WriteFile(filepath.Join(ext, ".DS_Store"), []byte{0, 0, 0, 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(ext, "local.mcpb.mallory.linked")
	if err := os.Mkdir(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "outside-manifest.json"), filepath.Join(linked, "manifest.json")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	return dir
}

func readClaudeDir(t *testing.T, dir string, extensions bool) Disclosed {
	t.Helper()
	p := filepath.Join(dir, "claude_desktop_config.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	d := Disclosed{Extensions: extensions}
	if err := d.Read(Source{Path: p, Data: data}); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestReadExtensions(t *testing.T) {
	dir := claudeDir(t)
	d := readClaudeDir(t, dir, true)
	if len(d.Files) != 2 {
		t.Fatalf("%d files, want the config file and its extensions", len(d.Files))
	}
	ext := d.Files[1]
	if want := filepath.Join(dir, "Claude Extensions"); ext.Path != want || ext.Client != ClientClaudeDesktop {
		t.Errorf("extensions file %s (%s), want %s (claude-desktop)", ext.Path, ext.Client, want)
	}
	abs := filepath.Join(dir, "Claude Extensions")
	type row struct {
		Server, Target, Name, Spec string
		Pinned, Disabled           bool
		NotScanned                 string
	}
	want := []row{
		{"memory", "npm:@modelcontextprotocol/server-memory@2025.4.25", "@modelcontextprotocol/server-memory", "2025.4.25", true, false, ""},
		{"Filesystem", "mcpb:" + filepath.Join(abs, "ant.dir.ant.anthropic.filesystem"), "Filesystem", "0.2.2", true, false, ""},
		{"acme-notes", "mcpb:" + filepath.Join(abs, "local.mcpb.acme.notes"), "acme-notes", "1.4.0", true, true, ""},
		{"local.mcpb.broken.half", "", "", "", false, false, NotScannedBundle + ": invalid manifest"},
		{"local.mcpb.mallory.linked", "", "", "", false, false, NotScannedBundle + ": manifest.json is not a plain file"},
	}
	var got []row
	for _, tg := range d.Targets {
		// The JSON decoder's own words after "invalid manifest" are not
		// this package's.
		ns := tg.NotScanned
		if i := strings.Index(ns, "invalid manifest"); i >= 0 {
			ns = ns[:i+len("invalid manifest")]
		}
		got = append(got, row{tg.Server, tg.Target, tg.Name, tg.Spec, tg.Pinned, tg.Disabled, ns})
		if tg.Target != "" && strings.HasPrefix(tg.Target, "mcpb:") && tg.Ecosystem != "mcpb" {
			t.Errorf("%s: ecosystem %q, want mcpb", tg.Server, tg.Ecosystem)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	for _, s := range ext.Servers {
		if s.Transport != TransportBundle {
			t.Errorf("%s: transport %q, want %q", s.Name, s.Transport, TransportBundle)
		}
	}
	if s := ext.Servers[0]; s.Command != "node" || !cmp.Equal(s.Args, []string{"${__dirname}/server/index.js", "${user_config.allowed_directories}"}) {
		t.Errorf("the filesystem extension shows %q %q, want its manifest's command", s.Command, s.Args)
	}
	// The bundle's command is shown, not read as a launch by the user's
	// file: no cfg. finding is about an extension.
	for _, f := range d.Findings {
		if f.File == ext.Path {
			t.Errorf("finding %s on extension %s", f.Code, f.Server)
		}
	}
	if got, want := ScanCommand(d.Targets[1]), "verifymcp scan 'mcpb:"+filepath.Join(abs, "ant.dir.ant.anthropic.filesystem")+"'"; got != want {
		t.Errorf("ScanCommand = %s, want %s", got, want)
	}
}

// TestReadExtensionsOff: without Extensions, Read reads the bytes it is
// given and nothing of the disk (a page's uploads are not files here).
func TestReadExtensionsOff(t *testing.T) {
	if d := readClaudeDir(t, claudeDir(t), false); len(d.Files) != 1 || len(d.Targets) != 1 {
		t.Errorf("%d files, %d targets; want the config file's alone", len(d.Files), len(d.Targets))
	}
	var d Disclosed
	if err := d.ReadExtensions(filepath.Join(t.TempDir(), "Claude Extensions")); err != nil || len(d.Files) != 0 {
		t.Errorf("a missing extensions directory: %v, %d files; want nothing", err, len(d.Files))
	}
}

// TestReadExtensionsUnreadable: a Claude Extensions that is no directory
// is said in the config file, which is still read.
func TestReadExtensionsUnreadable(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(filepath.Join(dir, "Claude Extensions"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := Disclosed{Extensions: true}
	if err := d.Read(Source{Path: p, Data: []byte(`{"mcpServers": {}}`), Client: ClientClaudeDesktop}); err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 1 || len(d.Files[0].Unknown) != 1 || d.Files[0].Unknown[0].Path != "Claude Extensions" {
		t.Errorf("files %+v, want the config file with the extensions' error as unknown", d.Files)
	}
}

// TestExtensionSettingsNotLeaked: the values a user typed into an
// extension's settings reach no output.
func TestExtensionSettingsNotLeaked(t *testing.T) {
	values := []string{"acme_live_7Hq2Wm9Xr4Tz6Bv1Nc8Lp3Kd5Fg0Ys", "/Users/alice/Documents"}
	dir := claudeDir(t)
	settings, err := os.ReadFile(filepath.Join(dir, "Claude Extensions Settings", "local.mcpb.acme.notes.json"))
	if err != nil {
		t.Fatal(err)
	}
	fsSettings, err := os.ReadFile(filepath.Join(dir, "Claude Extensions Settings", "ant.dir.ant.anthropic.filesystem.json"))
	if err != nil {
		t.Fatal(err)
	}
	// So that the test can fail: the settings files hold the values.
	if !strings.Contains(string(settings), values[0]) || !strings.Contains(string(fsSettings), values[1]) {
		t.Fatal("the settings files no longer hold the values this test looks for")
	}
	out, err := json.Marshal(readClaudeDir(t, dir, true))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if strings.Contains(string(out), v) || strings.Contains(string(out), v[:len(v)/2]) {
			t.Errorf("output holds (part of) the setting %q", v[:6]+"...")
		}
	}
}

func TestClaudeExtensionsDir(t *testing.T) {
	for _, tc := range []struct{ goos, want string }{
		{"darwin", "/h/Library/Application Support/Claude/Claude Extensions"},
		{"windows", "/h/AppData/Roaming/Claude/Claude Extensions"},
		{"linux", "/h/.config/Claude/Claude Extensions"},
		{"plan9", ""},
	} {
		if got := ClaudeExtensionsDir("/h", tc.goos); filepath.ToSlash(got) != tc.want {
			t.Errorf("ClaudeExtensionsDir(/h, %s) = %q, want %q", tc.goos, got, tc.want)
		}
		// Where KnownLocations finds claude_desktop_config.json, the
		// extensions are beside it.
		for _, l := range KnownLocations("/h", "/c", tc.goos) {
			if l.Client == ClientClaudeDesktop && ExtensionsBeside(l.Path) != ClaudeExtensionsDir("/h", tc.goos) {
				t.Errorf("%s: extensions of %s are %s, not %s", tc.goos, l.Path, ExtensionsBeside(l.Path), ClaudeExtensionsDir("/h", tc.goos))
			}
		}
	}
}

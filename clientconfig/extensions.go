package clientconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

// Claude Desktop installs an MCP bundle (a "desktop extension", .mcpb or
// formerly .dxt) by unpacking it, not by writing claude_desktop_config.json:
//
//	<Claude dir>/Claude Extensions/<id>/                unpacked bundle, manifest.json at its top
//	<Claude dir>/Claude Extensions Settings/<id>.json   {"isEnabled": bool, "userConfig": {...}}
//	<Claude dir>/extensions-installations.json          {"extensions": {<id>: {id, version, hash, manifest, source, ...}}}
//
// where <Claude dir> is the directory of claude_desktop_config.json. None
// of this is in Anthropic's documentation or in github.com/anthropics/mcpb
// (whose README says only that Claude for macOS and Windows installs
// bundles, and whose MANIFEST.md says ${__dirname} is "the extension's
// directory"); it is confirmed by third parties only:
//
//   - macOS ~/Library/Application Support/Claude/Claude Extensions/<id>/,
//     the settings file with isEnabled and userConfig, and the
//     installations index: github.com/Data-Wise/himalaya-mcp,
//     docs/reference/desktop-extensions.md ("What Install Does").
//   - Windows %APPDATA%\Claude\Claude Extensions\ (C:\Users\<user>\AppData\
//     Roaming\...), the folder the app's "Open Extensions Folder" button
//     opens, and for the Microsoft Store (MSIX) build
//     %LOCALAPPDATA%\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude\
//     Claude Extensions: github.com/anthropics/claude-code issue 27041.
//   - Settings files named by the extension id, isEnabled read as "enabled
//     unless false": a Claude Desktop integration found by code search
//     (getClaudeMcpbSettingsDir, MCPB_SETTINGS_MATCH); ids such as
//     ant.dir.ant.anthropic.filesystem (directory installs) and
//     local.mcpb.<author>.<name> (local files) from the same searches.
//   - Linux: Claude Desktop has no Linux release (the mcpb README names
//     macOS and Windows). ~/.config/Claude/ is where this package already
//     looks for claude_desktop_config.json on Linux (unofficial builds,
//     Electron's userData); that the extensions sit beside it there is an
//     assumption that follows the macOS and Windows layout, not a fact.
//
// The installations index is not read: the directories are what the app
// runs, and the index's manifest copy could only disagree with them.
const (
	extensionsDir        = "Claude Extensions"
	extensionSettingsDir = "Claude Extensions Settings"
	// maxExtensionFile bounds a manifest or settings file read into memory
	// (mcpb bounds manifest.json to 1 MiB too).
	maxExtensionFile = 1 << 20
)

// NotScannedBundle starts the reason an installed bundle is not scanned.
const NotScannedBundle = "an installed bundle whose manifest.json cannot be read"

// ClaudeExtensionsDir is the directory where Claude Desktop unpacks the
// bundles it installs, for goos under home: beside claude_desktop_config.json
// (see KnownLocations), and on Windows under %APPDATA% as its default
// (home\AppData\Roaming). It is "" for a goos Claude Desktop has no
// known place on.
func ClaudeExtensionsDir(home, goos string) string {
	var rel string
	switch goos {
	case "darwin":
		rel = "Library/Application Support/Claude"
	case "linux":
		rel = ".config/Claude"
	case "windows":
		rel = "AppData/Roaming/Claude"
	default:
		return ""
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, filepath.FromSlash(rel), extensionsDir)
}

// ExtensionsBeside is the extensions directory of the Claude Desktop
// configuration file at configPath.
func ExtensionsBeside(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), extensionsDir)
}

// bundleRef is what an installed bundle's server is scanned as.
type bundleRef struct {
	dir           string // absolute
	name, version string // the manifest's
	why           string // why it is not scanned; "" when it is
}

// ReadExtensions reads the bundles Claude Desktop installed in dir (a
// "Claude Extensions" directory) as one File of path dir whose servers are
// the bundles, with their findings and targets (mcpb:DIR), and adds it to
// d. A dir that does not exist adds nothing. Each subdirectory is one
// server, named by its manifest's display_name, else name, else the
// directory; disabled when its settings file says isEnabled false. A
// manifest that cannot be read makes that server not scanned, saying why;
// it never fails the rest. The user's settings values (userConfig: API
// keys, paths) are never decoded.
func (d *Disclosed) ReadExtensions(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("read extensions %s: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read extensions %s: %w", dir, err)
	}
	f := File{Path: dir, Client: ClientClaudeDesktop, Servers: []Server{}, Inputs: []Input{}, Unknown: []Unknown{}}
	settings := filepath.Join(filepath.Dir(abs), extensionSettingsDir)
	for _, e := range entries {
		p := filepath.Join(abs, e.Name())
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			continue // .DS_Store and the like; a dangling link
		}
		f.Servers = append(f.Servers, extensionServer(p, filepath.Join(settings, e.Name()+".json")))
	}
	d.Files = append(d.Files, f)
	d.Findings = append(d.Findings, Findings(&f)...)
	d.Targets = append(d.Targets, Targets(&f)...)
	return nil
}

// extensionServer is the installed bundle at dir, its settings file at
// settings.
func extensionServer(dir, settings string) Server {
	s := Server{Name: filepath.Base(dir), Transport: TransportBundle, bundle: &bundleRef{dir: dir}}
	// A missing or unreadable settings file leaves the bundle enabled:
	// installed is what a scan must not skip.
	s.Disabled = extensionDisabled(settings)
	m, err := readManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		s.bundle.why = NotScannedBundle + ": " + err.Error()
		return s
	}
	s.bundle.name, s.bundle.version = m.Name, m.Version
	switch {
	case m.DisplayName != "":
		s.Name = m.DisplayName
	case m.Name != "":
		s.Name = m.Name
	}
	// The command as the manifest writes it, for the report to show: the
	// bundle's author wrote it, not the user, but it is masked as a file's
	// would be. It is not read as a launch (s.args stays empty), so no
	// launch or path finding is made of it.
	if c := m.Server.MCPConfig; c != nil {
		s.Command = c.Command
		if valueShape(s.Command) != "" {
			s.Command = literalMask(s.Command)
		}
		for _, a := range readArgs(c.Args) {
			s.Args = append(s.Args, a.masked)
		}
	}
	return s
}

// readManifest reads and checks an installed bundle's manifest.json, which
// must be a plain file: a link could name any file on the machine, and its
// contents would reach the report through a parse error.
func readManifest(p string) (*mcpb.Manifest, error) {
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no manifest.json")
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, errors.New("manifest.json is not a plain file")
	case st.Size() > maxExtensionFile:
		return nil, fmt.Errorf("manifest.json is larger than %d bytes", maxExtensionFile)
	}
	data, err := readBounded(p)
	if err != nil {
		return nil, err
	}
	return mcpb.ParseManifest(data)
}

// extensionDisabled says whether the settings file at p sets isEnabled to
// false. Only that key is decoded; userConfig, which holds the values the
// user typed (secrets among them), is skipped unread.
func extensionDisabled(p string) bool {
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		return false
	}
	data, err := readBounded(p)
	if err != nil {
		return false
	}
	var v struct {
		IsEnabled *bool `json:"isEnabled"`
	}
	if json.Unmarshal(data, &v) != nil || v.IsEnabled == nil {
		return false
	}
	return !*v.IsEnabled
}

// readBounded reads at most maxExtensionFile bytes of the file at p.
func readBounded(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxExtensionFile))
}

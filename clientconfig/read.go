package clientconfig

import (
	"strings"

	"al.essio.dev/pkg/shellescape"
)

// Source is one config file to read: the name reports give it, its bytes,
// and the client whose format it is in ("" detects it, see DetectClient).
type Source struct {
	Path   string
	Data   []byte
	Client string
}

// Disclosed is what config files prove alone: the files as read, their
// findings and the package targets of their servers, file by file in the
// order read. The CLI (verifymcp config scan) and the browser page both
// read files through Read, so that they report the same.
type Disclosed struct {
	Files    []File
	Findings []Finding
	Targets  []Target
	// Extensions makes Read of a Claude Desktop file also read the
	// bundles Claude Desktop installed beside it (ReadExtensions of
	// ExtensionsBeside(path)). Only a caller whose Source paths are files
	// on this machine sets it (the CLI): a page that reads uploaded bytes
	// must not, since an upload's name is not a path here.
	Extensions bool
}

// Read parses one file and adds its findings and targets to d. A file
// that does not parse is an error naming its path:line:col, and d is left
// as it was. With d.Extensions, a Claude Desktop file is followed by the
// extensions installed beside it (a second File); a directory of them
// that cannot be read is an Unknown of the file.
func (d *Disclosed) Read(in Source) error {
	c := in.Client
	if c == "" {
		c = DetectClient(in.Path, in.Data)
	}
	f, err := ParseFile(in.Path, in.Data, c)
	if err != nil {
		return err
	}
	d.Files = append(d.Files, *f)
	d.Findings = append(d.Findings, Findings(f)...)
	d.Targets = append(d.Targets, Targets(f)...)
	if d.Extensions && c == ClientClaudeDesktop {
		// The file was read: extensions that cannot be are said in it,
		// not made the file's failure.
		if err := d.ReadExtensions(ExtensionsBeside(in.Path)); err != nil {
			i := len(d.Files) - 1
			d.Files[i].Unknown = append(d.Files[i].Unknown, Unknown{Path: extensionsDir, Why: err.Error()})
		}
	}
	return nil
}

// ScanCommand is the command line that scans t's package in the sandbox
// as the file starts it: its entry point and arguments (masked, with the
// sandbox's stand-ins for client variables) and its environment's names
// with placeholder values, never the file's. It is "" for a server that is
// not a package target (t.NotScanned says why).
func ScanCommand(t Target) string {
	if t.Target == "" || t.NotScanned != "" {
		return ""
	}
	argv := []string{"verifymcp", "scan", t.Target}
	if t.Bin != "" {
		argv = append(argv, "--bin", t.Bin)
	}
	for _, a := range t.Args {
		argv = append(argv, "--arg", a)
	}
	for _, n := range t.EnvNames {
		argv = append(argv, "--env", n+"="+Placeholder)
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellescape.Quote(a)
	}
	return strings.Join(quoted, " ")
}

// Clients lists the client ids a file can be read as (Source.Client, the
// CLI's --client), in the order people are offered them.
func Clients() []string {
	return []string{ClientClaudeDesktop, ClientClaudeCode, ClientCursor, ClientVSCode, ClientWindsurf, ClientGemini, ClientZed, ClientCline, ClientGeneric}
}

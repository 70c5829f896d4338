// Package configscan is the config scan of the browser page (package
// web): the files a user drops on the page, read by clientconfig exactly
// as `verifymcp config scan` reads them, and written as its report. It
// does no I/O, so that it compiles to WebAssembly; the page calls Scan
// through web/wasm.
package configscan

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/report/configreport"
	"github.com/verifymcp/verifymcp/rubric"
)

// File is one file the user gave the page: its name (the file's name, or
// its path below a dropped folder, or what the user called pasted text),
// its bytes, and the client to read it as ("" detects it, as the CLI
// does from the name and the content).
type File struct {
	Name   string
	Data   []byte
	Client string
}

// Result is what the page shows and offers to download.
type Result struct {
	// Report is the config report exactly as `verifymcp config scan
	// --format json` writes it for the files that were read; "" when none
	// was.
	Report string `json:"report"`
	// SARIF is the same report as `--format sarif` writes it.
	SARIF string `json:"sarif"`
	// Errors has one line per file that could not be read, as the CLI
	// says it: "NAME:LINE:COL: why". Such a file is not in the report.
	Errors []string `json:"errors"`
	// Servers lists every server of the files read, in file order, with
	// the command line that scans its package in the sandbox, or why it
	// has none.
	Servers []Server `json:"servers"`
}

// Server is one server of a file and how a sandboxed scan takes it.
type Server struct {
	Server     string `json:"server"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	Target     string `json:"target,omitempty"`
	Command    string `json:"command,omitempty"`
	NotScanned string `json:"not_scanned,omitempty"`
}

// Scan reads files and writes their report as the CLI would at now,
// naming the tool version. Two files of one name are told apart as the
// report shows them ("mcp.json", "mcp.json (2)"), since a page sees names,
// not paths.
func Scan(files []File, version string, now time.Time) (Result, error) {
	if len(files) == 0 {
		return Result{}, fmt.Errorf("no file given")
	}
	res := Result{Errors: []string{}, Servers: []Server{}}
	var d clientconfig.Disclosed
	seen := map[string]int{}
	for _, f := range files {
		name := strings.TrimSpace(f.Name)
		if name == "" {
			name = "pasted.json"
		}
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s (%d)", name, seen[name])
		}
		if err := d.Read(clientconfig.Source{Path: name, Data: f.Data, Client: f.Client}); err != nil {
			res.Errors = append(res.Errors, err.Error())
		}
	}
	if len(d.Files) == 0 {
		return res, nil
	}
	rep, err := configreport.NewConfigReport(configreport.ConfigInput{Catalog: rubric.ConfigCatalog(), Files: d.Files,
		Findings: d.Findings, Targets: d.Targets, ToolVersion: version, Date: now.UTC()})
	if err != nil {
		return Result{}, err
	}
	configreport.ApplyPolicy(report.Policy{}, &rep, nil)
	var js, sarif bytes.Buffer
	if err := configreport.WriteConfig(&js, report.FormatJSON, rep); err != nil {
		return Result{}, err
	}
	if err := configreport.WriteConfig(&sarif, report.FormatSARIF, rep); err != nil {
		return Result{}, err
	}
	res.Report, res.SARIF = js.String(), sarif.String()
	for _, t := range d.Targets {
		res.Servers = append(res.Servers, Server{Server: t.Server, File: t.File, Line: t.Line, Target: t.Target,
			Command: clientconfig.ScanCommand(t), NotScanned: t.NotScanned})
	}
	return res, nil
}

// Client is one client a file can be read as, for the page's choice.
type Client struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Clients are the clients the page offers, as the CLI's --client names
// them.
func Clients() []Client {
	var cs []Client
	for _, id := range clientconfig.Clients() {
		cs = append(cs, Client{ID: id, Name: clientconfig.ClientName(id)})
	}
	return cs
}

// Catalog is the config findings catalog in force: what a file alone can
// prove, code by code, which the page lists.
func Catalog() []rubric.ConfigCode { return rubric.ConfigCatalog().Codes }

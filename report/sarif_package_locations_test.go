package report

import (
	"strings"
	"testing"
)

// resultsBy returns the results of code, in order.
func resultsBy(log sarifLog, code string) []int {
	var out []int
	for i, res := range log.Runs[0].Results {
		if res.RuleID == code {
			out = append(out, i)
		}
	}
	return out
}

func TestPackageSARIFLocations(t *testing.T) {
	type want struct {
		code, subject string
		logical       []string // kind:fullyQualifiedName, innermost first
		uri, base     string   // the related location, "" for none
	}
	for _, tc := range []struct {
		fixture string
		at      string // the stand-in path every result stands at
		want    []want
	}{
		{"everything", ".verifymcp/npm/@modelcontextprotocol/server-everything", []want{
			{"pkg.drift.parameter_added", "tool:printEnv", []string{
				"member:npm:@modelcontextprotocol/server-everything@2025.9.25/tool:printEnv/properties/filter",
				"function:npm:@modelcontextprotocol/server-everything@2025.9.25/tool:printEnv",
				"module:npm:@modelcontextprotocol/server-everything@2025.9.25"}, "", ""},
			{"pkg.contract.capability.environment", "printEnv", []string{
				"function:npm:@modelcontextprotocol/server-everything@2025.9.25/tool:printEnv",
				"module:npm:@modelcontextprotocol/server-everything@2025.9.25"}, "", ""},
			{"pkg.session.spec.outdated", "", []string{"module:npm:@modelcontextprotocol/server-everything@2025.9.25"}, "", ""},
		}},
		{"hostile", ".verifymcp/npm/mcp-fs-helper", []want{
			{"pkg.contract.capability.arbitrary_path", "deleteFile", []string{
				"member:npm:mcp-fs-helper@1.0.7/tool:deleteFile/properties/path",
				"function:npm:mcp-fs-helper@1.0.7/tool:deleteFile",
				"module:npm:mcp-fs-helper@1.0.7"}, "", ""},
			// The bidirectional override is escaped, never shown as is.
			{"pkg.contract.unicode.bidi", "sync\u202egnp.exe", []string{
				`function:npm:mcp-fs-helper@1.0.7/tool:sync\u202egnp.exe`, "module:npm:mcp-fs-helper@1.0.7"}, "", ""},
			{"pkg.install.scripts.present", "fs-native-watch", []string{"module:npm:mcp-fs-helper@1.0.7"},
				"node_modules/fs-native-watch/package.json", BaseInstallTree},
		}},
		{"crashed", ".verifymcp/npm/@acme/mcp-github-tools", []want{
			{"pkg.install.scripts.present", "@acme/mcp-github-tools", []string{"module:npm:@acme/mcp-github-tools@2.3.0"}, "package.json", BasePackageRoot},
		}},
		{"behavior", ".verifymcp/npm/mcp-server-filesystem-pro", []want{
			{"pkg.behavior.file.write", "run", []string{"module:npm:mcp-server-filesystem-pro@2.1.4"}, ".cache/fs-pro/state.json", BaseSandboxHome},
			{"pkg.behavior.file.sensitive_write", "scripts:node-telemetry-helper", []string{"module:npm:mcp-server-filesystem-pro@2.1.4"},
				".config/autostart/telemetry-helper.desktop", BaseSandboxHome},
			{"pkg.install.scripts.present", "node-telemetry-helper", []string{"module:npm:mcp-server-filesystem-pro@2.1.4"},
				"node_modules/node-telemetry-helper/package.json", BaseInstallTree},
		}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			rep := buildSARIF(t, tc.fixture)
			log := decodeSARIF(t, writeSARIF(t, rep))
			run := log.Runs[0]
			for _, w := range tc.want {
				found := false
				for _, i := range resultsBy(log, w.code) {
					if rep.Findings[i].Subject != w.subject {
						continue
					}
					found = true
					res := run.Results[i]
					if len(res.Locations) != 1 || len(res.Locations[0].Logical) != 1 {
						t.Fatalf("%s %s: locations %+v", w.code, w.subject, res.Locations)
					}
					var chain []string
					for l := &res.Locations[0].Logical[0]; ; {
						chain = append(chain, l.Kind+":"+l.FQN)
						if l.Index != nil && run.LogicalLocations[*l.Index].FQN != l.FQN {
							t.Errorf("%s: logical location %d is %s in the run, %s in the result", w.code, *l.Index, run.LogicalLocations[*l.Index].FQN, l.FQN)
						}
						if l.Parent == nil {
							if l.Index == nil || run.LogicalLocations[*l.Index].Parent == nil {
								break
							}
							l = &run.LogicalLocations[*run.LogicalLocations[*l.Index].Parent]
							continue
						}
						l = &run.LogicalLocations[*l.Parent]
					}
					if strings.Join(chain, " < ") != strings.Join(w.logical, " < ") {
						t.Errorf("%s %q: logical locations\n  %s\nwant\n  %s", w.code, w.subject, strings.Join(chain, " < "), strings.Join(w.logical, " < "))
					}
					if ph := res.Locations[0].Physical; ph == nil || ph.Artifact.URI != tc.at || ph.Artifact.Base != "" || ph.Region.StartLine != 1 {
						t.Errorf("%s %q: physical location %+v, want %s line 1", w.code, w.subject, ph, tc.at)
					}
					switch {
					case w.uri == "" && len(res.Related) > 0:
						t.Errorf("%s %q: related locations %+v, want none", w.code, w.subject, res.Related)
					case w.uri != "" && (len(res.Related) != 1 || res.Related[0].Physical == nil ||
						res.Related[0].Physical.Artifact.URI != w.uri || res.Related[0].Physical.Artifact.Base != w.base || res.Related[0].Message.Text == ""):
						t.Errorf("%s %q: related locations %+v, want %s at %s with a message", w.code, w.subject, res.Related, w.uri, w.base)
					}
				}
				if !found {
					t.Errorf("no %s result about %q", w.code, w.subject)
				}
			}
		})
	}
}

// With the declaring file named, every result stands there, at its line,
// with the package still its logical location; nothing else moves, the
// fingerprints least of all.
func TestSARIFDeclaredIn(t *testing.T) {
	rep := buildSARIF(t, "everything")
	plain := decodeSARIF(t, writeSARIF(t, rep)).Runs[0].Results
	for _, tc := range []struct {
		at   RepoLocation
		line int
	}{
		{RepoLocation{Path: "package.json", Line: 14}, 14},
		{RepoLocation{Path: "tools/mcp servers/.mcp.json"}, 1},
	} {
		data := writeSARIFWith(t, rep, SARIFOptions{DeclaredIn: tc.at})
		checkSARIF(t, "declared in "+tc.at.String(), data)
		got := decodeSARIF(t, data).Runs[0].Results
		if len(got) != len(plain) || len(got) == 0 {
			t.Fatalf("%d results, want %d", len(got), len(plain))
		}
		for i, res := range got {
			ph := res.Locations[0].Physical
			if ph == nil || ph.Artifact.URI != relativeURI(tc.at.Path) || ph.Artifact.Base != "" || ph.Region.StartLine != tc.line ||
				!strings.HasPrefix(res.Locations[0].Message.Text, "Where this repository declares npm:@modelcontextprotocol/server-everything@") {
				t.Errorf("%s result %d: location %+v", tc.at, i, res.Locations[0])
			}
			if len(res.Locations[0].Logical) != 1 || res.Locations[0].Logical[0].FQN != plain[i].Locations[0].Logical[0].FQN {
				t.Errorf("%s result %d: logical location %+v, want %+v", tc.at, i, res.Locations[0].Logical, plain[i].Locations[0].Logical)
			}
			for k, v := range plain[i].Fingerprints {
				if res.Fingerprints[k] != v {
					t.Errorf("%s result %d: %s %q, %q with no declaring file", tc.at, i, k, res.Fingerprints[k], v)
				}
			}
		}
	}
	if got := plain[0].Locations[0].Message.Text; !strings.Contains(got, "stand-in path") {
		t.Errorf("stand-in location's message %q", got)
	}
}

// A package named to climb out of the stand-in directory, or to read as a
// scheme, and a file written by its absolute path, stay relative URIs that
// GitHub takes.
func TestSARIFHostilePaths(t *testing.T) {
	rep := buildSARIF(t, "behavior")
	rep.Target.Name = "../../../etc/x:y #?"
	for i, e := range rep.Behavior.Files {
		if e.Path == "~/.cache/fs-pro/state.json" {
			rep.Behavior.Files[i].Path = "/var/../etc/cron.d/x"
		}
	}
	found := false
	for i, f := range rep.Findings {
		if f.Code == "pkg.behavior.file.write" && f.Evidence == "created ~/.cache/fs-pro/state.json" {
			rep.Findings[i].Evidence, found = "created /var/../etc/cron.d/x", true
		}
	}
	if !found {
		t.Fatal("the behavior fixture has no pkg.behavior.file.write of ~/.cache/fs-pro/state.json")
	}
	data := writeSARIF(t, rep)
	checkSARIF(t, "hostile paths", data)
	log := decodeSARIF(t, data)
	for i, res := range log.Runs[0].Results {
		if ph := res.Locations[0].Physical; ph == nil || ph.Artifact.URI != ".verifymcp/npm/_../_../_../etc/x:y%20%23%3F" {
			t.Errorf("result %d: physical location %+v", i, ph)
		}
	}
	i := resultsBy(log, "pkg.behavior.file.write")
	if len(i) != 1 {
		t.Fatalf("%d pkg.behavior.file.write results", len(i))
	}
	rel := log.Runs[0].Results[i[0]].Related
	if len(rel) != 1 || rel[0].Physical == nil || rel[0].Physical.Artifact.URI != "var/_../etc/cron.d/x" || rel[0].Physical.Artifact.Base != BaseSandboxRoot ||
		!strings.Contains(rel[0].Message.Text, "absolute path") {
		t.Errorf("related locations %+v, want var/_../etc/cron.d/x at %s", rel, BaseSandboxRoot)
	}
}

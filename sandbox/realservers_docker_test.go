//go:build docker

package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/benchmark"
	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// regressionScope is what the real-server regression set holds the
// scanner to: every behaviour and session finding it raises on a real,
// pinned server must be justified, one by one, in the server's reviewed
// case.
var regressionScope = []string{"pkg.behavior.", "pkg.session."}

// inspectorListing is what bench/inspector/record.sh recorded for one
// server, unsandboxed and offline, under the MCP Inspector CLI: the
// Inspector's listing, and every page exactly as the server sent it to the
// Inspector (wire_results). The Inspector's client drops fields it does not
// know (chrome-devtools-mcp's annotations.category), which verifymcp keeps,
// so the items are compared with the server's own pages and the names with
// the Inspector's listing.
type inspectorListing struct {
	ID        string                     `json:"id"`
	Target    string                     `json:"target"`
	Wire      map[string]json.RawMessage `json:"wire_results"`
	Inspector map[string]json.RawMessage `json:"-"`
	Listable  bool                       `json:"-"`
}

func loadInspector(t *testing.T, id string) (*inspectorListing, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "realservers", id+".inspector.json"))
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var l inspectorListing
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	l.Inspector = map[string]json.RawMessage{}
	for _, m := range listMethods {
		l.Inspector[m.method] = all[m.method]
	}
	var tl map[string]json.RawMessage
	l.Listable = json.Unmarshal(all["tools/list"], &tl) == nil && tl["tools"] != nil
	return &l, true
}

// listMethods are the four lists and the key of their items.
var listMethods = []struct{ method, key string }{
	{"tools/list", "tools"}, {"prompts/list", "prompts"}, {"resources/list", "resources"}, {"resources/templates/list", "resourceTemplates"},
}

// wireItems returns every item of every page the server sent for method,
// or nil when the method was not sent or failed.
func (l *inspectorListing) wireItems(t *testing.T, method, key string) []json.RawMessage {
	t.Helper()
	var pages []map[string]json.RawMessage
	if json.Unmarshal(l.Wire[method], &pages) != nil {
		return nil // null (not sent) or {"errors": ...} (refused)
	}
	var items []json.RawMessage
	for _, p := range pages {
		var page []json.RawMessage
		if err := json.Unmarshal(p[key], &page); err != nil {
			t.Fatalf("%s %s: %v", l.ID, method, err)
		}
		items = append(items, page...)
	}
	return items
}

// inspectorNames returns the names (or URIs) the Inspector listed.
func (l *inspectorListing) inspectorNames(method, key string) []string {
	var page map[string][]map[string]any
	_ = json.Unmarshal(l.Inspector[method], &page)
	var out []string
	for _, it := range page[key] {
		for _, k := range []string{"name", "uri", "uriTemplate"} {
			if v, ok := it[k].(string); ok && (k != "name" || key == "tools" || key == "prompts") {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// environmentDependent are the parts of a listing that follow the machine
// the server runs on, normalised on both sides before comparing, each with
// why.
// The patterns match canonical JSON, where a string's newline is \n.
var environmentDependent = map[string][]*regexp.Regexp{
	// Desktop Commander describes the container it runs in: its mounted
	// directories (the Inspector's host's mounts there, the sandbox's
	// home volume here) and its hostname.
	"desktop-commander": {
		regexp.MustCompile(`Prefer paths within mounted directories: [^"\\]*`),
		regexp.MustCompile(`(\\n- /[^"\\]* \((?:read-write|read-only)\) - [^"\\]*)+`),
		regexp.MustCompile(`Container: [^"\\]*`),
	},
}

// canonical returns v as canonical JSON, for comparison.
func canonical(t *testing.T, id string, v any) string {
	t.Helper()
	b, err := contract.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range environmentDependent[id] {
		b = re.ReplaceAll(b, []byte("<environment>"))
	}
	return string(b)
}

// compareListing checks that what the scan captured is what the server sent
// the Inspector: the same items, field by field, read by the same parser,
// and the names the Inspector listed.
func compareListing(t *testing.T, l *inspectorListing, c *contract.Contract) {
	t.Helper()
	var ours [4][]string
	var names [4][]string
	for _, x := range c.Tools {
		ours[0], names[0] = append(ours[0], canonical(t, l.ID, x)), append(names[0], x.Name)
	}
	for _, x := range c.Prompts {
		ours[1], names[1] = append(ours[1], canonical(t, l.ID, x)), append(names[1], x.Name)
	}
	for _, x := range c.Resources {
		ours[2], names[2] = append(ours[2], canonical(t, l.ID, x)), append(names[2], x.URI)
	}
	for _, x := range c.Templates {
		ours[3], names[3] = append(ours[3], canonical(t, l.ID, x)), append(names[3], x.URITemplate)
	}
	parse := []func(json.RawMessage) (any, error){
		func(r json.RawMessage) (any, error) { return contract.ParseTool(r) },
		func(r json.RawMessage) (any, error) { return contract.ParsePrompt(r) },
		func(r json.RawMessage) (any, error) { return contract.ParseResource(r) },
		func(r json.RawMessage) (any, error) { return contract.ParseTemplate(r) },
	}
	for i, m := range listMethods {
		var want []string
		for _, it := range l.wireItems(t, m.method, m.key) {
			v, err := parse[i](it)
			if err != nil {
				t.Fatalf("%s %s: %v", l.ID, m.method, err)
			}
			want = append(want, canonical(t, l.ID, v))
		}
		got := slices.Sorted(slices.Values(ours[i]))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			var missing, extra []string
			for _, x := range want {
				if !slices.Contains(got, x) {
					missing = append(missing, x)
				}
			}
			for _, x := range got {
				if !slices.Contains(want, x) {
					extra = append(extra, x)
				}
			}
			t.Errorf("%s: %d items captured, the server sent the Inspector %d\n  sent, not captured: %.600s\n  captured, not sent: %.600s",
				m.method, len(got), len(want), strings.Join(missing, "\n    "), strings.Join(extra, "\n    "))
		}
		if in := slices.Sorted(slices.Values(l.inspectorNames(m.method, m.key))); !slices.Equal(slices.Sorted(slices.Values(names[i])), in) {
			t.Errorf("%s: captured %v, the Inspector listed %v", m.method, names[i], in)
		}
	}
}

// TestRealServerRegression scans every real server of the regression set
// (the reviewed cases that have an Inspector listing) as a user would:
// every listable server must end ok with the Inspector's contract, and
// every behaviour and session finding raised on it must be justified in
// its case. It logs one row per server.
func TestRealServerRegression(t *testing.T) {
	corpus, err := benchmark.LoadCorpus("../benchmark")
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, func(o *sandbox.Options) {
		o.Behavior, o.TreeCacheDir, o.NoExercise = true, treeCache, false
		o.Memory, o.InstallTimeout, o.HandshakeTimeout, o.DiscoverProbe, o.ListTimeout = 1<<30, 240*time.Second, 60*time.Second, 5*time.Second, 30*time.Second
	})
	p, err := pipeline.New(pipeline.Config{Scanner: s, Resolver: supplychain.NewNPM(nil, ""), ToolVersion: "test", Sandbox: pipeline.SandboxInfo{Behavior: true}, Rubric: rubric.Current()})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	n := 0
	for _, c := range corpus {
		if c.Kind != benchmark.KindReviewed {
			continue
		}
		l, ok := loadInspector(t, c.ID)
		if !ok {
			continue
		}
		n++
		t.Run(c.ID, func(t *testing.T) {
			if l.Target != c.Target {
				t.Fatalf("the Inspector listed %s, the case pins %s", l.Target, c.Target)
			}
			target, err := pipeline.ParseTarget(c.Target)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			rt, err := p.Resolve(context.Background(), target)
			if err != nil {
				t.Fatal(err)
			}
			scanned, err := p.Scan(context.Background(), rt, pipeline.Options{Bin: c.Bin, Args: c.Args, Env: c.Env})
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			b := scanned.Bundle
			assertClean(t, b.Run.ID)
			took := time.Since(start)
			if l.Listable {
				if b.Sandbox.Outcome != evidence.OutcomeOK || b.Contract == nil {
					t.Fatalf("outcome %s (%s), want ok: the Inspector lists this server", b.Sandbox.Outcome, sessionError(b))
				}
				compareListing(t, l, b.Contract)
				// A real server's surface listed again after the idle
				// watch: any change would be a drift finding on a
				// published server, and must be the server's.
				switch rl := b.Session.Relist; {
				case rl == nil:
					t.Error("the surface was not listed a second time")
				case rl.Error != "":
					t.Errorf("the second listing failed: %s", rl.Error)
				case len(surfaceChanges(rl)) > 0:
					t.Errorf("the surface changed within the session (%s -> %s): %+v", b.Contract.SchemaHash, rl.SchemaHash, rl.Changes)
				}
			}
			var unjustified []string
			inScope := 0
			for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
				if !slices.ContainsFunc(regressionScope, func(p string) bool { return strings.HasPrefix(f.Code, p) }) {
					continue
				}
				inScope++
				if _, ok := c.Justifies(f.Code, f.Subject, f.Message+"\n"+f.Evidence); !ok {
					unjustified = append(unjustified, fmt.Sprintf("  - code: %s\n    subject: %q\n    match: \n    why: # %s | %s", f.Code, f.Subject, f.Message, f.Evidence))
				}
			}
			if len(unjustified) > 0 {
				t.Errorf("%d findings with no justification in %s:\n%s", len(unjustified), c.File, strings.Join(unjustified, "\n"))
			}
			tools := "-"
			if b.Contract != nil {
				tools = fmt.Sprintf("%d/%d/%d/%d", len(b.Contract.Tools), len(b.Contract.Prompts), len(b.Contract.Resources), len(b.Contract.Templates))
			}
			row := fmt.Sprintf("%-28s %-17s %-11s %-20s %3d findings  %5.1fs", c.ID, b.Sandbox.Outcome, tools, handshakeOf(b), inScope, took.Seconds())
			rows = append(rows, row)
			t.Log(row)
		})
	}
	if n < 12 {
		t.Errorf("the regression set holds %d servers, want at least 12", n)
	}
	t.Logf("real-server regression set (id, outcome, tools/prompts/resources/templates, handshake, behaviour and session findings, scan time):\n%s", strings.Join(rows, "\n"))
}

// surfaceChanges are the changes of the second listing but for the
// resources that came or went after tool calls: data the calls made (a
// session resource of server-everything's gzip tool), not the surface.
func surfaceChanges(rl *evidence.Relist) []contract.Change {
	var out []contract.Change
	for _, ch := range rl.Changes {
		if rl.AfterCalls > 0 && ch.Kind == contract.ResourceChanged {
			continue
		}
		out = append(out, ch)
	}
	return out
}

func sessionError(b *evidence.Bundle) string {
	if b.Session != nil {
		return b.Session.Error
	}
	if b.Install != nil {
		if b.Install.LogTail != "" {
			// What npm or pip printed: the one clue when a fetch fails
			// with no error object (a registry hiccup or the package).
			return b.Install.Error + "; log tail:\n" + b.Install.LogTail
		}
		return b.Install.Error
	}
	return ""
}

func handshakeOf(b *evidence.Bundle) string {
	if b.Session == nil {
		return "-"
	}
	return b.Session.HandshakePath
}

package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/internal/testbrowser"
)

// htmlFixtures are the fixtures with HTML goldens: the markup fixtures,
// the behavior fixture, whose network section has content, and
// "network", the behavior fixture with the connections of networkReport.
var htmlFixtures = append(append([]string{}, markupFixtures...), "behavior", "network")

// htmlReport is the report of an HTML fixture.
func htmlReport(t *testing.T, name string) Report {
	t.Helper()
	if name == "network" {
		return networkReport(t)
	}
	return markupReport(t, name)
}

// hostileHost is a Host header a package could send: markup and a
// right-to-left override.
const hostileHost = "<script>alert(7)</script>evil\u202etxt.example"

// networkReport is the behavior fixture with its connections replaced:
// an HTTPS request (h2) to a hostile host name that carried a canary, a
// client that refused the run's CA, a plain HTTP request, and a lookup.
func networkReport(t *testing.T) Report {
	t.Helper()
	rep := build(t, loadBundle(t, "behavior"))
	bh := *rep.Behavior
	bh.Network = []NetEvent{
		{Phase: "run", Time: "2026-11-28T10:15:30.000Z", Stage: "startup", Kind: "dns", DstIP: "10.89.3.2", DstPort: 53,
			DNSName: "lookup.example.net", DNSType: "A"},
		{Phase: "run", Time: "2026-11-28T10:15:30.100Z", Stage: "startup", Kind: "tcp", DstIP: "10.89.3.2", DstPort: 443,
			DNSName: "collect.example.net", SNI: "collect.example.net", HTTPMethod: "POST", HTTPTarget: "/v1/collect?id=1",
			HTTPHost: hostileHost, Bytes: 912, TLS: true, ALPN: "h2", PID: 41, Exe: "/usr/local/bin/node", Secrets: []string{"env:API_TOKEN"},
			Preview: `{"k":"AKIA4Q…","pad":"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"}`},
		{Phase: "run", Time: "2026-11-28T10:15:31.000Z", Stage: "idle", Kind: "tcp", DstIP: "10.89.3.2", DstPort: 443,
			SNI: "pinned.example.com", Bytes: 517, TLSRefused: true},
		{Phase: "scripts", Package: "node-telemetry-helper", Time: "2026-11-28T10:15:21.500Z", Kind: "tcp", DstIP: "10.89.3.2", DstPort: 80,
			LookedUp: "plain.example.org", HTTPMethod: "GET", HTTPTarget: "/install.sh", HTTPHost: "plain.example.org", Bytes: 88,
			Preview: "GET /install.sh HTTP/1.1"},
	}
	bh.Exfiltration = []CanaryHit{{Canary: Canary{Kind: "aws_access_key_id", Where: "env:AWS_ACCESS_KEY_ID"}, Phase: "run",
		Channel: "https_body", Encoding: "base64", Destination: hostileHost, Masked: "AKIA4Q…"}}
	rep.Behavior = &bh
	return rep
}

func TestHTMLGolden(t *testing.T) {
	for _, name := range htmlFixtures {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteHTML(&buf, htmlReport(t, name)); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".html", buf.Bytes(), textEqual)
		})
	}
}

// TestHTMLSelfContained checks every fixture's page: it loads nothing, has
// no script, and its policy forbids scripts and allows its one stylesheet
// by the hash of what it holds.
func TestHTMLSelfContained(t *testing.T) {
	policy := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	for _, name := range append(append([]string{}, fixtures...), "injection", "network") {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteHTML(&buf, htmlReport(t, name)); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			for _, bad := range []string{"<script", "<img", "<link", "<iframe", "<object", "<embed", "<base", "<form"} {
				if strings.Contains(stripText(page), bad) {
					t.Errorf("page has %q outside text", bad)
				}
			}
			if m := regexp.MustCompile(`(?i)<[a-z][^>]*\s(on[a-z]+|src|href|xlink:href|srcset|style)=`).FindString(page); m != "" {
				t.Errorf("page has an attribute that runs, loads or styles: %q", m)
			}
			m := policy.FindStringSubmatch(page)
			if m == nil {
				t.Fatal("page has no Content-Security-Policy meta element")
			}
			csp := strings.ReplaceAll(m[1], "&#39;", "'")
			styles := style.FindAllStringSubmatch(page, -1)
			if len(styles) != 1 {
				t.Fatalf("page has %d style elements, want 1", len(styles))
			}
			for _, bad := range []string{"url(", "@import", "@font-face", "expression("} {
				if strings.Contains(styles[0][1], bad) {
					t.Errorf("the stylesheet has %q", bad)
				}
			}
			sum := sha256.Sum256([]byte(styles[0][1]))
			for _, want := range []string{"default-src 'none'", "script-src 'none'", "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'", "base-uri 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("policy %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("policy %q allows something unsafe-*", csp)
			}
			if strings.Index(page, "Content-Security-Policy") > strings.Index(page, "<style>") {
				t.Error("the policy comes after the stylesheet")
			}
			order := []string{`id="summary"`, `id="findings"`, `id="network"`, `id="dimensions"`, "<svg", `id="signals"`, `id="notice"`}
			last := -1
			for _, s := range order {
				i := strings.Index(page, s)
				if i <= last {
					t.Errorf("%s missing or out of order", s)
				}
				last = i
			}
		})
	}
}

// TestNoSafeWord checks that nothing the program writes in Markdown or
// HTML says "safe"; the notice's sentence that the report never says a
// package is safe is the only one.
func TestNoSafeWord(t *testing.T) {
	safe := regexp.MustCompile(`(?i)\bsafe\b`)
	for _, name := range append(append([]string{}, fixtures...), "injection") {
		rep := markupReport(t, name)
		for format, write := range map[string]func(*bytes.Buffer) error{
			"markdown": func(b *bytes.Buffer) error { return WriteMarkdown(b, rep) },
			"html":     func(b *bytes.Buffer) error { return WriteHTML(b, rep) },
		} {
			var buf bytes.Buffer
			if err := write(&buf); err != nil {
				t.Fatal(err)
			}
			out := strings.ReplaceAll(buf.String(), mdText(Notice), "")
			out = strings.ReplaceAll(out, template.HTMLEscapeString(Notice), "")
			if m := safe.FindAllString(out, -1); len(m) > 0 {
				t.Errorf("%s %s says %q", name, format, m)
			}
		}
	}
}

// TestHTMLEscaping checks the injection fixture's page: every injected
// string is there as text, never as markup, and control and
// bidirectional-formatting characters are shown as escapes.
func TestHTMLEscaping(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, injectionReport(t)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		"&lt;img src=x onerror=alert(3)&gt;|`run`",
		"&lt;script&gt;alert(1)&lt;/script&gt;",
		"reviewed &lt;script&gt;alert(5)&lt;/script&gt; [x](https://evil.example/i) | cell",
		"by @alice &lt;img src=x&gt;",
		`sync\u202egnp.exe`,
		`fs-helper&lt;U&#43;001B&gt;]0;pwned&lt;U&#43;0007&gt;`,
		`class="gate-failed"`,
		`<span class="badge">ignored</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"\u202e", "\x1b", "\x07", "<b>", "<script"} {
		if strings.Contains(page, bad) {
			t.Errorf("page has %q", bad)
		}
	}
}

// TestHTMLChart checks the chart of the everything fixture: one bar per
// dimension, a scored one as wide as its score, a zero point and a
// dropped one told apart, the dropped one marked as not counted.
func TestHTMLChart(t *testing.T) {
	rep := build(t, loadBundle(t, "everything"))
	c := newChart(rep.Dimensions)
	if len(c.Rows) != len(rep.Dimensions) {
		t.Fatalf("%d bars for %d dimensions", len(c.Rows), len(rep.Dimensions))
	}
	seen := map[string]bool{}
	for i, d := range rep.Dimensions {
		b := c.Rows[i]
		seen[d.State] = true
		switch d.State {
		case "scored":
			if want := *d.Score * chartBarW / 100; b.W < want-0.1 || b.W > want+0.1 {
				t.Errorf("%s: bar %v wide for score %v", d.ID, b.W, *d.Score)
			}
		case "zero_point":
			if b.W != 0 || !strings.Contains(b.Track, "zero_point") || !strings.Contains(b.Value, "zero point") {
				t.Errorf("%s: zero point bar %+v", d.ID, b)
			}
		case "dropped":
			if b.W != 0 || b.Track != "track-dropped" || !strings.Contains(b.Note, "not counted") || !strings.Contains(b.Title, "not counted") {
				t.Errorf("%s: dropped bar %+v", d.ID, b)
			}
		}
		if !strings.Contains(b.Value, "weight "+num(d.Weight)) || !strings.HasPrefix(b.Title, d.ID+": ") {
			t.Errorf("%s: bar %+v does not give the weight and the dimension", d.ID, b)
		}
	}
	for _, s := range []string{"scored", "zero_point", "dropped"} {
		if !seen[s] {
			t.Errorf("the everything fixture has no %s dimension to chart", s)
		}
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`role="img" aria-labelledby="chart-title chart-desc"`, `<title id="chart-title">`, `<desc id="chart-desc">One bar per rubric dimension (` + itoa(len(rep.Dimensions)) + `)`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func itoa(n int) string { return num(float64(n)) }

func TestWriteMarkupFormats(t *testing.T) {
	rep := build(t, loadBundle(t, "everything"))
	for _, tc := range []struct {
		format Format
		write  func(*bytes.Buffer) error
	}{
		{FormatMarkdown, func(b *bytes.Buffer) error { return WriteMarkdown(b, rep) }},
		{FormatHTML, func(b *bytes.Buffer) error { return WriteHTML(b, rep) }},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			var got, want bytes.Buffer
			if err := Write(&got, tc.format, rep); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(&want); err != nil {
				t.Fatal(err)
			}
			if d := textEqual(want.Bytes(), got.Bytes()); d != "" {
				t.Errorf("Write(%s) (-want +got):\n%s", tc.format, d)
			}
		})
	}
	var names []string
	for _, f := range formatsOf(OutputPackageReport) {
		names = append(names, string(f))
	}
	if got, want := strings.Join(names, " "), "table json markdown html sarif"; got != want {
		t.Errorf("formatsOf(OutputPackageReport) = %s, want %s", got, want)
	}
	names = nil
	for _, f := range formatsOf(OutputOther) {
		names = append(names, string(f))
	}
	if got, want := strings.Join(names, " "), "table json"; got != want {
		t.Errorf("formatsOf(OutputOther) = %s, want %s", got, want)
	}
	// The other outputs have no Markdown or HTML form.
	for _, f := range []Format{FormatMarkdown, FormatHTML} {
		if _, err := ParseFormat(OutputOther, string(f)); err == nil {
			t.Errorf("ParseFormat(%s) = nil error", f)
		}
		if err := write(&bytes.Buffer{}, f, func() error { return nil }, func() error { return nil }); err == nil {
			t.Errorf("write(%s) of another output = nil error", f)
		}
	}
}

// browserFixtures are the goldens rendered in the browser.
var browserFixtures = []string{"everything", "hostile", "judge", "injection", "behavior", "network"}

// TestHTMLBrowser renders the HTML goldens in headless chromium, all at
// once, and checks what it made of them: the DOM holds the summary, the
// chart and the notice and no element from package text, and the
// browser logged no script error, policy violation or failed load.
func TestHTMLBrowser(t *testing.T) {
	bin := testbrowser.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type result struct {
		dom, stderr string
		err         error
		took        time.Duration
	}
	results := make([]result, len(browserFixtures))
	var wg sync.WaitGroup
	start := time.Now()
	for i, name := range browserFixtures {
		path, err := filepath.Abs(filepath.Join("testdata", name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		profile := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			cmd := exec.CommandContext(ctx, bin, "--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run",
				"--user-data-dir="+profile, "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+path)
			cmd.Env = append(os.Environ(), "HOME="+profile)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			results[i] = result{dom: stdout.String(), stderr: stderr.String(), err: err, took: time.Since(began)}
		}()
	}
	wg.Wait()
	t.Logf("chromium rendered %d pages in %s", len(browserFixtures), time.Since(start).Round(time.Millisecond))
	for i, name := range browserFixtures {
		r := results[i]
		t.Run(name, func(t *testing.T) {
			if r.err != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					t.Fatalf("chromium did not finish in time: %v", r.err)
				}
				t.Fatalf("chromium: %v\n%s", r.err, r.stderr)
			}
			t.Logf("rendered in %s", r.took.Round(time.Millisecond))
			for _, line := range strings.Split(r.stderr, "\n") {
				for _, bad := range []string{"Uncaught", "Content Security Policy", "Refused to", "Failed to load resource", ":CONSOLE"} {
					if strings.Contains(line, bad) {
						t.Errorf("chromium logged %q: %s", bad, line)
					}
				}
			}
			dom := r.dom
			for _, want := range []string{`<section id="summary"`, "<h2 id=\"summary-title\">Summary</h2>", "<svg", `<desc id="chart-desc">`, `<rect class="bar-scored"`, `id="notice"`, "never says a package is safe"} {
				if !strings.Contains(dom, want) {
					t.Errorf("the DOM lacks %q", want)
				}
			}
			// No element but the page's own: the package's text stayed text.
			for _, tag := range regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)`).FindAllStringSubmatch(dom, -1) {
				if !pageElements[strings.ToLower(tag[1])] {
					t.Errorf("the DOM has a <%s> element", tag[1])
				}
			}
			if strings.Contains(dom, "\u202e") {
				t.Error("the DOM has a right-to-left override")
			}
			switch name {
			case "hostile":
				for _, want := range []string{`sync\u202egnp.exe`, `fs-helper&lt;U+001B&gt;]0;pwned&lt;U+0007&gt;`} {
					if !strings.Contains(dom, want) {
						t.Errorf("the DOM lacks %q", want)
					}
				}
			case "network":
				for _, want := range []string{`&lt;script&gt;alert(7)&lt;/script&gt;evil\u202etxt.example`, "TLS REFUSED", "https (h2)", "AKIA4Q…"} {
					if !strings.Contains(dom, want) {
						t.Errorf("the DOM lacks %q", want)
					}
				}
			case "injection":
				for _, want := range []string{"&lt;img src=x onerror=alert(3)&gt;|`run`", "&lt;script&gt;alert(1)&lt;/script&gt;", "by @alice &lt;img src=x&gt;"} {
					if !strings.Contains(dom, want) {
						t.Errorf("the DOM lacks %q", want)
					}
				}
			}
		})
	}
}

// TestHTMLNetwork checks the network section of networkReport: each
// destination with how its requests were read (https with the ALPN
// protocol, TLS REFUSED, plain), the canary sent to it, masked, the
// preview cut as in the table, and the hostile host name escaped.
func TestHTMLNetwork(t *testing.T) {
	rep := networkReport(t)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	i, j := strings.Index(page, `<section id="network"`), strings.Index(page, `<section id="dimensions"`)
	if i < 0 || j < i {
		t.Fatal("no network section before the dimensions")
	}
	sec := page[i:j]
	escapedHost := `&lt;script&gt;alert(7)&lt;/script&gt;evil\u202etxt.example`
	preview := template.HTMLEscapeString(truncate(rep.Behavior.Network[1].Preview, previewChars))
	for _, want := range []string{
		"3 destinations contacted in 3 connections and 1 name looked up in the phases watched",
		`<p class="head"><code>` + escapedHost + `</code><span class="badge canary-hit">canary sent</span></p>`,
		"Phase run; stage startup; 1 connection, 912 bytes sent; address 10.89.3.2:443, server name collect.example.net.",
		`<td>node (pid 41)</td><td class="https">https (h2)</td><td><code>POST /v1/collect?id=1</code></td><td class="num">912</td><td><span class="secret-sent">secret sent: env:API_TOKEN</span> `,
		"<code>aws_access_key_id</code> (planted at <code>env:AWS_ACCESS_KEY_ID</code>) in <code>https_body</code>, encoded <code>base64</code>, in the run phase: <code>AKIA4Q…</code>",
		"<code>" + preview + "</code>",
		`<code>pinned.example.com:443</code>`,
		`<td class="tls-refused">TLS REFUSED</td>`,
		"only the server name is known",
		`<code>plain.example.org</code>`,
		"Phase scripts (node-telemetry-helper); 1 connection, 88 bytes sent; address 10.89.3.2:80.",
		`<td class="plain">plain http</td><td><code>GET /install.sh</code>`,
		"<li><code>lookup.example.net</code> A, phase run</li>",
		"was not observed",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("the network section lacks %q", want)
		}
	}
	if !strings.HasSuffix(preview, "…") || strings.Contains(sec, "uvwxyz\"}") {
		t.Errorf("the preview %q is not cut", preview)
	}
	for _, bad := range []string{"\u202e", "<script", "alert(7)</script>"} {
		if strings.Contains(sec, bad) {
			t.Errorf("the network section has %q", bad)
		}
	}
	// The canary is shown on the destination it was sent to, not elsewhere.
	if n := strings.Count(sec, "AKIA4Q…</code></li>"); n != 1 {
		t.Errorf("the canary is listed %d times", n)
	}
}

// TestHTMLNetworkStates checks what the section says when behaviour was
// not watched, when nothing was seen, and when there is more than its
// bounds: never that the package is clean.
func TestHTMLNetworkStates(t *testing.T) {
	rep := build(t, loadBundle(t, "behavior"))
	unwatched := rep
	unwatched.Behavior = nil
	if n := newHTMLNetwork(unwatched); !strings.HasPrefix(n.Unwatched, "Behaviour was not watched") || n.Dests != nil {
		t.Errorf("not watched: %+v", n)
	}

	quiet := *rep.Behavior
	quiet.Network, quiet.Exfiltration = nil, nil
	rep.Behavior = &quiet
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<p>No network attempt was seen while the phases were watched.</p>") {
		t.Error("the page does not say that no network attempt was seen")
	}

	busy := quiet
	for i := range htmlNetDests + 10 {
		busy.Network = append(busy.Network, NetEvent{Phase: "run", Kind: "tcp", DstIP: "192.0.2.1", DstPort: 1000 + i})
	}
	for range htmlNetRequests + 2 {
		busy.Network = append(busy.Network, NetEvent{Phase: "run", Kind: "tcp", DstIP: "192.0.2.9", DstPort: 9})
	}
	busy.Exfiltration = []CanaryHit{
		{Canary: Canary{Kind: "npm_token"}, Phase: "run", Channel: "tcp", Destination: "192.0.2.9:9", Masked: "npm_…"},
		{Canary: Canary{Kind: "github_token"}, Phase: "run", Channel: "process_argv", Masked: "ghp_…"},
	}
	rep.Behavior = &busy
	n := newHTMLNetwork(rep)
	if len(n.Dests) != htmlNetDests || n.DestsLeft != "11 more destinations not listed." {
		t.Errorf("%d destinations listed, left out: %q", len(n.Dests), n.DestsLeft)
	}
	// The destination a canary went to comes first, bounds or not.
	if d := n.Dests[0]; d.Name != "192.0.2.9:9" || len(d.Requests) != htmlNetRequests || d.Left != "2 more connections to this destination not listed." {
		t.Errorf("first destination %s: %d requests, left out %q", d.Name, len(d.Requests), d.Left)
	}
	if len(n.Stray) != 1 || n.Stray[0].Kind != "github_token" {
		t.Errorf("canaries not matched to a destination: %+v", n.Stray)
	}
}

// stripText is page without its text: the markup and the stylesheet.
func stripText(page string) string {
	return regexp.MustCompile(`>[^<]*<`).ReplaceAllString(page, "><")
}

// pageElements are the elements WriteHTML writes.
var pageElements = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`html head meta title style body header h1 h2 h3 p code main section dl dt dd ul li span
		article details summary pre figure svg desc line text g rect figcaption table thead tbody tr th td footer`) {
		pageElements[e] = true
	}
}

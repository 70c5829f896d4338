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

func TestHTMLGolden(t *testing.T) {
	for _, name := range markupFixtures {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteHTML(&buf, markupReport(t, name)); err != nil {
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
	for _, name := range append(append([]string{}, fixtures...), "injection") {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteHTML(&buf, markupReport(t, name)); err != nil {
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
			order := []string{`id="summary"`, `id="findings"`, `id="dimensions"`, "<svg", `id="signals"`, `id="notice"`}
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
var browserFixtures = []string{"everything", "hostile", "judge", "injection"}

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

package report

import (
	"bytes"
	"html/template"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/rubric"
)

// markupFixtures are the fixtures with Markdown and HTML goldens.
// "injection" is the hostile bundle with markup added (injectionReport).
var markupFixtures = []string{"everything", "hostile", "judge", "injection", "exercise", "shipped_image", "shipped_root", "shipped_bundle"}

// injected is text a hostile package could put in its tool surface, to
// add links, images, HTML, mentions, references, math and table cells to
// a report, or to end a code span or fence early.
const injected = "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](https://evil.example/a) ![pixel](https://evil.example/p.png) " +
	"<https://evil.example/b> www.evil.example evil@example.com @octocat #1 | x | y | `tick` ``` **bold** _em_ ~~gone~~ $x^2$ &amp; &#60;b&#62;\n# Heading\n---\n</details>"

// injectionReport is the hostile fixture with markup injected where a
// package, an ignore file or a third party writes: a tool whose name and
// description carry it (so that findings quote them in their subject,
// message and evidence), the protocol version (quoted by a dimension's
// reason), a signal's reason, and an ignore entry's reason; the gate is
// set at high.
func injectionReport(t *testing.T) Report {
	t.Helper()
	b := loadBundle(t, "hostile")
	b.Contract.ProtocolVersion = "2024-11-05 | <b>bold</b> [x](https://evil.example/v)"
	b.Contract.Tools = append(b.Contract.Tools, contract.Tool{
		Name:        "<img src=x onerror=alert(3)>|`run`",
		Description: "Returns the environment variables of the server. " + injected,
	})
	hash, err := contract.Hash(b.Contract)
	if err != nil {
		t.Fatal(err)
	}
	b.Contract.SchemaHash = hash
	if s, ok := b.Signals["socket"]; ok {
		s.Reason = "socket said: <script>alert(4)</script> | [x](https://evil.example/s)"
		b.Signals["socket"] = s
	}
	rep := build(t, b)
	ig, err := ParseIgnoreFile(".verifymcp-ignore.yaml", []byte(`ignore:
  - code: pkg.contract.annotation.contradiction
    subject: deleteFile
    reason: "reviewed <script>alert(5)</script> [x](https://evil.example/i) | cell"
    by: "@alice <img src=x>"
    expires: 2026-12-31
`))
	if err != nil {
		t.Fatal(err)
	}
	Policy{FailOn: "high", Ignore: ig, Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}.Apply(&rep)
	return rep
}

// markupReport is the report of a markup fixture.
func markupReport(t *testing.T, name string) Report {
	t.Helper()
	if name == "injection" {
		return injectionReport(t)
	}
	return build(t, loadBundle(t, name))
}

func TestMarkdownGolden(t *testing.T) {
	for _, name := range markupFixtures {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteMarkdown(&buf, markupReport(t, name)); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".md", buf.Bytes(), textEqual)
		})
	}
}

// TestMarkdownStructure checks the Markdown of every fixture: the summary
// comes first, nothing the package wrote adds markup, and every table row
// has its table's cells.
func TestMarkdownStructure(t *testing.T) {
	for _, name := range append(append([]string{}, fixtures...), "injection") {
		t.Run(name, func(t *testing.T) {
			rep := markupReport(t, name)
			var buf bytes.Buffer
			if err := WriteMarkdown(&buf, rep); err != nil {
				t.Fatal(err)
			}
			md := buf.String()
			checkMarkdown(t, md)
			order := []string{"# verifymcp report: ", "## Summary", "## Findings (", "## Dimensions", "## Signals", "## Notice"}
			last := -1
			for _, h := range order {
				i := strings.Index(md, "\n"+h)
				if strings.HasPrefix(md, h) {
					i = 0
				}
				if i <= last {
					t.Errorf("section %q missing or out of order", h)
				}
				last = i
			}
			if !strings.Contains(md, mdCode(releaseName(rep), false)) {
				t.Errorf("title does not name the target %s", releaseName(rep))
			}
			if !strings.Contains(md, "- **Score:** ") || !strings.Contains(md, "of the rubric's weight scored from evidence") && rep.Score != nil {
				t.Error("summary does not give the score and its coverage")
			}
		})
	}
}

// checkMarkdown asserts that md, outside code, has no markup but its own.
func checkMarkdown(t *testing.T, md string) {
	t.Helper()
	prose := stripCode(t, md)
	own := regexp.MustCompile(`</?details>|<summary>|</summary>|^- \*\*[A-Z][a-z ]+:\*\* | — \*\*ignored\*\* `)
	headline := regexp.MustCompile(`^\*\*((?:Score|No score).*)\*\*$`)
	for i, line := range strings.Split(prose, "\n") {
		line = own.ReplaceAllString(headline.ReplaceAllString(line, "$1"), "")
		for _, bad := range []*regexp.Regexp{
			regexp.MustCompile(`(^|[^\\])[<>]`),                    // HTML, autolinks
			regexp.MustCompile(`(^|[^\\])[\[\]]`),                  // links, images
			regexp.MustCompile(`(^|[^\\])[*~$]`),                   // emphasis, strikethrough, math
			regexp.MustCompile(`(?i)https?:|www\.|[@#]\w`),         // autolinks, mentions, references
			regexp.MustCompile(`&(?:[a-z]+|#[0-9]+|#x[0-9a-f]+);`), // an entity not ours
		} {
			for _, m := range bad.FindAllString(line, -1) {
				if strings.HasPrefix(strings.TrimLeft(m, "^"), "&") && (m == "&lt;" || m == "&gt;" || m == "&amp;") {
					continue
				}
				if strings.HasPrefix(line, "#") && strings.HasPrefix(m, "#") {
					continue
				}
				t.Errorf("line %d: %q outside code in %q", i+1, m, line)
			}
		}
	}
	// Every row of a table has as many cells as its header.
	cells := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			cells = 0
			continue
		}
		n := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1))
		// "||" counts once in the regexp above; count it twice.
		n += strings.Count(line, "||")
		if cells == 0 {
			cells = n
		} else if n != cells {
			t.Errorf("table row with %d pipes, header %d: %q", n, cells, line)
		}
	}
}

// stripCode removes fenced blocks and code spans (CommonMark's rules for
// the backtick runs this writer uses), and our own entities.
func stripCode(t *testing.T, md string) string {
	t.Helper()
	var out []string
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			fence = strings.TrimRight(trimmed, "abcdefghijklmnopqrstuvwxyz")
			continue
		}
		var b strings.Builder
		for i := 0; i < len(line); {
			if line[i] == '\\' && i+1 < len(line) {
				b.WriteString(line[i : i+2])
				i += 2
				continue
			}
			if line[i] != '`' {
				b.WriteByte(line[i])
				i++
				continue
			}
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			delim := strings.Repeat("`", n)
			end := -1
			for j := i + n; j < len(line); {
				k := strings.Index(line[j:], delim)
				if k < 0 {
					break
				}
				k += j
				if (k+n == len(line) || line[k+n] != '`') && line[k-1] != '`' {
					end = k
					break
				}
				j = k + 1
			}
			if end < 0 {
				t.Errorf("unclosed code span in %q", line)
				b.WriteString(line[i:])
				break
			}
			b.WriteString("CODE")
			i = end + n
		}
		out = append(out, strings.NewReplacer("&lt;", "", "&gt;", "", "&amp;", "").Replace(b.String()))
	}
	if fence != "" {
		t.Error("unclosed fence")
	}
	return strings.Join(out, "\n")
}

func TestMarkdownEscape(t *testing.T) {
	for _, tc := range []struct{ in, text, cell string }{
		{"plain words", "plain words", "plain words"},
		{"a|b", `a\|b`, `a\|b`},
		{"[x](y)", `\[x\](y)`, `\[x\](y)`},
		{"![i](u)", `\!\[i\](u)`, `\!\[i\](u)`},
		{"<script>", "&lt;script&gt;", "&lt;script&gt;"},
		{"&amp;", "&amp;amp;", "&amp;amp;"},
		{"*b* _e_ snake_case ~s~ $m$", `\*b\* \_e\_ snake_case \~s\~ \$m\$`, `\*b\* \_e\_ snake_case \~s\~ \$m\$`},
		{"see https://evil.example/x|y", "see `https://evil.example/x|y`", "see `https://evil.example/x\\|y`"},
		{"www.evil.example", "`www.evil.example`", "`www.evil.example`"},
		{"mail a@b.com", "mail `a@b.com`", "mail `a@b.com`"},
		{"ping @octocat", "ping `@octocat`", "ping `@octocat`"},
		{"issue #1", "issue `#1`", "issue `#1`"},
		{"a`b#", "``a`b#``", "``a`b#``"},
		{"`#`", "`` `#` ``", "`` `#` ``"},
		{"two\nlines\x1b[31m", `two\\nlines\\x1b\[31m`, `two\\nlines\\x1b\[31m`},
		{"back\\slash", `back\\slash`, `back\\slash`},
		{"rtl \u202egnp.exe", `rtl \\u202egnp.exe`, `rtl \\u202egnp.exe`},
	} {
		if got := mdText(tc.in); got != tc.text {
			t.Errorf("mdText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := mdCell(tc.in); got != tc.cell {
			t.Errorf("mdCell(%q) = %q, want %q", tc.in, got, tc.cell)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"x", "`x`"},
		{"a`b", "``a`b``"},
		{"``", "``` `` ```"},
		{" lead", "`  lead `"},
	} {
		if got := mdCode(tc.in, false); got != tc.want {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := mdFence("a ```` b"); got != "`````" {
		t.Errorf("mdFence = %q", got)
	}
}

// TestMarkdownInjection checks the injected text of injectionReport: it
// is in the Markdown, escaped, the ignored finding says who, why and
// until when, and the gate is reported.
func TestMarkdownInjection(t *testing.T) {
	rep := injectionReport(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		// The tool's name, as a subject (code) and quoted in a message.
		"on `` <img src=x onerror=alert(3)>|`run` ``: tool \"&lt;img src=x onerror=alert(3)&gt;\\|\\`run\\`\" declares no annotations",
		// The description, in evidence: a fence, whatever it holds.
		"  ```text\n  description: \"Returns the environment variables of the server. <script>alert(1)</script> <img src=x onerror=alert(2)> [click]",
		// The gate, and the ignored finding: who, why, until when.
		"- **Gate:** failed: 2 finding(s) at or above high: `` pkg.contract.capability.environment <img src=x onerror=alert(3)>|`run` ``",
		"— **ignored** until 2026-12-31 by `@alice` &lt;img src=x&gt;: reviewed &lt;script&gt;alert(5)&lt;/script&gt; `[x](https://evil.example/i)` \\| cell (.verifymcp-ignore.yaml:2): ",
		// A dimension's reason and a signal's, in table cells.
		"| spec_recency | 3.57 | scored | 0 | protocol version \"2024-11-05 \\| &lt;b&gt;bold&lt;/b&gt; `[x](https://evil.example/v)\"` |",
		"| socket | error | third party | - | - | socket said: &lt;script&gt;alert(4)&lt;/script&gt; \\| `[x](https://evil.example/s)` |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	prose := stripCode(t, md)
	for _, bad := range []string{"<script", "<img", "<b>", "\n# Heading", "\n---", "](https://evil"} {
		if strings.Contains(prose, bad) {
			t.Errorf("markdown has %q outside code", bad)
		}
	}
}

// TestMarkdownGitHub renders the injection fixture's Markdown with
// cmark-gfm (GitHub's Markdown engine): the HTML it makes has no link,
// image or element from package text, and each table row keeps its cells.
// scripts/setup.sh installs cmark-gfm; only -short runs without it, where
// checkMarkdown asserts the same on the Markdown itself.
func TestMarkdownGitHub(t *testing.T) {
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil && testing.Short() {
		t.Skip("-short: cmark-gfm is installed by scripts/setup.sh, which make test runs first")
	}
	if err != nil {
		t.Fatal("cmark-gfm is not installed: run scripts/setup.sh, which installs Debian's cmark-gfm (apt-get install cmark-gfm)")
	}
	for _, name := range markupFixtures {
		t.Run(name, func(t *testing.T) {
			var md bytes.Buffer
			if err := WriteMarkdown(&md, markupReport(t, name)); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter")
			cmd.Stdin = &md
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			html := string(out)
			for _, bad := range []string{"<a ", "<img", "<script", "<b>", "<del>", "<em>", "<h1>Heading", "<hr"} {
				if strings.Contains(html, bad) {
					t.Errorf("rendered Markdown has %q", bad)
				}
			}
			for _, tag := range []string{"<details>", "<summary>", "<table>", "<h2>Summary</h2>"} {
				if !strings.Contains(html, tag) {
					t.Errorf("rendered Markdown lacks %q", tag)
				}
			}
			for _, table := range regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllString(html, -1) {
				rows := regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(table, -1)
				want := strings.Count(rows[0], "<th")
				for _, r := range rows[1:] {
					if n := strings.Count(r, "<td"); n != want {
						t.Errorf("table row with %d cells, header %d: %s", n, want, r)
					}
				}
			}
		})
	}
}

// TestMarkupHeadlineAndFix: Markdown and HTML open with a headline (the
// score, the gate's result when a gate ran, the findings by severity) and
// give every finding the remediation its code has in the rubric.
func TestMarkupHeadlineAndFix(t *testing.T) {
	for _, name := range []string{"everything", "injection"} {
		t.Run(name, func(t *testing.T) {
			rep := markupReport(t, name)
			var md, page bytes.Buffer
			if err := WriteMarkdown(&md, rep); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(&page, rep); err != nil {
				t.Fatal(err)
			}
			h := headline(rep)
			for _, w := range []string{"Score " + num(*rep.Score) + " / 100", "findings: critical 0, high "} {
				if !strings.Contains(h, w) {
					t.Errorf("headline %q lacks %q", h, w)
				}
			}
			if gated := strings.Contains(h, "gate failed: 2 finding(s) at or above high"); gated != (name == "injection") {
				t.Errorf("headline %q: gate shown %v, gate ran %v", h, gated, name == "injection")
			}
			if lines := strings.SplitN(md.String(), "\n", 6); lines[4] != "**"+mdText(h)+"**" {
				t.Errorf("Markdown line 5 is %q, want the headline", lines[4])
			}
			if !strings.Contains(page.String(), ">"+template.HTMLEscapeString(h)+"</p>\n</header>") {
				t.Error("the HTML header does not end with the headline")
			}
			r := rubric.Current()
			fixes := 0
			for _, f := range rep.Findings {
				def, ok := r.Code(f.Code)
				if !ok {
					t.Fatalf("%s: not in the rubric", f.Code)
				}
				if def.Remediation == "" {
					continue // a measurement's code has none
				}
				fixes++
				if !strings.Contains(md.String(), "  How to fix: "+mdText(def.Remediation)+"\n") {
					t.Errorf("Markdown lacks how to fix %s", f.Code)
				}
				if !strings.Contains(page.String(), `<span class="label">How to fix:</span> `+template.HTMLEscapeString(def.Remediation)+"</p>") {
					t.Errorf("HTML lacks how to fix %s", f.Code)
				}
			}
			if fixes < 5 {
				t.Errorf("%d findings with a remediation, want the fixture's many", fixes)
			}
		})
	}
}

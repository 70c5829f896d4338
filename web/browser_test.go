package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/cmd/verifymcp/cli"
	"github.com/verifymcp/verifymcp/internal/testbrowser"
	"github.com/verifymcp/verifymcp/internal/testdiff"
	"github.com/verifymcp/verifymcp/web"
)

// version is the tool version both the page and the CLI are given, so
// that their reports differ only by the time they were made.
const version = "0.0.0-web-test"

// built is the page, built once for every test of the package.
var built struct {
	once sync.Once
	dir  string
	err  error
}

func buildPage(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "verifymcp-web-test-")
		if built.err == nil {
			built.err = web.Build(context.Background(), built.dir, version)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

func TestMain(m *testing.M) {
	cli.Version = version
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// browserPage is the page open in headless chromium, with every request
// the tab made and every console message and exception it logged.
type browserPage struct {
	t         *testing.T
	ctx       context.Context
	downloads string
	mu        sync.Mutex
	loaded    bool
	before    []string // the URLs requested while the page loaded
	after     []string // the URLs requested once it had
	problems  []string // console errors, exceptions, policy violations
}

// startChrome starts headless chromium for the rest of the test; each
// page opens in a tab of its own (openPage), as each visit would.
func startChrome(t *testing.T) context.Context {
	t.Helper()
	bin := testbrowser.Chromium(t)
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// openPage opens url in a new tab of the browser and waits for the page
// to have loaded its scanner. A tab is for one visit: chromium lets a
// page start ten downloads, then asks the user.
func openPage(t *testing.T, browserCtx context.Context, url string) *browserPage {
	t.Helper()
	ctx, cancelTab := chromedp.NewContext(browserCtx)
	ctx, cancelTime := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab() })
	p := &browserPage{t: t, ctx: ctx, downloads: t.TempDir()}
	if err := chromedp.Listen(ctx, p.event); err != nil {
		t.Fatal(err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning ||
				strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Refused") {
				p.mu.Lock()
				p.problems = append(p.problems, m.String())
				p.mu.Unlock()
			}
		}
	}()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: p.downloads, EventsEnabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.dataset.ready === "true" || document.getElementById("status").classList.contains("error")`)); err != nil {
		t.Fatalf("the page did not load: %v", err)
	}
	if s := p.text("#status"); !strings.HasPrefix(s, "Ready.") {
		t.Fatalf("the page did not load its scanner: %q (problems: %q)", s, p.problemList())
	}
	t.Logf("page ready in %s", time.Since(start).Round(time.Millisecond))
	p.mu.Lock()
	p.loaded = true
	p.mu.Unlock()
	return p
}

func ptr[T any](v T) *T { return &v }

func (p *browserPage) event(ev any) {
	if e, ok := ev.(*network.EventRequestWillBeSent); ok {
		p.mu.Lock()
		if p.loaded {
			p.after = append(p.after, e.Request.URL)
		} else {
			p.before = append(p.before, e.Request.URL)
		}
		p.mu.Unlock()
	}
}

func (p *browserPage) problemList() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.problems)
}

func (p *browserPage) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector(`+jsString(sel)+`).textContent`))
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// renderedFinding is a finding as the page draws it.
type renderedFinding struct {
	Severity string `json:"severity"`
	Pos      string `json:"pos"`
	Server   string `json:"server"`
	Code     string `json:"code"`
	Key      string `json:"key"`
	Message  string `json:"message"`
	Evidence string `json:"evidence"`
}

// shown is what the page shows after its last scan.
type shown struct {
	Findings []renderedFinding `json:"findings"`
	Errors   []string          `json:"errors"`
	Commands map[string]string `json:"commands"` // target -> command line
	Status   string            `json:"status"`
}

const readShown = `(() => {
  const q = (e, s) => { const n = e.querySelector(s); return n ? n.textContent : ""; };
  const findings = document.getElementById("results").hidden ? [] : [...document.querySelectorAll("#findings article.finding")].map((a) => ({
    severity: q(a, ".sev"), pos: q(a, ".pos"), server: q(a, ".server"), code: q(a, ".code"), key: q(a, ".key"),
    message: q(a, ".message"), evidence: q(a, ".evidence")}));
  const errors = document.getElementById("errors").hidden ? [] : [...document.querySelectorAll("#error-list li")].map((l) => l.textContent);
  const commands = {};
  for (const li of document.querySelectorAll("#server-list li[data-target]")) commands[li.dataset.target] = q(li, "pre.command");
  return {findings, errors, commands, status: document.getElementById("status").textContent};
})()`

// scan clears the page, chooses client and gives it files through its
// file input, as a user picking them does, and returns what it shows.
func (p *browserPage) scan(client string, files ...string) shown {
	p.t.Helper()
	n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.getElementById("clear").click(), Number(document.body.dataset.scans || 0)`))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := chromedp.Do(p.ctx, chromedp.SetValue(chromedp.ID("client"), client), chromedp.SetUploadFiles(chromedp.ID("files"), files)); err != nil {
		p.t.Fatal(err)
	}
	return p.waitShown(n)
}

func (p *browserPage) waitShown(n int) shown {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`Number(document.body.dataset.scans || 0) > `+itoa(n))); err != nil {
		p.t.Fatalf("the page drew no result: %v (status %q)", err, p.text("#status"))
	}
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[shown](readShown))
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// download clicks a download button and returns the file it saved.
func (p *browserPage) download(button string) []byte {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	begun := chromedp.Events(ctx, browser.DownloadWillBegin)
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.ID(button))); err != nil {
		p.t.Fatal(err)
	}
	var states []string
	for ev, err := range progress {
		if err != nil {
			var began []string
			for b, err := range begun {
				if err != nil {
					break
				}
				began = append(began, b.SuggestedFilename)
			}
			n, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.dataset.downloads`))
			p.t.Fatalf("download %s: %v (states %q, begun %q, page downloads %s)", button, err, states, began, n)
		}
		states = append(states, string(ev.State))
		if ev.State == browser.DownloadProgressStateCanceled {
			p.t.Fatalf("download %s was cancelled", button)
		}
		if ev.State != browser.DownloadProgressStateCompleted {
			continue
		}
		data, err := os.ReadFile(filepath.Join(p.downloads, ev.GUID))
		if err != nil {
			p.t.Fatal(err)
		}
		return data
	}
	p.t.Fatalf("download %s: no completion", button)
	return nil
}

// runCLI runs `verifymcp config scan ARGS` in dir and returns its output
// and error message.
func runCLI(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code = cli.Run(context.Background(), append([]string{"config", "scan"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// undated removes the time a report was made, the one field in which the
// page's report and the CLI's may differ.
var dated = regexp.MustCompile(`"(date|run_date)": "[0-9T:Z-]+"`)

func undated(b string) string { return dated.ReplaceAllString(b, `"$1": "DATE"`) }

// diff is "" when page and cli are the same text, or how they differ,
// line by line ("-" the CLI's, "+" the page's).
func diff(page, cli string) string {
	return testdiff.Lines(strings.Split(cli, "\n"), strings.Split(page, "\n"))
}

// configCase is one real-shaped config file of clientconfig's tests,
// copied under its own name into a folder of its own, so that the page
// (which sees a file's name) and the CLI (given the name in that folder)
// call it the same; client is what the CLI detects from its full path.
type configCase struct {
	name, dir, path, client string
}

func configCases(t *testing.T) (good, bad []configCase) {
	t.Helper()
	root := filepath.Join("..", "clientconfig", "testdata")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		abs, _ := filepath.Abs(p)
		dir := t.TempDir()
		c := configCase{name: filepath.Base(p), dir: dir, path: filepath.Join(dir, filepath.Base(p)), client: clientconfig.DetectClient(abs, data)}
		if err := os.WriteFile(c.path, data, 0o644); err != nil {
			return err
		}
		if strings.Contains(p, string(filepath.Separator)+"bad"+string(filepath.Separator)) {
			bad = append(bad, c)
		} else {
			good = append(good, c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(good) < 9 || len(bad) < 6 {
		t.Fatalf("clientconfig's test files: %d good, %d bad", len(good), len(bad))
	}
	return good, bad
}

// TestPageMatchesCLI feeds every config file of clientconfig's tests to
// the page in headless chromium, file by file, and compares what it draws
// and what it downloads (JSON and SARIF) with what `verifymcp config scan`
// writes for the same file: the same report, but for the time it was
// made; the same codes, severities, positions, masked evidence and
// messages on the page; for a file that does not parse, the CLI's
// file:line:col error. The page makes no request once it has loaded.
func TestPageMatchesCLI(t *testing.T) {
	dir := buildPage(t)
	chrome := startChrome(t)
	url := "file://" + filepath.Join(dir, "index.html")
	good, bad := configCases(t)
	each, eachBad := good, bad
	if testing.Short() {
		// -short (make unit) gives the page two files and one bad one;
		// make test gives it every file.
		each, eachBad = good[:2], bad[:1]
	}
	for _, c := range each {
		t.Run(c.client+"/"+c.name, func(t *testing.T) {
			p := openPage(t, chrome, url)
			defer p.checkQuiet()
			got := p.scan(c.client, c.path)
			cliJSON, stderr, code := runCLI(t, c.dir, "--client", c.client, "--format", "json", c.name)
			if code != 0 {
				t.Fatalf("cli: exit %d: %s", code, stderr)
			}
			pageJSON := string(p.download("download-json"))
			if d := diff(undated(pageJSON), undated(cliJSON)); d != "" {
				t.Errorf("the page's JSON differs from the CLI's: %s", d)
			}
			cliSARIF, _, _ := runCLI(t, c.dir, "--client", c.client, "--format", "sarif", c.name)
			if d := diff(undated(string(p.download("download-sarif"))), undated(cliSARIF)); d != "" {
				t.Errorf("the page's SARIF differs from the CLI's: %s", d)
			}
			var rep struct {
				Findings []struct {
					Code, File, Server, Key, Evidence, Message, Severity string
					Line                                                 int
				}
				Targets []clientconfig.Target
			}
			if err := json.Unmarshal([]byte(cliJSON), &rep); err != nil {
				t.Fatal(err)
			}
			if len(got.Findings) != len(rep.Findings) {
				t.Fatalf("the page draws %d findings, the CLI reports %d", len(got.Findings), len(rep.Findings))
			}
			// The page draws the findings by severity, as the report lists them.
			for i, f := range rep.Findings {
				want := renderedFinding{Severity: f.Severity, Pos: f.File + ":" + itoa(f.Line), Server: f.Server, Code: f.Code,
					Key: f.Key, Message: f.Message, Evidence: f.Evidence}
				if got.Findings[i] != want {
					t.Errorf("finding %d:\npage %+v\n cli %+v", i, got.Findings[i], want)
				}
			}
			for _, tg := range rep.Targets {
				if want := clientconfig.ScanCommand(tg); want != "" && got.Commands[tg.Target] != want {
					t.Errorf("server %s: the page's command is %q, want %q", tg.Server, got.Commands[tg.Target], want)
				}
			}
			if len(got.Errors) != 0 {
				t.Errorf("errors shown: %q", got.Errors)
			}
		})
	}
	for _, c := range eachBad {
		t.Run("bad/"+c.name, func(t *testing.T) {
			p := openPage(t, chrome, url)
			defer p.checkQuiet()
			got := p.scan("", c.path)
			_, stderr, code := runCLI(t, c.dir, c.name)
			if code != 2 {
				t.Fatalf("cli: exit %d, want 2: %s", code, stderr)
			}
			want := strings.TrimPrefix(strings.TrimSpace(stderr), "verifymcp: ")
			if len(got.Errors) != 1 || got.Errors[0] != want {
				t.Errorf("the page shows %q, the CLI says %q", got.Errors, want)
			}
			if len(got.Findings) != 0 {
				t.Errorf("findings drawn for a file that was not read: %+v", got.Findings)
			}
		})
	}
	// Several files at once, each client detected from its name.
	t.Run("several", func(t *testing.T) {
		p := openPage(t, chrome, url)
		defer p.checkQuiet()
		var names, paths []string
		folder := t.TempDir()
		for _, c := range good {
			if c.name == "claude_desktop_config.json" || c.name == ".mcp.json" || c.name == "cline_mcp_settings.json" {
				data, _ := os.ReadFile(c.path)
				if err := os.WriteFile(filepath.Join(folder, c.name), data, 0o644); err != nil {
					t.Fatal(err)
				}
				names, paths = append(names, c.name), append(paths, filepath.Join(folder, c.name))
			}
		}
		if len(names) != 3 {
			t.Fatalf("files: %q", names)
		}
		p.scan("", paths...)
		cliJSON, stderr, code := runCLI(t, folder, append([]string{"--format", "json"}, names...)...)
		if code != 0 {
			t.Fatalf("cli: exit %d: %s", code, stderr)
		}
		if d := diff(undated(string(p.download("download-json"))), undated(cliJSON)); d != "" {
			t.Errorf("the page's JSON differs from the CLI's: %s", d)
		}
	})
	// A pasted config, named by the user.
	t.Run("pasted", func(t *testing.T) {
		p := openPage(t, chrome, url)
		defer p.checkQuiet()
		var c configCase
		for _, g := range good {
			if g.client == clientconfig.ClientCursor {
				c = g
			}
		}
		data, _ := os.ReadFile(c.path)
		n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.getElementById("clear").click(), document.getElementById("paste-box").open = true, Number(document.body.dataset.scans || 0)`))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(p.ctx, chromedp.SetValue(chromedp.ID("client"), c.client), chromedp.SetValue(chromedp.ID("paste"), string(data)),
			chromedp.SetValue(chromedp.ID("paste-name"), c.name), chromedp.Click(chromedp.ID("paste-scan"))); err != nil {
			t.Fatal(err)
		}
		p.waitShown(n)
		cliJSON, _, _ := runCLI(t, c.dir, "--client", c.client, "--format", "json", c.name)
		if d := diff(undated(string(p.download("download-json"))), undated(cliJSON)); d != "" {
			t.Errorf("the pasted config's JSON differs from the CLI's: %s", d)
		}
	})
	// A file given again is read once; another file of the same name is
	// added, told apart.
	t.Run("again", func(t *testing.T) {
		p := openPage(t, chrome, url)
		defer p.checkQuiet()
		var vscode, cursor configCase
		for _, c := range good {
			switch c.client {
			case clientconfig.ClientVSCode:
				vscode = c
			case clientconfig.ClientCursor:
				cursor = c
			}
		}
		p.scan(vscode.client, vscode.path)
		for i, step := range []struct {
			c    configCase
			want string
		}{{vscode, "Read 1 file"}, {cursor, "Read 2 files"}} {
			if err := chromedp.Do(p.ctx, chromedp.SetValue(chromedp.ID("client"), step.c.client), chromedp.SetUploadFiles(chromedp.ID("files"), []string{step.c.path})); err != nil {
				t.Fatal(err)
			}
			if got := p.waitShown(i + 1); !strings.HasPrefix(got.Status, step.want) {
				t.Errorf("after giving %s: %q, want %q", step.c.name, got.Status, step.want)
			}
		}
		if got := p.text("#file-list"); !strings.Contains(got, "mcp.json (2)") {
			t.Errorf("files: %q", got)
		}
	})
	// The page as a user sees it, in a wide window and a phone's.
	t.Run("screenshots", func(t *testing.T) {
		p := openPage(t, chrome, url)
		for _, c := range good {
			if c.client == clientconfig.ClientVSCode {
				p.scan(c.client, c.path)
			}
		}
		p.screenshots("vscode")
		p.checkQuiet()
	})
}

// checkQuiet checks what the tab requested: while loading, the page's own
// files only; after, nothing but the blob: addresses of the downloads it
// made in memory.
func (p *browserPage) checkQuiet() {
	t := p.t
	p.mu.Lock()
	before, after := slices.Clone(p.before), slices.Clone(p.after)
	p.mu.Unlock()
	own := map[string]bool{}
	for _, f := range web.Files {
		own[f] = true
	}
	for _, u := range before {
		name := u[strings.LastIndexByte(u, '/')+1:]
		if name == "" {
			name = "index.html" // the server's root
		}
		if !own[name] {
			t.Errorf("while loading, the page requested %s, which is not one of its files", u)
		}
	}
	var network []string
	for _, u := range after {
		if !strings.HasPrefix(u, "blob:") {
			network = append(network, u)
		}
	}
	t.Logf("requests while loading: %d (%q); after: %d, of which blob: downloads %d", len(before), before, len(after), len(after)-len(network))
	if len(network) > 0 {
		t.Errorf("the page made %d requests after it had loaded: %q", len(network), network)
	}
	if probs := p.problemList(); len(probs) > 0 {
		t.Errorf("the console logged: %q", probs)
	}
}

// screenshots saves the page, as the last scan left it, at 1280 and 390
// pixels wide, in $VERIFYMCP_TEST_ARTIFACTS (default: the system's
// temporary folder), for a person to look at.
func (p *browserPage) screenshots(name string) {
	t := p.t
	dir := os.Getenv("VERIFYMCP_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "verifymcp-test-artifacts")
	}
	dir = filepath.Join(dir, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int64{1280, 390} {
		if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(w, 844)); err != nil {
			t.Fatal(err)
		}
		width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if int64(width) > w {
			t.Errorf("at %d px the page is %d px wide: it scrolls sideways", w, width)
		}
		// The whole page, what the window shows first, and the servers.
		full, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		first, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		servers, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.ID("server-list")))
		if err != nil {
			t.Fatal(err)
		}
		for suffix, png := range map[string][]byte{"": full, "-window": first, "-servers": servers} {
			out := filepath.Join(dir, name+"-"+itoa(int(w))+suffix+".png")
			if err := os.WriteFile(out, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", out)
		}
	}
}

// TestPageFromLoopbackServer loads the page from the handler `verifymcp
// config serve` runs, scans a file on it, and checks it asked the server
// for its own files only and nothing once loaded.
func TestPageFromLoopbackServer(t *testing.T) {
	dir := buildPage(t)
	h, err := web.Handler(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	p := openPage(t, startChrome(t), srv.URL+"/")
	good, _ := configCases(t)
	c := good[0]
	got := p.scan(c.client, c.path)
	cliJSON, _, _ := runCLI(t, c.dir, "--client", c.client, "--format", "json", c.name)
	if d := diff(undated(string(p.download("download-json"))), undated(cliJSON)); d != "" {
		t.Errorf("the page's JSON differs from the CLI's: %s", d)
	}
	if !strings.HasPrefix(got.Status, "Read 1 file") {
		t.Errorf("status %q", got.Status)
	}
	p.checkQuiet()
}

// TestPageCannotSend shows the page's quiet is enforced, not only
// observed: a request made from the loaded page (as a script injected into
// it would) is refused by its policy before it leaves the browser (the
// server sees nothing, the script sees an error), and the refusal is what
// the console checks of the other tests catch.
func TestPageCannotSend(t *testing.T) {
	dir := buildPage(t)
	h, err := web.Handler(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p := openPage(t, startChrome(t), srv.URL+"/")
	outcome, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`fetch("`+srv.URL+`/beacon", {method: "POST", body: "x"}).then(() => "sent", (e) => "refused: " + e.message)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(outcome, "refused") {
		t.Errorf("a fetch from the page: %s", outcome)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range asked {
		if a == "/beacon" {
			t.Error("the server received the page's request")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(p.problemList()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if probs := p.problemList(); !slices.ContainsFunc(probs, func(s string) bool { return strings.Contains(s, "Content Security Policy") }) {
		t.Errorf("the console did not report the refusal: %q", probs)
	}
}

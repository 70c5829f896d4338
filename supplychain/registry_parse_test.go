package supplychain

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestParseRepository(t *testing.T) {
	gh := func(owner, name, dir string) *evidence.Repository {
		return &evidence.Repository{Host: "github.com", Owner: owner, Name: name, Directory: dir}
	}
	tests := []struct {
		raw, dir string
		want     *evidence.Repository
	}{
		// GitHub, every URL form npm accepts.
		{"https://github.com/modelcontextprotocol/servers.git", "", gh("modelcontextprotocol", "servers", "")},
		{"https://github.com/modelcontextprotocol/servers", "", gh("modelcontextprotocol", "servers", "")},
		{"http://github.com/mikeal/request.git", "", gh("mikeal", "request", "")},
		{"git+https://github.com/sigstore/sigstore-js.git", "", gh("sigstore", "sigstore-js", "")},
		{"git+ssh://git@github.com/rexxars/eventsource-parser.git", "", gh("rexxars", "eventsource-parser", "")},
		{"git+ssh://git@github.com:npm/cli.git", "", gh("npm", "cli", "")},
		{"git://github.com/debug-js/debug.git", "", gh("debug-js", "debug", "")},
		{"ssh://git@github.com/inspect-js/object-inspect.git", "", gh("inspect-js", "object-inspect", "")},
		{"ssh://git@github.com:22/inspect-js/object-inspect.git", "", gh("inspect-js", "object-inspect", "")},
		{"git@github.com:pkgjs/parseargs.git", "", gh("pkgjs", "parseargs", "")},
		{"github.com:isaacs/minimatch", "", gh("isaacs", "minimatch", "")},
		{"github:watson/ci-info", "", gh("watson", "ci-info", "")},
		{"GitHub:watson/ci-info#v4.5.0", "", gh("watson", "ci-info", "")},
		{"jshttp/accepts", "", gh("jshttp", "accepts", "")},
		{"jshttp/accepts#2.0.0", "", gh("jshttp", "accepts", "")},
		{"github.com/zeit/arg", "", gh("zeit", "arg", "")},
		{"https://www.github.com/o/r", "", gh("o", "r", "")},
		{"https://GitHub.com/Owner/Repo.git", "", gh("Owner", "Repo", "")},
		{"https://github.com/o/r#readme", "", gh("o", "r", "")},
		{"https://github.com/o/r?tab=readme-ov-file", "", gh("o", "r", "")},
		{"git+https://github.com/o/r.git#semver:^1.0.0", "", gh("o", "r", "")},
		{"https://ci:token@github.com/o/r.git", "", gh("o", "r", "")},
		{"https://github.com/o/r/issues", "", gh("o", "r", "")},
		{"https://github.com/o/r.js", "", gh("o", "r.js", "")},
		// Monorepo directories, declared or from a web URL.
		{"git+https://github.com/zloirock/core-js.git", "packages/core-js", gh("zloirock", "core-js", "packages/core-js")},
		{"https://github.com/o/r.git", "./packages/x/", gh("o", "r", "packages/x")},
		{"https://github.com/modelcontextprotocol/servers/tree/main/src/fetch", "", gh("modelcontextprotocol", "servers", "src/fetch")},
		{"https://github.com/o/r/blob/main/packages/x/package.json", "", gh("o", "r", "packages/x")},
		{"https://github.com/o/r/blob/main/README.md", "", gh("o", "r", "")},
		{"https://github.com/o/r/tree/main", "", gh("o", "r", "")},
		{"https://github.com/o/r/tree/main/a", "b", gh("o", "r", "b")},
		// GitLab: nested groups and the /-/ separator.
		{"https://gitlab.com/gitlab-org/gitlab.git", "", &evidence.Repository{Host: "gitlab.com", Owner: "gitlab-org", Name: "gitlab"}},
		{"gitlab:group/sub/proj", "", &evidence.Repository{Host: "gitlab.com", Owner: "group/sub", Name: "proj"}},
		{"git@gitlab.com:group/proj.git", "", &evidence.Repository{Host: "gitlab.com", Owner: "group", Name: "proj"}},
		{"https://gitlab.com/group/sub/proj/-/tree/main/packages/x", "", &evidence.Repository{Host: "gitlab.com", Owner: "group/sub", Name: "proj", Directory: "packages/x"}},
		// Bitbucket.
		{"https://bitbucket.org/atlassian/atlaskit", "", &evidence.Repository{Host: "bitbucket.org", Owner: "atlassian", Name: "atlaskit"}},
		{"bitbucket:atlassian/atlaskit", "", &evidence.Repository{Host: "bitbucket.org", Owner: "atlassian", Name: "atlaskit"}},
		{"git@bitbucket.org:atlassian/atlaskit.git", "", &evidence.Repository{Host: "bitbucket.org", Owner: "atlassian", Name: "atlaskit"}},
		{"https://bitbucket.org/o/r/src/master/lib", "", &evidence.Repository{Host: "bitbucket.org", Owner: "o", Name: "r", Directory: "lib"}},
		// Other git hosts.
		{"https://git.sr.ht/~sircmpwn/hare", "", &evidence.Repository{Host: "git.sr.ht", Owner: "~sircmpwn", Name: "hare"}},
		{"ssh://git@codeberg.org/forgejo/forgejo.git", "", &evidence.Repository{Host: "codeberg.org", Owner: "forgejo", Name: "forgejo"}},
		{"git://git.example.org/pub/scm/tool.git", "", &evidence.Repository{Host: "git.example.org", Owner: "pub/scm", Name: "tool"}},
		{"https://gitlab.example.com/group/proj/-/tree/main/x", "", &evidence.Repository{Host: "gitlab.example.com", Owner: "group", Name: "proj"}},
		{"https://www.example.com/o/r.git", "", &evidence.Repository{Host: "www.example.com", Owner: "o", Name: "r"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseRepository(tt.raw, tt.dir)
			if err != nil {
				t.Fatalf("ParseRepository(%q, %q): %v", tt.raw, tt.dir, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseRepository(%q, %q) (-want +got):\n%s", tt.raw, tt.dir, d)
			}
		})
	}
}

func TestParseRepositoryRejects(t *testing.T) {
	tests := []struct {
		raw, reason string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"not a url", "not a URL: contains white space, control characters or backslashes"},
		{"https://github.com/o/r name", "not a URL: contains white space, control characters or backslashes"},
		{`C:\src\repo`, "not a URL: contains white space, control characters or backslashes"},
		{"https://", "no host"},
		{"git+ssh://", "no host"},
		{"https://github.com", "no owner/name in the path"},
		{"https://github.com/modelcontextprotocol", "no owner/name in the path"},
		{"https://git.example.com/repo.git", "no owner/name in the path"},
		{"https://gitlab.com/group", "no group/name in the path"},
		{"github:", "no owner/name in the path"},
		{"github:owner", "no owner/name in the path"},
		{"owner", "not a repository URL or shorthand"},
		{"a/b/c", "not a repository URL or shorthand"},
		{"/abs/path", "not a repository URL or shorthand"},
		{"./rel/path", "not a repository URL or shorthand"},
		{"../rel", "not a repository URL or shorthand"},
		{"file:../local", "not a repository URL or shorthand"},
		{"javascript:alert(1)", "not a repository URL or shorthand"},
		{"mailto:dev@example.com", "not a repository URL or shorthand"},
		{"file:///home/dev/repo", "a local path, not a hosted repository"},
		{"ftp://github.com/o/r", `unsupported scheme "ftp"`},
		{"gist:11081aaa281", "a gist has no owner and repository name"},
		{"https://github.com/o/..", `".." is not a valid owner or repository name`},
		{"https://github.com/o/%2e%2e", `".." is not a valid owner or repository name`},
		{"https://github.com/o/r%3Cscript%3E", `"r<script>" is not a valid owner or repository name`},
		{"http://[::1", `not a URL: missing ']' in host`},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseRepository(tt.raw, "")
			re, ok := errors.AsType[*RepositoryError](err)
			if !ok {
				t.Fatalf("ParseRepository(%q) = %+v, %v; want a *RepositoryError", tt.raw, got, err)
			}
			if got != nil {
				t.Errorf("ParseRepository(%q) returned %+v with its error", tt.raw, got)
			}
			if re.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", re.Reason, tt.reason)
			}
			if re.URL != strings.TrimSpace(tt.raw) {
				t.Errorf("URL = %q, want %q", re.URL, strings.TrimSpace(tt.raw))
			}
		})
	}
}

func TestRepositoryErrorRedactsPassword(t *testing.T) {
	_, err := ParseRepository("https://bot:s3cret@github.com/onlyowner", "")
	re, ok := errors.AsType[*RepositoryError](err)
	if !ok {
		t.Fatalf("err = %v, want a *RepositoryError", err)
	}
	if want := "https://bot:redacted@github.com/onlyowner"; re.URL != want {
		t.Errorf("URL = %q, want %q", re.URL, want)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q holds the password", err)
	}
}

func TestNPMAuthorURL(t *testing.T) {
	tests := []struct {
		author string // raw JSON
		want   string
	}{
		{`"Anthropic, PBC (https://anthropic.com)"`, "https://anthropic.com"},
		{`"Thomas Watson Steen <w@tson.dk> (https://twitter.com/wa7son)"`, "https://twitter.com/wa7son"},
		{`"Jonathan Ong <me@jongleberry.com> (http://jongleberry.com)"`, "http://jongleberry.com"},
		{`"Foo (Bar Corp) <foo@bar.example> (https://foo.example)"`, "https://foo.example"},
		{`"  Jane Doe   (https://jane.example)  "`, "https://jane.example"},
		{`"Mikeal Rogers <mikeal.rogers@gmail.com>"`, ""},
		{`"bdehamer@github.com"`, ""},
		{`"Model Context Protocol a Series of LF Projects, LLC."`, ""},
		{`"Jane (jane@example.com)"`, ""},
		{`"Jane (mailto:jane@example.com)"`, ""},
		{`{"name": "Denis Pushkarev", "email": "zloirock@zloirock.ru", "url": "http://zloirock.ru"}`, "http://zloirock.ru"},
		{`{"name": "Old", "web": "http://old.example"}`, "http://old.example"},
		{`{"name": "X", "url": "mailto:x@example.com"}`, ""},
		{`{"name": "X", "email": "x@example.com"}`, ""},
		{`""`, ""},
		{`null`, ""},
		{`42`, ""},
		{`["https://a.example"]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.author, func(t *testing.T) {
			if got := npmAuthorURL(json.RawMessage(tt.author)); got != tt.want {
				t.Errorf("npmAuthorURL(%s) = %q, want %q", tt.author, got, tt.want)
			}
		})
	}
}

func TestParsePerson(t *testing.T) {
	tests := []struct {
		in, name, email, url string
	}{
		{"Thomas Watson Steen <w@tson.dk> (https://twitter.com/wa7son)", "Thomas Watson Steen", "w@tson.dk", "https://twitter.com/wa7son"},
		{"Mikeal Rogers <mikeal.rogers@gmail.com>", "Mikeal Rogers", "mikeal.rogers@gmail.com", ""},
		{"Anthropic, PBC (https://anthropic.com)", "Anthropic, PBC", "", "https://anthropic.com"},
		{"Foo (Bar Corp) <foo@bar.example> (https://foo.example)", "Foo (Bar Corp)", "foo@bar.example", "https://foo.example"},
		{"bdehamer@github.com", "", "bdehamer@github.com", ""},
		{"just a name", "just a name", "", ""},
		{"", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			name, email, u := parsePerson(tt.in)
			if name != tt.name || email != tt.email || u != tt.url {
				t.Errorf("parsePerson(%q) = %q, %q, %q; want %q, %q, %q", tt.in, name, email, u, tt.name, tt.email, tt.url)
			}
		})
	}
}

func TestNPMLicense(t *testing.T) {
	tests := []struct {
		name              string
		license, licenses string // raw JSON, "" for absent
		want              string
	}{
		{"SPDX id", `"MIT"`, "", "MIT"},
		{"SPDX expression", `"(MIT OR Apache-2.0)"`, "", "(MIT OR Apache-2.0)"},
		{"see license in", `"SEE LICENSE IN LICENSE"`, "", "SEE LICENSE IN LICENSE"},
		{"legacy object", `{"type": "MIT", "url": "https://opensource.org/licenses/MIT"}`, "", "MIT"},
		{"legacy array in license", `[{"type": "MIT"}, {"type": "Apache-2.0"}]`, "", "MIT OR Apache-2.0"},
		{"array of strings", `["MIT", "GPL-2.0"]`, "", "MIT OR GPL-2.0"},
		{"duplicates once", `[{"type": "MIT"}, {"type": "MIT"}]`, "", "MIT"},
		{"legacy licenses array", "", `[{"type": "Apache 2.0"}]`, "Apache 2.0"},
		{"legacy licenses with urls", "", `[{"type": "MIT", "url": "http://x/MIT"}, {"type": "BSD", "url": "http://x/BSD"}]`, "MIT OR BSD"},
		{"legacy licenses object", "", `{"type": "BSD"}`, "BSD"},
		{"license wins over licenses", `"ISC"`, `[{"type": "MIT"}]`, "ISC"},
		{"empty license falls back", `""`, `[{"type": "MIT"}]`, "MIT"},
		{"none", "", "", ""},
		{"null", `null`, "", ""},
		{"number", `7`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l, ls json.RawMessage
			if tt.license != "" {
				l = json.RawMessage(tt.license)
			}
			if tt.licenses != "" {
				ls = json.RawMessage(tt.licenses)
			}
			if got := npmLicense(l, ls); got != tt.want {
				t.Errorf("npmLicense(%s, %s) = %q, want %q", tt.license, tt.licenses, got, tt.want)
			}
		})
	}
}

func TestEmailDomain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Justin@Anthropic.COM", "anthropic.com"},
		{"<a@b.co.uk>", "b.co.uk"},
		{"  a@example.org  ", "example.org"},
		{"a@example.org.", "example.org"},
		{"odd@name@evil.example", "evil.example"},
		{"olaservo@users.noreply.github.com", "users.noreply.github.com"},
		{"nobody", ""},
		{"a@localhost", ""},
		{"a@exa mple.com", ""},
		{"a@-bad.example", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := emailDomain(tt.in); got != tt.want {
			t.Errorf("emailDomain(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestChooseBin(t *testing.T) {
	tests := []struct {
		name     string
		pkg      string
		target   targetInfo
		override string
		want     *evidence.Bin
	}{
		{
			name:     "rule 1: --bin names a bin entry",
			pkg:      "@acme/weather",
			target:   targetInfo{Bin: map[string]string{"weather": "dist/index.js", "weather-admin": "dist/admin.js"}},
			override: "weather-admin",
			want:     &evidence.Bin{Name: "weather-admin", Path: "/work/tree/node_modules/.bin/weather-admin", Rule: "--bin"},
		},
		{
			name:   "rule 2: a single bin entry, whatever its name",
			pkg:    "@modelcontextprotocol/server-everything",
			target: targetInfo{Bin: map[string]string{"mcp-server-everything": "dist/index.js"}, Main: "dist/index.js"},
			want:   &evidence.Bin{Name: "mcp-server-everything", Path: "/work/tree/node_modules/.bin/mcp-server-everything", Rule: "single bin entry"},
		},
		{
			name:   "rule 3: bin named like the scoped package wins over an mcp bin earlier in byte order",
			pkg:    "@acme/weather",
			target: targetInfo{Bin: map[string]string{"weather": "a.js", "mcp-weather-admin": "b.js", "aaa": "c.js"}},
			want:   &evidence.Bin{Name: "weather", Path: "/work/tree/node_modules/.bin/weather", Rule: "bin named like the package"},
		},
		{
			name:   "rule 3: unscoped package",
			pkg:    "weather",
			target: targetInfo{Bin: map[string]string{"weather": "a.js", "aaa": "b.js"}},
			want:   &evidence.Bin{Name: "weather", Path: "/work/tree/node_modules/.bin/weather", Rule: "bin named like the package"},
		},
		{
			name:   "rule 4: first bin in byte order containing mcp",
			pkg:    "@acme/tools",
			target: targetInfo{Bin: map[string]string{"zz-mcp": "a.js", "cli": "b.js", "b-mcp-server": "c.js", "aaa": "d.js"}},
			want:   &evidence.Bin{Name: "b-mcp-server", Path: "/work/tree/node_modules/.bin/b-mcp-server", Rule: "first bin containing \"mcp\""},
		},
		{
			name:   "rule 5: first bin in byte order",
			pkg:    "@acme/tools",
			target: targetInfo{Bin: map[string]string{"zeta": "a.js", "beta": "b.js", "Alpha": "c.js"}},
			want:   &evidence.Bin{Name: "Alpha", Path: "/work/tree/node_modules/.bin/Alpha", Rule: "first bin in byte order"},
		},
		{
			name:   "rule 6: no bin, the package main",
			pkg:    "@acme/tools",
			target: targetInfo{Main: "./dist/server.js"},
			want:   &evidence.Bin{Name: "main", Path: "/work/tree/node_modules/@acme/tools/dist/server.js", Rule: "package main (no bin)"},
		},
		{
			name:   "rule 6: empty bin map counts as no bin",
			pkg:    "tools",
			target: targetInfo{Bin: map[string]string{}, Main: "index.js"},
			want:   &evidence.Bin{Name: "main", Path: "/work/tree/node_modules/tools/index.js", Rule: "package main (no bin)"},
		},
		{
			name:   "rule 6: main cannot climb out of the package",
			pkg:    "@acme/tools",
			target: targetInfo{Main: "../../../../etc/passwd"},
			want:   &evidence.Bin{Name: "main", Path: "/work/tree/node_modules/@acme/tools/etc/passwd", Rule: "package main (no bin)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chooseBin(tt.pkg, &tt.target, tt.override)
			if err != nil {
				t.Fatalf("chooseBin: %v", err)
			}
			if d := unitDiff(tt.want, got); d != "" {
				t.Errorf("chooseBin(%q, %+v, %q) (-want +got):%s", tt.pkg, tt.target, tt.override, d)
			}
		})
	}
}

func TestChooseBinErrors(t *testing.T) {
	tests := []struct {
		name     string
		pkg      string
		target   targetInfo
		override string
		wantMsg  []string
	}{
		{
			name:     "--bin that is not a bin lists the bins in byte order",
			pkg:      "@acme/weather",
			target:   targetInfo{Bin: map[string]string{"weather": "a.js", "mcp-weather": "b.js"}, Main: "index.js"},
			override: "nope",
			wantMsg:  []string{`"nope"`, "@acme/weather", "mcp-weather, weather"},
		},
		{
			name:     "--bin on a package without bins",
			pkg:      "tools",
			target:   targetInfo{Main: "index.js"},
			override: "tools",
			wantMsg:  []string{`"tools"`},
		},
		{
			name:    "neither bin nor main",
			pkg:     "@acme/empty",
			target:  targetInfo{},
			wantMsg: []string{"@acme/empty", "neither bin nor main"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chooseBin(tt.pkg, &tt.target, tt.override)
			if !errors.Is(err, ErrBadBin) {
				t.Fatalf("chooseBin = %+v, %v; want ErrBadBin", got, err)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

func TestOrderScripts(t *testing.T) {
	in := []scriptInfo{
		{Package: "@acme/srv", Path: "node_modules/@acme/srv", Event: "postinstall"},
		{Package: "esbuild", Path: "node_modules/esbuild", Event: "postinstall"},
		{Package: "@acme/srv", Path: "node_modules/@acme/srv", Event: "preinstall"},
		{Package: "sharp", Path: "node_modules/@acme/srv/node_modules/sharp", Event: "install"},
		{Package: "c", Path: "node_modules/a/node_modules/b/node_modules/c", Event: "postinstall"},
		{Package: "@acme/srv", Path: "node_modules/@acme/srv", Event: "install"},
		{Package: "b", Path: "node_modules/a/node_modules/b", Event: "install"},
		{Package: "b", Path: "node_modules/a/node_modules/b", Event: "preinstall"},
	}
	orig := append([]scriptInfo(nil), in...)
	got := orderScripts(in)
	want := []scriptInfo{
		{Package: "c", Path: "node_modules/a/node_modules/b/node_modules/c", Event: "postinstall"},
		{Package: "sharp", Path: "node_modules/@acme/srv/node_modules/sharp", Event: "install"},
		{Package: "b", Path: "node_modules/a/node_modules/b", Event: "preinstall"},
		{Package: "b", Path: "node_modules/a/node_modules/b", Event: "install"},
		{Package: "@acme/srv", Path: "node_modules/@acme/srv", Event: "preinstall"},
		{Package: "@acme/srv", Path: "node_modules/@acme/srv", Event: "install"},
		{Package: "@acme/srv", Path: "node_modules/@acme/srv", Event: "postinstall"},
		{Package: "esbuild", Path: "node_modules/esbuild", Event: "postinstall"},
	}
	if d := unitDiff(want, got); d != "" {
		t.Errorf("orderScripts (-want +got):%s", d)
	}
	if d := unitDiff(orig, in); d != "" {
		t.Errorf("orderScripts changed its input (-want +got):%s", d)
	}
	if got := orderScripts(nil); len(got) != 0 {
		t.Errorf("orderScripts(nil) = %v, want empty", got)
	}
}

func TestRegistryHostPort(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://registry.npmjs.org/", "registry.npmjs.org:443"},
		{"https://registry.npmjs.org", "registry.npmjs.org:443"},
		{"http://verdaccio/", "verdaccio:80"},
		{"http://localhost:4873", "localhost:4873"},
		{"https://npm.example.com:8443/artifactory/api/npm/npm/", "npm.example.com:8443"},
		{"http://[::1]:4873/", "[::1]:4873"},
		{"https://[2001:db8::1]/", "[2001:db8::1]:443"},
		{"https://user:pass@npm.example.com/", "npm.example.com:443"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := registryHostPort(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("registryHostPort(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if got, err := registryHostPort("https://bad host/"); err == nil {
		t.Errorf("registryHostPort(bad URL) = %q, want an error", got)
	}
}

func TestDecodeResult(t *testing.T) {
	t.Run("the last result line wins over logs and earlier marks", func(t *testing.T) {
		stdout := "npm warn deprecated inflight@1.0.6\n" +
			resultMark + `{"ok":false}` + "\n" +
			"added 91 packages in 3s\n" +
			resultMark + `{"ok":true,"npm_exit":0,"packages":91,"target":{"name":"@modelcontextprotocol/server-everything","version":"2026.8.31","bin":{"mcp-server-everything":"dist/index.js"}},` +
			`"scripts":[{"package":"esbuild","version":"0.25.0","path":"node_modules/esbuild","event":"postinstall","command":"node install.js"}],` +
			`"integrity":{"expected":"sha512-x","lockfile":"sha512-x","computed":"sha512-x"}}` + "\n" +
			"trailing noise\n"
		var got fetchResult
		if err := decodeResult([]byte(stdout), &got); err != nil {
			t.Fatalf("decodeResult: %v", err)
		}
		zero := 0
		want := fetchResult{
			OK:       true,
			NPMExit:  &zero,
			Packages: 91,
			Target:   &targetInfo{Name: "@modelcontextprotocol/server-everything", Version: "2026.8.31", Bin: map[string]string{"mcp-server-everything": "dist/index.js"}},
			Scripts:  []scriptInfo{{Package: "esbuild", Version: "0.25.0", Path: "node_modules/esbuild", Event: "postinstall", Command: "node install.js"}},
		}
		want.Integrity.Expected, want.Integrity.Lockfile, want.Integrity.Computed = "sha512-x", "sha512-x", "sha512-x"
		if d := unitDiff(want, got); d != "" {
			t.Errorf("decodeResult (-want +got):%s", d)
		}
	})
	t.Run("a result at the very end without newline", func(t *testing.T) {
		var got []scriptRun
		err := decodeResult([]byte("log\n"+resultMark+`[{"path":"node_modules/esbuild","event":"postinstall","ran":true,"exit_code":1}]`), &got)
		want := []scriptRun{{Path: "node_modules/esbuild", Event: "postinstall", Ran: true, ExitCode: 1}}
		if err != nil {
			t.Fatalf("decodeResult: %v", err)
		}
		if d := unitDiff(want, got); d != "" {
			t.Errorf("decodeResult (-want +got):%s", d)
		}
	})
	for name, stdout := range map[string]string{
		"no result line":     "npm error code E404\nnpm error 404 Not Found\n",
		"invalid result":     resultMark + "{not json\n",
		"empty result":       resultMark + "\n",
		"empty output":       "",
		"mark without space": strings.TrimSpace(resultMark) + `{"ok":true}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			var got fetchResult
			if err := decodeResult([]byte(stdout), &got); err == nil {
				t.Errorf("decodeResult(%q) = %+v, nil; want an error", stdout, got)
			}
		})
	}
}

package sandbox

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
)

// ev is one exec event: pid, ppid and the command line, split on spaces
// (the tracer's argv, where no argument here holds a space that matters).
func ev(pid, ppid int, cmd string) execEvent {
	return execEvent{Type: "exec", PID: pid, PPID: ppid, Argv: strings.Fields(cmd), Time: time.Unix(int64(pid), 0)}
}

// argvEv keeps a shell's -c argument whole.
func shEv(pid, ppid int, sh, script string) execEvent {
	return execEvent{Type: "exec", PID: pid, PPID: ppid, Argv: []string{sh, "-c", script}, Time: time.Unix(int64(pid), 0)}
}

const (
	sb   = evidence.ProvenanceSandbox
	pm   = evidence.ProvenancePackageManager
	decl = evidence.ProvenanceDeclared
	bt   = evidence.ProvenanceBuildTool
	pk   = evidence.ProvenancePackage
)

// TestProvenance runs the attribution over the process trees the tracer
// recorded for real installs and servers (mongodb-mcp-server@3.0.4's
// native dependencies, sqlite3@5.1.7 under mcp-server-sqlite-npx) and
// over the two sides of a declared script: the shell npm runs it in is
// not the package's doing, a shell the script's code starts is.
func TestProvenance(t *testing.T) {
	tests := []struct {
		name     string
		phase    string
		declared []string
		events   []execEvent
		want     []evidence.Provenance
	}{
		{
			// The script driver's exec came before the tracer attached
			// (seen in CI on desktop-commander's tree): npm run-script of
			// each package is still the package manager's, and the shell
			// it runs the declared script in, and that script, as usual.
			name: "driver_not_seen", phase: evidence.PhaseScripts,
			declared: []string{"node install.mjs", "node install/check.js || npm run build"},
			events: []execEvent{
				ev(27, 14, "node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info postinstall"),
				shEv(39, 27, "sh", "node install.mjs"),
				ev(39, 27, "node install.mjs"),
				ev(50, 14, "node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info install"),
				shEv(51, 50, "sh", "node install/check.js || npm run build"),
				ev(52, 51, "node install/check.js"),
			},
			want: []evidence.Provenance{pm, pm, decl, pm, pm, decl},
		},
		{
			name: "declared_script_and_what_its_code_starts", phase: evidence.PhaseScripts,
			declared: []string{"node x.js"},
			events: []execEvent{
				ev(14, 0, "node -e driver"),
				ev(27, 14, "/usr/bin/env node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info postinstall"),
				ev(27, 14, "node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info postinstall"),
				shEv(39, 27, "sh", "node x.js"),
				ev(40, 39, "node x.js"),
				shEv(41, 40, "/bin/sh", "sh -c id"),
				shEv(42, 41, "sh", "id"),
				ev(42, 41, "id"),
			},
			want: []evidence.Provenance{sb, pm, pm, pm, decl, pk, pk, pk},
		},
		{
			// dash execs a one-command script in place of the shell.
			name: "shell_execs_the_declared_command_in_place", phase: evidence.PhaseScripts,
			declared: []string{"node x.js"},
			events: []execEvent{
				ev(14, 0, "node -e driver"),
				ev(27, 14, "node /usr/local/bin/npm run-script postinstall"),
				shEv(39, 27, "sh", "node x.js"),
				ev(39, 27, "node x.js"),
				ev(40, 39, "curl -s http://example.invalid/"),
			},
			want: []evidence.Provenance{sb, pm, pm, decl, pk},
		},
		{
			name: "mongodb-mcp-server_native_dependencies", phase: evidence.PhaseScripts,
			declared: []string{
				"node buildcheck.js > buildcheck.gypi && node-gyp rebuild",
				"prebuild-install --runtime napi || node-gyp rebuild",
				"node install.js",
			},
			events: []execEvent{
				ev(14, 0, "node -e driver"),
				ev(47, 14, "/usr/bin/env node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info install"),
				ev(47, 14, "node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info install"),
				shEv(58, 47, "sh", "node buildcheck.js > buildcheck.gypi && node-gyp rebuild"),
				ev(59, 58, "node buildcheck.js"),
				ev(67, 14, "node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info install"),
				shEv(78, 67, "sh", "prebuild-install --runtime napi || node-gyp rebuild"),
				ev(79, 78, "/usr/bin/env node /work/tree/node_modules/.bin/prebuild-install --runtime napi"),
				ev(79, 78, "node /work/tree/node_modules/.bin/prebuild-install --runtime napi"),
				ev(91, 78, "/usr/bin/env sh /usr/local/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin/node-gyp rebuild"),
				ev(91, 78, "sh /usr/local/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin/node-gyp rebuild"),
				ev(92, 91, "node /usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild"),
				shEv(103, 92, "python3", "import sys; sys.stdout.buffer.write(sys.executable.encode('utf-8'));"),
				ev(172, 14, "node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info install"),
				shEv(183, 172, "sh", "node install.js"),
				ev(184, 183, "node install.js"),
				shEv(191, 184, "/bin/sh", "node-gyp --target=v22.23.5 --real_openssl_major=3 rebuild"),
				ev(192, 191, "/usr/bin/env sh /usr/local/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin/node-gyp --target=v22.23.5 --real_openssl_major=3 rebuild"),
				ev(193, 192, "node /usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js --target=v22.23.5 --real_openssl_major=3 rebuild"),
				shEv(204, 193, "python3", "import sys; sys.stdout.buffer.write(sys.executable.encode('utf-8'));"),
			},
			want: []evidence.Provenance{sb, pm, pm, pm, decl, pm, pm, decl, decl, decl, decl, bt, bt, pm, pm, decl, pk, bt, bt, bt},
		},
		{
			// sqlite3 runs the node-gyp of its own tree, not npm's.
			name: "sqlite3_own_node-gyp", phase: evidence.PhaseScripts,
			declared: []string{"prebuild-install -r napi || node-gyp rebuild"},
			events: []execEvent{
				ev(13, 0, "node -e driver"),
				ev(28, 13, "node /usr/local/bin/npm run-script --ignore-scripts --loglevel=info install"),
				shEv(39, 28, "sh", "prebuild-install -r napi || node-gyp rebuild"),
				ev(40, 39, "/usr/bin/env node /work/tree/node_modules/.bin/prebuild-install -r napi"),
				ev(52, 39, "/usr/bin/env node /work/tree/node_modules/.bin/node-gyp rebuild"),
				ev(52, 39, "node /work/tree/node_modules/.bin/node-gyp rebuild"),
				shEv(63, 52, "python3", "import sys; print(sys.executable);"),
			},
			want: []evidence.Provenance{sb, pm, pm, decl, decl, decl, bt},
		},
		{
			// A command line npm did not get from package.json is not a
			// declared script's shell.
			name: "undeclared_shell_under_npm_is_npms", phase: evidence.PhaseScripts,
			declared: []string{"node x.js"},
			events: []execEvent{
				ev(14, 0, "node -e driver"),
				ev(27, 14, "node /usr/local/bin/npm run-script postinstall"),
				shEv(39, 27, "sh", "node y.js"),
				ev(40, 39, "node y.js"),
			},
			want: []evidence.Provenance{sb, pm, pm, pm},
		},
		{
			name: "mongodb-mcp-server_run_phase", phase: evidence.PhaseRun,
			events: []execEvent{
				ev(207, 0, "/usr/bin/env node /work/tree/node_modules/.bin/mongodb-mcp-server"),
				ev(207, 0, "node /work/tree/node_modules/.bin/mongodb-mcp-server"),
				shEv(226, 207, "/bin/sh", "( cat /var/lib/dbus/machine-id /etc/machine-id 2> /dev/null || hostname ) | head -n 1 || :"),
				ev(228, 226, "head -n 1"),
				ev(229, 227, "cat /var/lib/dbus/machine-id /etc/machine-id"),
				ev(227, 226, "hostname"),
			},
			want: []evidence.Provenance{sb, sb, pk, pk, pk, pk},
		},
		{
			// npm and node-gyp mean nothing special once the server runs.
			name: "run_phase_npm_is_the_package's", phase: evidence.PhaseRun,
			events: []execEvent{
				ev(10, 0, "node /work/tree/node_modules/.bin/server"),
				ev(11, 10, "node /usr/local/bin/npm run-script build"),
				shEv(12, 11, "sh", "node x.js"),
			},
			want: []evidence.Provenance{sb, pk, pk},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			declared := map[string]bool{}
			for _, d := range tc.declared {
				declared[d] = true
			}
			got := provenance(tc.phase, tc.events, declared)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				var b strings.Builder
				for i, e := range tc.events {
					fmt.Fprintf(&b, "\n  %d %d %q -> %s", e.PID, e.PPID, strings.Join(e.Argv, " "), got[i])
				}
				t.Errorf("provenance (-want +got):\n%s%s", diff, b.String())
			}
		})
	}
}

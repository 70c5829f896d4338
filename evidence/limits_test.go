package evidence

import (
	"strings"
	"testing"
)

// The texts below are real tool output, recorded by scanning the named
// packages in the sandbox (npm 10.9.9, uv 0.13.9, CPython 3.11.2, Node.js
// 22.23.5), cut to the lines that decide; each names its package.

func installFailed(step, err, tail string) *Bundle {
	b := validBundle()
	b.Install = &Install{Outcome: InstallFailed, FailedStep: step, Error: err, LogTail: tail}
	b.Sandbox.Outcome = OutcomeInstallFailed
	return &b
}

func sessionFailed(outcome Outcome, stderr string, env ...string) *Bundle {
	b := validBundle()
	b.Install = &Install{Outcome: InstallOK}
	code := 1
	b.Session = &Session{Outcome: outcome, ExitCode: &code, StderrTail: stderr, Error: "the server exited with status 1 before the contract was captured"}
	b.Sandbox.Outcome = outcome
	b.Target.EnvNames = append([]string{}, env...)
	return &b
}

// watchedRun adds the behaviour evidence of a watched run phase with the
// given start-up lookups and connections.
func watchedRun(b *Bundle, hosts ...string) *Bundle {
	b.Behavior = &Behavior{Watches: []Watch{{Phase: PhaseRun, WatchedMS: 240, Sink: "ok", Tracer: "ok", Files: "ok"}}}
	for _, h := range hosts {
		b.Behavior.Network = append(b.Behavior.Network,
			NetEvent{Phase: PhaseRun, Stage: StageStartup, Kind: "dns", DNSName: h, DstIP: "198.18.0.1", DstPort: 53},
			NetEvent{Phase: PhaseRun, Stage: StageStartup, Kind: "tcp", LookedUp: h, SNI: h, DstIP: "198.18.0.2", DstPort: 443})
	}
	return b
}

const (
	// pypi:basic-memory==0.24.1 (Requires-Python >=3.12).
	uvBasicMemory = "uv could not resolve the tree: no release of the tree fits the sandbox's Python 3.11: error: No solution found when resolving dependencies cause: Because the current Python version (3.11.2) does not satisfy Python>=3.12 and basic-memory==0.24.1 depends on Python>=3.12, we can conclude that basic-memory==0.24.1 cannot be used. And because only basic-memory<=0.24.1 is available and you require basic-memory==0.24.1, we can conclude that your requirements are unsatisfiable."
	// pypi:pywin32==311 (wheels for Windows only, no sdist).
	uvPywin32 = "uv could not resolve the tree: error: No solution found when resolving dependencies cause: Because pywin32==311 has no wheels with a matching platform tag (e.g., `manylinux_2_36_x86_64`) and you require pywin32==311, we can conclude that your requirements are unsatisfiable."
	// npm:fsevents@2.3.3 (os: darwin).
	npmFsevents = `npm install failed (EBADPLATFORM): Unsupported platform for fsevents@2.3.3: wanted {"os":"darwin"} (current: {"os":"linux"})`
	// npm:@steipete/macos-automator-mcp@0.4.7 (engines.node >=24) under
	// engine-strict: the error line, and npm's stderr.
	npmEngineErr  = "npm install failed (EBADENGINE): Unsupported engine"
	npmEngineTail = "npm error code EBADENGINE\nnpm error engine Unsupported engine\nnpm error engine Not compatible with your version of node/npm: @steipete/macos-automator-mcp@0.4.7\nnpm error notsup Not compatible with your version of node/npm: @steipete/macos-automator-mcp@0.4.7\nnpm error notsup Required: {\"node\":\">=24.0.0\"}\nnpm error notsup Actual:   {\"npm\":\"10.9.9\",\"node\":\"v22.23.5\"}\n"
)

func TestScannerLimitInstall(t *testing.T) {
	tests := []struct {
		name       string
		b          *Bundle
		kind       string // "" when the failure is the package's
		inReason   []string
		inEvidence string
	}{
		{"python newer than the sandbox's (basic-memory)", installFailed(StepFetch, uvBasicMemory, ""), LimitInterpreter,
			[]string{"basic-memory==0.24.1 requires Python>=3.12", "CPython 3.11.2"}, "does not satisfy Python>=3.12"},
		{"no offered Python fits the release's Requires-Python", installFailed(StepFetch,
			"oldpkg==1.0 requires Python <3.9, which is satisfied by none of the sandbox's Pythons (CPython 3.11.2, 3.13.5)", ""), LimitInterpreter,
			[]string{"oldpkg==1.0 requires Python <3.9", "the sandbox offers CPython 3.11.2, 3.13.5"}, "satisfied by none of the sandbox's Pythons"},
		{"wheels only for another platform (pywin32)", installFailed(StepFetch, uvPywin32, ""), LimitPlatform,
			[]string{"pywin32==311 publishes wheels only for other platforms", "needs one such as manylinux_2_36_x86_64"}, "no wheels with a matching platform tag"},
		{"wheels only for other Pythons", installFailed(StepFetch, "uv could not resolve the tree: error: No solution found when resolving dependencies cause: Because fastfoo==2.0 has no wheels with a matching Python ABI tag (e.g., `cp311`) and you require fastfoo==2.0, we can conclude that your requirements are unsatisfiable.", ""),
			LimitInterpreter, []string{"fastfoo==2.0 publishes wheels only for other Pythons", "cp311"}, "Python ABI tag"},
		{"npm EBADPLATFORM (fsevents)", installFailed(StepFetch, npmFsevents, ""), LimitPlatform,
			[]string{`fsevents@2.3.3 is built for {"os":"darwin"}`, `the sandbox is {"os":"linux"}`}, "Unsupported platform for fsevents@2.3.3"},
		{"npm EBADENGINE under engine-strict", installFailed(StepFetch, npmEngineErr, npmEngineTail), LimitInterpreter,
			[]string{`@steipete/macos-automator-mcp@0.4.7 requires {"node":">=24.0.0"}`, `"node":"v22.23.5"`}, "EBADENGINE"},
		{"a git dependency: the fetch step reaches only the registry", installFailed(StepFetch,
			"npm install failed: a dependency comes from a git repository (ssh://git@github.com/acme/helper.git); the sandbox fetches only from the registry (registry.npmjs.org:443), not with git", ""),
			LimitFetch, []string{"git repository (ssh://git@github.com/acme/helper.git)"}, "git repository"},
		{"an sdist whose dependencies only its backend could tell", installFailed(StepFetch,
			"uv could not resolve the tree: resolving the package's tree needs the metadata of an sdist that does not declare it statically (PKG-INFO 2.2+ or pyproject.toml [project]); only its build backend could say, and the fetch step, the one with network, never runs package code", ""),
			LimitFetch, []string{"only through its build backend"}, "only its build backend could say"},
		// The metadata step could not learn an sdist's dependencies
		// (sandbox/pymeta.go): the scanner's limit, whatever the log says.
		{"a metadata build that fails", installFailed(StepFetch,
			"uv could not resolve the tree: dynamic metadata: the metadata build of brokenmeta-0.0.1.tar.gz failed (exit 1: RuntimeError: no)",
			"  × Failed to build `brokenmeta-0.0.1.tar.gz`\n  ╰─▶ Because setuptools was not found in the provided package locations\n"),
			LimitFetch, []string{"with no network, could not resolve the tree that way (the metadata build of brokenmeta-0.0.1.tar.gz failed (exit 1: RuntimeError: no))"}, "dynamic metadata: the metadata build"},
		{"a tree still unresolved at the bound", installFailed(StepFetch,
			"uv could not resolve the tree: dynamic metadata: the tree still needs the metadata of d-1.tar.gz after 3 metadata steps, the sandbox's bound", ""),
			LimitFetch, []string{"after 3 metadata steps"}, "after 3 metadata steps"},
		// pypi:mcp-local-rag==0.4.1 pulls torch, a wheel larger than the
		// fetch step's bound.
		{"a file larger than the fetch step's bound", installFailed(StepFetch,
			"torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl is larger than the fetch step's bound of 512 MiB per file", ""),
			LimitFetch, []string{"torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl is larger than the 512 MiB", "a bound of the sandbox"}, "larger than the fetch step's bound"},
		// The package's own failures: any user hits them.
		{"a dependency that is not on the registry (E404)", installFailed(StepFetch,
			"npm install failed (E404): 404 Not Found - GET https://registry.npmjs.org/mcp-server-weather-pro/-/mcp-server-weather-pro-0.4.2.tgz - Not found",
			"npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/mcp-server-weather-pro/-/mcp-server-weather-pro-0.4.2.tgz - Not found\n"), "", nil, ""},
		{"a peer conflict the manifest creates (ERESOLVE)", installFailed(StepFetch, "npm install failed (ERESOLVE): unable to resolve dependency tree",
			"npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\nnpm error Could not resolve dependency:\nnpm error peer zod@\"^4.0.0\" from @acme/mcp-kit@1.2.0\n"), "", nil, ""},
		{"a uv conflict with no Python in it", installFailed(StepFetch,
			"uv could not resolve the tree: error: No solution found when resolving dependencies cause: Because acme-mcp==1.0 depends on pydantic<2 and mcp==1.9.0 depends on pydantic>=2.7, we can conclude that acme-mcp==1.0 and mcp==1.9.0 are incompatible.", ""), "", nil, ""},
		{"a Python limit beside a dependency the index does not have", installFailed(StepFetch,
			"uv could not resolve the tree: error: No solution found when resolving dependencies cause: Because acme-helper was not found in the package registry and the current Python version (3.11.2) does not satisfy Python>=3.12 ...", ""), "", nil, ""},
		{"an install timeout is not a limit", func() *Bundle {
			b := installFailed(StepScripts, "script step exceeded the install timeout of 3m0s", "")
			b.Install.Outcome = InstallTimeout
			return b
		}(), "", nil, ""},
		{"a failed build at the build step is the package's code", installFailed(StepScripts, "the build of acme-1.0.tar.gz failed (exit 1), so the tree could not be installed", ""), "", nil, ""},
		{"a lifecycle script killed for memory", func() *Bundle {
			b := installFailed(StepScripts, "the postinstall script of big-native was killed for exceeding the script step's memory limit of 2 GiB (besides the files kept in the tree, home and /tmp)", "")
			b.Install.Outcome = InstallOOM
			return b
		}(), LimitMemory, []string{"2 GiB", "a setting of the sandbox"}, "killed for exceeding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim, ok := ScannerLimit(tc.b)
			if tc.kind == "" {
				if ok {
					t.Fatalf("limit %+v, want the package's own failure", lim)
				}
				return
			}
			if !ok || lim.Kind != tc.kind || lim.Signal != SignalInstall {
				t.Fatalf("limit %+v (%v), want kind %s on %s", lim, ok, tc.kind, SignalInstall)
			}
			for _, s := range tc.inReason {
				if !strings.Contains(lim.Reason, s) {
					t.Errorf("reason %q lacks %q", lim.Reason, s)
				}
			}
			if !strings.Contains(lim.Evidence, tc.inEvidence) {
				t.Errorf("evidence %q lacks %q", lim.Evidence, tc.inEvidence)
			}
		})
	}
}

func TestScannerLimitSession(t *testing.T) {
	tests := []struct {
		name     string
		b        *Bundle
		kind     string
		inReason []string
	}{
		// Configuration the scan did not give.
		{"brave-search: a required variable", sessionFailed(OutcomeStartCrashed, "Error: BRAVE_API_KEY environment variable is required\n"),
			LimitConfiguration, []string{"BRAVE_API_KEY", "--env BRAVE_API_KEY=…"}},
		{"slack: please set two variables", sessionFailed(OutcomeStartCrashed, "Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID environment variables\n"),
			LimitConfiguration, []string{"SLACK_BOT_TOKEN, SLACK_TEAM_ID"}},
		{"gitlab: not set", sessionFailed(OutcomeStartCrashed, "GITLAB_PERSONAL_ACCESS_TOKEN environment variable is not set\n"),
			LimitConfiguration, []string{"GITLAB_PERSONAL_ACCESS_TOKEN"}},
		{"figma: either of two", sessionFailed(OutcomeStartCrashed, "Either FIGMA_API_KEY or FIGMA_OAUTH_TOKEN is required (via CLI argument or .env file)\n"),
			LimitConfiguration, []string{"FIGMA_API_KEY, FIGMA_OAUTH_TOKEN"}},
		{"airtable: thrown with a stack", sessionFailed(OutcomeStartCrashed, "Error: airtable-mcp-server: No API key provided. Set it in the `AIRTABLE_API_KEY` environment variable\n    at new AirtableService (file:///work/tree/node_modules/airtable-mcp-server/dist/airtableService.js:11:19)\n    at file:///work/tree/node_modules/airtable-mcp-server/dist/main.js:23:29\n"),
			LimitConfiguration, []string{"AIRTABLE_API_KEY"}},
		{"stripe: not provided", sessionFailed(OutcomeStartCrashed, "\n🚨  Error initializing Stripe MCP server:\n\n   Stripe API key not provided. Please either pass it as an argument --api-key=$KEY or set the STRIPE_SECRET_KEY environment variable.\n"),
			LimitConfiguration, []string{"STRIPE_SECRET_KEY"}},
		{"sentry: the variable on the next line", sessionFailed(OutcomeStartCrashed, "Error: No access token was provided.\nRun `sentry-mcp auth login` interactively first, or pass `--access-token` / `SENTRY_ACCESS_TOKEN`.\nUsage: @sentry/mcp-server [--access-token=<token>] [--host=<host>] [--insecure-http]\n"),
			LimitConfiguration, []string{"SENTRY_ACCESS_TOKEN"}},
		{"postgres: an argument, no variable", sessionFailed(OutcomeStartCrashed, "Please provide a database URL as a command-line argument\n"),
			LimitConfiguration, []string{"Please provide a database URL", "--arg"}},
		{"a usage text and exit", sessionFailed(OutcomeStartCrashed, "Usage: mcp-server-filesystem <allowed-directory> [additional-directories...]\n"),
			LimitConfiguration, []string{"usage", "--arg"}},
		{"a pydantic settings error", sessionFailed(OutcomeStartCrashed, "pydantic_core._pydantic_core.ValidationError: 1 validation error for Settings\nDATABRICKS_HOST\n  Field required [type=missing, input_value={}, input_type=dict]\n"),
			LimitConfiguration, []string{"configuration the scan did not give"}},
		{"a usage text on stdout broke the protocol", func() *Bundle {
			b := sessionFailed(OutcomeProtocolError, "")
			b.Session.NonJSONSample = []string{"usage: acme-mcp [-h] --token TOKEN"}
			return b
		}(), LimitConfiguration, []string{"usage"}},
		// Network the run phase does not give.
		{"mcp-remote, watched: fetch failed after the sink saw it try", watchedRun(sessionFailed(OutcomeStartCrashed,
			"[23] Connecting to remote server: https://mcp.example.com/sse\n[23] Using transport strategy: http-first\n[23] Connection error: TypeError: fetch failed\n    at Object.processResponse (/work/tree/node_modules/undici/lib/web/fetch/index.js:237:16)\n"),
			"mcp.example.com"), LimitNetwork, []string{"mcp.example.com", "TypeError: fetch failed", "does not give"}},
		{"mcp-remote, not watched: getaddrinfo EAI_AGAIN", sessionFailed(OutcomeStartCrashed,
			"[7] Connection error: TypeError: fetch failed\n  [cause]: Error: getaddrinfo EAI_AGAIN mcp.example.com\n    errno: -3001,\n    code: 'EAI_AGAIN',\n"),
			LimitNetwork, []string{"getaddrinfo EAI_AGAIN mcp.example.com"}},
		{"mcp-hfspace: the sink's empty answer could not be read", watchedRun(sessionFailed(OutcomeStartCrashed,
			"Error loading black-forest-labs/FLUX.1-schnell: Space metadata could not be loaded. \nfile:///work/tree/node_modules/@llmindset/mcp-hfspace/build/index.js:52\n    throw new Error(\"No valid endpoints found in any of the provided spaces\");\n          ^\n\nError: No valid endpoints found in any of the provided spaces\n"),
			"huggingface.co"), LimitNetwork, []string{"huggingface.co", "2 attempts"}},
		{"memory", func() *Bundle {
			b := sessionFailed(OutcomeOOM, "")
			b.Session.OOMKilled = true
			b.Sandbox.Limits.MemoryBytes = 512 << 20
			return b
		}(), LimitMemory, []string{"512 MiB", "--memory"}},
		// The package's own crashes.
		{"mindmap-mcp-server: a module it cannot import", sessionFailed(OutcomeStartCrashed,
			"Traceback (most recent call last):\n  File \"/work/tree/venv/bin/mindmap-mcp-server\", line 4, in <module>\n    from mindmap_mcp_server.server import main\nModuleNotFoundError: No module named 'mcp.server.fastmcp'. This is mcp 2.x, where FastMCP was renamed to MCPServer\n"), "", nil},
		{"grafana-loki-mcp: an API its dependency removed, which names a variable", sessionFailed(OutcomeStartCrashed,
			"  File \"/work/tree/venv/lib/python3.11/site-packages/fastmcp/server/server.py\", line 251, in _check_removed_kwargs\n    raise TypeError(\nTypeError: FastMCP() no longer accepts `host`. Pass `host` to `run_http_async()`, or set FASTMCP_HOST.\n"), "", nil},
		{"a module not found beside a missing key", sessionFailed(OutcomeStartCrashed,
			"Error: OPENAI_API_KEY environment variable is required\nError: Cannot find module './dist/index.js'\n"), "", nil},
		{"a syntax error", sessionFailed(OutcomeStartCrashed, "/work/tree/node_modules/acme/index.js:3\nimport x from 'y'\n^^^^^^\nSyntaxError: Cannot use import statement outside a module\n"), "", nil},
		{"the variable was given", sessionFailed(OutcomeStartCrashed, "Error: BRAVE_API_KEY environment variable is required\n", "BRAVE_API_KEY"), "", nil},
		{"a value is shown: the variable was there", sessionFailed(OutcomeStartCrashed, "fatal: missing configuration API_TOKEN=[secret:shape:credential-assignment]\n"), "", nil},
		{"an optional key, then a crash of its own", sessionFailed(OutcomeStartCrashed,
			"[tavily-mcp] no TAVILY_API_KEY set; running in keyless mode.\nTypeError: Cannot read properties of undefined (reading 'map')\n"), "", nil},
		{"fetch failed with behaviour watched and no attempt seen", watchedRun(sessionFailed(OutcomeStartCrashed, "TypeError: fetch failed\n")), "", nil},
		{"network tried, then a crash with no network message", watchedRun(sessionFailed(OutcomeStartCrashed,
			"TypeError: Cannot read properties of undefined (reading 'tools')\n"), "telemetry.acme.dev"), "", nil},
		{"a handshake timeout with nothing said", sessionFailed(OutcomeHandshakeTimeout, ""), "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim, ok := ScannerLimit(tc.b)
			if tc.kind == "" {
				if ok {
					t.Fatalf("limit %+v, want the package's own failure", lim)
				}
				return
			}
			if !ok || lim.Kind != tc.kind || lim.Signal != SignalSession {
				t.Fatalf("limit %+v (%v), want kind %s on %s", lim, ok, tc.kind, SignalSession)
			}
			for _, s := range tc.inReason {
				if !strings.Contains(lim.Reason, s) {
					t.Errorf("reason %q lacks %q", lim.Reason, s)
				}
			}
			if lim.Evidence == "" {
				t.Error("no evidence quoted")
			}
		})
	}
}

func TestScannerLimitNone(t *testing.T) {
	b := validBundle()
	if _, ok := ScannerLimit(&b); ok {
		t.Error("a bundle with no install evidence has a limit")
	}
	if _, ok := ScannerLimit(nil); ok {
		t.Error("nil has a limit")
	}
	// A session that was established is never a limit, whatever it printed
	// (server-filesystem prints its usage and waits for roots).
	ok := sessionFailed(OutcomeOK, "Usage: mcp-server-filesystem [allowed-directory] [additional-directories...]\nSecure MCP Filesystem Server running on stdio\n")
	if lim, found := ScannerLimit(ok); found {
		t.Errorf("an established session has limit %+v", lim)
	}
}

func TestLimitApply(t *testing.T) {
	inst := Limit{Signal: SignalInstall, Kind: LimitInterpreter, Reason: "x requires Python>=3.12"}
	sess := Limit{Signal: SignalSession, Kind: LimitConfiguration, Reason: "needs FOO"}
	obs := Signal{State: StateObserved, DurationMS: 7}
	errSig := Signal{State: StateError, Reason: "not run"}
	tests := []struct {
		lim      Limit
		name     string
		s        Signal
		recorded bool
		stopped  bool
	}{
		{inst, SignalInstall, obs, true, true}, // its own signal, whatever was recorded
		{inst, SignalSession, errSig, true, true},
		{inst, SignalBehavior, errSig, true, true},
		{inst, SignalBehavior, obs, true, false}, // what was watched stays evidence
		{inst, SignalOSV, errSig, true, true},
		{inst, SignalSocket, Signal{State: StateUnavailable}, true, false},
		{inst, SignalJudge, Signal{}, false, true},
		{sess, SignalSession, obs, true, true},
		{sess, SignalContract, errSig, true, true},
		{sess, SignalInstall, obs, true, false},
		{sess, SignalBehavior, obs, true, false},
		{sess, SignalOSV, errSig, true, false},
	}
	for _, tc := range tests {
		got, stopped := tc.lim.Apply(tc.name, tc.s, tc.recorded)
		if stopped != tc.stopped {
			t.Errorf("%s limit, %s %s: stopped %v, want %v", tc.lim.Signal, tc.name, tc.s.State, stopped, tc.stopped)
			continue
		}
		if !stopped {
			if got != tc.s {
				t.Errorf("%s: changed a signal it did not stop: %+v", tc.name, got)
			}
			continue
		}
		if got.State != StateNotAssessed || !strings.Contains(got.Reason, tc.lim.Reason) {
			t.Errorf("%s: %+v, want not_assessed with the limit's reason", tc.name, got)
		}
	}
}

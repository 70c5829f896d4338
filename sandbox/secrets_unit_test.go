package sandbox

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// random draws n characters of alphabet. The credential-shaped strings of
// these tests are drawn at run time, as real ones are random: fixed sample
// values (AKIAIOSFODNN7EXAMPLE) are allow-listed by secret scanners, and
// would also make this file a finding of theirs.
func random(t testing.TB, alphabet string, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64    = alnum + "+/"
	upper2 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
)

// TestMaskKnownValues: every --env value and third-party key is replaced,
// every time, by a marker that names it; short values are words.
func TestMaskKnownValues(t *testing.T) {
	m := newMasker([]Secret{
		{Name: "env:DB_URL", Value: "postgres://app:pw-" + "x9y8z7@db/app"},
		{Name: "env:DB_PASSWORD", Value: "pw-" + "x9y8z7"},
		{Name: "env:DEBUG", Value: "true"},
		{Name: "key:socket", Value: "sktsec_" + "q1w2e3r4t5y6u7i8"},
	}, nil)
	tests := []struct{ in, want string }{
		{"connecting to postgres://app:pw-x9y8z7@db/app", "connecting to [secret:env:DB_URL]"},
		{"password pw-x9y8z7, again pw-x9y8z7", "password [secret:env:DB_PASSWORD], again [secret:env:DB_PASSWORD]"},
		{"debug is true", "debug is true"},
		{"Socket key sktsec_q1w2e3r4t5y6u7i8 rejected", "Socket key [secret:key:socket] rejected"},
	}
	for _, tc := range tests {
		if got := m.text(tc.in, "session"); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	rec := m.record()
	if len(rec) != 3 {
		t.Fatalf("record %+v, want the three masked secrets", rec)
	}
	for _, r := range rec {
		if r.Marker == "[secret:env:DB_PASSWORD]" && (r.Count != 2 || r.Where["session"] != 2) {
			t.Errorf("DB_PASSWORD masked %+v, want twice in session", r)
		}
	}
}

// TestMaskShapes: credentials nobody told us about are masked by shape,
// gitleaks' rules and the few they leave, and the text around them stays.
func TestMaskShapes(t *testing.T) {
	awsID := "AKIA" + random(t, upper2, 16)
	awsSecret := random(t, b64, 40)
	pemBody := "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" + random(t, b64, 70) + "\n"
	tests := []struct {
		name, in, secret, keep string
	}{
		{"aws key id", "using " + awsID + " for s3", awsID, "using "},
		{"bare aws secret after its id", awsID + " " + awsSecret, awsSecret, ""},
		{"aws secret by name", "aws_secret_access_key = " + awsSecret, awsSecret, "aws_secret_access_key = "},
		{"github token in an assignment", "GITHUB_TOKEN=ghp_" + random(t, alnum, 36), "ghp_", "GITHUB_TOKEN="},
		{"anthropic key", "key sk-ant-api03-" + random(t, alnum+"-_", 93) + "AA", "sk-ant-api03-", "key "},
		{"npm token", "//registry.npmjs.org/:_authToken=npm_" + random(t, alnum, 36), "npm_", "//registry.npmjs.org/:_authToken="},
		{"bearer credential", "Authorization: Bearer " + random(t, alnum, 40), "", "Authorization: Bearer "},
		{"a private key cut off by a tail", "starting\n-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + pemBody, "PRIVATE KEY", "starting\n"},
		{"a credential assignment a server complains about", "fatal: missing configuration API_TOKEN=abc123secretvalue", "abc123secretvalue", "fatal: missing configuration API_TOKEN="},
		{"a password in a config dump", "DB_PASSWORD: 'Tr0ub4dor&3'", "Tr0ub4dor", "DB_PASSWORD: '"},
		{"a generic secret with entropy", `config {"apiKey":"` + random(t, alnum, 32) + `"}`, "", `config {"apiKey":"`},
		// Values that once slipped through, fixed rather than random.
		{"aws secret by name starting with a slash", "aws_secret_access_key = /4+BC+FplO9ZghF8L2dFRh6ni3doRb7qAd9keDsJ", "/4+BC+FplO9ZghF8L2dFRh6ni3doRb7qAd9keDsJ", "aws_secret_access_key = "},
		{"an api key holding a stop word", `config {"apiKey":"JSYEStweVBsVlodQhGmToacBnyIfaqwx"}`, "JSYEStweVBsVlodQhGmToacBnyIfaqwx", `config {"apiKey":"`},
	}
	// In parallel: every scan's masker shares one detector.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := newMasker(nil, nil).text(tc.in, "session")
			if !strings.Contains(got, "[secret:shape:") || !strings.HasPrefix(got, tc.keep) || (tc.secret != "" && strings.Contains(got, tc.secret)) {
				t.Errorf("text(%q) = %q, want the secret masked and %q kept", tc.in, got, tc.keep)
			}
		})
	}
}

// TestMaskLeavesOrdinaryText: ordinary words are never masked, among them
// what servers print and what the real servers of the regression set list.
func TestMaskLeavesOrdinaryText(t *testing.T) {
	lines := []string{
		"Secure MCP Filesystem Server running on stdio",
		"Allowed directories: [ '/tmp', '/work/tree' ]",
		"sh: 1: exec: node-gyp-build-test: not found",
		"/bin/sh: 1: exec: /work/tree/node_modules/.bin/mcp-server: not found",
		"GET /health 200 3.214 ms - 15",
		"request 3f2c9a1e-8b7d-4c2a-9f1e-2b3c4d5e6f70 done in 41ms",
		"commit e3b0c44298fc1c149afbf4c8996fb92427ae41e4",
		"integrity sha512-BD6Gu1qiyexMJQ/3vSBR01cuItrNM89rrh3x07OF0+YJAm8lb/+jvfIy5qSyy8tH10CYZmSspXLvvjLzsjQ3rw==",
		"Token refresh scheduled in 300s",
		"password is required for the admin tool",
		"password: hunter2",
		"Set GITHUB_PERSONAL_ACCESS_TOKEN to use this server",
		"The API key to use; defaults to the TAVILY_API_KEY environment variable",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUFakeCertificateBody\n-----END CERTIFICATE-----",
		"npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
		"node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'zod'",
		"gyp http GET https://nodejs.org/download/release/v22.23.5/node-v22.23.5-headers.tar.gz",
		"Error: API_KEY: undefined",
		"GITHUB_TOKEN: required",
		"export API_TOKEN=${API_TOKEN}",
		"SLACK_BOT_TOKEN=<your token>",
	}
	m := newMasker([]Secret{{Name: "env:X", Value: "unrelated-value"}}, nil)
	for _, line := range lines {
		if got := m.text(line, "session"); got != line {
			t.Errorf("masked ordinary text\n-%q\n+%q", line, got)
		}
	}
	// The real servers' listings, as they sent them: a masked word there
	// would change a contract that holds no secret.
	files, err := filepath.Glob(filepath.Join("testdata", "realservers", "*.inspector.json"))
	if err != nil || len(files) < 12 {
		t.Fatalf("reference listings: %v, %d files", err, len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Wire map[string]json.RawMessage `json:"wire_results"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		for method, raw := range rec.Wire {
			if got := m.json(raw, "contract"); string(got) != string(raw) {
				t.Errorf("%s %s: masking changed a listing that holds no secret: %v", filepath.Base(f), method, m.record())
			}
		}
	}
}

// TestMaskResult: a server that echoes an --env value into every part of
// its contract, its stderr and a script's output has none of it left,
// each place says which secret it was, the schema hash is over the masked
// surface, and the masking is recorded.
func TestMaskResult(t *testing.T) {
	secret := "tok-" + random(t, alnum, 24)
	ghp := "ghp_" + random(t, alnum, 36)
	c := &contract.Contract{
		Instructions: "Use token " + secret + " for everything.",
		Tools: []contract.Tool{{Name: "t", Description: "Auth with " + secret,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","default":"` + secret + `","description":"defaults to ` + secret + `"}}}`)}},
		Resources: []contract.Resource{{URI: "mem://" + secret, Name: secret}},
		Prompts:   []contract.Prompt{{Name: "p", Description: secret, Arguments: []contract.PromptArgument{}}},
	}
	if err := contract.Normalize(c); err != nil {
		t.Fatal(err)
	}
	unmasked := c.SchemaHash
	res := &Result{
		Contract: c,
		Session:  &evidence.Session{StderrTail: "started with API_TOKEN=" + secret, NonJSONSample: []string{secret}},
		Install:  &evidence.Install{Scripts: []evidence.Script{{Package: "x", OutputTail: "GITHUB_TOKEN=" + ghp + " leaked"}}},
	}
	m := newMasker([]Secret{{Name: "env:API_TOKEN", Value: secret}}, nil)
	if err := m.result(res); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) || strings.Contains(string(data), ghp) {
		t.Fatalf("a secret survived: %s", data)
	}
	if !strings.Contains(res.Contract.Instructions, "[secret:env:API_TOKEN]") || !strings.Contains(string(res.Contract.Tools[0].InputSchema), "[secret:env:API_TOKEN]") {
		t.Errorf("contract %+v: the markers do not say which secret it was", res.Contract)
	}
	if h, _ := contract.Hash(res.Contract); h != res.Contract.SchemaHash || h == unmasked {
		t.Errorf("schema hash %s, want the hash of the masked surface %s", res.Contract.SchemaHash, h)
	}
	wheres := map[string]bool{}
	for _, r := range res.Masking {
		for w := range r.Where {
			wheres[r.Marker+" "+w] = true
		}
	}
	for _, want := range []string{"[secret:env:API_TOKEN] contract", "[secret:env:API_TOKEN] session", "[secret:shape:github-pat] install.scripts"} {
		if !wheres[want] {
			t.Errorf("masking record %+v lacks %s", res.Masking, want)
		}
	}
}

// BenchmarkMaskText: one stderr tail of 4 KiB with no secret in it, the
// common case, through the whole masker.
func BenchmarkMaskText(b *testing.B) {
	m := newMasker([]Secret{{Name: "env:API_TOKEN", Value: "vmcp-env-0123456789abcdef"}}, nil)
	line := "2026-12-01T10:15:21Z info server listening on stdio; tools=14 prompts=2 resources=3\n"
	text := strings.Repeat(line, 4096/len(line))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		m.text(text, "session")
	}
}

// TestContractCopyMasked: the contract handed on early (to the judge) is
// masked and hashed as the returned one will be, and the original is left
// for the end-of-scan masking, which then gives the same surface.
func TestContractCopyMasked(t *testing.T) {
	secret := "sk-live-0123456789abcdef0123"
	c := &contract.Contract{Tools: []contract.Tool{{Name: "lookup", Description: "uses key " + secret}}}
	m := newMasker([]Secret{{Name: "env:API_KEY", Value: secret}}, nil)
	early, err := m.contractCopy(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(early.Tools[0].Description, secret) || early.SchemaHash == "" {
		t.Fatalf("early copy: %q, hash %q", early.Tools[0].Description, early.SchemaHash)
	}
	if !strings.Contains(c.Tools[0].Description, secret) {
		t.Fatal("the copy changed the original")
	}
	res := &Result{Contract: c}
	if err := m.result(res); err != nil {
		t.Fatal(err)
	}
	if res.Contract.SchemaHash != early.SchemaHash || res.Contract.Tools[0].Description != early.Tools[0].Description {
		t.Errorf("returned %q (%s), early %q (%s)", res.Contract.Tools[0].Description, res.Contract.SchemaHash, early.Tools[0].Description, early.SchemaHash)
	}
	for _, mk := range res.Masking {
		if mk.Count != 1 {
			t.Errorf("masking counted %+v: the early copy must not count", mk)
		}
	}
}

// TestMaskSecretFragments: a known secret printed cut, its first 20
// characters, its last 14 or 12 of its middle, is masked in text and in
// JSON values, under the secret's marker; 11 characters are not masked.
func TestMaskSecretFragments(t *testing.T) {
	secret := "tk" + random(t, alnum, 34) // 36 characters
	m := newMasker([]Secret{{Name: "env:API_TOKEN", Value: secret}}, nil)
	const marker = "[secret:env:API_TOKEN]"
	for _, tc := range []struct {
		name, part string
	}{
		{"whole", secret},
		{"prefix of 20", secret[:20]},
		{"suffix of 14", secret[22:]},
		{"middle of 12", secret[10:22]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "token " + tc.part + "... rejected"
			if got, want := m.text(in, "session"), "token "+marker+"... rejected"; got != want {
				t.Errorf("text(%q) = %q, want %q", in, got, want)
			}
			raw := json.RawMessage(`{"type":"string","description":"uses ` + tc.part + `","default":"` + tc.part + `"}`)
			got := string(m.json(raw, "contract"))
			if strings.Contains(got, tc.part) || strings.Count(got, marker) != 2 || !strings.Contains(got, `"default":`) {
				t.Errorf("json(%s) = %s, want both values masked", raw, got)
			}
		})
	}
	// Eleven characters are too few to say they are the secret's.
	short := "token " + secret[:11] + " and " + secret[25:] + "."
	if got := m.text(short, "session"); got != short {
		t.Errorf("text(%q) = %q, want 11 characters left as they are", short, got)
	}
	// Two cut pieces in one text, and a piece that runs on into other text.
	two := secret[:13] + " " + secret[20:] + "xyz"
	if got, want := m.text(two, "session"), marker+" "+marker+"xyz"; got != want {
		t.Errorf("text(%q) = %q, want %q", two, got, want)
	}
}

// TestMaskLeavesConfiguration: an --env value that is not secret-shaped
// under a name that is not credential-shaped is configuration: it is not
// masked anywhere, so a real server's contract scanned with it equals the
// Inspector's (CLICKHOUSE_USER=default once rewrote every JSON-Schema
// "default" key; AWS_REGION=us-east-1 rewrote strings of two contracts).
func TestMaskLeavesConfiguration(t *testing.T) {
	env := []Secret{
		{Name: "env:CLICKHOUSE_USER", Value: "default"},
		{Name: "env:AWS_REGION", Value: "us-east-1"},
		{Name: "env:DATABASE_NAME", Value: "production"},
		{Name: "env:S3_BUCKET", Value: "mybucket2024proddata"},
		{Name: "env:API_BASE_URL", Value: "https://api.example.com/v1"},
		{Name: "env:LOG_LEVEL", Value: "verbose"},
	}
	m := newMasker(env, nil)
	for _, in := range []string{
		`{"type":"object","properties":{"user":{"type":"string","default":"default"},"region":{"type":"string","enum":["us-east-1","eu-west-1"],"default":"us-east-1"}}}`,
		`connected as default to production in us-east-1 via https://api.example.com/v1`,
	} {
		if got := string(m.json(json.RawMessage(in), "contract")); got != in {
			t.Errorf("masked configuration\n-%s\n+%s", in, got)
		}
		if got := m.text(in, "session"); got != in {
			t.Errorf("masked configuration\n-%s\n+%s", in, got)
		}
	}
	// The real servers' contracts, as the masker returns them and as it
	// hands them on early, equal the Inspector's, byte for byte.
	files, err := filepath.Glob(filepath.Join("testdata", "realservers", "*.inspector.json"))
	if err != nil || len(files) < 12 {
		t.Fatalf("reference listings: %v, %d files", err, len(files))
	}
	for _, f := range files {
		c := realContract(t, f)
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		early, err := m.contractCopy(c)
		if err != nil {
			t.Fatal(err)
		}
		res := &Result{Contract: c}
		if err := m.result(res); err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string]*contract.Contract{"returned": res.Contract, "early": early} {
			if data, _ := json.Marshal(got); string(data) != string(want) {
				t.Errorf("%s: the %s contract differs from the Inspector's: %v", filepath.Base(f), name, res.Masking)
			}
		}
	}
	if rec := m.record(); len(rec) != 0 {
		t.Errorf("masked configuration: %+v", rec)
	}
}

// realContract builds the contract of a recorded real server from the tools
// and prompts it sent the Inspector, normalised.
func realContract(t *testing.T, file string) *contract.Contract {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Wire map[string]json.RawMessage `json:"wire_results"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	c := &contract.Contract{Tools: []contract.Tool{}, Prompts: []contract.Prompt{}, Resources: []contract.Resource{}, Templates: []contract.Template{}}
	var tools []struct {
		Tools []struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(rec.Wire["tools/list"], &tools) // null or an error when not listed
	for _, p := range tools {
		for _, tl := range p.Tools {
			c.Tools = append(c.Tools, contract.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema, OutputSchema: tl.OutputSchema})
		}
	}
	var prompts []struct {
		Prompts []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"prompts"`
	}
	_ = json.Unmarshal(rec.Wire["prompts/list"], &prompts)
	for _, p := range prompts {
		for _, pr := range p.Prompts {
			c.Prompts = append(c.Prompts, contract.Prompt{Name: pr.Name, Description: pr.Description, Arguments: []contract.PromptArgument{}})
		}
	}
	if err := contract.Normalize(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMaskSecretShapedValue: a value shaped like a credential is masked
// whatever its name, and a credential's name makes any value of 6
// characters or more a secret.
func TestMaskSecretShapedValue(t *testing.T) {
	ghp := "ghp_" + random(t, alnum, 36)
	generated := random(t, alnum, 24)
	m := newMasker([]Secret{
		{Name: "env:MY_VAR", Value: ghp},
		{Name: "env:UPSTREAM", Value: "postgres://app:" + "s3cr3t-pw@db:5432/app"},
		{Name: "env:SERVICE_ID", Value: "svc-" + generated},
		{Name: "env:CLICKHOUSE_PASSWORD", Value: "default"},
	}, nil)
	for _, tc := range []struct{ in, want string }{
		{"using " + ghp, "using [secret:env:MY_VAR]"},
		{"cut: " + ghp[:16], "cut: [secret:env:MY_VAR]"},
		{"dsn postgres://app:s3cr3t-pw@db:5432/app", "dsn [secret:env:UPSTREAM]"},
		{"id svc-" + generated, "id [secret:env:SERVICE_ID]"},
		{"password default", "password [secret:env:CLICKHOUSE_PASSWORD]"},
	} {
		if got := m.text(tc.in, "session"); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMaskNeverKeys: JSON object keys are left as sent, even when one is a
// secret or holds one; the values are masked.
func TestMaskNeverKeys(t *testing.T) {
	secret := random(t, alnum, 30)
	m := newMasker([]Secret{
		{Name: "env:API_TOKEN", Value: secret},
		{Name: "env:CLICKHOUSE_PASSWORD", Value: "default"},
	}, nil)
	in := `{"` + secret + `":"` + secret + `","default":"default","x-` + secret[:14] + `":{"default":1}}`
	want := `{"` + secret + `":"[secret:env:API_TOKEN]","default":"[secret:env:CLICKHOUSE_PASSWORD]","x-` + secret[:14] + `":{"default":1}}`
	got := m.json(json.RawMessage(in), "contract")
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil || !reflect.DeepEqual(g, w) {
		t.Errorf("json(%s)\n= %s\nwant %s", in, got, want)
	}
}

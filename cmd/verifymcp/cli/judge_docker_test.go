//go:build docker

package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/judge/judgetest"
)

// judgeResult is the report's judge result, as the test reads it.
type judgeResult struct {
	Model    string `json:"model"`
	CacheHit bool   `json:"cache_hit"`
	Rubric   string `json:"rubric_version"`
	Verdicts []struct{ Tool, Code, Evidence string }
}

// TestScanJudge scans a real pinned server with the LLM judge played by a
// local OpenAI-compatible server: the verdict is scored and reported with
// its quoted evidence; a second scan of the same surface is answered from
// the cache with no call; with no key and no cached verdict the judge is
// unavailable and says so; --skip judge leaves it not assessed.
func TestScanJudge(t *testing.T) {
	const key = "sk-e2eJudgeK3yN0tR3al0000"
	fake := judgetest.New(judgetest.Always(judgetest.Reply{Content: judgetest.Verdicts(judgetest.Verdict{
		Tool: "delete_entities", Code: "pkg.judge.mismatch",
		Evidence:  "Delete multiple entities",
		Rationale: "destructive tool; checked that the verdict reaches the report",
	})}))
	defer fake.Close()
	dir := t.TempDir()
	target := "npm:@modelcontextprotocol/server-memory@2026.8.31"
	type judgeReport struct {
		Signals map[string]struct {
			State, Reason, Endpoint string
			Cached                  bool
		} `json:"signals"`
		JudgeEntry struct {
			Result *judgeResult `json:"result"`
		} `json:"judge"`
		Judge      *judgeResult                               `json:"-"`
		Findings   []struct{ Code, Subject, Evidence string } `json:"findings"`
		Dimensions []struct{ ID, State string }               `json:"dimensions"`
	}
	scan := func(t *testing.T, data string, withKey bool, extra ...string) judgeReport {
		t.Helper()
		env := []string{"VERIFYMCP_CONFIG=", "VERIFYMCP_JUDGE_ENDPOINT=" + fake.BaseURL(), "VERIFYMCP_JUDGE_MODEL=e2e-model", "VERIFYMCP_JUDGE_API_KEY="}
		if withKey {
			env = append(env, "VERIFYMCP_JUDGE_API_KEY="+key)
		}
		args := append([]string{"scan", "--format", "json", "--no-behavior", "--skip", "osv,socket,github,dnssec", "--data-dir", data}, extra...)
		res := verifymcp(t, env, append(args, target)...)
		if res.code != 0 {
			t.Fatalf("scan: exit %d\n%s", res.code, res.stderr)
		}
		if strings.Contains(res.stdout+res.stderr, key) {
			t.Fatal("the judge's key appears in the output")
		}
		var r judgeReport
		if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
			t.Fatal(err)
		}
		r.Judge = r.JudgeEntry.Result
		return r
	}
	has := func(r judgeReport, code, subject string) bool {
		for _, f := range r.Findings {
			if f.Code == code && (subject == "" || f.Subject == subject) {
				return true
			}
		}
		return false
	}
	data := filepath.Join(dir, "a")
	t.Run("verdict scored", func(t *testing.T) {
		r := scan(t, data, true)
		if s := r.Signals["judge"]; s.State != "observed" || s.Cached || !strings.HasPrefix(s.Endpoint, fake.URL()) {
			t.Errorf("judge signal: %+v", s)
		}
		if r.Judge == nil || r.Judge.Model != "e2e-model" || r.Judge.CacheHit || len(r.Judge.Verdicts) != 1 || r.Judge.Verdicts[0].Evidence != "Delete multiple entities" {
			t.Errorf("judge section: %+v", r.Judge)
		}
		if !has(r, "pkg.judge.mismatch", "delete_entities") {
			t.Errorf("the verdict is not a finding: %+v", r.Findings)
		}
		if fake.Count() != 1 {
			t.Errorf("judge calls: %d, want 1", fake.Count())
		}
	})
	t.Run("cache hit makes no call", func(t *testing.T) {
		r := scan(t, data, true)
		if s := r.Signals["judge"]; s.State != "observed" || !s.Cached || r.Judge == nil || !r.Judge.CacheHit {
			t.Errorf("second scan: signal %+v judge %+v", s, r.Judge)
		}
		if !has(r, "pkg.judge.mismatch", "delete_entities") {
			t.Error("the cached verdict is not a finding")
		}
		if fake.Count() != 1 {
			t.Errorf("judge calls after a second identical scan: %d, want 1", fake.Count())
		}
	})
	t.Run("no key", func(t *testing.T) {
		r := scan(t, filepath.Join(dir, "b"), false)
		if s := r.Signals["judge"]; s.State != "unavailable" || r.Judge != nil {
			t.Errorf("judge without a key: %+v", s)
		}
		// A judge that was not consulted is a signal state, not a finding
		// (rubric v11), and its dimension keeps its zero point.
		if has(r, "pkg.judge.unverified", "") || has(r, "pkg.judge.mismatch", "") {
			t.Errorf("findings without a judge: %+v", r.Findings)
		}
		for _, d := range r.Dimensions {
			if d.ID == "tool_capability_clarity" && d.State != "zero_point" {
				t.Errorf("tool_capability_clarity without a judge: %s, want the zero point", d.State)
			}
		}
		if fake.Count() != 1 {
			t.Errorf("a judge without a key was called")
		}
	})
	t.Run("skipped", func(t *testing.T) {
		r := scan(t, filepath.Join(dir, "c"), true, "--skip", "judge")
		if s := r.Signals["judge"]; s.State != "not_assessed" || has(r, "pkg.judge.unverified", "") {
			t.Errorf("--skip judge: %+v", s)
		}
	})
}

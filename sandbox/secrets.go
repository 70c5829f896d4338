package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox/canary"
)

// Secret is a value that must never be stored, reported or sent to the
// judge: an --env value the operator typed, or a credential of the
// operator's for a third party. The sandbox masks it in everything it
// returns, even when the package repeats it.
type Secret struct {
	// Name says which secret it was, as its marker shows it:
	// "env:GITHUB_TOKEN", "key:socket".
	Name  string
	Value string
}

// minSecretLen is the shortest known value that is masked: shorter ones
// (an --env value of "1" or "true") are words, not secrets, and masking
// them would garble ordinary text.
const minSecretLen = 6

// masker removes secrets from every text the sandbox captured, on one
// path: the exact known values (--env values, third-party keys) and the
// run's canaries in every encoding canary.Set.MaskAll knows, each replaced
// by a marker that names it ([secret:env:NAME], [canary:github_token]);
// then anything shaped like a credential, by gitleaks' rules
// ([secret:shape:<rule>]). It counts what it masked, by marker.
type masker struct {
	known  []Secret         // longest first
	shapes *detect.Detector // nil when the rules did not load

	mu     sync.Mutex
	canary *canary.Set               // set once the run's canaries exist
	counts map[string]map[string]int // marker -> where -> count
}

// setCanary adds the run's canaries to what is masked.
func (m *masker) setCanary(set *canary.Set) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.canary = set
}

func (m *masker) canaries() *canary.Set {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.canary
}

func newMasker(known []Secret, set *canary.Set) *masker {
	m := &masker{canary: set, counts: map[string]map[string]int{}}
	for _, s := range known {
		if len(s.Value) >= minSecretLen {
			m.known = append(m.known, s)
		}
	}
	sort.SliceStable(m.known, func(i, j int) bool { return len(m.known[i].Value) > len(m.known[j].Value) })
	if d, err := shapeDetector(); err == nil {
		m.shapes = d
	}
	return m
}

// shapeDetector builds one gitleaks detector over its default rule set,
// shared by every scan of the process: its keyword trie alone is about
// 10 MB, once per process rather than once per scan in flight. Sharing is
// safe: DetectString reads the rules and the trie, keeps what it finds to
// itself (only DetectSource and DetectFiles collect findings in the
// detector) and changes nothing but an atomic byte count. gitleaks logs
// to stderr through a global logger; stderr is the operator's, so it is
// silenced.
var shapeDetector = sync.OnceValues(func() (*detect.Detector, error) {
	logging.Logger = zerolog.Nop()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("secret rules: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("secret rules: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("secret rules: %w", err)
	}
	return detect.NewDetector(cfg), nil
})

func (m *masker) count(marker, where string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts[marker] == nil {
		m.counts[marker] = map[string]int{}
	}
	m.counts[marker][where]++
}

// text returns s with every secret masked; where names the part of the
// evidence it came from, for the record of what was masked.
func (m *masker) text(s, where string) string {
	if m == nil || s == "" {
		return s
	}
	for _, k := range m.known {
		if n := strings.Count(s, k.Value); n > 0 {
			marker := "[secret:" + k.Name + "]"
			s = strings.ReplaceAll(s, k.Value, marker)
			for range n {
				m.count(marker, where)
			}
		}
	}
	if set := m.canaries(); set != nil {
		if hits := set.Scan([]byte(s)); len(hits) > 0 {
			for _, h := range hits {
				m.count("[canary:"+h.Value.Kind+"]", where)
			}
			s = string(set.MaskAll([]byte(s)))
		}
	}
	if m.shapes != nil {
		for _, f := range m.shapes.DetectString(s) {
			if f.Secret == "" || !strings.Contains(s, f.Secret) {
				continue
			}
			marker := "[secret:shape:" + f.RuleID + "]"
			m.count(marker, where)
			s = strings.ReplaceAll(s, f.Secret, marker)
		}
	}
	for _, r := range extraShapes {
		s = r.re.ReplaceAllStringFunc(s, func(match string) string {
			sub := r.re.FindStringSubmatchIndex(match)
			if r.value != nil && len(sub) >= 4 && sub[2] >= 0 && !r.value(match[sub[2]:sub[3]]) {
				return match
			}
			marker := "[secret:shape:" + r.id + "]"
			m.count(marker, where)
			if len(sub) >= 4 && sub[2] >= 0 {
				// Keep the label (Bearer, the key id), mask the value.
				return match[:sub[2]] + marker + match[sub[3]:]
			}
			return marker
		})
	}
	return s
}

// extraShapes are what gitleaks' rules leave, seen in what servers print:
// each masks its first group, or the whole match when it has none.
var extraShapes = []struct {
	id string
	re *regexp.Regexp
	// value, when set, says whether the first group is a secret.
	value func(string) bool
}{
	// A bare AWS secret access key after its key id: gitleaks finds the
	// id (or its own marker stands there by now) but not the 40-character
	// secret when no keyword names it.
	{"aws-secret-access-key", regexp.MustCompile(`(?:\b(?:AKIA|ASIA)[A-Z2-7]{16}\b|\[secret:shape:aws-access-token\])[^A-Za-z0-9+/]{1,40}([A-Za-z0-9+/]{40})(?:[^A-Za-z0-9+/=]|$)`), nil},
	// An AWS secret access key named by its key: gitleaks' rules miss one
	// whose value begins with "/" or "+", which a real key can.
	{"aws-secret-access-key", regexp.MustCompile(`(?i)\baws_?secret_?access_?key["']?\s*[=:]\s*["']?([A-Za-z0-9+/]{40})(?:[^A-Za-z0-9+/=]|$)`), nil},
	// A private key whose END line a log tail or a bound cut off, which
	// gitleaks' private-key rule needs.
	{"private-key", regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY-----[A-Za-z0-9+/=\s]*`), nil},
	// An environment-style assignment to a credential's name, as a server
	// prints its configuration or complains about it: the value of
	// API_TOKEN=..., DB_PASSWORD: ... (upper-case names only, so prose is
	// left alone; a value that is a reference, $X or <x>, is no secret).
	// The value must mix letters and digits, so that API_KEY: undefined
	// stays as it is.
	{"credential-assignment", regexp.MustCompile(`\b[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS)\s*[=:]\s*["']?([^\s"'$<\[][^\s"']{7,})`), lettersAndDigits},
	// A JSON member named for a credential ("apiKey": "..."), as a server
	// echoes its configuration: gitleaks' generic rule drops a value that
	// holds one of its stop words, which a random key often does.
	{"credential-member", regexp.MustCompile(`(?i)"(?:api_?key|x-api-key|access_?token|auth_?token|client_?secret|secret_?key|private_?key|password|secret|token)"\s*:\s*"([A-Za-z0-9+/_.~-]{16,}=*)"`), mixedValue},
	// An HTTP bearer credential.
	{"bearer", regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`), nil},
}

// mixedValue says whether a value looks generated: letters with digits,
// or letters of both cases.
func mixedValue(v string) bool {
	upper := strings.IndexFunc(v, unicode.IsUpper) >= 0
	lower := strings.IndexFunc(v, unicode.IsLower) >= 0
	return lettersAndDigits(v) || upper && lower
}

func lettersAndDigits(v string) bool {
	return strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, unicode.IsLetter) >= 0
}

// json masks every string of a JSON value (object keys too). It returns
// the value unchanged when nothing in it was masked, so a raw value keeps
// its bytes as sent.
func (m *masker) json(raw json.RawMessage, where string) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(m.text(string(raw), where))
	}
	changed := false
	v = m.walk(v, where, &changed)
	if !changed {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func (m *masker) walk(v any, where string, changed *bool) any {
	switch x := v.(type) {
	case string:
		if y := m.text(x, where); y != x {
			*changed = true
			return y
		}
		return x
	case []any:
		for i := range x {
			x[i] = m.walk(x[i], where, changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			nk := m.text(k, where)
			if nk != k {
				*changed = true
			}
			out[nk] = m.walk(e, where, changed)
		}
		return out
	}
	return v
}

// value masks every string of v, a pointer to evidence, in place, through
// its JSON form: one path for every field, present and future. It leaves v
// untouched when nothing was masked.
func (m *masker) value(v any, where string) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("mask %s: %w", where, err)
	}
	masked := m.json(data, where)
	if bytes.Equal(masked, data) {
		return nil
	}
	// The masked form replaces the evidence: decode into a zeroed value so
	// that no field (a map) keeps what was there before.
	reflect.ValueOf(v).Elem().SetZero()
	if err := json.Unmarshal(masked, v); err != nil {
		return fmt.Errorf("mask %s: %w", where, err)
	}
	return nil
}

// contractCopy returns a deep copy of c, masked and normalised as result
// will mask c, counted apart (the copy is not evidence).
func (m *masker) contractCopy(c *contract.Contract) (*contract.Contract, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("copy contract: %w", err)
	}
	var out contract.Contract
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("copy contract: %w", err)
	}
	if err := m.fork().value(&out, "contract"); err != nil {
		return nil, err
	}
	if err := contract.Normalize(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// result masks everything in res that the package or the server could
// have written: the contract (whose schema hash is then computed again,
// over the masked surface), the session's texts, the install's scripts and
// errors, and the behaviour events. What the sandbox itself wrote (the
// integrity, the watches, the canaries' kinds and places) is left alone.
func (m *masker) result(res *Result) error {
	if c := res.Contract; c != nil {
		if err := m.value(c, "contract"); err != nil {
			return err
		}
		if err := contract.Normalize(c); err != nil {
			return err
		}
	}
	if s := res.Session; s != nil {
		if err := m.value(s, "session"); err != nil {
			return err
		}
	}
	if in := res.Install; in != nil {
		in.Error = m.text(in.Error, "install")
		in.LogTail = m.text(in.LogTail, "install")
		if err := m.value(&in.Scripts, "install.scripts"); err != nil {
			return err
		}
	}
	if b := res.Behavior; b != nil {
		for _, part := range []struct {
			v     any
			where string
		}{{&b.Network, "behavior.network"}, {&b.Processes, "behavior.processes"}, {&b.Files, "behavior.files"}, {&b.Exfiltration, "behavior.exfiltration"}} {
			if err := m.value(part.v, part.where); err != nil {
				return err
			}
		}
	}
	res.Masking = m.record()
	return nil
}

// record returns what was masked, by marker, for the evidence.
func (m *masker) record() []evidence.Masking {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]evidence.Masking, 0, len(m.counts))
	for marker, wheres := range m.counts {
		mk := evidence.Masking{Marker: marker, Where: map[string]int{}}
		for w, n := range wheres {
			mk.Where[w] = n
			mk.Count += n
		}
		out = append(out, mk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Marker < out[j].Marker })
	return out
}

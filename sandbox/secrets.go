package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
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

// minFragment is the shortest part of a known secret that is masked where
// it stands cut (a prefix, a suffix, a middle): as many characters as the
// canary search needs of a canary (canary.MinChunk), for the same reason.
// A known secret shorter than this is masked only whole.
const minFragment = canary.MinChunk

// masker removes secrets from every text the sandbox captured, on one
// path: the known secrets (the operator's keys, and the --env values that
// are secrets, see isSecret), whole or any run of minFragment characters
// of them, and the run's canaries in every encoding canary.Set.MaskAll
// knows, each replaced by a marker that names it ([secret:env:NAME],
// [canary:github_token]); then anything shaped like a credential, by
// gitleaks' rules ([secret:shape:<rule>]). It counts what it masked, by
// marker. JSON object keys are never masked.
type masker struct {
	known  knownSecrets
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
	shapes, err := shapeDetector()
	if err == nil {
		m.shapes = shapes
	}
	var keep []Secret
	for _, s := range known {
		if len(s.Value) >= minSecretLen && isSecret(s, shapes) {
			keep = append(keep, s)
		}
	}
	m.known = indexSecrets(keep)
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
	if spans := m.known.find(s); len(spans) > 0 {
		var b strings.Builder
		prev := 0
		for _, sp := range spans {
			marker := "[secret:" + m.known.list[sp.k].Name + "]"
			b.WriteString(s[prev:sp.a])
			b.WriteString(marker)
			prev = sp.b
			m.count(marker, where)
		}
		b.WriteString(s[prev:])
		s = b.String()
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

// json masks every string value of a JSON value; object keys are never
// masked (a key is the server's vocabulary, "default", "region", and is
// left as sent even when it equals a secret). It returns
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
		for k, e := range x {
			x[k] = m.walk(e, where, changed)
		}
		return x
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
	if e := res.Exercise; e != nil {
		if err := m.value(e, "exercise"); err != nil {
			return err
		}
	}
	if sh := res.Shipped; sh != nil {
		if err := m.value(sh, "shipped"); err != nil {
			return err
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

// isSecret says whether a known value is a secret to mask. The operator's
// keys always are. An --env value ("env:NAME") is a secret when its name is
// credential-shaped (credentialName) or its value is secret-shaped
// (secretValue); otherwise it is configuration (CLICKHOUSE_USER=default,
// AWS_REGION=us-east-1), left as it is wherever it appears, as the server's
// own contract holds it. shapes may be nil.
func isSecret(s Secret, shapes *detect.Detector) bool {
	name, ok := strings.CutPrefix(s.Name, "env:")
	if !ok {
		return true
	}
	return credentialName(name) || secretValue(s.Value, shapes)
}

// credentialWords are the parts of an environment variable's name that say
// it holds a credential: API_TOKEN, DB_PASSWORD, AWS_ACCESS_KEY_ID,
// SESSION_COOKIE, DATABASE_DSN, MONGO_CONNECTION_STRING.
var credentialWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "KEY", "AUTH", "CREDENTIAL",
	"PRIVATE", "SESSION", "COOKIE", "DSN", "CONN", "SALT", "SIGNING",
}

// credentialName says whether an environment variable's name is
// credential-shaped: it holds one of credentialWords, in any case.
func credentialName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// secretValue says whether a value is secret-shaped whatever its name: a
// credential by gitleaks' rules (ghp_..., npm_..., AKIA..., sk-ant-...), a
// URL that carries a password (postgres://user:pw@host/db), or a run of 16
// letters and digits or more that looks generated: letters and digits, or
// both cases, that change class at least once every five characters
// (Z9kq2LmN8xP4rT7v, a hex digest), which words with a number in them
// (mybucket2024proddata) do not.
func secretValue(v string, shapes *detect.Detector) bool {
	if shapes != nil && len(shapes.DetectString(v)) > 0 {
		return true
	}
	if strings.Contains(v, "://") {
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "" {
				return true
			}
		}
	}
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && isAlnum(v[j]) {
			j++
		}
		if run := v[i:j]; len(run) >= 16 && mixedValue(run) && classChanges(run)*5 >= len(run) {
			return true
		}
		i = j + 1
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// classChanges counts where run, of ASCII letters and digits, changes from
// a digit, a lower-case or an upper-case letter to another of these.
func classChanges(run string) int {
	class := func(c byte) int {
		switch {
		case c >= '0' && c <= '9':
			return 0
		case c >= 'a' && c <= 'z':
			return 1
		}
		return 2
	}
	n := 0
	for i := 1; i < len(run); i++ {
		if class(run[i]) != class(run[i-1]) {
			n++
		}
	}
	return n
}

// knownSecrets are the known secrets to mask and their index: every run of
// minFragment characters of each secret at least that long, keyed by its
// first eight bytes, so that a text is scanned once whatever the number of
// secrets. Secrets shorter than minFragment are searched for whole. It is
// read-only once built, and shared by a masker's forks.
type knownSecrets struct {
	list  []Secret
	short []int                  // indexes in list of the secrets shorter than minFragment
	grams map[uint64][]gramPlace // first 8 bytes of a fragment -> where it is
}

// gramPlace is one fragment of minFragment characters: secret k, from off.
type gramPlace struct{ k, off int }

// span is a masked part of a text, [a, b), of secret k.
type span struct{ a, b, k int }

func gramKey(s string) uint64 { return binary.LittleEndian.Uint64([]byte(s[:8])) }

func indexSecrets(list []Secret) knownSecrets {
	ks := knownSecrets{list: list, grams: map[uint64][]gramPlace{}}
	for k, s := range list {
		if len(s.Value) < minFragment {
			ks.short = append(ks.short, k)
			continue
		}
		for off := 0; off+minFragment <= len(s.Value); off++ {
			key := gramKey(s.Value[off:])
			ks.grams[key] = append(ks.grams[key], gramPlace{k, off})
		}
	}
	return ks
}

// find returns the parts of s to mask, in order and apart: every run of
// at least minFragment characters that some secret also holds, as long as
// it goes on agreeing with that secret, and every whole occurrence of a
// shorter secret. Where two overlap they are masked as one, under the
// secret of the longer.
func (ks knownSecrets) find(s string) []span {
	if len(ks.list) == 0 || s == "" {
		return nil
	}
	var spans []span
	if len(ks.grams) > 0 {
		cover := 0 // s[:cover] is in a span found already
		for i := 0; i+minFragment <= len(s); i++ {
			places, ok := ks.grams[gramKey(s[i:])]
			if !ok {
				continue
			}
			best := span{a: i, b: -1}
			for _, p := range places {
				v := ks.list[p.k].Value
				if s[i+8:i+minFragment] != v[p.off+8:p.off+minFragment] {
					continue
				}
				end, o := i+minFragment, p.off+minFragment
				for end < len(s) && o < len(v) && s[end] == v[o] {
					end++
					o++
				}
				if end > best.b {
					best.b, best.k = end, p.k
				}
			}
			if best.b > cover {
				spans = append(spans, best)
				cover = best.b
			}
		}
	}
	for _, k := range ks.short {
		v := ks.list[k].Value
		for from := 0; ; {
			j := strings.Index(s[from:], v)
			if j < 0 {
				break
			}
			spans = append(spans, span{from + j, from + j + len(v), k})
			from += j + len(v)
		}
	}
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(x, y span) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return y.b - x.b
	})
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.a >= last.b {
			merged = append(merged, sp)
			continue
		}
		if sp.b-sp.a > last.b-last.a {
			last.k = sp.k
		}
		last.b = max(last.b, sp.b)
	}
	return merged
}

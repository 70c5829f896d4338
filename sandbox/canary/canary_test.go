package canary

import (
	"bytes"
	"crypto/ed25519"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// seeded returns a set drawn from a fixed seed, so that a failure can be
// reproduced.
func seeded(t testing.TB, seed byte) *Set {
	t.Helper()
	s, err := Generate(rand.NewChaCha8([32]byte{seed}))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return s
}

func secretOf(t testing.TB, s *Set, kind string) Value {
	t.Helper()
	for _, v := range s.Values() {
		if v.Kind == kind {
			return v
		}
	}
	t.Fatalf("no value of kind %s", kind)
	return Value{}
}

// The patterns public secret scanners use for these formats (gitleaks and
// the formats' documentation); a canary must look real to them.
var realFormats = map[string]*regexp.Regexp{
	"AWS_ACCESS_KEY_ID":     regexp.MustCompile(`^AKIA[A-Z2-7]{16}$`),
	"AWS_SECRET_ACCESS_KEY": regexp.MustCompile(`^[A-Za-z0-9+/]{40}$`),
	"GITHUB_TOKEN":          regexp.MustCompile(`^ghp_[0-9a-zA-Z]{36}$`),
	"NPM_TOKEN":             regexp.MustCompile(`^npm_[0-9a-zA-Z]{36}$`),
	"OPENAI_API_KEY":        regexp.MustCompile(`^sk-proj-[A-Za-z0-9_-]{74}T3BlbkFJ[A-Za-z0-9_-]{74}\b$`),
	"ANTHROPIC_API_KEY":     regexp.MustCompile(`^sk-ant-api03-[a-zA-Z0-9_\-]{93}AA$`),
	"AWS_DEFAULT_REGION":    regexp.MustCompile(`^[a-z]{2}-[a-z]+-\d$`),
}

func TestGenerate_environmentHasRealFormats(t *testing.T) {
	for seed := range byte(20) {
		env := seeded(t, seed).Env()
		if len(env) != len(realFormats) {
			t.Errorf("seed %d: env has %d names, want %d: %v", seed, len(env), len(realFormats), slices.Sorted(maps.Keys(env)))
		}
		for name, re := range realFormats {
			if v := env[name]; !re.MatchString(v) {
				t.Errorf("seed %d: %s = %q does not match %s", seed, name, v, re)
			}
		}
		for _, name := range []string{"GITHUB_TOKEN", "NPM_TOKEN"} {
			tok := env[name]
			if got, want := tok[len(tok)-6:], tokenChecksum(tok[4:34]); got != want {
				t.Errorf("seed %d: %s checksum = %s, want %s", seed, name, got, want)
			}
		}
		acct, err := awsAccountID(env["AWS_ACCESS_KEY_ID"])
		if err != nil || acct < 100_000_000_000 || acct > 999_999_999_999 {
			t.Errorf("seed %d: key id %s decodes to account %d (%v), want 12 digits", seed, env["AWS_ACCESS_KEY_ID"], acct, err)
		}
		if c := env["AWS_ACCESS_KEY_ID"][4]; !strings.ContainsRune("QRSTUVWXYZ234567", rune(c)) {
			t.Errorf("seed %d: fifth character %c of the key id is not one issued today", seed, c)
		}
	}
}

func TestTokenChecksum_publishedSample(t *testing.T) {
	// The body of the sample GitHub token published with the description of
	// the checksum scheme (github.com/therootcompany/base62-token.js), split
	// so that the prefix and body never appear together in this repository.
	body, sum := "zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ", "0mLq17"
	if got := tokenChecksum(body); got != sum {
		t.Errorf("tokenChecksum(%q) = %q, want %q", body, got, sum)
	}
	if got := tokenChecksum("zQWBuTSOoRi4A9spHcVY5ncnsDkxkK"); got == sum {
		t.Errorf("checksum does not depend on the last character")
	}
}

func TestGenerate_filesAndPlaces(t *testing.T) {
	s := seeded(t, 1)
	env := s.Env()
	files := map[string]File{}
	for _, f := range s.Files() {
		files[f.Path] = f
	}
	wantModes := map[string]os.FileMode{
		".aws/config": 0o600, ".aws/credentials": 0o600, ".bashrc": 0o644, ".gitconfig": 0o644,
		".npmrc": 0o600, ".profile": 0o644, ".ssh/id_ed25519": 0o600, ".ssh/id_ed25519.pub": 0o644,
	}
	for p, m := range wantModes {
		f, ok := files[p]
		if !ok {
			t.Errorf("no file %s", p)
			continue
		}
		if f.Mode != m {
			t.Errorf("%s mode = %o, want %o", p, f.Mode, m)
		}
		if len(f.Data) == 0 || f.Data[len(f.Data)-1] != '\n' {
			t.Errorf("%s is empty or does not end in a newline", p)
		}
	}
	if len(files) != len(wantModes) {
		t.Errorf("got %d files, want %d", len(files), len(wantModes))
	}
	if got, want := string(files[".npmrc"].Data), "//registry.npmjs.org/:_authToken="+env["NPM_TOKEN"]+"\n"; got != want {
		t.Errorf(".npmrc = %q, want %q", got, want)
	}
	creds := string(files[".aws/credentials"].Data)
	for _, want := range []string{"[default]\n", "aws_access_key_id = " + env["AWS_ACCESS_KEY_ID"] + "\n", "aws_secret_access_key = " + env["AWS_SECRET_ACCESS_KEY"] + "\n"} {
		if !strings.Contains(creds, want) {
			t.Errorf(".aws/credentials lacks %q:\n%s", want, creds)
		}
	}
	if !strings.Contains(string(files[".aws/config"].Data), "region = "+env["AWS_DEFAULT_REGION"]+"\n") {
		t.Errorf(".aws/config does not name the region of AWS_DEFAULT_REGION")
	}
	if !regexp.MustCompile(`(?m)^\[user\]\n\tname = \w+ \w+\n\temail = [\w.]+@[\w.]+\n`).Match(files[".gitconfig"].Data) {
		t.Errorf(".gitconfig has no plausible [user]:\n%s", files[".gitconfig"].Data)
	}

	// Every value is listed at every place it was planted, and is there.
	var got []string
	for _, v := range s.Values() {
		got = append(got, v.Kind+" "+v.Where)
		switch {
		case strings.HasPrefix(v.Where, "env:"):
			if env[strings.TrimPrefix(v.Where, "env:")] != v.Secret {
				t.Errorf("%s: the environment does not hold the secret", v.Where)
			}
		case strings.HasPrefix(v.Where, "file:~/"):
			f := files[strings.TrimPrefix(v.Where, "file:~/")]
			if v.Kind == KindSSHPrivateKeySeed {
				continue // checked by TestOpenSSHKey_structure
			}
			if !bytes.Contains(f.Data, []byte(v.Secret)) {
				t.Errorf("%s: the file does not hold the secret", v.Where)
			}
		default:
			t.Errorf("bad Where %q", v.Where)
		}
	}
	want := []string{
		"aws_access_key_id env:AWS_ACCESS_KEY_ID",
		"aws_secret_access_key env:AWS_SECRET_ACCESS_KEY",
		"github_token env:GITHUB_TOKEN",
		"openai_api_key env:OPENAI_API_KEY",
		"npm_token env:NPM_TOKEN",
		"anthropic_api_key env:ANTHROPIC_API_KEY",
		"aws_access_key_id file:~/.aws/credentials",
		"aws_secret_access_key file:~/.aws/credentials",
		"npm_token file:~/.npmrc",
		"ssh_private_key file:~/.ssh/id_ed25519",
		"ssh_private_key_seed file:~/.ssh/id_ed25519",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Values (-want +got):\n-%q\n+%q", want, got)
	}
}

func TestGenerate_freshEveryRun(t *testing.T) {
	a, err := Generate(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for i, va := range a.m.texts {
		sa := a.m.secretsRandomPart(i)
		for j, vb := range b.m.texts {
			if va == vb {
				t.Errorf("both sets hold %s", Mask(va))
			}
			// Nothing of ours is constant: the random parts of two sets
			// share no substring longer than chance allows (8 characters
			// would take about 2^40 tries for base62).
			if n := longestCommon(sa, b.m.secretsRandomPart(j)); n >= 8 {
				t.Errorf("%s and %s share %d characters", a.m.values[i].Kind, b.m.values[j].Kind, n)
			}
		}
	}
	// Nor does a set leak into itself through a constant: the key comment
	// and the profiles are drawn too, and a second draw differs.
	if bytes.Equal(fileData(a, ".gitconfig"), fileData(b, ".gitconfig")) && bytes.Equal(fileData(a, ".bashrc"), fileData(b, ".bashrc")) {
		t.Errorf("two sets have the same .gitconfig and .bashrc")
	}
}

func fileData(s *Set, p string) []byte {
	for _, f := range s.Files() {
		if f.Path == p {
			return f.Data
		}
	}
	return nil
}

// secretsRandomPart returns secret i with its fixed parts replaced by NUL
// (which no secret holds at those places).
func (m *matcher) secretsRandomPart(i int) string {
	b := []byte(m.texts[i])
	for k, r := range m.random[i] {
		if !r {
			b[k] = 0
		}
	}
	return string(b)
}

func longestCommon(a, b string) int {
	best := 0
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] && a[i-1] != 0 {
				cur[j] = prev[j-1] + 1
				best = max(best, cur[j])
			} else {
				cur[j] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}

type failingReader struct{ n int }

var errNoEntropy = errors.New("no entropy")

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errNoEntropy
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

func TestGenerate_readerFails(t *testing.T) {
	for _, n := range []int{0, 10, 200} {
		s, err := Generate(&failingReader{n: n})
		if !errors.Is(err, errNoEntropy) || s != nil {
			t.Errorf("after %d bytes: Generate = %v, %v; want nil and an error wrapping %v", n, s, err, errNoEntropy)
		}
	}
}

func TestValue_doesNotPrintItsSecret(t *testing.T) {
	v := secretOf(t, seeded(t, 2), KindAWSSecretAccessKey)
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("planted", "value", v)
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"String": v.String(), "fmt %v": fmt.Sprintf("%v", v), "slog": logged.String(), "json": string(js)} {
		if strings.Contains(out, v.Secret[4:20]) {
			t.Errorf("%s shows the secret: %s", name, out)
		}
		if name != "json" && !strings.Contains(out, Mask(v.Secret)) {
			t.Errorf("%s does not show the masked secret: %s", name, out)
		}
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"AKIAQWERTYUIOPASDFGH", "AKIA…(20)"},
		{"sk-proj-abcdefghijkl", "sk-p…(20)"},
		{"abcdefg", "a…(7)"},
		{"abc", "…(3)"},
		{"", "…(0)"},
		{"ab\x00defghijklmnop", "ab…(16)"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\n", "----…(36)"},
	} {
		if got := Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// parseOpenSSH decodes an unencrypted OpenSSH private key file the way
// OpenSSH's sshkey_parse_private2 does, checking every field.
func parseOpenSSH(t *testing.T, text []byte) (pub ed25519.PublicKey, priv ed25519.PrivateKey, comment string) {
	t.Helper()
	blk, rest := pem.Decode(text)
	if blk == nil || blk.Type != "OPENSSH PRIVATE KEY" || len(rest) != 0 {
		t.Fatalf("not one OPENSSH PRIVATE KEY block: %q", text)
	}
	b := blk.Bytes
	take := func(n int) []byte {
		if len(b) < n {
			t.Fatalf("truncated key: need %d bytes, have %d", n, len(b))
		}
		p := b[:n]
		b = b[n:]
		return p
	}
	u32 := func() uint32 { return binary.BigEndian.Uint32(take(4)) }
	str := func() []byte { return take(int(u32())) }
	if m := string(take(15)); m != "openssh-key-v1\x00" {
		t.Fatalf("magic = %q", m)
	}
	if c, k, o := string(str()), string(str()), str(); c != "none" || k != "none" || len(o) != 0 {
		t.Fatalf("cipher %q kdf %q options %q, want none none and empty", c, k, o)
	}
	if n := u32(); n != 1 {
		t.Fatalf("%d keys, want 1", n)
	}
	pubBlob := str()
	sec := str()
	if len(b) != 0 {
		t.Fatalf("%d trailing bytes", len(b))
	}
	if len(sec)%8 != 0 {
		t.Errorf("private section is %d bytes, not a multiple of the block size 8", len(sec))
	}
	b = pubBlob
	if typ := string(str()); typ != "ssh-ed25519" {
		t.Fatalf("public key type %q", typ)
	}
	pub = ed25519.PublicKey(str())
	b = sec
	if c1, c2 := u32(), u32(); c1 != c2 {
		t.Errorf("check integers differ: %x %x", c1, c2)
	}
	if typ := string(str()); typ != "ssh-ed25519" {
		t.Fatalf("private key type %q", typ)
	}
	if pub2 := str(); !bytes.Equal(pub2, pub) {
		t.Errorf("public key in the private section differs")
	}
	priv = ed25519.PrivateKey(str())
	comment = string(str())
	for i, p := range b {
		if p != byte(i+1) {
			t.Errorf("padding byte %d = %d, want %d", i, p, i+1)
		}
	}
	if len(pub) != ed25519.PublicKeySize || len(priv) != ed25519.PrivateKeySize {
		t.Fatalf("key sizes %d/%d", len(pub), len(priv))
	}
	return pub, priv, comment
}

func TestOpenSSHKey_structure(t *testing.T) {
	for seed := range byte(5) {
		s := seeded(t, seed)
		key, pubLine := fileData(s, ".ssh/id_ed25519"), string(fileData(s, ".ssh/id_ed25519.pub"))
		lines := strings.Split(strings.TrimSuffix(string(key), "\n"), "\n")
		for i, l := range lines[1 : len(lines)-2] {
			if len(l) != 70 {
				t.Errorf("seed %d: body line %d is %d columns, ssh-keygen writes 70", seed, i, len(l))
			}
		}
		pub, priv, comment := parseOpenSSH(t, key)
		if !bytes.Equal(priv.Public().(ed25519.PublicKey), pub) {
			t.Errorf("seed %d: the private key does not belong to the public key", seed)
		}
		msg := []byte("verifymcp")
		if !ed25519.Verify(pub, msg, ed25519.Sign(priv, msg)) {
			t.Errorf("seed %d: signature does not verify", seed)
		}
		if got := secretOf(t, s, KindSSHPrivateKeySeed).Secret; got != string(priv.Seed()) {
			t.Errorf("seed %d: ssh_private_key_seed is not the key's seed", seed)
		}
		fields := strings.Fields(pubLine)
		if len(fields) != 3 || fields[0] != "ssh-ed25519" || fields[2] != comment || !regexp.MustCompile(`^[a-z]+\d*@[\w-]+$`).MatchString(comment) {
			t.Errorf("seed %d: .pub = %q, comment %q", seed, pubLine, comment)
		}
		wantBlob := append(append([]byte("\x00\x00\x00\x0bssh-ed25519"), 0, 0, 0, 32), pub...)
		if fields[1] != b64(wantBlob) {
			t.Errorf("seed %d: .pub key %s, want %s", seed, fields[1], b64(wantBlob))
		}
	}
}

// TestOpenSSHKey_sshKeygen has OpenSSH itself read the key: it must derive
// the same public key as the .pub file.
func TestOpenSSHKey_sshKeygen(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen is not installed (package openssh-client); TestOpenSSHKey_structure checks the format without it")
	}
	for seed := range byte(3) {
		s := seeded(t, seed)
		p := filepath.Join(t.TempDir(), "id_ed25519")
		if err := os.WriteFile(p, fileData(s, ".ssh/id_ed25519"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(keygen, "-y", "-f", p).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen -y: %v: %s", err, out)
		}
		got, want := strings.Fields(string(out)), strings.Fields(string(fileData(s, ".ssh/id_ed25519.pub")))
		if len(got) < 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("ssh-keygen derived %q, .pub holds %q", out, want)
		}
	}
}

func TestGenerate_readsOnlyFromReader(t *testing.T) {
	a, b := seeded(t, 9), seeded(t, 9)
	if !slices.Equal(a.Values(), b.Values()) {
		t.Errorf("the same randomness gave different sets: Generate draws from something besides r")
	}
	if _, err := Generate(io.MultiReader()); err == nil {
		t.Errorf("Generate with an empty reader succeeded")
	}
}

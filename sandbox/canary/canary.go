// Package canary makes per-run canary credentials and finds them again.
//
// Generate draws a fresh set of credentials shaped exactly like real ones
// (AWS, GitHub, OpenAI, npm, Anthropic, an OpenSSH ed25519 key) to plant in
// a sandbox's environment and home directory. Nothing in a set is fixed by
// us: the only constant parts are the ones the real formats have (AKIA,
// ghp_, sk-proj-, the OpenSSH header, ...), so code that looks for a sandbox
// marker has nothing to look for beyond what every real credential carries.
//
// Scan finds any planted value, or a fragment of MinChunk characters of
// one, in captured data, raw or encoded (hex, base64, base32, percent-
// encoding, JSON escapes, reversed, XORed with a short key, split into DNS
// labels, one encoding inside another); ScanDNSNames finds one split
// across DNS queries; MaskAll and MaskDNSNames remove them so the data
// can be stored.
package canary

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
)

// Kinds of planted values.
const (
	KindAWSAccessKeyID     = "aws_access_key_id"
	KindAWSSecretAccessKey = "aws_secret_access_key"
	KindGitHubToken        = "github_token"
	KindOpenAIAPIKey       = "openai_api_key"
	KindNPMToken           = "npm_token"
	KindAnthropicAPIKey    = "anthropic_api_key"
	// KindSSHPrivateKey is the text of ~/.ssh/id_ed25519, as the file holds it.
	KindSSHPrivateKey = "ssh_private_key"
	// KindSSHPrivateKeySeed is the 32-byte ed25519 seed inside that file, as
	// raw bytes, for code that parses the key and sends only the key material.
	KindSSHPrivateKeySeed = "ssh_private_key_seed"
)

// Value is one planted credential and one place it was planted.
type Value struct {
	Kind string `json:"kind"`
	// Where is "env:NAME" or "file:~/path".
	Where string `json:"where"`
	// Secret is the planted value. It is never marshalled, and String and
	// LogValue mask it, so that a Value can be logged or stored safely.
	Secret string `json:"-"`
}

// String describes v with its secret masked.
func (v Value) String() string { return v.Kind + " " + v.Where + " " + Mask(v.Secret) }

// LogValue makes slog print v with its secret masked.
func (v Value) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", v.Kind), slog.String("where", v.Where), slog.String("secret", Mask(v.Secret)))
}

// File is one file to create in the sandbox's home directory. Path is
// relative to the home directory, with slashes. Parent directories are not
// listed; they should be created 0700 (.ssh must be, for ssh to use the key).
type File struct {
	Path string
	Mode os.FileMode
	Data []byte
}

// Set is one run's canary credentials. Its methods are safe for concurrent
// use.
type Set struct {
	env    map[string]string
	files  []File
	values []Value
	m      *matcher
}

// Env returns the environment variables to set, canaries and their benign
// companions (AWS_DEFAULT_REGION).
func (s *Set) Env() map[string]string {
	out := make(map[string]string, len(s.env))
	for k, v := range s.env {
		out[k] = v
	}
	return out
}

// Files returns the files to create under the home directory: the canary
// credentials and benign shell profiles and git configuration, so that the
// home looks lived-in.
func (s *Set) Files() []File {
	out := make([]File, len(s.files))
	for i, f := range s.files {
		out[i] = File{Path: f.Path, Mode: f.Mode, Data: slices.Clone(f.Data)}
	}
	return out
}

// Values lists every planted credential with every place it was planted: a
// value planted both in the environment and in a file appears twice, with
// the same Secret. Environment entries come first.
func (s *Set) Values() []Value { return slices.Clone(s.values) }

// Generate draws a fresh set of canaries from r, which should be
// crypto/rand.Reader outside tests. It fails only if r does.
func Generate(r io.Reader) (*Set, error) {
	g := &gen{r: bufio.NewReaderSize(r, 1024)}
	c := g.draw()
	if g.err != nil {
		return nil, fmt.Errorf("generate canaries: read randomness: %w", g.err)
	}
	return c.set(), nil
}

package canary

import (
	"crypto/ed25519"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

const (
	upperDigits32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" // RFC 4648 base32
	base62        = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	alnum         = base62
	base64Std     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	base64URL     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// gen draws random values; the first read error sticks and makes every
// later draw return zero values.
type gen struct {
	r   io.Reader
	err error
}

func (g *gen) bytes(n int) []byte {
	b := make([]byte, n)
	if g.err == nil {
		_, g.err = io.ReadFull(g.r, b)
	}
	return b
}

// uint64n returns a uniform integer in [0, n) by rejection sampling.
func (g *gen) uint64n(n uint64) uint64 {
	limit := ^uint64(0) - ^uint64(0)%n
	for g.err == nil {
		v := binary.BigEndian.Uint64(g.bytes(8))
		if v < limit {
			return v % n
		}
	}
	return 0
}

func (g *gen) intn(n int) int {
	// A byte or two are enough for our alphabets and lists; rejection keeps
	// the draw uniform.
	if n <= 256 {
		limit := 256 - 256%n
		for g.err == nil {
			v := int(g.bytes(1)[0])
			if v < limit {
				return v % n
			}
		}
		return 0
	}
	return int(g.uint64n(uint64(n)))
}

func (g *gen) str(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[g.intn(len(alphabet))])
	}
	return b.String()
}

func (g *gen) pick(list []string) string { return list[g.intn(len(list))] }

// secret is one planted value with the map of which of its bytes are random
// (the rest are fixed parts of the real format, which never count toward a
// match on their own).
type secret struct {
	kind   string
	text   string
	random []bool
}

// tokenSecret marks text[from:to] as random.
func tokenSecret(kind, text string, ranges ...[2]int) secret {
	r := make([]bool, len(text))
	for _, rg := range ranges {
		for i := rg[0]; i < rg[1]; i++ {
			r[i] = true
		}
	}
	return secret{kind: kind, text: text, random: r}
}

// drawn is everything one Generate draws.
type drawn struct {
	awsID, awsSecret, github, openai, npm, anthropic secret
	sshKey, sshSeed                                  secret
	sshPub                                           string
	region                                           string
	persona                                          persona
	bashrc, profile, gitconfig                       string
}

func (g *gen) draw() drawn {
	var d drawn
	d.persona = g.persona()
	d.region = g.pick(awsRegions)

	d.awsID = tokenSecret(KindAWSAccessKeyID, g.awsAccessKeyID(), [2]int{4, 20})
	d.awsSecret = tokenSecret(KindAWSSecretAccessKey, g.str(base64Std, 40), [2]int{0, 40})

	gh := "ghp_" + g.checksummed()
	d.github = tokenSecret(KindGitHubToken, gh, [2]int{4, len(gh)})
	npm := "npm_" + g.checksummed()
	d.npm = tokenSecret(KindNPMToken, npm, [2]int{4, len(npm)})

	// sk-proj-<74>T3BlbkFJ<74>: "T3BlbkFJ" is base64 for "OpenAI" and part
	// of every current OpenAI key. The last character is kept alphanumeric
	// so that the key ends on a word boundary, as scanners' patterns expect.
	oa := "sk-proj-" + g.str(base64URL, 74) + "T3BlbkFJ" + g.str(base64URL, 73) + g.str(alnum, 1)
	d.openai = tokenSecret(KindOpenAIAPIKey, oa, [2]int{8, 82}, [2]int{90, len(oa)})

	// sk-ant-api03-<93>AA, 108 characters.
	an := "sk-ant-api03-" + g.str(base64URL, 93) + "AA"
	d.anthropic = tokenSecret(KindAnthropicAPIKey, an, [2]int{13, 106})

	seed := g.bytes(ed25519.SeedSize)
	check := binary.BigEndian.Uint32(g.bytes(4))
	priv := ed25519.NewKeyFromSeed(seed)
	comment := d.persona.user + "@" + d.persona.host
	pemText, mask, pub := openSSHPrivateKey(priv, check, comment)
	d.sshKey = secret{kind: KindSSHPrivateKey, text: pemText, random: mask}
	d.sshSeed = tokenSecret(KindSSHPrivateKeySeed, string(seed), [2]int{0, len(seed)})
	d.sshPub = pub

	d.bashrc = g.bashrc()
	d.profile = debianProfile
	d.gitconfig = g.gitconfig(d.persona)
	return d
}

// awsAccessKeyID makes AKIA + 16 base32 characters that decode, the way
// public tooling decodes real key IDs, to a plausible 12-digit account ID:
// bits 46..7 of the first 48 bits hold the account, and the top bit is set
// as in every key ID issued in recent years (fifth character Q-Z or 2-7).
func (g *gen) awsAccessKeyID() string {
	account := 100_000_000_000 + g.uint64n(900_000_000_000)
	low := uint64(g.bytes(1)[0] & 0x7f)
	v := 1<<47 | account<<7 | low
	var b [10]byte
	for i := range 6 {
		b[i] = byte(v >> (40 - 8*i))
	}
	copy(b[6:], g.bytes(4))
	return "AKIA" + base32.StdEncoding.EncodeToString(b[:])
}

// awsAccountID decodes the account ID from a key ID (see awsAccessKeyID).
func awsAccountID(keyID string) (uint64, error) {
	b, err := base32.StdEncoding.DecodeString(keyID[4:])
	if err != nil {
		return 0, fmt.Errorf("decode key id: %w", err)
	}
	var v uint64
	for _, c := range b[:6] {
		v = v<<8 | uint64(c)
	}
	return (v & 0x7fffffffff80) >> 7, nil
}

// checksummed returns 30 random base62 characters followed by their
// checksum, the body of GitHub and npm tokens. GitHub's announcement of
// the format says only that the last six characters are a CRC32 checksum
// in base62; the exact scheme, CRC-32 (IEEE) of the 30 characters written
// in base62 (0-9A-Za-z) and left-padded with '0' to six characters, is the
// one published by people who checked it against real tokens, and it
// verifies the sample token they published (see the tests).
func (g *gen) checksummed() string {
	entropy := g.str(base62, 30)
	return entropy + tokenChecksum(entropy)
}

func tokenChecksum(entropy string) string {
	n := crc32.ChecksumIEEE([]byte(entropy))
	var out [6]byte
	for i := 5; i >= 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return string(out[:])
}

// persona is the invented owner of the home directory.
type persona struct {
	first, last, user, host, email string
}

func (g *gen) persona() persona {
	p := persona{first: g.pick(firstNames), last: g.pick(lastNames)}
	low := strings.ToLower
	switch g.intn(4) {
	case 0:
		p.user = low(p.first)
	case 1:
		p.user = low(p.first[:1] + p.last)
	case 2:
		p.user = low(p.first + p.last[:1])
	default:
		p.user = low(p.last)
	}
	switch g.intn(5) {
	case 0:
		p.host = p.user + "-laptop"
	case 1:
		p.host = low(p.first) + "s-MacBook-Pro"
	case 2:
		p.host = p.user + "-" + g.pick([]string{"thinkpad", "xps", "desktop", "workstation", "dev"})
	case 3:
		p.host = g.pick([]string{"dev", "ws", "build", "lab"}) + "-" + g.str("0123456789", 2+g.intn(3))
	default:
		p.host = g.pick(hostWords)
	}
	local := low(p.first + "." + p.last)
	if g.intn(3) == 0 {
		local = p.user + g.str("0123456789", 2)
	}
	p.email = local + "@" + g.pick(mailDomains)
	return p
}

func (g *gen) gitconfig(p persona) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[user]\n\tname = %s %s\n\temail = %s\n", p.first, p.last, p.email)
	fmt.Fprintf(&b, "[init]\n\tdefaultBranch = %s\n", g.pick([]string{"main", "main", "master", "trunk"}))
	fmt.Fprintf(&b, "[core]\n\teditor = %s\n", g.pick([]string{"vim", "nvim", "nano", "code --wait", "emacs -nw"}))
	if g.intn(2) == 0 {
		fmt.Fprintf(&b, "[pull]\n\trebase = %s\n", g.pick([]string{"true", "false"}))
	}
	if g.intn(2) == 0 {
		b.WriteString("[alias]\n\tst = status -sb\n\tco = checkout\n\tlg = log --oneline --graph --decorate\n")
	}
	if g.intn(3) == 0 {
		b.WriteString("[push]\n\tautoSetupRemote = true\n")
	}
	return b.String()
}

func (g *gen) bashrc() string {
	var b strings.Builder
	b.WriteString(debianBashrc)
	fmt.Fprintf(&b, "\nHISTSIZE=%d\nHISTFILESIZE=%d\n", g.pick2(1000, 2000, 5000, 10000), g.pick2(2000, 10000, 20000, 100000))
	extras := []string{
		"export EDITOR=" + g.pick([]string{"vim", "nvim", "nano"}) + "\n",
		"export PATH=\"$HOME/.local/bin:$PATH\"\n",
		"alias gs='git status'\n",
		"alias k=kubectl\n",
		"export NVM_DIR=\"$HOME/.nvm\"\n[ -s \"$NVM_DIR/nvm.sh\" ] && . \"$NVM_DIR/nvm.sh\"\n",
		"export GOPATH=\"$HOME/go\"\nexport PATH=\"$PATH:$GOPATH/bin\"\n",
		"[ -f ~/.fzf.bash ] && source ~/.fzf.bash\n",
		"export PATH=\"$HOME/.cargo/bin:$PATH\"\n",
	}
	for _, e := range extras {
		if g.intn(2) == 0 {
			b.WriteString(e)
		}
	}
	return b.String()
}

func (g *gen) pick2(vals ...int) int { return vals[g.intn(len(vals))] }

// set builds the Set from what was drawn.
func (d drawn) set() *Set {
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":     d.awsID.text,
		"AWS_SECRET_ACCESS_KEY": d.awsSecret.text,
		"AWS_DEFAULT_REGION":    d.region,
		"GITHUB_TOKEN":          d.github.text,
		"OPENAI_API_KEY":        d.openai.text,
		"NPM_TOKEN":             d.npm.text,
		"ANTHROPIC_API_KEY":     d.anthropic.text,
	}
	awsCreds := fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", d.awsID.text, d.awsSecret.text)
	awsConfig := fmt.Sprintf("[default]\nregion = %s\noutput = json\n", d.region)
	files := []File{
		{Path: ".aws/config", Mode: 0o600, Data: []byte(awsConfig)},
		{Path: ".aws/credentials", Mode: 0o600, Data: []byte(awsCreds)},
		{Path: ".bashrc", Mode: 0o644, Data: []byte(d.bashrc)},
		{Path: ".gitconfig", Mode: 0o644, Data: []byte(d.gitconfig)},
		{Path: ".npmrc", Mode: 0o600, Data: []byte("//registry.npmjs.org/:_authToken=" + d.npm.text + "\n")},
		{Path: ".profile", Mode: 0o644, Data: []byte(d.profile)},
		{Path: ".ssh/id_ed25519", Mode: 0o600, Data: []byte(d.sshKey.text)},
		{Path: ".ssh/id_ed25519.pub", Mode: 0o644, Data: []byte(d.sshPub)},
	}
	type placed struct {
		s     secret
		where string
	}
	places := []placed{
		{d.awsID, "env:AWS_ACCESS_KEY_ID"},
		{d.awsSecret, "env:AWS_SECRET_ACCESS_KEY"},
		{d.github, "env:GITHUB_TOKEN"},
		{d.openai, "env:OPENAI_API_KEY"},
		{d.npm, "env:NPM_TOKEN"},
		{d.anthropic, "env:ANTHROPIC_API_KEY"},
		{d.awsID, "file:~/.aws/credentials"},
		{d.awsSecret, "file:~/.aws/credentials"},
		{d.npm, "file:~/.npmrc"},
		{d.sshKey, "file:~/.ssh/id_ed25519"},
		{d.sshSeed, "file:~/.ssh/id_ed25519"},
	}
	s := &Set{env: env, files: files}
	var secrets []secret
	var firsts []Value
	seen := map[string]bool{}
	for _, p := range places {
		v := Value{Kind: p.s.kind, Where: p.where, Secret: p.s.text}
		s.values = append(s.values, v)
		if !seen[p.s.text] {
			seen[p.s.text] = true
			secrets = append(secrets, p.s)
			firsts = append(firsts, v)
		}
	}
	s.m = newMatcher(secrets, firsts)
	return s
}

// openSSHPrivateKey encodes priv in the OpenSSH private key format
// (PROTOCOL.key in OpenSSH), unencrypted, as ssh-keygen writes it: PEM
// armour, base64 wrapped at 70 columns. It returns the file text, which of
// its bytes depend on the secret seed or the check integers, and the public
// key line for the .pub file.
func openSSHPrivateKey(priv ed25519.PrivateKey, check uint32, comment string) (text string, random []bool, pubLine string) {
	pub := priv.Public().(ed25519.PublicKey)
	// Only the seed and the check integers are secret: the public key is in
	// the .pub file too, and appears three times in this one (once at the
	// same base64 alignment as in the .pub file), so text derived from it
	// must not count as a piece of the private key.
	var pubBlob keyBuf
	pubBlob.str([]byte("ssh-ed25519"), false)
	pubBlob.str(pub, false)

	var sec keyBuf
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], check)
	sec.raw(c[:], true)
	sec.raw(c[:], true)
	sec.str([]byte("ssh-ed25519"), false)
	sec.str(pub, false)
	sec.u32(ed25519.PrivateKeySize) // seed || public key
	sec.raw(priv.Seed(), true)
	sec.raw(pub, false)
	sec.str([]byte(comment), false)
	for i := byte(1); len(sec.b)%8 != 0; i++ {
		sec.raw([]byte{i}, false)
	}

	var k keyBuf
	k.raw([]byte("openssh-key-v1\x00"), false)
	k.str([]byte("none"), false) // cipher
	k.str([]byte("none"), false) // kdf
	k.str(nil, false)            // kdf options
	k.u32(1)                     // number of keys
	k.str(pubBlob.b, false)
	k.strMasked(sec)

	const header = "-----BEGIN OPENSSH PRIVATE KEY-----\n"
	const footer = "-----END OPENSSH PRIVATE KEY-----\n"
	enc := make([]byte, base64.StdEncoding.EncodedLen(len(k.b)))
	base64.StdEncoding.Encode(enc, k.b)
	var t strings.Builder
	t.WriteString(header)
	random = make([]bool, len(header))
	charRandom := func(j int) bool { // does base64 character j carry random bits?
		first, last := 6*j/8, (6*j+5)/8
		for b := first; b <= last && b < len(k.b); b++ {
			if k.rnd[b] {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(enc); i += 70 {
		end := min(i+70, len(enc))
		t.Write(enc[i:end])
		for j := i; j < end; j++ {
			random = append(random, enc[j] != '=' && charRandom(j))
		}
		t.WriteByte('\n')
		// The line break counts as random when both neighbours do, so that
		// a chunk may run across it.
		random = append(random, end < len(enc) && charRandom(end-1) && charRandom(end))
	}
	t.WriteString(footer)
	random = append(random, make([]bool, len(footer))...)

	pubLine = "ssh-ed25519 " + base64.StdEncoding.EncodeToString(pubBlob.b) + " " + comment + "\n"
	return t.String(), random, pubLine
}

// keyBuf builds an SSH wire-format buffer and remembers which bytes are
// random.
type keyBuf struct {
	b   []byte
	rnd []bool
}

func (k *keyBuf) raw(p []byte, random bool) {
	k.b = append(k.b, p...)
	for range p {
		k.rnd = append(k.rnd, random)
	}
}

func (k *keyBuf) u32(v uint32) {
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], v)
	k.raw(c[:], false)
}

func (k *keyBuf) str(p []byte, random bool) {
	k.u32(uint32(len(p)))
	k.raw(p, random)
}

func (k *keyBuf) strMasked(o keyBuf) {
	k.u32(uint32(len(o.b)))
	k.b = append(k.b, o.b...)
	k.rnd = append(k.rnd, o.rnd...)
}

var awsRegions = []string{
	"us-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1", "eu-west-2", "eu-west-3",
	"eu-central-1", "eu-north-1", "ap-southeast-1", "ap-southeast-2", "ap-northeast-1", "ap-south-1",
	"ca-central-1", "sa-east-1",
}

var firstNames = []string{
	"Alex", "Sam", "Jordan", "Taylor", "Morgan", "Casey", "Jamie", "Riley", "Chris", "Pat", "Maria", "Anna",
	"David", "Daniel", "Michael", "Sarah", "Laura", "Julia", "Thomas", "Lukas", "Jonas", "Emma", "Olivia",
	"Noah", "Liam", "Lucas", "Mateo", "Sofia", "Elena", "Ivan", "Dmitri", "Yuki", "Kenji", "Wei", "Li",
	"Priya", "Arjun", "Rahul", "Aisha", "Omar", "Fatima", "Hannah", "Ben", "Tom", "Kate", "Nina", "Paul",
	"Marco", "Giulia", "Pierre", "Claire", "Sven", "Ingrid", "Mateus", "Ana", "Tobias", "Felix", "Max",
	"Leon", "Mia", "Zoe", "Ethan", "Ryan", "Kevin", "Brian", "Erik", "Oscar", "Hugo", "Ines", "Rosa",
}

var lastNames = []string{
	"Smith", "Johnson", "Brown", "Garcia", "Miller", "Davis", "Martinez", "Lopez", "Wilson", "Anderson",
	"Thomas", "Moore", "Martin", "Lee", "Walker", "Hall", "Young", "King", "Wright", "Scott", "Green",
	"Baker", "Nguyen", "Kim", "Park", "Chen", "Wang", "Zhang", "Singh", "Patel", "Kumar", "Sato", "Suzuki",
	"Tanaka", "Muller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Rossi",
	"Russo", "Ferrari", "Dubois", "Moreau", "Laurent", "Silva", "Santos", "Oliveira", "Costa", "Novak",
	"Kowalski", "Nowak", "Ivanov", "Petrov", "Jansen", "DeVries", "Berg", "Lindqvist", "Hansen", "Nielsen",
}

var hostWords = []string{
	"orion", "nebula", "falcon", "atlas", "zephyr", "pluto", "juniper", "cedar", "maple", "aurora",
	"boreas", "kestrel", "osprey", "tundra", "sierra", "basalt", "quartz", "cobalt", "ember", "halcyon",
}

var mailDomains = []string{
	"gmail.com", "gmail.com", "gmail.com", "outlook.com", "hotmail.com", "proton.me", "fastmail.com",
	"icloud.com", "yahoo.com", "gmx.de", "posteo.de", "hey.com",
}

// debianBashrc is the start of Debian's /etc/skel/.bashrc, which most homes
// on Debian-family systems carry unchanged.
const debianBashrc = `# ~/.bashrc: executed by bash(1) for non-login shells.
# see /usr/share/doc/bash/examples/startup-files (in the package bash-doc)
# for examples

# If not running interactively, don't do anything
case $- in
    *i*) ;;
      *) return;;
esac

# don't put duplicate lines or lines starting with space in the history.
# See bash(1) for more options
HISTCONTROL=ignoreboth

# append to the history file, don't overwrite it
shopt -s histappend

# check the window size after each command and, if necessary,
# update the values of LINES and COLUMNS.
shopt -s checkwinsize

# make less more friendly for non-text input files, see lesspipe(1)
#[ -x /usr/bin/lesspipe ] && eval "$(SHELL=/bin/sh lesspipe)"

PS1='${debian_chroot:+($debian_chroot)}\u@\h:\w\$ '

# enable color support of ls and also add handy aliases
if [ -x /usr/bin/dircolors ]; then
    test -r ~/.dircolors && eval "$(dircolors -b ~/.dircolors)" || eval "$(dircolors -b)"
    alias ls='ls --color=auto'
    alias grep='grep --color=auto'
fi

# some more ls aliases
alias ll='ls -l'
alias la='ls -A'
alias l='ls -CF'

# Alias definitions.
if [ -f ~/.bash_aliases ]; then
    . ~/.bash_aliases
fi

# enable programmable completion features
if ! shopt -oq posix; then
  if [ -f /usr/share/bash-completion/bash_completion ]; then
    . /usr/share/bash-completion/bash_completion
  elif [ -f /etc/bash_completion ]; then
    . /etc/bash_completion
  fi
fi
`

// debianProfile is Debian's /etc/skel/.profile.
const debianProfile = `# ~/.profile: executed by the command interpreter for login shells.
# This file is not read by bash(1), if ~/.bash_profile or ~/.bash_login
# exists.
# see /usr/share/doc/bash/examples/startup-files for examples.
# the files are located in the bash-doc package.

# the default umask is set in /etc/profile; for setting the umask
# for ssh logins, install and manage the libpam-umask package.
#umask 022

# if running bash
if [ -n "$BASH_VERSION" ]; then
    # include .bashrc if it exists
    if [ -f "$HOME/.bashrc" ]; then
	. "$HOME/.bashrc"
    fi
fi

# set PATH so it includes user's private bin if it exists
if [ -d "$HOME/bin" ] ; then
    PATH="$HOME/bin:$PATH"
fi

# set PATH so it includes user's private bin if it exists
if [ -d "$HOME/.local/bin" ] ; then
    PATH="$HOME/.local/bin:$PATH"
fi
`

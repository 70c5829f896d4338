package checks

import (
	"fmt"
	"regexp"
	"strings"
)

// detector is one pattern with its filter.
type detector struct {
	code string
	// any lists lower-case words of which the text must hold one before
	// the pattern runs: a cheap prefilter, since most text holds none.
	any    []string
	re     *regexp.Regexp
	accept func(d *doc, m []int) bool
	// also, when set, lists lower-case words of which every match holds
	// one too, besides one of any.
	also []string
	// needs, when set, is what accept requires in the sentence of a match:
	// a text without it anywhere has nothing to accept.
	needs []*regexp.Regexp
	msg   string
}

// mayMatch applies the prefilter to lower-cased text.
func (det *detector) mayMatch(lower string) bool {
	if len(det.any) == 0 {
		return true
	}
	for _, w := range det.any {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// reFlagBefore: a command-line option right before a placeholder.
var reFlagBefore = regexp.MustCompile(`(?:^|\s)--?[A-Za-z][\w-]*[ =]$`)

// publicKey reports whether the path matched at text[start:end] is part
// of a public key's path (~/.ssh/id_rsa.pub): reading it reads nothing
// secret.
func publicKey(text string, start, end int) bool {
	for end < len(text) && !strings.ContainsRune(" \t\n\"'`)(,;", rune(text[end])) {
		end++
	}
	return strings.HasSuffix(strings.TrimRight(text[start:end], ".:"), ".pub")
}

// directiveIn reports whether sentence has a directive: must, should,
// shall, always, never, instead, only, do not, don't, make sure, ensure,
// redirect, forward, bcc, cc, override, replace, side effect(s), has to,
// have to, need(s) to, is/are required to (any case; the words of a
// phrase apart by white space only). "only" in "read-only" or
// "write-only" describes a mode, not an order; "do not" after a subject
// pronoun ("if you do not pass tabId") states or conditions, not orders.
func directiveIn(sentence string) bool {
	type word struct {
		w          string
		start, end int
	}
	var ws []word
	for i := 0; i < len(sentence); {
		if !isWordByte(sentence[i]) {
			i++
			continue
		}
		j := i
		for j < len(sentence) && (isWordByte(sentence[j]) || sentence[j] == '\'' && j+1 < len(sentence) && isWordByte(sentence[j+1])) {
			j++
		}
		ws = append(ws, word{strings.ToLower(sentence[i:j]), i, j})
		i = j
	}
	// spaced reports whether only white space parts ws[k-1] and ws[k].
	spaced := func(k int) bool {
		return strings.TrimLeft(sentence[ws[k-1].end:ws[k].start], " \t\n\f\r") == "" && ws[k].start > ws[k-1].end
	}
	phrase := func(k int, rest ...string) bool {
		for n, r := range rest {
			if k+n+1 >= len(ws) || ws[k+n+1].w != r || !spaced(k+n+1) {
				return false
			}
		}
		return true
	}
	// subject reports whether a pronoun is the subject of ws[k] ("when
	// you do not pass tabId", "tools that don't write"): a statement or
	// a condition, not an order.
	subject := func(k int) bool {
		return k > 0 && spaced(k) && declarativeSubjects[ws[k-1].w]
	}
	for k, x := range ws {
		switch x.w {
		case "don't":
			if !subject(k) {
				return true
			}
		case "must", "should", "shall", "always", "never", "instead", "ensure", "redirect", "forward",
			"bcc", "cc", "override", "replace":
			return true
		case "only":
			if x.start == 0 || sentence[x.start-1] != '-' {
				return true
			}
		case "do":
			if phrase(k, "not") && !subject(k) {
				return true
			}
		case "make":
			if phrase(k, "sure") {
				return true
			}
		case "side":
			if phrase(k, "effect") || phrase(k, "effects") {
				return true
			}
		case "has", "have", "need", "needs":
			// "no need to", "do not need to": a permission, not an order.
			if phrase(k, "to") && (k == 0 || !spaced(k) || !permissive[ws[k-1].w]) {
				return true
			}
		case "is", "are":
			if phrase(k, "required", "to") {
				return true
			}
		}
	}
	return false
}

// permissive words before "need to" / "have to" take the order back.
var permissive = map[string]bool{"no": true, "not": true, "don't": true, "doesn't": true, "never": true}

// declarativeSubjects are the pronouns before "do not" that make it a
// statement or a condition rather than an order.
var declarativeSubjects = map[string]bool{
	"you": true, "we": true, "they": true, "i": true, "who": true, "that": true, "which": true,
}

// isWordByte reports whether c is a word character of \b: ASCII letters,
// digits and underscore.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// hasNeeds reports whether text holds one of det.needs, if it has any.
func (det *detector) hasNeeds(text string) bool {
	if len(det.needs) == 0 {
		return true
	}
	for _, re := range det.needs {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// Prefilter word lists.
var (
	anyIgnore  = []string{"ignore", "disregard", "forget", "discard"}
	anyUser    = []string{"user", "human", "operator", "silently", "secretly", "covertly", "quietly", "secret", "hidden", "confidential", "between us"}
	anyPath    = []string{".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "authorized_keys", "mcp.json", "claude_desktop_config", ".cursor", ".aws/", ".azure/", ".kube/", ".docker/", ".npmrc", ".pypirc", ".netrc", ".git-credentials", "_history", "/etc/", ".env", "credentials.json", ".gnupg", "wallet.dat"}
	anySecret  = []string{"password", "passphrase", "credential", "api", "key", "token", "secret", "seed", "mnemonic", "cookie", "env"}
	anyOrder   = []string{"before", "always", "must", "first", "instead", "every"}
	anyToolRef = []string{"tool", "function"}
	anyUsing   = []string{"using", "calling", "invoking", "running", "executing", "uses", "calls", "invokes", "runs"}
	anyOther   = []string{"other", "side effect", "also present", "when this tool"}
)

// doc is a text under check and what the filters need to know about it.
type doc struct {
	text   string
	own    ownSet
	params map[string]bool // the subject tool's parameter names
	// returned marks text that describes what the tool returns (its
	// output schema).
	returned bool
	// outputs are the fields the tool returns, with their descriptions.
	outputs map[string]string
	bounds  [][]int  // the sentence boundaries, found on first use
	lower   string   // text in lower case, made on first use
	sents   [][2]int // its sentences, and each in lower case
	lowers  []string
}

// sentences returns the sentences of d.text, as [start, end) offsets, and
// each in lower case.
func (d *doc) sentences() ([][2]int, []string) {
	if d.sents != nil {
		return d.sents, d.lowers
	}
	d.sentenceSpan(0)
	d.sents = make([][2]int, 0, len(d.bounds)+1)
	from := 0
	for _, b := range d.bounds {
		if b[1] > from {
			d.sents = append(d.sents, [2]int{from, b[1]})
		}
		from = b[1]
	}
	if from < len(d.text) {
		d.sents = append(d.sents, [2]int{from, len(d.text)})
	}
	for _, sn := range d.sents {
		d.lowers = append(d.lowers, strings.ToLower(d.text[sn[0]:sn[1]]))
	}
	return d.sents, d.lowers
}

// boundaries returns the ends of the sentences of s: a ".", "!" or "?"
// followed by white space (all of it) or the end of the text; a blank
// line; or a line break before a list item ("- ", "* ", "• ", "1. ",
// "2) "). Each is [start, end) of the boundary; the next sentence starts
// at end.
func boundaries(s string) [][]int {
	out := [][]int{}
	for i := 0; i < len(s); i++ {
		if j := boundaryAt(s, i); j > i {
			out = append(out, []int{i, j})
			i = j - 1
		}
	}
	return out
}

// boundaryAt returns the end of the sentence boundary at s[i], or -1.
func boundaryAt(s string, i int) int {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	switch s[i] {
	case '.', '!', '?':
		j := i + 1
		for j < len(s) && space(s[j]) {
			j++
		}
		if j > i+1 || j == len(s) {
			return j
		}
	case '\n':
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && s[j] == '\n' {
			return j + 1
		}
		switch {
		case j < len(s) && (s[j] == '-' || s[j] == '*'):
			j++
		case strings.HasPrefix(s[j:], "•"):
			j += len("•")
		case j < len(s) && s[j] >= '0' && s[j] <= '9':
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == len(s) || s[j] != '.' && s[j] != ')' {
				return -1
			}
			j++
		default:
			return -1
		}
		if j < len(s) && space(s[j]) {
			return j + 1
		}
	}
	return -1
}

// sentenceSpan returns the bounds of the sentence of d.text around byte
// offset pos.
func (d *doc) sentenceSpan(pos int) (int, int) {
	if d.bounds == nil {
		d.bounds = boundaries(d.text)
	}
	start, end := 0, len(d.text)
	for _, b := range d.bounds {
		if b[1] <= pos {
			start = b[1]
		} else if b[0] >= pos {
			end = b[1]
			break
		}
	}
	return start, end
}

// sentence returns the sentence of d.text around byte offset pos.
func (d *doc) sentence(pos int) string {
	s, e := d.sentenceSpan(pos)
	return d.text[s:e]
}

// group returns submatch g of m, or "".
func (d *doc) group(m []int, g int) string {
	if 2*g+1 >= len(m) || m[2*g] < 0 {
		return ""
	}
	return d.text[m[2*g]:m[2*g+1]]
}

func always(*doc, []int) bool { return true }

var reNegation = regexp.MustCompile(`(?i)\b(?:not|never|don't|dont|do\s+not|doesn't|does\s+not|must\s+not|mustn't|should\s+not|shouldn't|cannot|can't|no|avoid|without)\s+(?:\w+\s+){0,2}$`)

// negated reports whether the text just before pos negates what follows.
func (d *doc) negated(pos int) bool {
	from := max(0, pos-40)
	return reNegation.MatchString(d.text[from:pos])
}

// hasCue reports whether the sentence around pos has a match of re that is
// not negated.
func (d *doc) hasCue(re *regexp.Regexp, pos int) bool {
	s, e := d.sentenceSpan(pos)
	for _, c := range re.FindAllStringIndex(d.text[s:e], -1) {
		if !d.negated(s + c[0]) {
			return true
		}
	}
	return false
}

const (
	reSensitivePath = `(?:~|\$HOME|%USERPROFILE%)?/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|~/\.cursor\b|\.cursor/|\.aws/(?:credentials|config)\b|\.azure/|\.kube/config\b|\.docker/config\.json\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.(?:bash|zsh)_history\b|/etc/(?:passwd|shadow)\b|(?:^|[\s'"` + "`" + `(/])\.env(?:\.[a-z]+)?\b|\bcredentials\.json\b|\.gnupg\b|\bwallet\.dat\b`
	reSecretNoun    = `(?:passwords?|passphrases?|credentials|api[\s_-]?keys?|(?:access|auth|bearer|session|refresh|api)\s+tokens?|private\s+keys?|ssh\s+keys?|secrets|seed\s+phrases?|mnemonics?|cookies|environment\s+variables|env\s+vars)`
)

var (
	reCueImperative = regexp.MustCompile(`(?i)\b(?:read|open|cat|include|send|pass|attach|upload|copy|extract|collect|gather|print|output|dump|post|forward|share|paste|append|insert|grab|exfiltrate|contents?\s+of)\b`)
	reDefensive     = regexp.MustCompile(`(?i)^\s+(?:in|from|within|inside|contained|embedded|found|returned)\b`)
	// reTimeFrame: "conversation" as the time a thing holds for ("on
	// every call in this conversation"), not as what is passed.
	reTimeFrame = regexp.MustCompile(`(?i)\b(?:in|within|throughout|during|for|across|of)\s+(?:the\s+rest\s+of\s+)?(?:this|the|that|a|our|your)\s+(?:whole\s+|same\s+|current\s+|entire\s+)?conversation\b`)
	// reItself: the object of an imperative in an output field's
	// description that is the field's own value.
	reItself  = regexp.MustCompile(`(?i)^(?:it|them|this|that|these|those|(?:this|that|the|these|those)\s+(?:returned\s+)?(?:values?|tokens?|ids?|fields?|strings?|results?|scopes?))(?:\s+back)?$`)
	reAllData = regexp.MustCompile(`(?i)\ball\s+(?:e-?mails|messages|data|files|documents|requests)\b`)
	reSource  = regexp.MustCompile(`(?i)` + reSensitivePath + `|~/|\b` + reSecretNoun + `\b|\bsecret\b|\bconversation\b|\b(?:chat|message)\s+history\b|\b(?:previous|prior|all)\s+messages\b|\bsystem\s+prompt\b|\byour\s+instructions\b|\bcontext\s+window\b|\bprevious\s+tool\s+(?:calls?|results?|outputs?)\b`)
)

var injectionDetectors = []detector{
	{code: CodeInjectionOverride, any: anyIgnore, msg: "tells the model to ignore its previous instructions",
		re:     regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|discard)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+|its\s+)?(?:previous|prior|above|earlier|preceding|former|original|initial|system|developer|safety|other)\s+(?:\w+\s+)?(?:instructions?|prompts?|directions?|directives?|rules|guidelines|guardrails|constraints|context|messages|policies|commands)\b`),
		accept: always},
	{code: CodeInjectionOverride, any: anyIgnore, msg: "tells the model to ignore its instructions",
		re: regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget)\s+(?:all|any|every)\s+(?:instructions|rules|guidelines)\b`),
		accept: func(d *doc, m []int) bool {
			rest := d.text[m[1]:min(len(d.text), m[1]+40)]
			return !reDefensive.MatchString(rest)
		}},
	{code: CodeInjectionOverride, any: []string{"you are now", "from now on", "instruction", "task", "goal", "objective", "purpose", "role", "override"}, msg: "gives the model a new role or new instructions",
		re:     regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(?:a|an|the|in|my|no\s+longer)\b|\bfrom\s+now\s+on,?\s+(?:you|always|never|ignore)\b|\b(?:your|the)\s+(?:new|real|true|actual|updated)\s+(?:instructions|task|goal|objective|purpose|role)\s+(?:is|are)\b|\bnew\s+(?:system\s+)?instructions\s*:|\bsystem\s+(?:prompt\s+)?override\b`),
		accept: always},
	{code: CodeInjectionConceal, any: anyUser, msg: "tells the model to keep something from the user",
		re:     regexp.MustCompile(`(?i)\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not|mustn't|shouldn't|avoid)\s+(?:(?:ever|directly|explicitly|actually|really|specifically|proactively|need\s+to|have\s+to|try\s+to|to)\s+){0,3}(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|show(?:ing)?|mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|let(?:ting)?)\s+(?:\w+\s+){0,3}?(?:the|your)\s+(?:user|human|operator)s?\b`),
		accept: func(d *doc, m []int) bool { return !d.withheldSecret(m[0]) }},
	{code: CodeInjectionConceal, any: anyUser, msg: "tells the model to act without the user's knowledge",
		also:   []string{"without", "hide", "conceal", "keep", "silently", "secretly", "covertly", "quietly", "not", "n't"},
		re:     regexp.MustCompile(`(?i)\bwithout\s+(?:telling|informing|notifying|alerting|asking|showing|letting|mentioning\s+(?:it|this)\s+to)\s+(?:the\s+|your\s+)?(?:user|human|operator)s?\b|\b(?:hide|conceal|keep)\s+(?:this|it|that|these|them|everything|the\s+\w+(?:\s+\w+)?)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+|your\s+)?(?:user|human|operator)s?\b|\bkeep\s+(?:this|it)\s+(?:secret|hidden|confidential|between\s+us)\b|\bthe\s+(?:user|human)s?\s+(?:(?:must|should|will|need|may)\s*(?:not|n't)\s+(?:\w+\s+){0,2}?|(?:does|do)\s*(?:not|n't)\s+(?:need|have)\s+to\s+)(?:know|see|notice|learn|find\s+out|be\s+(?:told|informed|aware|notified|shown))\b|\b(?:silently|secretly|covertly|quietly)\s+(?:send|read|pass|include|forward|upload|copy|call|add|attach|exfiltrate|collect|bcc|cc)\b`),
		accept: always},
	{code: CodeInjectionConceal, any: []string{"not", "don't", "never"}, msg: "tells the model not to mention what it was told to do",
		re:     regexp.MustCompile(`(?i)\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|say|tell|explain|admit)\s+(?:to\s+(?:the\s+)?user\s+)?(?:that\s+you|this\s+(?:step|instruction|tool\s+call|requirement)|these\s+(?:instructions|steps)|(?:what|that)\s+you\s+(?:did|are\s+doing|read|need))\b`),
		accept: always},
	{code: CodeInjectionSecret, any: anyPath, msg: "tells the model to read a credential file",
		re: regexp.MustCompile(`(?i)` + reSensitivePath),
		accept: func(d *doc, m []int) bool {
			return !publicKey(d.text, m[0], m[1]) && d.hasCue(reCueImperative, m[0])
		}},
	{code: CodeInjectionSecret, any: anySecret, msg: "tells the model to collect stored secrets",
		re:     regexp.MustCompile(`(?i)\b(?:read|collect|gather|extract|dump|send|pass|include|attach|upload|copy|share|forward|list|print|output|return)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+user'?s\s+|the\s+|their\s+|all\s+|any\s+)?(?:saved\s+|stored\s+|local\s+|cached\s+)` + reSecretNoun + `\b|\b(?:read|collect|gather|extract|dump|send|pass|include|attach|upload|copy|share|forward)\s+(?:all|any|every|the\s+user'?s|their)\s+(?:\w+\s+)?` + reSecretNoun + `\b`),
		accept: func(d *doc, m []int) bool { return !d.negated(m[0]) }},
	{code: CodeInjectionExfil, any: append(append(append([]string{"~/", "conversation", "history", "messages", "system prompt", "your instructions", "context window", "previous tool"}, anyPath...), anySecret...), "secret"), msg: "tells the model to pass secrets or the conversation through a parameter",
		also:  []string{"\"", "'", "`", "‘", "“", "param", "arg", "field", "propert"},
		needs: []*regexp.Regexp{reSource},
		re:    regexp.MustCompile(`(?i)\b(?:pass|put|send|include|add|provide|insert|place|attach|append|copy|write|supply|fill|set|enter|paste|embed|store)\b([^.!?\n]{0,160}?)\b(?:as|in|into|inside|to|via|through|using|within)\s+(?:the\s+|a\s+)?(?:["'` + "`" + `‘“](\w[\w-]*)["'` + "`" + `’”](\s+(?:parameter|param|argument|arg|field|property))?|(\w[\w-]*)\s+(?:parameter|param|argument|arg|field|property)\b)`),
		accept: func(d *doc, m []int) bool {
			if d.negated(m[0]) {
				return false
			}
			if quoted := d.group(m, 2); quoted != "" && d.group(m, 3) == "" && !d.params[quoted] {
				return false
			}
			// A value the server returns, handed back to it ("pass it as
			// the scope_token argument on later calls"): the secret is the
			// server's own, and nothing leaves for anywhere else.
			if d.returned && reItself.MatchString(strings.TrimSpace(d.group(m, 1))) {
				return false
			}
			return sourceIn(d.sentence(m[0]))
		}},
	{code: CodeInjectionExfil, any: []string{"http://", "https://", "@"}, msg: "tells the model to send data to an outside address",
		needs: []*regexp.Regexp{reSource, reAllData},
		re:    regexp.MustCompile(`(?i)\b(?:send|post|upload|forward|transmit|email|exfiltrate|leak|copy|bcc|cc)\b[^.!?\n]{0,120}?\bto\s+(?:https?://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)`),
		accept: func(d *doc, m []int) bool {
			if d.negated(m[0]) {
				return false
			}
			s := d.sentence(m[0])
			return sourceIn(s) || reAllData.MatchString(s)
		}},
	{code: CodeInjectionToolOrder, any: anyOrder, msg: "tells the model to put this tool before or instead of all others",
		also:   []string{"this tool", "this function", "any", "every", "all", "each"},
		re:     regexp.MustCompile(`(?i)\bbefore\s+(?:using|calling|invoking|running|executing|responding\s+to|answering|replying\s+to)\s+(?:any|every|all|each)\s+(?:other\s+)?(?:tools?|functions?|requests?|questions?|messages?|users?|prompts?)\b|\b(?:always|must)\s+(?:call|use|invoke|run|execute)\s+this\s+(?:tool|function)\s+(?:first\s+)?(?:before|prior\s+to)\s+(?:any|every|all|other)\b|\balways\s+(?:call|use|invoke|run|execute)\s+this\s+(?:tool|function)\s+first\b|\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:first\s+)?(?:before|instead\s+of)\s+(?:any|every|all|other)\b|\binstead\s+of\s+(?:any|every|all)\s+other\s+(?:tools?|functions?)\b|\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:on|for|after|with)\s+every\s+(?:request|message|turn|response|query|prompt|tool\s+call)\b`),
		accept: func(d *doc, m []int) bool { return !d.negated(m[0]) }},
	{code: CodeInjectionTag, any: []string{"<", "[inst", "[system", "[/inst", "[/system"}, msg: "uses pseudo-authoritative markup aimed at the model",
		// Chat-template tokens are matched as the templates write them,
		// in capitals: "[inst : Monad m]" is a theorem prover's instance
		// binder, not Llama's [INST].
		re: regexp.MustCompile(`(?i:</?\s*(?:important|system|sys|instructions?|admin|administrator|critical|secret|hidden|override|priority)\s*>)|<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[/?(?:INST|SYSTEM)\]|<<\s*/?SYS\s*>>`),
		accept: func(d *doc, m []int) bool {
			// "--secret <secret>" is a command line's placeholder.
			if reFlagBefore.MatchString(d.text[max(0, m[0]-64):m[0]]) {
				return false
			}
			// "https://kai:<secret>@<host>/<path>.git": a template's
			// placeholder, glued into the URL or address it stands in.
			if m[0] > 0 && strings.ContainsRune(":@/=", rune(d.text[m[0]-1])) || m[1] < len(d.text) && strings.ContainsRune("@/:", rune(d.text[m[1]])) {
				return false
			}
			// A chat-template token quoted as code documents the format.
			return d.text[m[0]] == '<' && d.text[m[0]+1] != '|' && d.text[m[0]+1] != '<' || !inCode(d.text, m[0], m[1])
		}},
}

// References to tools and servers, for shadowing (see the package doc).
var (
	quoteOpen     = "[\"'`‘“]"
	quoteClose    = "[\"'`’”]"
	reToolRef     = regexp.MustCompile(`(?i)(?:` + quoteOpen + `([^"'` + "`" + `’”\n]{1,64})` + quoteClose + `|\b([A-Za-z][\w.-]*\w))\s+(?:tool|function)\b|\btool\s+(?:called|named)\s+` + quoteOpen + `?([\w.-]+)`)
	reWhenUsing   = regexp.MustCompile(`(?i)\b(?:when|whenever|before|after|if|while)\s+(?:the\s+(?:user|model|assistant|agent)\s+)?(?:using|calling|invoking|running|executing|uses|calls|invokes|runs)\s+(?:the\s+)?(?:` + quoteOpen + `([\w.-]+)` + quoteClose + `|([\w.-]+))(\s+(?:tool|function|server)\b)?`)
	reWhenInvoked = regexp.MustCompile(`(?i)\b(?:when|whenever|before|after|if)\s+(?:\(\w+\)\s+)?(?:the\s+)?(?:` + quoteOpen + `([\w.-]+)` + quoteClose + `|([\w.-]+))(?:\s+(?:tool|function))?\s+(?:is|gets)\s+(?:invoked|called|used|run|executed)\b`)
	reOtherTools  = regexp.MustCompile(`(?i)\b(?:all|any|every|the)\s+other\s+(?:(\w+)\s+)?(?:tools?|servers?|mcp\s+servers?|functions?)\b|\bside\s+effects?\s+on\b|\balso\s+present\b|\bwhen\s+this\s+tool\s+is\s+(?:available|present|installed|loaded|enabled)\b`)
	reOrdering    = regexp.MustCompile(`(?i)\b(?:before|instead\s+of|prior\s+to|rather\s+than)\s+(?:using\s+|calling\s+|invoking\s+|running\s+)?$`)
	reSourceOf    = regexp.MustCompile(`(?i)\b(?:results?\s+(?:of|from)|returned\s+by|outputs?\s+(?:of|from)|given\s+by|listed\s+by|provided\s+by|obtained\s+(?:from|by)|from)\s+(?:the\s+|a\s+|an\s+)?$`)
	reServerRef   = regexp.MustCompile(`(?:` + quoteOpen + `([A-Za-z][\w.-]*)` + quoteClose + `|\b([A-Za-z][\w.-]*))\s+(?:(?i:mcp)\s+)?(?i:server)\b(-)?`)
)

// genericServerWords precede "server" without naming another MCP server.
var genericServerWords = map[string]bool{
	"this": true, "that": true, "the": true, "a": true, "an": true, "mcp": true, "our": true, "your": true, "its": true,
	"same": true, "local": true, "remote": true, "web": true, "http": true, "https": true, "api": true, "sql": true,
	"database": true, "db": true, "language": true, "lsp": true, "file": true, "dev": true, "development": true,
	"production": true, "staging": true, "test": true, "proxy": true, "smtp": true, "imap": true, "mail": true,
	"email": true, "dns": true, "ssh": true, "ftp": true, "sftp": true, "git": true, "origin": true, "upstream": true,
	"backend": true, "application": true, "app": true, "authorization": true, "auth": true, "resource": true,
	"media": true, "game": true, "build": true, "content": true, "each": true, "every": true, "any": true, "other": true,
}

// genericToolWords are words that precede "tool" in honest prose.
var genericToolWords = map[string]bool{
	"this": true, "that": true, "the": true, "a": true, "an": true, "any": true, "each": true, "every": true, "other": true,
	"another": true, "same": true, "which": true, "what": true, "it": true, "its": true, "your": true, "one": true,
}

// identifierLike reports whether an unquoted word reads as a tool
// identifier rather than an English word: snake_case, camelCase, a client
// prefix, or dotted lower-case parts (server.tool). Kebab-case alone is
// English as often as not ("auto-embed", "read-only").
func identifierLike(s string) bool {
	s = strings.Trim(s, ".-_")
	if strings.Contains(s, "_") {
		return true
	}
	for i := 1; i < len(s); i++ {
		if isUpper(rune(s[i])) && isLower(rune(s[i-1])) {
			return true
		}
	}
	if strings.Contains(s, ".") {
		return strings.ToLower(s) == s
	}
	return false
}

// unglue returns the part of a reference after the last full stop that
// runs into a capital ("behavior.This" is "This": a sentence that lost
// its space).
func unglue(s string) string {
	for i := len(s) - 2; i >= 0; i-- {
		if s[i] == '.' && isUpper(rune(s[i+1])) {
			return s[i+1:]
		}
	}
	return s
}

func (o ownSet) foreign(name string) bool {
	n := normName(name)
	if n == "" || genericToolWords[n] || o.isOwn(n) || o.params[n] || o.values.has(n, o.params) {
		return false
	}
	// A single word that is a word of one of the server's own names ("the
	// search tool" on a server with search_repositories) is its own.
	if !strings.ContainsAny(n, "_.- ") {
		for k := range o.names {
			for _, w := range words(k) {
				if w == n {
					return false
				}
			}
		}
		if o.server[n] {
			return false
		}
	}
	return true
}

// ownWord reports whether w is a word of the server's name or of one of
// its tools' names ("other MongoDB tools", "other Atlas tools").
func (o ownSet) ownWord(w string) bool {
	w = strings.ToLower(w)
	if o.server[w] {
		return true
	}
	for k := range o.names {
		for _, x := range words(k) {
			if x == w {
				return true
			}
		}
	}
	return false
}

// withheldSecret reports whether the sentence at pos keeps from view a
// field the tool returns that the surface calls a secret ("Do not share
// `url`: do not show it to the user ...; anyone who opens it gets into the
// app", where url "contains a secret"): that handles a bearer secret, it
// hides no action of the tool from the user.
func (d *doc) withheldSecret(pos int) bool {
	if len(d.outputs) == 0 {
		return false
	}
	s := d.sentence(pos)
	for _, q := range reQuotedName.FindAllStringSubmatch(s, -1) {
		desc, ok := d.outputs[q[1]]
		if ok && (reSecretCue.MatchString(s) || reSecretCue.MatchString(desc)) {
			return true
		}
	}
	return false
}

var (
	reQuotedName = regexp.MustCompile(quoteOpen + `([A-Za-z_][\w.-]*)` + quoteClose)
	reSecretCue  = regexp.MustCompile(`(?i)\b(?:contains?\s+a\s+secret|secret|password|credentials?|(?:access|bearer|session|api)\s+tokens?|anyone\s+(?:who|with)\b[^.]{0,60}\b(?:gets?|has|have|can)\b|grants?\s+access|without\s+(?:the\s+\w+'s\s+|a\s+|any\s+)?(?:login|password|sign-?in))`)
)

// sourceIn reports whether a sentence names a secret or the conversation
// as something to pass, leaving out "in this conversation" and the like.
func sourceIn(sentence string) bool {
	return reSource.MatchString(reTimeFrame.ReplaceAllString(sentence, " "))
}

func checkInjection(out *findings, u unit, own ownSet) {
	d := &doc{text: u.text, own: own, params: paramsOf(u), returned: strings.HasPrefix(u.field, "output_schema"), outputs: u.outputs}
	for _, det := range injectionDetectors {
		if m, ok := det.find(d); ok {
			out.add(Finding{Code: det.code, Kind: u.kind, Subject: u.subject, Field: u.field,
				Evidence: evidence(u.text, m[0], m[1]),
				Message:  fmt.Sprintf("The %s %s.", describeField(u), det.msg)})
		}
	}
}

// find returns the first match of det in d.text that det accepts. The
// pattern is read sentence by sentence, and only in the sentences that
// hold one of its words (and what accept needs): the filters read the
// sentence of a match, so a match is a claim about one sentence.
func (det *detector) find(d *doc) ([]int, bool) {
	if d.lower == "" {
		d.lower = strings.ToLower(d.text)
	}
	// The words of det that the text holds: a sentence can hold only those.
	words := det.any
	if len(words) > 0 {
		words = nil
		for _, w := range det.any {
			if strings.Contains(d.lower, w) {
				words = append(words, w)
			}
		}
		if words == nil {
			return nil, false
		}
	}
	sents, lowers := d.sentences()
	for i, sn := range sents {
		text := d.text[sn[0]:sn[1]]
		if !(&detector{any: words}).mayMatch(lowers[i]) || !(&detector{any: det.also}).mayMatch(lowers[i]) || !det.hasNeeds(text) {
			continue
		}
		for _, m := range det.re.FindAllStringSubmatchIndex(text, -1) {
			for j := range m {
				if m[j] >= 0 {
					m[j] += sn[0]
				}
			}
			if det.accept(d, m) {
				return m, true
			}
		}
	}
	return nil, false
}

func checkShadowing(out *findings, u unit, own ownSet) {
	d := &doc{text: u.text, own: own}
	if s, e, ref, ok := findShadowing(d); ok {
		out.add(Finding{Code: CodeShadowing, Kind: u.kind, Subject: u.subject, Field: u.field,
			Evidence: evidence(u.text, s, e),
			Message:  fmt.Sprintf("The %s tells the model how %s must behave.", describeField(u), ref)})
	}
}

// findShadowing returns the first reference to another server's tool, to
// another server, or to the user's other tools, in a directive sentence.
// Only sentences with a directive are read for references, since a
// reference elsewhere is not shadowing.
func findShadowing(d *doc) (start, end int, ref string, ok bool) {
	lower := strings.ToLower(d.text)
	has := func(ws []string) bool { return (&detector{any: ws}).mayMatch(lower) }
	if !has(anyToolRef) && !has(anyUsing) && !has(anyOther) && !strings.Contains(lower, "server") && !strings.Contains(lower, "invoked") {
		return 0, 0, "", false
	}
	sents, lowers := d.sentences()
	for i, sn := range sents {
		if !refCue(lowers[i]) || !directiveIn(d.text[sn[0]:sn[1]]) {
			continue
		}
		if s, e, ref, ok := shadowingIn(d, sn[0], sn[1]); ok {
			return s, e, ref, true
		}
	}
	return 0, 0, "", false
}

// shadowingIn looks for a reference in the directive sentence
// d.text[from:to].
func shadowingIn(d *doc, from, to int) (start, end int, ref string, ok bool) {
	text := d.text[from:to]
	all := func(re *regexp.Regexp) [][]int {
		ms := re.FindAllStringSubmatchIndex(text, -1)
		for _, m := range ms {
			for j := range m {
				if m[j] >= 0 {
					m[j] += from
				}
			}
		}
		return ms
	}
	// tool reports whether a reference names a tool that is not this
	// server's: quoted, or unquoted and identifier-like.
	tool := func(name string, quoted bool) (string, bool) {
		if !quoted {
			name = unglue(name)
			if !identifierLike(name) {
				return "", false
			}
		}
		return name, d.own.foreign(name)
	}
	for _, m := range all(reToolRef) {
		name, quoted := d.group(m, 1), true
		if name == "" {
			name, quoted = d.group(m, 2), false
		}
		if name == "" {
			name, quoted = d.group(m, 3), true
		}
		// "one of the results of 'get_available_icons' tool": a tool named
		// as where a value comes from; the order is about this tool's own
		// input, not how that tool behaves.
		if reSourceOf.MatchString(d.text[max(0, m[0]-40):m[0]]) {
			continue
		}
		if name, ok := tool(name, quoted); ok {
			return m[0], m[1], fmt.Sprintf("the tool %q", name), true
		}
	}
	for _, re := range []*regexp.Regexp{reWhenUsing, reWhenInvoked} {
		for _, m := range all(re) {
			name, quoted := d.group(m, 1), true
			if name == "" {
				name, quoted = d.group(m, 2), false
			}
			if re == reWhenUsing && strings.EqualFold(strings.TrimSpace(d.group(m, 3)), "server") {
				if serverName(name, quoted) && !d.own.server[strings.ToLower(name)] && !d.own.isOwn(name) {
					return m[0], m[1], fmt.Sprintf("the server %q", name), true
				}
				continue
			}
			if name, ok := tool(name, quoted); ok {
				return m[0], m[1], fmt.Sprintf("the tool %q", name), true
			}
		}
	}
	for _, m := range all(reOtherTools) {
		// "before any other tool" orders the calls (tool_order); it does not
		// say how the other tools behave.
		if reOrdering.MatchString(d.text[max(0, m[0]-40):m[0]]) {
			continue
		}
		// "other MongoDB tools": this server's own family of tools.
		if w := d.group(m, 1); w != "" && d.own.ownWord(w) {
			continue
		}
		return m[0], m[1], "other tools", true
	}
	for _, m := range all(reServerRef) {
		name, quoted := d.group(m, 1), true
		if name == "" {
			name, quoted = d.group(m, 2), false
		}
		the := strings.HasSuffix(strings.ToLower(d.text[max(0, m[0]-4):m[0]]), "the ")
		if d.group(m, 3) != "" || !serverName(name, quoted || the) {
			// "server-side", or not a name.
			continue
		}
		if word := d.text[m[1]-len("server") : m[1]]; word == "Server" && !strings.Contains(strings.ToLower(d.text[m[0]:m[1]]), "mcp") {
			// "SQL Server", "MySQL Flexible Server": a product's name.
			continue
		}
		if lw := strings.ToLower(name); d.own.server[lw] || d.own.isOwn(lw) || d.own.ownWord(lw) {
			continue
		}
		return m[0], m[1], fmt.Sprintf("the server %q", name), true
	}
	return 0, 0, "", false
}

// refCue reports whether a lower-case sentence holds a word every
// reference to a tool or server holds.
func refCue(lower string) bool {
	for _, ws := range [][]string{anyToolRef, anyUsing, anyOther, {"server", "invoked", "called", "used", "run", "executed"}} {
		for _, w := range ws {
			if strings.Contains(lower, w) {
				return true
			}
		}
	}
	return false
}

// serverName reports whether the word before "server" names one: quoted
// (or after "the"), identifier-like or capitalised, and not a generic word.
func serverName(name string, quoted bool) bool {
	name = unglue(name)
	if name == "" || genericServerWords[strings.ToLower(name)] {
		return false
	}
	return quoted || identifierLike(name) || strings.ContainsAny(name, "_-.") || isUpper(rune(name[0]))
}

// checkInjectionPayload runs the injection and shadowing checks over text
// revealed by a hidden-text check: the evidence is where it was hidden,
// Decoded what it says.
func checkInjectionPayload(out *findings, u unit, p payload) {
	d := &doc{text: p.text, params: paramsOf(u)}
	for _, det := range injectionDetectors {
		if _, ok := det.find(d); ok {
			out.add(Finding{Code: det.code, Kind: u.kind, Subject: u.subject, Field: u.field,
				Evidence: evidence(u.text, p.start, p.end), Decoded: clip(p.text),
				Message: fmt.Sprintf("Text hidden in the %s %s.", describeField(u), det.msg)})
		}
	}
}

// noParams is the parameter set of a unit that is not a tool's.
var noParams = map[string]bool{}

func paramsOf(u unit) map[string]bool {
	if u.params == nil {
		return noParams
	}
	return u.params
}

func describeField(u unit) string {
	switch u.kind {
	case KindServer:
		return "server's " + strings.ReplaceAll(u.field, "/", " ")
	default:
		return u.kind + " " + fmt.Sprintf("%q", u.subject) + " " + strings.ReplaceAll(u.field, "/", " ")
	}
}

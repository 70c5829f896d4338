package judge

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/verifymcp/verifymcp/contract/checks"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/verifymcp/verifymcp/contract"
)

// surfaceText is the untrusted text sent to the model and what the answer
// is checked against.
type surfaceText struct {
	// text is the surface as indented JSON, hidden characters escaped.
	text string
	// tools maps a tool's name to the texts a quote may come from.
	tools map[string][]string
	// instructions are the texts a quote about the instructions may come
	// from; nil when the server gave none.
	instructions []string
}

type renderedSurface struct {
	Server       contract.Implementation `json:"server"`
	Instructions string                  `json:"instructions,omitempty"`
	Tools        []contract.Tool         `json:"tools"`
}

// renderSurface renders the server instructions and the tools, sorted by
// name, as indented JSON. Characters that render as nothing are written as
// \u escapes, so the model sees them and the request shows them.
func renderSurface(c *contract.Contract) surfaceText {
	tools := slices.Clone(c.Tools)
	slices.SortStableFunc(tools, func(a, b contract.Tool) int { return strings.Compare(a.Name, b.Name) })
	for i := range tools {
		tools[i].InputSchema = validJSON(tools[i].InputSchema)
		tools[i].OutputSchema = validJSON(tools[i].OutputSchema)
	}
	if tools == nil {
		tools = []contract.Tool{}
	}
	st := surfaceText{tools: map[string][]string{}}
	st.text = escapeHidden(marshalIndent(renderedSurface{Server: c.ServerInfo, Instructions: c.Instructions, Tools: tools}))
	for _, t := range tools {
		if _, dup := st.tools[t.Name]; dup {
			continue
		}
		texts := []string{t.Name, t.Title, t.Description, escapeHidden(marshalIndent(t))}
		if t.Annotations != nil {
			texts = append(texts, t.Annotations.Title)
		}
		texts = append(texts, checks.SchemaTexts(t.InputSchema)...)
		texts = append(texts, checks.SchemaTexts(t.OutputSchema)...)
		st.tools[t.Name] = texts
	}
	if c.Instructions != "" {
		st.instructions = []string{c.Instructions, escapeHidden(marshalIndent(c.Instructions))}
	}
	return st
}

// validJSON keeps a schema that is JSON and turns anything else into a
// JSON string of its bytes, so that a broken schema is still shown.
func validJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}

func marshalIndent(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		// Every value rendered here is plain data with valid raw JSON.
		panic(fmt.Sprintf("judge: render surface: %v", err))
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// escapeHidden writes every character Visible would escape as a JSON \u
// escape (a surrogate pair above U+FFFF). It is applied to JSON text,
// where such characters occur only inside strings.
func escapeHidden(s string) string {
	if !strings.ContainsFunc(s, checks.Escaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !checks.Escaped(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// fenceAttempts bounds the search for fences that do not occur in the
// text; with 128 random bits a second attempt is already astronomically
// unlikely.
const fenceAttempts = 8

// fences returns the opening and closing fence lines for text: a fresh
// random token each call, drawn again while the token occurs in the text
// (in any case), so the untrusted text can neither close the fence nor
// forge one.
func fences(rnd io.Reader, text string) (begin, end string, err error) {
	lower := strings.ToLower(text)
	var b [16]byte
	for range fenceAttempts {
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return "", "", fmt.Errorf("judge: fence: %w", err)
		}
		tok := hex.EncodeToString(b[:])
		if !strings.Contains(lower, tok) {
			return "<<<UNTRUSTED-SURFACE-" + tok + ">>>", "<<<END-UNTRUSTED-SURFACE-" + tok + ">>>", nil
		}
	}
	return "", "", errors.New("judge: fence: no token absent from the surface")
}

// Bounds of an answer's fields.
const (
	maxQuoteChars     = 1000
	maxRationaleChars = 500
)

type answer struct {
	Verdicts *[]answerVerdict `json:"verdicts"`
}

type answerVerdict struct {
	Tool      *string `json:"tool"`
	Code      *string `json:"code"`
	Evidence  *string `json:"evidence"`
	Rationale *string `json:"rationale"`
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadAnswer}, args...)...)
}

// parseAnswer checks a completion against the spec and the surface: one
// choice, no refusal, finished, content exactly the schema's object, every
// code known, every tool listed, every quote found in that tool's text.
// One bad verdict rejects the answer: a verdict that cannot be audited is
// not evidence.
func parseAnswer(resp openai.ChatCompletionResponse, spec *Spec, s surfaceText) ([]Verdict, error) {
	if len(resp.Choices) == 0 {
		return nil, bad("no choices")
	}
	ch := resp.Choices[0]
	if ch.Message.Refusal != "" {
		return nil, bad("the model refused: %q", checks.ClipPlain(ch.Message.Refusal, 200))
	}
	switch ch.FinishReason {
	case openai.FinishReasonStop, "":
	case openai.FinishReasonLength:
		return nil, bad("answer truncated (finish_reason length)")
	default:
		return nil, bad("finish_reason %q", ch.FinishReason)
	}
	dec := json.NewDecoder(strings.NewReader(ch.Message.Content))
	dec.DisallowUnknownFields()
	var a answer
	if err := dec.Decode(&a); err != nil {
		return nil, bad("content is not the schema's object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("content has data after the object")
	}
	if a.Verdicts == nil {
		return nil, bad("no verdicts field")
	}
	out := []Verdict{}
	seen := map[string]bool{}
	for i, v := range *a.Verdicts {
		if v.Tool == nil || v.Code == nil || v.Evidence == nil || v.Rationale == nil {
			return nil, bad("verdict %d lacks a required field", i)
		}
		if _, ok := spec.Meanings[*v.Code]; !ok {
			return nil, bad("verdict %d: unknown code %q", i, checks.ClipPlain(*v.Code, 80))
		}
		texts, ok := s.tools[*v.Tool]
		if *v.Tool == "" {
			texts, ok = s.instructions, s.instructions != nil
		}
		if !ok {
			return nil, bad("verdict %d: no tool %q on the surface", i, checks.ClipPlain(*v.Tool, 80))
		}
		quote := strings.TrimSpace(*v.Evidence)
		if quote == "" || utf8.RuneCountInString(quote) > maxQuoteChars {
			return nil, bad("verdict %d: evidence empty or longer than %d characters", i, maxQuoteChars)
		}
		if !quoted(quote, texts) {
			return nil, bad("verdict %d: evidence %q does not occur in the text of %q", i, checks.ClipPlain(quote, 80), *v.Tool)
		}
		k := *v.Tool + "\x00" + *v.Code
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, Verdict{Tool: *v.Tool, Code: *v.Code, Evidence: clipRunes(quote, checks.EvidenceMaxChars),
			Rationale: clipRunes(strings.TrimSpace(*v.Rationale), maxRationaleChars)})
	}
	return out, nil
}

// quoted reports whether quote occurs in one of texts, with runs of white
// space counted as one space (a model re-wraps what it quotes).
func quoted(quote string, texts []string) bool {
	q := strings.Join(strings.Fields(quote), " ")
	for _, t := range texts {
		if strings.Contains(strings.Join(strings.Fields(t), " "), q) {
			return true
		}
	}
	return false
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// compact returns b as compact JSON, or as a JSON string when it is not
// JSON, so that a stored judgment always marshals.
func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err == nil {
		return buf.Bytes()
	}
	s, _ := json.Marshal(string(b))
	return s
}

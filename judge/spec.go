package judge

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/verifymcp/verifymcp/contract"
)

// Spec is one version of the judge's rubric: what the model is asked, the
// codes it may answer with and the JSON Schema its answer must follow. It
// is data, loaded from a file under specs/; the rubric that scores the
// verdicts names the Version it was written for.
type Spec struct {
	// Version changes when the codes or the schema change.
	Version string `json:"version"`
	// PromptVersion changes when the prompt text changes.
	PromptVersion string `json:"prompt_version"`
	// Prompt is the system prompt, with the placeholders {{BEGIN}},
	// {{END}} (the fence lines) and {{CODES}} (the code list).
	Prompt string `json:"prompt"`
	// SchemaName names the response format.
	SchemaName string `json:"schema_name"`
	// Schema is the JSON Schema of the answer, in canonical JSON.
	Schema json.RawMessage `json:"schema"`
	// Codes are the verdict codes, in the file's order; Meanings gives
	// each one's meaning.
	Codes    []string          `json:"codes"`
	Meanings map[string]string `json:"meanings"`
	// Digest is the SHA-256 of the spec file, part of every cache key.
	Digest string `json:"digest"`
}

//go:embed specs/v1.yaml
var specV1 []byte

// SpecV1 is the first judge specification (specs/v1.yaml).
var SpecV1 = mustSpec(specV1)

func mustSpec(b []byte) *Spec {
	s, err := LoadSpec(b)
	if err != nil {
		panic(err)
	}
	return s
}

// Placeholders of Spec.Prompt.
const (
	placeholderBegin = "{{BEGIN}}"
	placeholderEnd   = "{{END}}"
	placeholderCodes = "{{CODES}}"
)

var reJudgeCode = regexp.MustCompile(`^pkg\.judge\.[a-z0-9_]+(?:\.[a-z0-9_]+)*$`)

// LoadSpec parses and checks a judge specification file: versions set,
// the three placeholders in the prompt, codes unique and under pkg.judge.,
// and a schema that strict structured output accepts (every object closed
// and every property required) whose code enumeration is exactly the
// codes.
func LoadSpec(b []byte) (*Spec, error) {
	var f struct {
		Version       string `yaml:"version"`
		PromptVersion string `yaml:"prompt_version"`
		SchemaName    string `yaml:"schema_name"`
		Codes         []struct {
			Code    string `yaml:"code"`
			Meaning string `yaml:"meaning"`
		} `yaml:"codes"`
		Prompt string `yaml:"prompt"`
		Schema any    `yaml:"schema"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("judge spec: %w", err)
	}
	sum := sha256.Sum256(b)
	s := &Spec{Version: f.Version, PromptVersion: f.PromptVersion, Prompt: f.Prompt, SchemaName: f.SchemaName,
		Meanings: map[string]string{}, Digest: "sha256:" + hex.EncodeToString(sum[:])}
	var errs []error
	if s.Version == "" || s.PromptVersion == "" || s.SchemaName == "" {
		errs = append(errs, errors.New("version, prompt_version and schema_name are required"))
	}
	for _, p := range []string{placeholderBegin, placeholderEnd, placeholderCodes} {
		if !strings.Contains(s.Prompt, p) {
			errs = append(errs, fmt.Errorf("prompt lacks %s", p))
		}
	}
	for _, c := range f.Codes {
		switch {
		case !reJudgeCode.MatchString(c.Code):
			errs = append(errs, fmt.Errorf("code %q is not pkg.judge.<name>", c.Code))
		case s.Meanings[c.Code] != "":
			errs = append(errs, fmt.Errorf("code %q listed twice", c.Code))
		case strings.TrimSpace(c.Meaning) == "":
			errs = append(errs, fmt.Errorf("code %q has no meaning", c.Code))
		default:
			s.Codes = append(s.Codes, c.Code)
			s.Meanings[c.Code] = strings.TrimSpace(c.Meaning)
		}
	}
	if len(s.Codes) == 0 {
		errs = append(errs, errors.New("no codes"))
	}
	raw, err := contract.Canonical(f.Schema)
	if err != nil {
		errs = append(errs, fmt.Errorf("schema: %w", err))
	} else {
		s.Schema = raw
		errs = append(errs, checkSchema(raw, s.Codes)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("judge spec %s: %w", s.Version, err)
	}
	return s, nil
}

// schemaNode is the part of a JSON Schema the checks read.
type schemaNode struct {
	Type                 string                `json:"type"`
	AdditionalProperties *bool                 `json:"additionalProperties"`
	Required             []string              `json:"required"`
	Properties           map[string]schemaNode `json:"properties"`
	Items                *schemaNode           `json:"items"`
	Enum                 []string              `json:"enum"`
}

func checkSchema(raw json.RawMessage, codes []string) []error {
	var root schemaNode
	if err := json.Unmarshal(raw, &root); err != nil {
		return []error{fmt.Errorf("schema: %w", err)}
	}
	var errs []error
	var strict func(n schemaNode, path string)
	strict = func(n schemaNode, path string) {
		if n.Type == "object" {
			if n.AdditionalProperties == nil || *n.AdditionalProperties {
				errs = append(errs, fmt.Errorf("schema %s: additionalProperties must be false for strict output", path))
			}
			for name, p := range n.Properties {
				if !slices.Contains(n.Required, name) {
					errs = append(errs, fmt.Errorf("schema %s: property %q must be required for strict output", path, name))
				}
				strict(p, path+"/"+name)
			}
		}
		if n.Items != nil {
			strict(*n.Items, path+"/items")
		}
	}
	strict(root, "")
	v, ok := root.Properties["verdicts"]
	if !ok || v.Items == nil {
		return append(errs, errors.New("schema: no verdicts array"))
	}
	for _, f := range []string{"tool", "code", "evidence", "rationale"} {
		if _, ok := v.Items.Properties[f]; !ok {
			errs = append(errs, fmt.Errorf("schema: verdict lacks %q", f))
		}
	}
	enum := slices.Clone(v.Items.Properties["code"].Enum)
	want := slices.Clone(codes)
	slices.Sort(enum)
	slices.Sort(want)
	if !slices.Equal(enum, want) {
		errs = append(errs, fmt.Errorf("schema: code enum %v differs from the codes %v", enum, want))
	}
	return errs
}

// codeList renders the codes and their meanings for the prompt.
func (s *Spec) codeList() string {
	var b strings.Builder
	for i, c := range s.Codes {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "- %s: %s", c, s.Meanings[c])
	}
	return b.String()
}

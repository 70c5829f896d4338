package realcorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/rubric"
)

// Verdicts of a review.
const (
	// VerdictTrue: the claim is true and its severity matches its
	// evidence.
	VerdictTrue = "true"
	// VerdictFalse: the claim is false (a false accusation).
	VerdictFalse = "false"
	// VerdictOverstated: the claim is true but its severity claims more
	// than its evidence shows. Counted as unjustified.
	VerdictOverstated = "overstated"
)

// Review is one reviewed finding.
type Review struct {
	Server  string `yaml:"server"`
	Code    string `yaml:"code"`
	Subject string `yaml:"subject"`
	Field   string `yaml:"field,omitempty"`
	// Match, when set, is a substring of the finding's evidence or
	// message, for findings that share server, code, subject and field
	// (two egress attempts of the run phase).
	Match   string `yaml:"match,omitempty"`
	Verdict string `yaml:"verdict"`
	Why     string `yaml:"why"`
}

// ReviewFile is review.yaml.
type ReviewFile struct {
	Reviewer string   `yaml:"reviewer"`
	Rubric   string   `yaml:"rubric"`
	Reviews  []Review `yaml:"reviews"`
}

// ReadReviews reads review.yaml; a missing file is an empty review.
func ReadReviews(path string) (ReviewFile, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ReviewFile{}, nil
	}
	if err != nil {
		return ReviewFile{}, err
	}
	var rf ReviewFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		return ReviewFile{}, fmt.Errorf("%s: %w", path, err)
	}
	for i, r := range rf.Reviews {
		switch r.Verdict {
		case VerdictTrue, VerdictFalse, VerdictOverstated:
		default:
			return ReviewFile{}, fmt.Errorf("%s: review %d (%s %s): verdict %q", path, i+1, r.Server, r.Code, r.Verdict)
		}
		if strings.TrimSpace(r.Why) == "" {
			return ReviewFile{}, fmt.Errorf("%s: review %d (%s %s): no why", path, i+1, r.Server, r.Code)
		}
	}
	return rf, nil
}

func (r Review) matches(f Finding) bool {
	return r.Server == f.Server && r.Code == f.Code && r.Subject == f.Subject && r.Field == f.Field &&
		(r.Match == "" || strings.Contains(f.Evidence, r.Match) || strings.Contains(f.Message, r.Match))
}

// Judged is a finding with its verdict.
type Judged struct {
	Finding
	// Verdict is "" when nobody reviewed the finding.
	Verdict, Why string
	// Mechanical says the verdict came from checking the claim against the
	// listing, not from a person.
	Mechanical bool
}

// Judge gives each finding its verdict: a person's, from the review,
// where one matches; else, for a code that only restates the listing, a
// check of the claim against the server's recording; else none. It
// returns the reviews that match no finding, which are stale.
func Judge(fs []Finding, servers map[string]Server, rf ReviewFile) ([]Judged, []Review) {
	used := make([]bool, len(rf.Reviews))
	out := make([]Judged, 0, len(fs))
	for _, f := range fs {
		j := Judged{Finding: f}
		for i, r := range rf.Reviews {
			if r.matches(f) {
				j.Verdict, j.Why, used[i] = r.Verdict, r.Why, true
				break
			}
		}
		if j.Verdict == "" {
			if v, why, ok := mechanical(f, servers[f.Server]); ok {
				j.Verdict, j.Why, j.Mechanical = v, why, true
			}
		}
		out = append(out, j)
	}
	var stale []Review
	for i, r := range rf.Reviews {
		if !used[i] {
			stale = append(stale, r)
		}
	}
	return out, stale
}

// Restating codes claim only what the listing says; their claim is checked
// against the Inspector's recording of the server, which was made outside
// the sandbox by another client.
var restating = map[string]bool{
	"pkg.contract.annotation.absent":            true,
	"pkg.contract.tool.destructive":             true,
	"pkg.contract.schema.missing":               true,
	"pkg.contract.schema.undescribed_parameter": true,
	"pkg.contract.description.missing":          true,
}

// mechanical checks a restating code's claim against the listing.
func mechanical(f Finding, s Server) (verdict, why string, ok bool) {
	if v, why, ok := recorded(f, s); ok {
		return v, why, true
	}
	if !restating[f.Code] || s.Recording.Contract == nil {
		return "", "", false
	}
	var tool *contract.Tool
	for i := range s.Recording.Contract.Tools {
		if s.Recording.Contract.Tools[i].Name == f.Subject {
			tool = &s.Recording.Contract.Tools[i]
		}
	}
	if tool == nil {
		return VerdictFalse, "the Inspector's listing has no tool " + f.Subject, true
	}
	holds := false
	switch f.Code {
	case "pkg.contract.annotation.absent":
		holds = tool.Annotations == nil
	case "pkg.contract.tool.destructive":
		holds = tool.Destructive()
	case "pkg.contract.schema.missing":
		var sc struct {
			Type any `json:"type"`
		}
		holds = json.Unmarshal(tool.InputSchema, &sc) != nil || sc.Type != "object"
	case "pkg.contract.description.missing":
		holds = len([]rune(strings.TrimSpace(tool.Description))) < 20
	case "pkg.contract.schema.undescribed_parameter":
		holds = lacking(tool.InputSchema, reLacking.FindAllStringSubmatch(f.Evidence, -1))
	}
	if holds {
		return VerdictTrue, "checked against the Inspector's listing", true
	}
	return VerdictFalse, "the Inspector's listing does not show it", true
}

// reLacking reads the parameters the evidence names: "filters (no
// description), id (no type, no description)".
var reLacking = regexp.MustCompile(`(?:^|, )([^\s,()]+) \(not? `)

// lacking reports whether every named top-level property of a schema
// lacks a type or a description.
func lacking(schema json.RawMessage, names [][]string) bool {
	var sc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &sc) != nil || len(names) == 0 {
		return false
	}
	for _, m := range names {
		raw, ok := sc.Properties[m[1]]
		if !ok {
			return false
		}
		var p map[string]any
		if json.Unmarshal(raw, &p) != nil {
			continue // not a schema object: it lacks both
		}
		d, _ := p["description"].(string)
		if p["type"] != nil && strings.TrimSpace(d) != "" {
			return false
		}
	}
	return true
}

// recorded checks the scan's codes that restate what the Inspector's
// recording also holds: the protocol version the server answered, a list
// method it answered with Method not found, non-JSON lines on stdout, the
// packages of its tree that declare install scripts.
func recorded(f Finding, s Server) (verdict, why string, ok bool) {
	rec := s.Recording
	holds := false
	switch f.Code {
	case "pkg.session.spec.outdated":
		score, listed := rubric.Current().Params.SpecRecency.Scores[rec.ProtocolVersion]
		holds = rec.ProtocolVersion != "" && (!listed || score < 100)
	case "pkg.protocol.list.unsupported":
		u := rec.Unsupported[f.Subject]
		holds = strings.Contains(u, "-32601") || strings.Contains(u, "Method not found")
	case "pkg.protocol.stdout.non_json":
		holds = len(rec.NonJSONStdout) > 0
	case "pkg.install.scripts.present":
		for _, p := range rec.InstallScripts {
			if i := strings.LastIndex(p, "@"); i > 0 && p[:i] == f.Subject {
				holds = true
			}
		}
	default:
		return "", "", false
	}
	if holds {
		return VerdictTrue, "checked against the Inspector's recording", true
	}
	return VerdictFalse, "the Inspector's recording does not show it", true
}

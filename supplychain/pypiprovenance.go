package supplychain

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/verifymcp/verifymcp/evidence"
)

// PyPIProvenanceState is what an index said about one file's PEP 740
// provenance.
type PyPIProvenanceState string

const (
	// PyPIProvenanceAttested: the index serves a provenance object with at
	// least one attestation for the file.
	PyPIProvenanceAttested PyPIProvenanceState = "attested"
	// PyPIProvenanceNone: the index's Integrity API answered that the file
	// has no provenance (PyPI's 404 with "No provenance available for
	// <filename>"). The file was uploaded without attestations.
	PyPIProvenanceNone PyPIProvenanceState = "none"
	// PyPIProvenanceUnserved: the index answered 404 without the
	// Integrity API's own message, as a mirror or proxy that does not
	// serve /integrity/ does for every file. Nothing can be said about
	// provenance either way: it is not "none".
	PyPIProvenanceUnserved PyPIProvenanceState = "unserved"
)

// PyPIPublisher is the Trusted Publisher identity of an attestation
// bundle (PEP 740's publisher object, as pypi-attestations models it).
type PyPIPublisher struct {
	// Kind is "GitHub", "GitLab", "Google" or "ActiveState" (as the index
	// names it).
	Kind string `json:"kind"`
	// Repository is the publishing repository slug ("owner/name", GitHub
	// and GitLab).
	Repository string `json:"repository,omitempty"`
	// Workflow is the GitHub Actions workflow file name, or GitLab's CI
	// file path (workflow_filepath).
	Workflow string `json:"workflow,omitempty"`
	// Environment is the CI environment published from, if any.
	Environment string `json:"environment,omitempty"`
	// Email is a Google publisher's service account.
	Email string `json:"email,omitempty"`
}

// PyPIProvenance is the answer of an index's Integrity API for one file.
// Attestations are counted and their publishers read, not verified: no
// Sigstore signature or certificate is checked, so State attested says
// the index holds attestations naming this publisher, not that the file
// was built from that repository.
type PyPIProvenance struct {
	Project  string              `json:"project"`
	Version  string              `json:"version"`
	Filename string              `json:"filename"`
	URL      string              `json:"url"`
	State    PyPIProvenanceState `json:"state"`
	// Publishers are the bundles' publishers, in the order served.
	Publishers []PyPIPublisher `json:"publishers,omitempty"`
	// Attestations is the number of attestations over all bundles.
	Attestations int `json:"attestations"`
	// PredicateTypes are the in-toto predicate types of the attestations'
	// statements, sorted ("https://docs.pypi.org/attestations/publish/v1",
	// "https://slsa.dev/provenance/v1"); a statement that cannot be
	// decoded adds none.
	PredicateTypes []string `json:"predicate_types,omitempty"`
	// Subjects are the statements' subject sha256 digests by subject
	// name, so a caller can compare them with the file's digest.
	Subjects map[string]string `json:"subjects,omitempty"`
	// Reason says why the state is unserved or none, as the index put it.
	Reason string `json:"reason,omitempty"`
}

// pypiIntegrityMaxBody bounds a provenance answer: a bundle carries
// certificates and inclusion proofs, a few kilobytes per attestation.
const pypiIntegrityMaxBody = 4 << 20

// Provenance asks the index's Integrity API (PEP 740, GET
// <index>/integrity/<project>/<version>/<filename>/provenance) for the
// provenance of one distribution file of a release.
//
// A 200 with a provenance object is attested; PyPI's 404 with its "No
// provenance available" message is none; any other 404 (an empty body,
// a mirror's own page) is unserved. None of these is an error. Errors:
// ErrBadName for an invalid project name or file name; thirdparty.ErrUnavailable
// (with ErrRegistryUnreachable) when the index does not answer after
// retries, answers 429 or 5xx throughout, refuses (401, 403: PyPI's
// "Attestations temporarily disabled" is a 403), or answers 200 with
// something that is not a provenance object; anything else (406: our
// request) is our own failure.
func (p *PyPI) Provenance(ctx context.Context, name, version, filename string) (*PyPIProvenance, error) {
	if err := pkgspec.ValidPyPIName(name); err != nil {
		return nil, fmt.Errorf("pypi provenance: %w", err)
	}
	if filename == "" || strings.ContainsAny(filename, "/\\") || strings.TrimSpace(version) == "" {
		return nil, fmt.Errorf("pypi provenance: %w: file %q of version %q", ErrBadName, filename, version)
	}
	norm := pkgspec.NormalizePyPIName(name)
	u := p.base + "/integrity/" + url.PathEscape(norm) + "/" + url.PathEscape(version) + "/" + url.PathEscape(filename) + "/provenance"
	out := &PyPIProvenance{Project: norm, Version: version, Filename: filename, URL: u}

	resp, err := p.retry.Do(ctx, p.hc, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/vnd.pypi.integrity.v1+json, application/json;q=0.9")
		req.Header.Set("User-Agent", "verifymcp")
		return req, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pypi provenance %s: %w: %w", filename, ErrRegistryUnreachable, err)
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, pypiIntegrityMaxBody+1))
	unreachable := func(format string, args ...any) error {
		return fmt.Errorf("pypi provenance %s: %w: %w: %s", filename, ErrRegistryUnreachable, thirdparty.ErrUnavailable, fmt.Sprintf(format, args...))
	}
	if rerr != nil {
		return nil, unreachable("reading the answer: %v", rerr)
	}
	if len(body) > pypiIntegrityMaxBody {
		return nil, unreachable("answer larger than %d bytes", pypiIntegrityMaxBody)
	}

	switch resp.StatusCode {
	case http.StatusOK:
		if err := out.read(body); err != nil {
			return nil, unreachable("GET %s: %v", thirdparty.RedactURL(u), err)
		}
		out.State = PyPIProvenanceAttested
		return out, nil
	case http.StatusNotFound:
		if msg, ok := pypiIntegrityMessage(body); ok && strings.HasPrefix(strings.ToLower(msg), "no provenance available") {
			out.State, out.Reason = PyPIProvenanceNone, msg
			return out, nil
		}
		out.State = PyPIProvenanceUnserved
		out.Reason = "the index answered 404 without the Integrity API's message: it may not serve PEP 740 provenance (a mirror or proxy), or may not hold the file"
		return out, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		msg, _ := pypiIntegrityMessage(body)
		return nil, unreachable("GET %s: %s %s", thirdparty.RedactURL(u), resp.Status, msg)
	case http.StatusNotAcceptable:
		return nil, fmt.Errorf("pypi provenance %s: the index refused the Accept header: %s", filename, resp.Status)
	default:
		return nil, unreachable("GET %s: %s", thirdparty.RedactURL(u), resp.Status)
	}
}

// pypiIntegrityMessage reads the Integrity API's error body,
// {"message": "..."}.
func pypiIntegrityMessage(body []byte) (string, bool) {
	var m struct {
		Message *string `json:"message"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &m) != nil || m.Message == nil {
		return "", false
	}
	return *m.Message, true
}

// pypiProvenanceDoc is PEP 740's provenance object.
type pypiProvenanceDoc struct {
	Version            *int `json:"version"`
	AttestationBundles []struct {
		Publisher *struct {
			Kind             string  `json:"kind"`
			Repository       string  `json:"repository"`
			Workflow         string  `json:"workflow"`
			WorkflowFilepath string  `json:"workflow_filepath"`
			Environment      *string `json:"environment"`
			Email            string  `json:"email"`
		} `json:"publisher"`
		Attestations []struct {
			Envelope struct {
				Statement string `json:"statement"`
			} `json:"envelope"`
		} `json:"attestations"`
	} `json:"attestation_bundles"`
}

// read fills the publishers and attestations from a provenance object. A
// body that is not one (no version 1, no bundle, a bundle without a
// publisher or attestations) is refused: a 200 that says nothing usable is
// not provenance.
func (out *PyPIProvenance) read(body []byte) error {
	var d pypiProvenanceDoc
	if err := json.Unmarshal(body, &d); err != nil {
		return fmt.Errorf("not a provenance object: %w", err)
	}
	if d.Version == nil || *d.Version != 1 {
		return errors.New("not a version 1 provenance object")
	}
	if len(d.AttestationBundles) == 0 {
		return errors.New("provenance object without attestation bundles")
	}
	predicates := map[string]bool{}
	for i, b := range d.AttestationBundles {
		if b.Publisher == nil || b.Publisher.Kind == "" {
			return fmt.Errorf("attestation bundle %d has no publisher", i)
		}
		if len(b.Attestations) == 0 {
			return fmt.Errorf("attestation bundle %d has no attestations", i)
		}
		pub := PyPIPublisher{
			Kind: b.Publisher.Kind, Repository: b.Publisher.Repository,
			Workflow: cmpOr(b.Publisher.Workflow, b.Publisher.WorkflowFilepath), Email: b.Publisher.Email,
		}
		if b.Publisher.Environment != nil {
			pub.Environment = *b.Publisher.Environment
		}
		out.Publishers = append(out.Publishers, pub)
		for _, a := range b.Attestations {
			out.Attestations++
			st, ok := decodeStatement(a.Envelope.Statement)
			if !ok {
				continue
			}
			if st.PredicateType != "" {
				predicates[st.PredicateType] = true
			}
			for _, s := range st.Subject {
				if d := s.Digest["sha256"]; s.Name != "" && d != "" {
					if out.Subjects == nil {
						out.Subjects = map[string]string{}
					}
					out.Subjects[s.Name] = strings.ToLower(d)
				}
			}
		}
	}
	for t := range predicates {
		out.PredicateTypes = append(out.PredicateTypes, t)
	}
	slices.Sort(out.PredicateTypes)
	return nil
}

type inTotoStatement struct {
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string `json:"predicateType"`
}

// decodeStatement decodes an envelope's base64 in-toto statement.
func decodeStatement(s string) (inTotoStatement, bool) {
	var st inTotoStatement
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")); err != nil {
			return st, false
		}
	}
	if json.Unmarshal(raw, &st) != nil {
		return st, false
	}
	return st, true
}

// ReleaseProvenance asks the Integrity API about every file of a resolved
// release, in the release's order. The first error ends it: a partial
// answer would make "one file attested" look like the whole release's.
func (p *PyPI) ReleaseProvenance(ctx context.Context, rel *PyPIRelease) ([]*PyPIProvenance, error) {
	if rel == nil {
		return nil, errors.New("pypi provenance: no release")
	}
	out := make([]*PyPIProvenance, 0, len(rel.Files))
	for _, f := range rel.Files {
		pr, err := p.Provenance(ctx, rel.Name, rel.Version, f.Filename)
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

// ApplyPyPIProvenance records the Integrity API's answers for a release's
// files in meta, which PyPIMetadata made (and which lists "provenance" as
// unserved until this says otherwise):
//
//   - any file attested: Provenance is true, and provenance is no longer
//     unserved;
//   - every file answered none: Provenance is false, observed (no longer
//     unserved);
//   - otherwise (no answers, or some file unserved and none attested):
//     Provenance stays false and "provenance" stays in Unserved, because
//     nothing can be said.
//
// evidence.RegistryMeta has no field for the publisher, so the repository
// and workflow stay in the PyPIProvenance values (PyPIPublishers collects
// them). It returns whether meta's provenance is now observed.
func ApplyPyPIProvenance(meta *evidence.RegistryMeta, provs []*PyPIProvenance) bool {
	if meta == nil {
		return false
	}
	attested, none := false, len(provs) > 0
	for _, pr := range provs {
		if pr == nil {
			none = false
			continue
		}
		switch pr.State {
		case PyPIProvenanceAttested:
			attested = true
		case PyPIProvenanceNone:
		default:
			none = false
		}
	}
	meta.Provenance = attested
	observed := attested || none
	meta.Unserved = slices.DeleteFunc(meta.Unserved, func(s string) bool { return s == "provenance" })
	if !observed {
		meta.Unserved = append(meta.Unserved, "provenance")
	}
	if len(meta.Unserved) == 0 {
		meta.Unserved = nil
	}
	return observed
}

// PyPIPublishers lists the distinct publishers of the attested files, in
// first-seen order.
func PyPIPublishers(provs []*PyPIProvenance) []PyPIPublisher {
	var out []PyPIPublisher
	for _, pr := range provs {
		if pr == nil || pr.State != PyPIProvenanceAttested {
			continue
		}
		for _, p := range pr.Publishers {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

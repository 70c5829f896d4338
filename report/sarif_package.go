package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// The uriBaseIds of the sandbox's files a package result relates to (its
// relatedLocations), described in each run's originalUriBaseIds. None has
// a uri: where the package was unpacked is the sandbox's, not a place a
// reader has, and no file of the repository.
const (
	// BasePackageRoot is the root of the scanned package, where its
	// package.json is.
	BasePackageRoot = "PACKAGE_ROOT"
	// BaseInstallTree is the npm project the sandbox installed the
	// package into: the package is node_modules/NAME in it, and so is
	// each dependency npm hoisted.
	BaseInstallTree = "INSTALL_TREE"
	// BaseSandboxHome is the home directory of the sandbox's user, where
	// the files a package writes outside its tree are (~/...).
	BaseSandboxHome = "SANDBOX_HOME"
	// BaseSandboxRoot is the root of the sandbox's filesystem, for a file
	// a package wrote by its absolute path.
	BaseSandboxRoot = "SANDBOX_ROOT"
)

// FingerprintKey is the partialFingerprints key of a finding's identity
// across runs; FingerprintKeyGitHub carries the same identity under the
// only key GitHub code scanning reads.
const (
	FingerprintKey       = "verifymcp/finding/v1"
	FingerprintKeyGitHub = "primaryLocationLineHash"
)

// WriteSARIF writes one package report as SARIF 2.1.0 (see
// WriteBatchSARIF). r is the rubric the report was scored under; nil loads
// it by the report's rubric version.
func WriteSARIF(w io.Writer, rep Report, r *rubric.Rubric, o SARIFOptions) error {
	return writePackageSARIF(w, []Report{rep}, r, false, o)
}

// WriteBatchSARIF writes package reports as one SARIF 2.1.0 run of the
// verifymcp driver with the results of every package. Every report must
// have been scored under r (nil: the first report's rubric version), since
// a run has one set of rules: one per reason code of r's catalog.
//
// Each finding is one result: its code, its own level (a graded finding
// can be below its code's), its message and evidence, and one location
// with a physical location, which GitHub code scanning requires: the file
// of the repository that declares the package (o.DeclaredIn) or else the
// package's stand-in path .verifymcp/ECOSYSTEM/NAME, at line 1 unless
// o.DeclaredIn names a line; beside it the package (and the tool, prompt or
// resource it names) as logical locations. The sandbox's file a finding's
// evidence names (a package.json declaring a lifecycle script, a file
// package code wrote) is a related location, relative to its uriBaseId.
// partialFingerprints come from the code, package name and subject, never
// the version nor the location, so that a finding is tracked across
// versions and wherever it is placed. The run's
// properties carry each package's run date, tool and rubric versions,
// score and the state of every signal, since a run without results says
// nothing found in the checks that ran, never that a package is safe.
func WriteBatchSARIF(w io.Writer, reps []Report, r *rubric.Rubric, o SARIFOptions) error {
	return writePackageSARIF(w, reps, r, true, o)
}

// sarifRubric is the rubric of the reports' rules: r, or the rubric of
// the reports' version; every report must have been scored under it.
func sarifRubric(reps []Report, r *rubric.Rubric) (*rubric.Rubric, error) {
	if r == nil {
		if len(reps) == 0 {
			return nil, fmt.Errorf("report: sarif: no report and no rubric")
		}
		var err error
		if r, err = rubric.Load(reps[0].Rubric.Version); err != nil {
			return nil, fmt.Errorf("report: sarif: %w", err)
		}
	}
	for _, rep := range reps {
		if rep.Rubric.Version != r.Version || rep.Rubric.Hash != r.Hash {
			return nil, fmt.Errorf("report: sarif: %s was scored under rubric v%s %s, not v%s %s", packageName(rep),
				rep.Rubric.Version, rep.Rubric.Hash, r.Version, r.Hash)
		}
	}
	return r, nil
}

func writePackageSARIF(w io.Writer, reps []Report, r *rubric.Rubric, batch bool, o SARIFOptions) error {
	r, err := sarifRubric(reps, r)
	if err != nil {
		return err
	}
	log, err := sarif.New(sarif.Version210)
	if err != nil {
		return fmt.Errorf("report: sarif: %w", err)
	}
	name, version := "verifymcp", ""
	if len(reps) > 0 {
		name, version = reps[0].Tool.Name, reps[0].Tool.Version
		for _, rep := range reps[1:] {
			if rep.Tool.Version != version {
				version = "" // each package's is in the run's properties
			}
		}
	}
	driver := sarifDriver(name, version)
	index := map[string]int{}
	for i, c := range r.Codes {
		driver.Rules = append(driver.Rules, sarifRule(sarifRuleDef{Code: c.Code, Description: c.Description, Remediation: c.Remediation,
			Severity: c.Severity, Dimension: c.Dimension, Kind: c.Kind, Graded: c.Graded}))
		index[c.Code] = i
	}
	run := sarif.NewRun(sarif.Tool{Driver: driver})
	run.OriginalUriBaseIDs = map[string]*sarif.ArtifactLocation{
		BasePackageRoot: {Description: sarif.NewTextMessage("The root of the package the result is about (its logical location), where its package.json is.")},
		BaseInstallTree: {Description: sarif.NewTextMessage("The npm project the sandbox installed the package into: the package is node_modules/NAME in it, and so is each dependency npm hoisted.")},
		BaseSandboxHome: {Description: sarif.NewTextMessage("The home directory of the sandbox's user, where the files package code wrote outside its tree are.")},
		BaseSandboxRoot: {Description: sarif.NewTextMessage("The root of the sandbox's filesystem, for the files package code wrote by their absolute path.")},
	}
	b := &sarifBuilder{run: run, opts: o, logical: map[string]uint{}, seen: map[string]int{}}
	var packages []any
	for _, rep := range reps {
		for _, f := range rep.Findings {
			i, ok := index[f.Code]
			if !ok {
				return fmt.Errorf("report: sarif: %s: code %s is not in rubric v%s", packageName(rep), f.Code, r.Version)
			}
			run.AddResult(b.result(rep, f, i, r.Codes[i]))
		}
		packages = append(packages, runProperties(rep))
	}
	if batch {
		run.PropertyBag.Properties = sarif.Properties{
			"rubric_version": r.Version, "rubric_hash": r.Hash, "notice": Notice, "packages": nonNil(packages),
		}
		run.AutomationDetails = &sarif.RunAutomationDetails{ID: sarifString("verifymcp/batch/")}
	} else {
		rep := reps[0]
		props := runProperties(rep)
		props["notice"] = rep.Notice
		run.PropertyBag.Properties = props
		// GitHub code scanning reads the id as category/run: the category
		// is verifymcp/NAME, so that uploads of two packages do not
		// replace each other's alerts, and the run is the scan's.
		run.AutomationDetails = &sarif.RunAutomationDetails{ID: sarifString("verifymcp/" + rep.Target.Name + "/" + rep.Run.ID)}
	}
	if len(b.locations) > 0 {
		run.LogicalLocations = b.locations
	}
	log.AddRun(run)
	return encodeSARIF(w, log)
}

// runProperties are what a package's result carries besides its findings:
// when and with what it was scanned, its score, and every signal's state.
func runProperties(rep Report) sarif.Properties {
	signals := map[string]any{}
	for name, s := range rep.Signals {
		sig := map[string]any{"state": s.State}
		if s.Reason != "" {
			sig["reason"] = clean(s.Reason)
		}
		signals[name] = sig
	}
	return sarif.Properties{
		"schema_version":       rep.SchemaVersion,
		"target":               packageName(rep),
		"purl":                 rep.Target.Purl,
		"run_id":               rep.Run.ID,
		"run_date":             rep.Run.Date,
		"tool_version":         rep.Tool.Version,
		"rubric_version":       rep.Rubric.Version,
		"rubric_hash":          rep.Rubric.Hash,
		"sandbox_image_digest": rep.Sandbox.ImageDigest,
		"sandbox_outcome":      rep.Sandbox.Outcome,
		"score":                rep.Score,
		"signals":              signals,
		"summary":              rep.Summary,
	}
}

// packageName names a report's package as ecosystem:name@version, and a
// release that ran as shipped as its ecosystem writes it (releaseName):
// an image by its digest, oci:registry/name@sha256:..., or by its tag
// after ':', never name@tag.
func packageName(rep Report) string {
	if rep.Shipped != nil {
		return releaseName(rep)
	}
	t := rep.Target
	return t.Ecosystem + ":" + t.Name + "@" + t.Version
}

// sarifBuilder holds what the results of a run share: the options, the
// run's logical locations and how often each fingerprint was seen.
type sarifBuilder struct {
	run       *sarif.Run
	opts      SARIFOptions
	locations []*sarif.LogicalLocation
	logical   map[string]uint // fully qualified name -> index
	seen      map[string]int
}

// logicalLocation returns the run's logical location of fqn, adding it
// under parent (nil for none).
func (b *sarifBuilder) logicalLocation(name, fqn, kind string, parent *uint) *sarif.LogicalLocation {
	i, ok := b.logical[fqn]
	if !ok {
		i = uint(len(b.locations))
		b.logical[fqn] = i
		b.locations = append(b.locations, &sarif.LogicalLocation{Index: &i, Name: sarifString(name), FullyQualifiedName: sarifString(fqn),
			Kind: sarifString(kind), ParentIndex: parent})
	}
	l := b.locations[i]
	return &sarif.LogicalLocation{Index: l.Index, Name: l.Name, FullyQualifiedName: l.FullyQualifiedName, Kind: l.Kind}
}

func (b *sarifBuilder) result(rep Report, f Finding, ruleIndex int, def rubric.CodeDef) *sarif.Result {
	res := sarif.NewRuleResult(f.Code).WithRuleIndex(ruleIndex).WithMessage(sarif.NewTextMessage(resultText(f, def)))
	if f.Kind == string(rubric.KindMeasurement) {
		// A measurement is informational, and SARIF gives an
		// informational result level none.
		res.WithKind("informational").WithLevel("none")
	} else {
		res.WithLevel(sarifLevel(f.Severity))
	}
	pkg := packageName(rep)
	loc := &sarif.Location{}
	top := b.logicalLocation(rep.Target.Name, pkg, "module", nil)
	logical := top
	if kind, name, member, ok := subjectOf(rep, f); ok {
		fqn := pkg + "/" + kind + ":" + clean(name)
		logical = b.logicalLocation(clean(name), fqn, surfaceKinds[kind], top.Index)
		if member != "" {
			logical = b.logicalLocation(clean(member), fqn+member, "member", logical.Index)
		}
	}
	loc.LogicalLocations = []*sarif.LogicalLocation{logical}
	loc.PhysicalLocation, loc.Message = b.placeOf(rep)
	res.AddLocation(loc)
	if a, what := artifactOf(rep, f); a != nil {
		res.AddRelatedLocation(&sarif.Location{PhysicalLocation: sarif.NewPhysicalLocation().WithArtifactLocation(a), Message: sarif.NewTextMessage(what)})
	}

	key := fingerprint(f.Code, rep.Target, f.Subject)
	b.seen[key]++
	n := strconv.Itoa(b.seen[key])
	res.PartialFingerprints = map[string]any{FingerprintKey: key + ":" + n, FingerprintKeyGitHub: key[:16] + ":" + n}

	if ig := f.Ignored; ig != nil {
		res.Suppressions = []*sarif.Suppression{suppression(ig, key, b.opts.Root)}
	}

	props := sarif.Properties{"package": pkg, "severity": f.Severity, "kind": f.Kind, "dimension": f.Dimension, "subject": clean(f.Subject)}
	if f.Value != nil {
		props["value"] = *f.Value
	}
	res.PropertyBag.Properties = props
	return res
}

// placeOf is where a result about rep's package stands in the repository,
// and what the place is: the declaring file the options name, else the
// package's stand-in path, at line 1 unless the options name a line.
func (b *sarifBuilder) placeOf(rep Report) (*sarif.PhysicalLocation, *sarif.Message) {
	pkg := packageName(rep)
	at, line := b.opts.DeclaredIn.Path, b.opts.DeclaredIn.Line
	what := "Where this repository declares " + clean(pkg) + "."
	if at == "" {
		at = packageStandIn(rep.Target)
		what = "A stand-in path for " + clean(pkg) + ", not a file of this repository: the scan was not told which file declares the package."
	}
	if line < 1 {
		line = 1
	}
	pl := sarif.NewPhysicalLocation().WithArtifactLocation(&sarif.ArtifactLocation{URI: sarifString(relativeURI(at))}).
		WithRegion(sarif.NewRegion().WithStartLine(line))
	return pl, sarif.NewTextMessage(what)
}

// suppression is an ignore file's acceptance of a finding: external (the
// file is not the package's), accepted, with the entry's reason, who
// accepted it until when, and where the entry is: at its file relative to
// root when the file is in the repository, else named in the
// suppression's properties (GitHub code scanning takes no absolute path).
// Its guid is derived from the finding's fingerprint and the entry, in the
// form of a version 5 UUID.
func suppression(ig *Ignored, fingerprint, root string) *sarif.Suppression {
	why := clean(ig.Reason)
	var by []string
	if ig.By != "" {
		by = append(by, "by "+clean(ig.By))
	}
	if ig.Expires != "" {
		by = append(by, "until "+clean(ig.Expires))
	}
	if len(by) > 0 {
		why += " (" + strings.Join(by, ", ") + ")"
	}
	loc, props := &sarif.Location{}, sarif.Properties{}
	if rel, ok := inRepo(root, ig.File); ok {
		pl := sarif.NewPhysicalLocation().WithArtifactLocation(&sarif.ArtifactLocation{URI: sarifString(relativeURI(rel))})
		if ig.Line > 0 {
			pl.WithRegion(sarif.NewRegion().WithStartLine(ig.Line))
		}
		loc.PhysicalLocation = pl
	} else if ig.File != "" {
		props["file"] = clean(ig.File)
		if ig.Line > 0 {
			props["line"] = ig.Line
		}
	}
	sum := sha256.Sum256([]byte(fingerprint + "\x00" + ig.File + "\x00" + strconv.Itoa(ig.Line)))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(u)
	guid := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	s := sarif.NewSuppression("external").WithStatus("accepted")
	s.Justification = sarifString(strings.TrimSpace(why))
	s.Location = loc
	s.Guid = &guid
	if len(props) > 0 {
		s.PropertyBag.Properties = props
	}
	return s
}

// resultText is a result's message: the finding's message and its
// evidence, clipped, with the characters that would display as something
// else escaped (package text is the package's, and may be hostile).
func resultText(f Finding, def rubric.CodeDef) string {
	text := clean(f.Message)
	if text == "" {
		text = clean(def.Description)
	}
	if f.Evidence != "" {
		// The message is a sentence of its own: GitHub code scanning
		// shows the first sentence as the alert's title.
		if !strings.HasSuffix(text, ".") && !strings.HasSuffix(text, "?") && !strings.HasSuffix(text, "!") {
			text += "."
		}
		text += " Evidence: " + clean(clipRunes(f.Evidence, sarifEvidenceMax))
	}
	return clipRunes(text, sarifMessageMax)
}

// surfaceKinds are the logical location kinds of the contract's parts.
var surfaceKinds = map[string]string{"tool": "function", "prompt": "prompt", "resource": "resource", "template": "resourceTemplate"}

// subjectOf reads a finding's subject as a part of the contract: a tool,
// prompt, resource or resource template (by the drift's "tool:NAME", the
// contract checks' "prompt NAME", a shipped release's surface codes'
// "tool NAME", or a name of the contract), and the
// parameter path inside it that the finding names, if any.
func subjectOf(rep Report, f Finding) (kind, name, member string, ok bool) {
	s := f.Subject
	for _, p := range []struct{ prefix, kind string }{
		{"tool:", "tool"}, {"prompt:", "prompt"}, {"resource:", "resource"}, {"template:", "template"},
		{"tool ", "tool"}, {"prompt ", "prompt"}, {"resource_template ", "template"}, {"resource ", "resource"},
	} {
		if rest, found := strings.CutPrefix(s, p.prefix); found && rest != "" {
			kind, name = p.kind, rest
			break
		}
	}
	if kind == "" {
		area, _, _ := strings.Cut(strings.TrimPrefix(f.Code, "pkg."), ".")
		if s == "" || rep.Contract == nil || (area != "contract" && area != "judge" && area != "protocol") {
			return "", "", "", false
		}
		c := rep.Contract
		switch {
		case hasName(c.Tools, s, func(t contract.Tool) string { return t.Name }):
			kind = "tool"
		case hasName(c.Prompts, s, func(p contract.Prompt) string { return p.Name }):
			kind = "prompt"
		case hasName(c.Resources, s, func(r contract.Resource) string { return r.URI }):
			kind = "resource"
		case hasName(c.Templates, s, func(t contract.Template) string { return t.URITemplate }):
			kind = "template"
		default:
			return "", "", "", false
		}
		name = s
	}
	return kind, name, parameterPath(rep, f), true
}

// parameterPath is the JSON pointer into a tool's input schema that a
// finding names: a drift change's detail, or the contract checks' field
// (input_schema/properties/path).
func parameterPath(rep Report, f Finding) string {
	if rest, ok := strings.CutPrefix(f.Evidence, "input_schema/"); ok {
		if p, _, found := strings.Cut(rest, ":"); found && p != "" && !strings.ContainsAny(p, " \"") {
			return "/" + p
		}
	}
	kind, ok := strings.CutPrefix(f.Code, "pkg.drift.")
	if !ok || rep.Drift == nil {
		return ""
	}
	changes := rep.Drift.Changes
	if rep.Drift.Session != nil {
		changes = append(append([]Change{}, changes...), rep.Drift.Session.Changes...)
	}
	for _, c := range changes {
		if c.Kind == kind && c.Subject == f.Subject && strings.HasPrefix(c.Detail, "/") && strings.HasPrefix(f.Evidence, c.Detail) {
			p, _, _ := strings.Cut(c.Detail, " ") // "/properties/path pattern": the keyword is not part of the path
			return p
		}
	}
	return ""
}

// artifactOf is the sandbox's file a finding's evidence names, and what
// it is: the package.json declaring a lifecycle script (the package's own
// at PACKAGE_ROOT, a dependency's in INSTALL_TREE), or a file package code
// wrote (in the sandbox user's home, or by its absolute path from the
// sandbox's root). nil when it names none (or names a directory the
// location cannot name). Each is a relative URI under its uriBaseId, never
// file:, which GitHub code scanning refuses.
func artifactOf(rep Report, f Finding) (*sarif.ArtifactLocation, string) {
	switch {
	case strings.HasPrefix(f.Code, "pkg.install.scripts.") && rep.Install != nil:
		for _, s := range rep.Install.Scripts {
			if s.Package != f.Subject || !strings.HasPrefix(f.Evidence, s.Event+":") {
				continue
			}
			if s.Path == "" || s.Path == "node_modules/"+rep.Target.Name {
				return artifact("package.json", BasePackageRoot), "The package's package.json, which declares the lifecycle script."
			}
			return artifact(s.Path+"/package.json", BaseInstallTree),
				"The package.json of " + clean(s.Package) + ", which declares the lifecycle script, in the project the sandbox installed into."
		}
	case strings.HasPrefix(f.Code, "pkg.behavior.file.") && rep.Behavior != nil:
		for _, e := range rep.Behavior.Files {
			op := e.Op
			if op == "" {
				op = "unknown"
			}
			if behaviorSubject(e.Phase, e.Package) != f.Subject || !strings.HasPrefix(f.Evidence, op+" "+e.Path) {
				continue
			}
			if rest, ok := strings.CutPrefix(e.Path, "~/"); ok {
				return artifact(rest, BaseSandboxHome), "The file package code " + fileVerb(op) + ", in the sandbox user's home."
			}
			if rest, ok := strings.CutPrefix(e.Path, "/"); ok {
				return artifact(rest, BaseSandboxRoot), "The file package code " + fileVerb(op) + ", by its absolute path in the sandbox."
			}
			return nil, ""
		}
	}
	return nil, ""
}

// fileVerb is what a file operation (evidence's created, modified,
// deleted) did, for a related location's message.
func fileVerb(op string) string {
	switch op {
	case "created", "modified", "deleted":
		return op
	}
	return "touched (" + clean(op) + ")"
}

// artifact is an artifact location relative to base: its path (which the
// sandbox reported, and may be hostile) cleaned into segments that stay
// under base, each escaped as a URI; nil when no segment is left.
func artifact(p, base string) *sarif.ArtifactLocation {
	var segs []string
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			seg = "_.."
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return nil
	}
	return &sarif.ArtifactLocation{URI: sarifString(relativeURI(strings.Join(segs, "/"))), URIBaseId: sarifString(base)}
}

// behaviorSubject is the subject of a behaviour finding about an event of
// phase by pkg, as the rubric names it.
func behaviorSubject(phase, pkg string) string {
	switch {
	case phase == evidence.PhaseScripts && pkg != "":
		return phase + ":" + pkg
	case phase == "":
		return "unknown"
	}
	return phase
}

// fingerprint is a finding's identity across runs and versions: its code,
// its package's ecosystem and name, and its subject with the package's
// version taken out (the unverified-signal findings name name@version).
func fingerprint(code string, t Target, subject string) string {
	if subject == t.Name+"@"+t.Version {
		subject = t.Name
	}
	sum := sha256.Sum256([]byte(code + "\x00" + t.Ecosystem + ":" + t.Name + "\x00" + subject))
	return hex.EncodeToString(sum[:])
}

func hasName[T any](items []T, name string, key func(T) string) bool {
	for _, it := range items {
		if key(it) == name {
			return true
		}
	}
	return false
}

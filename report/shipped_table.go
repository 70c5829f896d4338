package report

import (
	"strconv"
	"strings"

	"al.essio.dev/pkg/shellescape"
)

// shippedRow is one fact of the RELEASE section, as plain text: each
// writer cleans or escapes it for its format.
type shippedRow struct {
	Label, Text string
	// Alert marks what a reader must not miss: root, a signature that
	// does not verify, behaviour not watched.
	Alert bool
}

// shippedHead is the section's title line after RELEASE.
func shippedHead(sh *Shipped) string {
	return orDash(sh.Kind) + " run as shipped (no install phase): what the sandbox prepared and started in its place"
}

// shippedSentence is the section's opening sentence in Markdown and HTML.
func shippedSentence(sh *Shipped) string {
	return "The " + orDash(sh.Kind) + " ran as shipped, with no install phase: these are what the sandbox prepared and started in its place."
}

// shippedSummary is the release in one line, for the compact table: its
// kind and digest, the user it ran as, and what of it is wrong.
func shippedSummary(sh *Shipped) string {
	s := orDash(sh.Kind) + " " + orDash(sh.Digest) + ", "
	if sh.FirstStart != nil {
		s += firstStartText(sh)
	} else {
		s += "ran as " + orDash(sh.RanAs)
	}
	if sh.RootUser {
		s += " (its configuration runs it as root)"
	}
	if sig := sh.Signature; sig != nil {
		s += "; signature " + signatureWords(sig)
	}
	if sh.Unwatched != "" {
		s += "; behaviour not watched: " + sh.Unwatched
	}
	return s
}

// shippedRows are the facts of a release, in the order the section shows
// them: what it is and where it came from, how it starts and as whom,
// what it sets and holds, its manifest and declared surface, its
// signature, and what preparing it noticed.
func shippedRows(sh *Shipped) []shippedRow {
	var rows []shippedRow
	add := func(label, text string, alert bool) { rows = append(rows, shippedRow{label, text, alert}) }
	add("digest", orDash(sh.Digest), false)
	ref := orDash(sh.Reference)
	if sh.Source != "" {
		ref += " (from " + sh.Source + ")"
	}
	add("reference", ref, false)
	if sh.Resolved != "" {
		add("resolved", sh.Resolved, false)
	}
	if sh.ImageID != "" || len(sh.Layers) > 0 {
		add("image", orDash(sh.ImageID)+", "+plural(len(sh.Layers), "layer"), false)
	}
	if len(sh.Entrypoint) > 0 {
		add("entrypoint", argv(sh.Entrypoint), false)
	}
	if len(sh.Cmd) > 0 {
		label := "cmd"
		if sh.Manifest != nil {
			label = "command"
		}
		add(label, argv(sh.Cmd), false)
	}
	if sh.WorkingDir != "" {
		add("working dir", sh.WorkingDir, false)
	}
	add("user", userText(sh), sh.RootUser)
	if sh.FirstStart != nil {
		add("starts", firstStartText(sh), sh.RootUser)
	}
	if len(sh.EnvNames) > 0 {
		add("env", strings.Join(sh.EnvNames, ", ")+" (names; values are never kept)", false)
	}
	if len(sh.Ports) > 0 {
		add("ports", strings.Join(sh.Ports, ", "), false)
	}
	if len(sh.LabelNames) > 0 {
		add("labels", strings.Join(sh.LabelNames, ", ")+" (names; values left out)", false)
	}
	if sh.MCPName != "" {
		add("mcp name", sh.MCPName+" (claimed by the release's label)", false)
	}
	if sh.OS != "" || sh.Kind == "image" {
		add("contents", orDash(sh.OS)+", "+plural(sh.Packages, "package")+" found", false)
	}
	if m := sh.Manifest; m != nil {
		rows = append(rows, manifestRows(m)...)
	}
	if sh.Manifest != nil || sh.Declared != nil {
		add("declared", declaredText(sh.Declared), false)
	}
	if sig := sh.Signature; sig != nil {
		add("signature", signatureText(sig), sig.Present && !sig.Verified)
	}
	if sh.Unwatched != "" {
		add("unwatched", "behaviour was not watched: "+sh.Unwatched, true)
	}
	for _, n := range sh.Notes {
		add("note", n, false)
	}
	return rows
}

// argv is a command line with each word quoted as a shell would need it.
func argv(words []string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = shellescape.Quote(w)
	}
	return strings.Join(parts, " ")
}

// userText is the user a release declares and the one it ran as.
func userText(sh *Shipped) string {
	declared := sh.User
	switch {
	case declared == "" && sh.RootUser:
		declared = "none declared, so ROOT"
	case declared == "":
		declared = "none declared"
	case sh.RootUser:
		declared += " (ROOT)"
	}
	return declared + "; the sandbox ran it as " + orDash(sh.RanAs)
}

// firstStartText is the failed start as the sandbox's unprivileged user
// and the user of the start that followed: "first start as 65534:65534:
// start_crashed (exit 1); ran as 0:0". Its error and output are in the
// JSON and in pkg.artefact.image.requires_root's evidence.
func firstStartText(sh *Shipped) string {
	f := sh.FirstStart
	s := "first start as " + orDash(f.As) + ": " + orDash(f.Outcome)
	if f.ExitCode != nil {
		s += " (exit " + strconv.Itoa(*f.ExitCode) + ")"
	}
	return s + "; ran as " + orDash(sh.RanAs)
}

// manifestRows are a bundle's manifest: what it is, its settings, where
// it runs and its size.
func manifestRows(m *BundleManifest) []shippedRow {
	what := "MCPB " + orDash(m.ManifestVersion) + "  " + orDash(m.Name) + "@" + orDash(m.Version)
	if m.Author != "" {
		what += " by " + m.Author
	}
	what += "; " + orDash(m.ServerType) + " server, entry point " + orDash(m.EntryPoint)
	rows := []shippedRow{{Label: "manifest", Text: what}}
	if len(m.UserConfig) > 0 {
		sensitive := map[string]bool{}
		for _, s := range m.Sensitive {
			sensitive[s] = true
		}
		names := make([]string, len(m.UserConfig))
		for i, n := range m.UserConfig {
			names[i] = n
			if sensitive[n] {
				names[i] += " (sensitive)"
			}
		}
		rows = append(rows, shippedRow{Label: "user config", Text: strings.Join(names, ", ") + " (names; the scan filled placeholders)"})
	}
	var runs []string
	if len(m.Platforms) > 0 {
		runs = append(runs, "platforms "+strings.Join(m.Platforms, ", "))
	}
	if len(m.Runtimes) > 0 {
		var rts []string
		for _, k := range sortedKeys(m.Runtimes) {
			rts = append(rts, k+" "+m.Runtimes[k])
		}
		runs = append(runs, "runtimes "+strings.Join(rts, ", "))
	}
	if len(runs) > 0 {
		rows = append(rows, shippedRow{Label: "runs on", Text: strings.Join(runs, "; ")})
	}
	rows = append(rows, shippedRow{Label: "size", Text: plural(m.Files, "file") + ", " + mebibytes(m.UnpackedBytes) + " unpacked"})
	return rows
}

// declaredText is the surface a release declares before it runs, per
// kind: the names, "not declared", and whether it says it generates more.
func declaredText(d *DeclaredSurface) string {
	if d == nil {
		return "no tools or prompts declared: what it serves is not compared"
	}
	kind := func(noun string, names []string, generated bool) string {
		s := noun + " "
		switch {
		case names == nil:
			s += "not declared"
		case len(names) == 0:
			s += "none"
		default:
			s += strings.Join(names, ", ")
		}
		if generated {
			s += " (and more generated at run time)"
		}
		return s
	}
	s := kind("tools", d.Tools, d.ToolsGenerated) + "; " + kind("prompts", d.Prompts, d.PromptsGenerated)
	if d.Source != "" {
		s += " (" + d.Source + ")"
	}
	return s
}

// signatureWords is what checking a signature gave, in a few words.
func signatureWords(sig *ReleaseSignature) string {
	switch {
	case !sig.Present:
		return "none"
	case !sig.Verified:
		return "DOES NOT VERIFY"
	case sig.Trusted:
		return "verified, trusted"
	case sig.SelfSigned:
		return "verified, self-signed, not trusted"
	}
	return "verified, not trusted"
}

// signatureText is a signature in full: its format, what checking it
// gave, who signed it and why it is not trusted.
func signatureText(sig *ReleaseSignature) string {
	if !sig.Present {
		return "none: the release is not signed"
	}
	s := signatureWords(sig)
	if sig.Format != "" {
		s = sig.Format + ": " + s
	}
	if sig.Signer != "" {
		s += "; signer " + sig.Signer
	}
	if sig.Issuer != "" {
		s += ", issuer " + sig.Issuer
	}
	if sig.Reason != "" {
		s += " (" + sig.Reason + ")"
	}
	return s
}

// shipped writes the RELEASE section of a release that ran as shipped:
// its facts aligned under their labels. An installed release has none.
func (t *table) shipped(rep Report) {
	sh := rep.Shipped
	if sh == nil {
		return
	}
	t.line("")
	t.line("RELEASE  " + clean(shippedHead(sh)))
	var rows [][]string
	for _, r := range shippedRows(sh) {
		rows = append(rows, []string{r.Label, clean(r.Text)})
	}
	t.grid(rows)
}

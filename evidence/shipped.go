package evidence

// Shipped is what a release that runs as shipped (a container image, an
// MCPB bundle) was found to be when the sandbox made it ready to run, in
// place of an install phase: what it is, what it declares of itself and
// how the sandbox started it. Its ecosystem fills it; scoring reads it.
type Shipped struct {
	// Kind is "image" or "bundle".
	Kind string `json:"kind"`
	// Digest is the content digest the release was verified against
	// (sha256:...): an image's manifest digest, a bundle file's digest.
	Digest string `json:"digest"`
	// Reference is the release as fetched, by digest where it has one
	// (registry/name@sha256:...), or the file or URL it was read from.
	Reference string `json:"reference"`
	// Resolved is the release as resolved, written as a target of its
	// ecosystem ("oci:registry/name@sha256:..."), where that says more than
	// the target's name and version; "" otherwise.
	Resolved string `json:"resolved,omitempty"`
	// Source is where it came from: "registry", "daemon" (an image already
	// on the engine), "layout" (an OCI image layout directory), "file" or
	// "url".
	Source string `json:"source"`
	// ImageID is the engine's ID of the image the server ran in (the
	// digest of its configuration).
	ImageID string `json:"image_id,omitempty"`
	// Layers are the image's layer digests, in order.
	Layers []string `json:"layers,omitempty"`
	// Entrypoint, Cmd, WorkingDir and User are what the release declares
	// it starts with (an image's configuration; a bundle's command after
	// substitution in Cmd). User "" is the image's default, root.
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	WorkingDir string   `json:"working_dir,omitempty"`
	User       string   `json:"user,omitempty"`
	// RootUser is set when the release's configuration runs it as root
	// (no user, root, 0); RanAs is the user the sandbox ran it as.
	RootUser bool   `json:"root_user"`
	RanAs    string `json:"ran_as"`
	// FirstStart is the start as the sandbox's unprivileged user (65534)
	// that failed before the server answered, when the release was then
	// started again as the user its configuration names (RanAs): an image
	// that does not run as any user but its own. Nil when the first start
	// was the only one.
	FirstStart *FirstStart `json:"first_start,omitempty"`
	// EnvNames are the names of the variables the release's configuration
	// sets (values are never kept); Ports the ports it exposes.
	EnvNames []string `json:"env_names,omitempty"`
	Ports    []string `json:"ports,omitempty"`
	// Labels are an image's labels.
	Labels map[string]string `json:"labels,omitempty"`
	// MCPName is the MCP registry name the release claims for itself (an
	// image's io.modelcontextprotocol.server.name label, by which the
	// registry checks who published it); "" when it claims none.
	MCPName string `json:"mcp_name,omitempty"`
	// OS names the operating system the image holds (os-release ID and
	// VERSION_ID); Packages counts the packages found in it (OS and
	// language), which the supply-chain scans read.
	OS       string `json:"os,omitempty"`
	Packages int    `json:"packages"`
	// Manifest is a bundle's manifest.json, as the bundle holds it.
	Manifest *BundleManifest `json:"manifest,omitempty"`
	// Declared is the surface the release declares before it runs (a
	// bundle's manifest tools and prompts): what the user approves at
	// install. Nil when the release declares none.
	Declared *DeclaredSurface `json:"declared,omitempty"`
	// Signature is the release's signature; nil when the kind has none.
	Signature *ReleaseSignature `json:"signature,omitempty"`
	// Unwatched, when set, says why behaviour capture could not watch the
	// server of this release (an image without the shell its wrapper
	// needs): the behaviour signal is then not assessed.
	Unwatched string `json:"unwatched,omitempty"`
	// Notes are what preparing the release noticed that is not a finding.
	Notes []string `json:"notes,omitempty"`
}

// FirstStart is a failed start as the sandbox's unprivileged user.
type FirstStart struct {
	// As is the user it ran as ("65534:65534").
	As string `json:"as"`
	// Outcome is how it ended (start_crashed, handshake_timeout, ...).
	Outcome Outcome `json:"outcome"`
	// ExitCode is the server's exit status when it exited; Error what
	// the session saw, and StderrTail the end of its standard error,
	// masked as every output is.
	ExitCode   *int   `json:"exit_code,omitempty"`
	Error      string `json:"error,omitempty"`
	StderrTail string `json:"stderr_tail,omitempty"`
}

// BundleManifest is what a bundle's manifest.json says of the bundle and
// its server.
type BundleManifest struct {
	ManifestVersion string `json:"manifest_version"`
	Name            string `json:"name"`
	Version         string `json:"version"`
	Author          string `json:"author,omitempty"`
	// ServerType is node, python, binary or uv; EntryPoint its entry
	// point in the bundle.
	ServerType string `json:"server_type"`
	EntryPoint string `json:"entry_point"`
	// UserConfig are the names of the settings the user fills at install,
	// Sensitive those marked sensitive (their placeholder values are
	// masked like --env values).
	UserConfig []string `json:"user_config,omitempty"`
	Sensitive  []string `json:"sensitive,omitempty"`
	// Platforms and Runtimes are the manifest's compatibility.
	Platforms []string          `json:"platforms,omitempty"`
	Runtimes  map[string]string `json:"runtimes,omitempty"`
	// Files and UnpackedBytes are the bundle's size once unpacked.
	Files         int   `json:"files"`
	UnpackedBytes int64 `json:"unpacked_bytes"`
}

// DeclaredSurface is the surface a release declares of itself before it
// runs. A kind whose list the release generates at run time is not
// compared (ToolsGenerated, PromptsGenerated); a nil list is one the
// release does not declare.
type DeclaredSurface struct {
	// Source names the declaration ("manifest.json").
	Source           string   `json:"source"`
	Tools            []string `json:"tools"`
	Prompts          []string `json:"prompts"`
	ToolsGenerated   bool     `json:"tools_generated,omitempty"`
	PromptsGenerated bool     `json:"prompts_generated,omitempty"`
}

// ReleaseSignature is a release's signature and what checking it gave.
type ReleaseSignature struct {
	// Present: the release carries a signature. Verified: it is a valid
	// signature over the release's content. SelfSigned: its signer's
	// certificate is its own issuer (the content verifies, the signer is
	// not vouched for). Trusted: the signer chains to a trusted root.
	Present    bool   `json:"present"`
	Format     string `json:"format,omitempty"`
	Verified   bool   `json:"verified"`
	SelfSigned bool   `json:"self_signed,omitempty"`
	Trusted    bool   `json:"trusted,omitempty"`
	Signer     string `json:"signer,omitempty"`
	Issuer     string `json:"issuer,omitempty"`
	// Reason says why a present signature does not verify or is not
	// trusted.
	Reason string `json:"reason,omitempty"`
}

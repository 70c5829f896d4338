package oci

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Config is what an image's configuration says about how it runs.
type Config struct {
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	// User is the configured user as written ("", "root", "1000:1000",
	// "nonroot"); "" runs as root.
	User       string `json:"user,omitempty"`
	WorkingDir string `json:"working_dir,omitempty"`
	// EnvNames are the names of the configured environment variables,
	// sorted: what evidence may record, since values can be secrets baked
	// into the image.
	EnvNames []string `json:"env_names,omitempty"`
	// Env is the environment as configured (NAME=value), for the
	// integrator to reproduce the container's environment. It must not be
	// written to evidence or logs; it is left out of JSON for that reason.
	Env []string `json:"-"`
	// ExposedPorts are the exposed ports as written ("8080/tcp"), sorted.
	ExposedPorts []string          `json:"exposed_ports,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	OS           string            `json:"os,omitempty"`
	Architecture string            `json:"architecture,omitempty"`
}

// ParseConfig reads an image configuration (the OCI image config, or
// Docker's, which has the same fields).
func ParseConfig(data []byte) (Config, error) {
	var raw struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Config       struct {
			Entrypoint   []string            `json:"Entrypoint"`
			Cmd          []string            `json:"Cmd"`
			User         string              `json:"User"`
			WorkingDir   string              `json:"WorkingDir"`
			Env          []string            `json:"Env"`
			ExposedPorts map[string]struct{} `json:"ExposedPorts"`
			Labels       map[string]string   `json:"Labels"`
		} `json:"config"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("oci: parse image config: %w", err)
	}
	c := raw.Config
	out := Config{
		Entrypoint: c.Entrypoint, Cmd: c.Cmd, User: c.User, WorkingDir: c.WorkingDir,
		Env: c.Env, Labels: c.Labels, OS: raw.OS, Architecture: raw.Architecture,
	}
	for _, kv := range c.Env {
		name, _, _ := strings.Cut(kv, "=")
		out.EnvNames = append(out.EnvNames, name)
	}
	slices.Sort(out.EnvNames)
	out.EnvNames = slices.Compact(out.EnvNames)
	for p := range c.ExposedPorts {
		out.ExposedPorts = append(out.ExposedPorts, p)
	}
	slices.Sort(out.ExposedPorts)
	return out, nil
}

// OwnershipLabel is the image label through which the MCP registry
// checks that an image belongs to the server it is published under.
const OwnershipLabel = "io.modelcontextprotocol.server.name"

// Ownership is what an image's labels say about the server it belongs to.
type Ownership struct {
	Label string `json:"label"`
	// Present is true when the image carries OwnershipLabel.
	Present bool `json:"present"`
	// Match is true when its value is the server's name exactly.
	Match  bool   `json:"match"`
	Reason string `json:"reason"`
}

// CheckOwnership applies the MCP registry's rule (modelcontextprotocol/
// registry, internal/validators/registries/oci.go, ValidateOCI): the
// image config's label OwnershipLabel must exist and equal the server's
// name byte for byte: no trimming, no case folding. The registry reads
// the labels of the image's configuration (for a multi-platform index,
// of the platform image it resolves), which is what Config.Labels holds.
func CheckOwnership(labels map[string]string, serverName string) Ownership {
	o := Ownership{Label: OwnershipLabel}
	v, ok := labels[OwnershipLabel]
	switch {
	case !ok:
		o.Reason = fmt.Sprintf("the image has no %s label; the MCP registry refuses to publish it as %q", OwnershipLabel, serverName)
	case v != serverName:
		o.Present = true
		o.Reason = fmt.Sprintf("the image's %s label is %q, not %q", OwnershipLabel, v, serverName)
	default:
		o.Present, o.Match = true, true
		o.Reason = fmt.Sprintf("the image's %s label is %q", OwnershipLabel, v)
	}
	return o
}

// RunsAsRoot reports whether a configured user runs the container as
// root: no user, or a user part (before ':') of "root" or uid 0 (0, 00),
// whatever the group.
func RunsAsRoot(user string) bool {
	u, _, _ := strings.Cut(strings.TrimSpace(user), ":")
	if u == "" || u == "root" {
		return true
	}
	return strings.Trim(u, "0") == "" // "0", "00": uid 0
}

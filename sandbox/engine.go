// Package sandbox runs one package in hardened Docker containers through the
// Docker engine API: it builds the sandbox image, installs the exact version
// (a fetch step with registry-only egress, then a script step with no
// network), starts the server with no network and captures its MCP contract
// over the attach stream. It reports what it observed; it never scores.
package sandbox

import (
	"fmt"

	"github.com/docker/docker/client"
)

// LabelRun is carried by every container, network and volume a scan creates;
// its value is the run id. The reaper removes anything labelled with it.
const LabelRun = "verifymcp.sandbox"

// NewClient connects to the Docker engine named by the environment
// (DOCKER_HOST and friends) and negotiates the API version, so engines as
// old as API 1.41 work.
func NewClient() (*client.Client, error) {
	opts := append([]client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}, engineTimesOpt()...)
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return cli, nil
}

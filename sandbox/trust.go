package sandbox

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
)

// The run's trust store. The sink makes a certificate authority for each
// run (its key never leaves the sink's memory) and answers TLS with leaves
// it signs, so that a package that trusts it lets the sink read what it
// sends inside TLS. The observer's sink writes the CA's certificate, and
// nothing else, into a small volume of the run (trustVolumeDir in the
// observer), which the watched containers mount read-only over the
// image's system store (trustDir): OpenSSL, Python's ssl, Go and curl read
// it there, and the runtimes that keep their own roots are pointed at it
// by the variables of trustEnv. The fetch step is not watched and keeps
// the image's store and the operator's CA bundle: it talks to the real
// registry.
const (
	trustDir       = "/etc/ssl/certs"
	trustFile      = trustDir + "/ca-certificates.crt"
	trustVolumeDir = "/trust"
	// trustCAFile is where the observer's sink writes the CA.
	trustCAFile = trustVolumeDir + "/ca-certificates.crt"
)

// trustEnv are the variables that point a runtime at a CA bundle of its
// own choosing, each set to trustFile in the watched containers unless
// the operator set it: Node's extra CAs (Bun reads it too), OpenSSL's
// default file (Python's ssl, uv, httpx, Go), requests', curl's, pip's
// and Deno's.
var trustEnv = []string{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "DENO_CERT"}

// trustMount mounts the trust store read-only over the image's. NoCopy:
// the engine would otherwise fill an empty volume with what the image
// holds at the mount point the first time it is mounted (hundreds of
// certificates, past the volume's few files), and the store must hold the
// run's CA alone.
func trustMount(vol string) mount.Mount {
	m := mountVolume(vol, trustDir, true)
	m.VolumeOptions = &mount.VolumeOptions{NoCopy: true}
	return m
}

// createTrust creates the run's trust store volume: a tmpfs of a few
// files, root's (the observer writes it), readable by the sandbox user.
func (r *run) createTrust(ctx context.Context) (string, error) {
	v, err := r.cli.VolumeCreate(ctx, volume.CreateOptions{Name: r.name("trust"), Driver: "local",
		DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m,nr_inodes=16,mode=0755,nosuid,nodev,noexec"},
		Labels:     r.labels()})
	if err != nil {
		return "", fmt.Errorf("create volume trust: %w", err)
	}
	return v.Name, nil
}

package cli

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/docker/docker/client"

	"github.com/verifymcp/verifymcp/sandbox"
)

// engineInfo is a connected engine and what it told us about itself.
type engineInfo struct {
	cli           *client.Client
	engineVersion string
	apiVersion    string
	host          string
}

// connectEngine connects to the Docker engine and negotiates the API
// version; a failure is an infrastructure error with a hint.
func connectEngine(ctx context.Context) (*engineInfo, error) {
	cli, err := sandbox.NewClient()
	if err != nil {
		return nil, engineError{err}
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := cli.ServerVersion(pctx)
	if err != nil {
		cli.Close()
		return nil, engineError{fmt.Errorf("Docker engine not reachable at %s: %v (install Debian's docker.io and start dockerd, or run scripts/setup.sh)", cli.DaemonHost(), err)}
	}
	return &engineInfo{cli: cli, engineVersion: v.Version, apiVersion: cli.ClientVersion(), host: cli.DaemonHost()}, nil
}

// caBundle is the CA bundle an operator configured, if any.
type caBundle struct {
	Path   string
	Data   []byte
	SHA256 string
	Certs  int
}

// loadCABundle reads the bundle named by the flag or VERIFYMCP_CA_BUNDLE.
// An empty path means no bundle (the default).
func loadCABundle(path string) (*caBundle, error) {
	if path == "" {
		path = os.Getenv("VERIFYMCP_CA_BUNDLE")
	}
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("CA bundle: %v", err)
	}
	n := 0
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(block.Bytes); err == nil {
				n++
			}
		}
	}
	if n == 0 {
		return nil, usagef("CA bundle %s holds no PEM certificate", path)
	}
	sum := sha256.Sum256(data)
	return &caBundle{Path: path, Data: data, SHA256: hex.EncodeToString(sum[:]), Certs: n}, nil
}

// httpClient returns the host-side HTTP client for the registry: the
// system roots plus the operator's CA bundle, if any. A zero timeout leaves
// the bound to the caller (image downloads bound each request themselves).
func httpClient(ca *caBundle, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if ca != nil {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		pool.AppendCertsFromPEM(ca.Data)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// ensureImage makes sure the sandbox image exists, building it when it
// does not, and says so.
func (g *globals) ensureImage(ctx context.Context, e *engineInfo, registry string, ca *caBundle) (sandbox.Image, error) {
	img, ok, err := sandbox.InspectImage(ctx, e.cli)
	if err != nil {
		return img, engineError{fmt.Errorf("inspect sandbox image: %w", err)}
	}
	if ok {
		return img, nil
	}
	g.log.Info("sandbox image not found; building it first (once per recipe; a few minutes where no container registry is reachable)", "image", sandbox.ImageRef())
	img, _, err = sandbox.EnsureImage(ctx, e.cli, sandbox.ImageOptions{NPMRegistry: registry, Progress: &lineWriter{log: g.log}, HTTPClient: httpClient(ca, 0)})
	if err != nil {
		if ctx.Err() != nil {
			return img, ctx.Err()
		}
		return img, imageError{fmt.Errorf("build sandbox image %s: %w", sandbox.ImageRef(), err)}
	}
	return img, nil
}

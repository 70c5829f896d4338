package sandbox

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
)

// The fetch step reaches the registry through an egress proxy: a container
// on two networks, the run's internal network (which has no route out) and
// the engine's default bridge. It runs this program's own static binary, so
// no image registry is needed, and it tunnels CONNECT requests to an
// allow-list of host:port pairs and refuses everything else. npm in the
// fetch container is configured to use it; anything else in that container
// has no route at all.

// EgressEvent is one request the egress proxy saw.
type EgressEvent struct {
	Time    time.Time `json:"time"`
	Method  string    `json:"method"`
	Target  string    `json:"target"`
	Allowed bool      `json:"allowed"`
}

// ServeEgressProxy accepts proxy requests on ln until ctx ends. CONNECT to an
// allowed host:port is tunnelled; every other request gets 403. Each
// request is written to events as one JSON line.
func ServeEgressProxy(ctx context.Context, ln net.Listener, allow []string, events io.Writer) error {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[strings.ToLower(a)] = true
	}
	var mu sync.Mutex
	logEvent := func(ev EgressEvent) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(ev)
		_, _ = events.Write(append(b, '\n'))
	}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			target := req.Host
			if req.Method != http.MethodConnect {
				target = req.URL.String()
			}
			ok := req.Method == http.MethodConnect && allowed[strings.ToLower(req.Host)]
			logEvent(EgressEvent{Time: time.Now().UTC(), Method: req.Method, Target: target, Allowed: ok})
			if !ok {
				w.Header().Set(EgressErrorHeader, "not_allowed")
				http.Error(w, "verifymcp egress proxy: destination not allowed", http.StatusForbidden)
				return
			}
			upstream, err := (&net.Dialer{Timeout: 15 * time.Second}).DialContext(req.Context(), "tcp", req.Host)
			if err != nil {
				// The fetch driver reads why from the headers, so that a
				// registry that does not resolve or answer is diagnosed
				// exactly (see fault.go).
				w.Header().Set(EgressErrorHeader, dialFailure(err))
				w.Header().Set(EgressDetailHeader, oneLineText(err.Error()))
				http.Error(w, "verifymcp egress proxy: "+err.Error(), http.StatusBadGateway)
				return
			}
			hj, ok := w.(http.Hijacker)
			if !ok {
				upstream.Close()
				http.Error(w, "hijack unsupported", http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusOK)
			conn, rw, err := hj.Hijack()
			if err != nil {
				upstream.Close()
				return
			}
			go tunnel(conn, rw, upstream)
		}),
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// EgressErrorHeader says, on a CONNECT the egress proxy did not tunnel,
// why: not_allowed (403), or why the dial failed (502): dns, refused,
// timeout, unreachable, error. EgressDetailHeader holds the dial error.
const (
	EgressErrorHeader  = "X-Verifymcp-Egress-Error"
	EgressDetailHeader = "X-Verifymcp-Egress-Detail"
)

// dialFailure names why a dial failed, from the error's type.
func dialFailure(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, syscall.ETIMEDOUT):
		return "timeout"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTDOWN), errors.Is(err, syscall.ENETDOWN):
		return "unreachable"
	default:
		return "error"
	}
}

func tunnel(client net.Conn, rw *bufio.ReadWriter, upstream net.Conn) {
	defer client.Close()
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the client sent after the CONNECT line are already buffered.
		if n := rw.Reader.Buffered(); n > 0 {
			b, _ := rw.Reader.Peek(n)
			_, _ = upstream.Write(b)
		}
		_, _ = io.Copy(upstream, client)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, upstream)
		done <- struct{}{}
	}()
	<-done
}

// helperImageRef returns the tag of the helper image for a binary.
func helperImageRef(sum string) string { return "verifymcp-helper:" + sum[:12] }

// ErrHelperNotStatic is returned when the helper binary is dynamically
// linked and so cannot run in an image built from scratch.
var ErrHelperNotStatic = errors.New("helper binary is dynamically linked; build verifymcp with CGO_ENABLED=0")

// EnsureHelperImage builds (once per binary) a minimal image holding only
// the static binary at path, and returns its tag.
func EnsureHelperImage(ctx context.Context, cli client.APIClient, path string) (string, error) {
	h, err := LoadHelper(path)
	if err != nil {
		return "", err
	}
	if err := h.Ensure(ctx, cli); err != nil {
		return "", err
	}
	return h.Ref, nil
}

// Helper is the static binary the helper image is built from, and the
// image's tag. Loading it touches no engine, so a command can do it while
// its target still resolves and build the image only once it did. The
// binary (tens of megabytes: the program itself) is read again only when
// the image has to be built, and is not kept in memory.
type Helper struct {
	// Ref is the helper image's tag, named by the binary's digest.
	Ref    string
	path   string
	sha256 string
}

// LoadHelper hashes the binary at path and checks that it is static.
func LoadHelper(path string) (*Helper, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read helper binary: %w", err)
	}
	defer f.Close()
	if err := checkStatic(f); err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("read helper binary: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return &Helper{Ref: helperImageRef(sum), path: path, sha256: sum}, nil
}

// read returns the binary, checked to be the one LoadHelper hashed (a
// binary replaced since, by an upgrade, would build an image under
// another's tag).
func (h *Helper) read() ([]byte, error) {
	data, err := os.ReadFile(h.path)
	if err != nil {
		return nil, fmt.Errorf("read helper binary: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != h.sha256 {
		return nil, fmt.Errorf("helper binary %s changed since this command started; run it again", h.path)
	}
	return data, nil
}

// Present reports whether the helper image exists; it only inspects.
func (h *Helper) Present(ctx context.Context, cli client.APIClient) (bool, error) {
	if _, err := cli.ImageInspect(ctx, h.Ref); err == nil {
		return true, nil
	} else if !client.IsErrNotFound(err) {
		return false, fmt.Errorf("inspect helper image: %w", err)
	}
	return false, nil
}

// Ensure builds the helper image unless it exists.
func (h *Helper) Ensure(ctx context.Context, cli client.APIClient) error {
	if ok, err := h.Present(ctx, cli); err != nil || ok {
		return err
	}
	data, err := h.read()
	if err != nil {
		return err
	}
	dockerfile := "FROM scratch\nCOPY verifymcp /verifymcp\nUSER 65534:65534\nENTRYPOINT [\"/verifymcp\"]\nLABEL verifymcp.image=helper\n"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(dockerfile)}, {"verifymcp", 0o755, data}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	resp, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{Tags: []string{h.Ref}, Remove: true, ForceRemove: true, Version: types.BuilderV1})
	if err != nil {
		return fmt.Errorf("build helper image: %w", err)
	}
	defer resp.Body.Close()
	if err := drainBuild(resp.Body); err != nil {
		return fmt.Errorf("build helper image: %w", err)
	}
	return nil
}

// drainBuild reads an image build's JSON message stream and returns the
// first error it reports.
func drainBuild(r io.Reader) error {
	dec := json.NewDecoder(r)
	var last string
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read build output: %w", err)
		}
		if msg.Error != "" {
			return fmt.Errorf("%s (after: %s)", msg.Error, strings.TrimSpace(last))
		}
		if s := strings.TrimSpace(msg.Stream); s != "" {
			last = s
		}
	}
}

func checkStatic(r io.ReaderAt) error {
	f, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("helper binary is not an ELF executable: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return ErrHelperNotStatic
		}
	}
	return nil
}

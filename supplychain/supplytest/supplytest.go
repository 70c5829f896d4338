// Package supplytest provides fake OSV, Socket and GitHub APIs on loopback
// for tests. Each speaks the part of the real protocol the supplychain
// clients use and answers from the recorded data under supplychain/testdata
// (see the README of each folder there for where the data comes from and
// what is assumed). The fakes can be told to misbehave the ways the real
// services do (Fault), count and record what they were asked, and can be
// started in any test process: package tests, and the end-to-end tests
// that point the verifymcp binary at them.
//
// A constructor panics when the recorded data cannot be read, as
// httptest.NewServer panics when it cannot listen: both are broken test
// setups, not outcomes to test.
package supplytest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Fault says how a fake answers instead of its recorded data. The zero
// value answers normally.
type Fault struct {
	// Status, when not 0, answers with this HTTP status and the API's own
	// body and headers for it (a rate limit's Retry-After, GitHub's error
	// bodies).
	Status int
	// Delay holds each answer back this long first; a client that gives up
	// (or Close) ends the wait and gets nothing.
	Delay time.Duration
	// Malformed answers 200 with the normal answer cut off halfway.
	Malformed bool
	// Body, when not nil, is the whole answer body: with Status, in place
	// of the API's body for that status; without, a 200.
	Body []byte
	// Header is set on the answer over the API's own headers (a
	// Retry-After, GitHub's X-RateLimit-Remaining). A fault with only a
	// Header answers normally with those headers.
	Header http.Header
	// Times limits the fault to the next Times requests it applies to,
	// after which the fake answers normally again; 0 means every request
	// until the fault is changed.
	Times int
	// Path, when set, limits the fault to requests whose URL path starts
	// with it (for example "/v1/vulns/": the records but not the batch
	// query).
	Path string
}

// Unavailable is a 503 on every request: the service is down.
func Unavailable() Fault { return Fault{Status: http.StatusServiceUnavailable} }

// RateLimited is a 429 on the next n requests, then normal answers; n of
// 0 or less rate-limits every request.
func RateLimited(n int) Fault { return Fault{Status: http.StatusTooManyRequests, Times: max(n, 0)} }

// Slow delays every answer by d.
func Slow(d time.Duration) Fault { return Fault{Delay: d} }

// Malformed answers every request with a body cut off halfway.
func Malformed() Fault { return Fault{Malformed: true} }

// Interceptor is offered each request before the fake answers it; n counts
// the fake's requests from 0. It returns true when it has answered.
type Interceptor func(w http.ResponseWriter, r *http.Request, n int) bool

// api is what one fake adds to the shared machinery.
type api struct {
	// observe sees every request with its body, before anything answers.
	observe func(r *http.Request, body []byte)
	// fail writes the API's answer for f.Status; f.Header, when set, is
	// applied over what it sets.
	fail func(w http.ResponseWriter, r *http.Request, f Fault)
	// headers sets the headers the API sends with every answer, and the
	// content type of a malformed one.
	headers func(w http.ResponseWriter, r *http.Request)
	serve   http.Handler
}

// server is the machinery the three fakes share: the loopback listener,
// the request count, faults and the interceptor.
type server struct {
	srv     *httptest.Server
	api     api
	closing chan struct{}
	once    sync.Once

	mu        sync.Mutex
	requests  int
	fault     Fault
	left      int // requests the fault still applies to, when fault.Times > 0
	intercept Interceptor
}

func newServer(a api) *server {
	s := &server{api: a, closing: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// url is the server's root, http://127.0.0.1:port.
func (s *server) url() string { return s.srv.URL }

// close ends waiting answers, then stops listening and waits for the
// handlers; later calls do nothing.
func (s *server) close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.Close()
	})
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *server) setFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.left = f, f.Times
}

func (s *server) setIntercept(i Interceptor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = i
}

// takeFault returns the fault that applies to r, spending one of its
// Times.
func (s *server) takeFault(r *http.Request) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fault
	if f.Status == 0 && f.Delay == 0 && !f.Malformed && f.Body == nil && f.Header == nil {
		return Fault{}, false
	}
	if f.Path != "" && !strings.HasPrefix(r.URL.Path, f.Path) {
		return Fault{}, false
	}
	if f.Times > 0 {
		if s.left <= 0 {
			return Fault{}, false
		}
		s.left--
	}
	return f, true
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	// Reading the whole body first lets the server notice a client that
	// gives up: net/http watches the connection only after the body.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	n := s.requests
	s.requests++
	hook := s.intercept
	s.mu.Unlock()
	if s.api.observe != nil {
		s.api.observe(r, body)
	}
	if hook != nil && hook(w, r, n) {
		return
	}
	f, ok := s.takeFault(r)
	if !ok {
		s.api.serve.ServeHTTP(w, r)
		return
	}
	if f.Header != nil {
		w = &headerWriter{ResponseWriter: w, h: f.Header}
	}
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
	switch {
	case f.Status != 0 && f.Body != nil:
		s.api.headers(w, r)
		w.WriteHeader(f.Status)
		_, _ = w.Write(f.Body)
	case f.Status != 0:
		s.api.fail(w, r, f)
	case f.Body != nil:
		s.api.headers(w, r)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(f.Body)
	case f.Malformed:
		rec := httptest.NewRecorder()
		s.api.serve.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(http.StatusOK)
		b := rec.Body.Bytes()
		_, _ = w.Write(b[:len(b)/2])
	default:
		s.api.serve.ServeHTTP(w, r)
	}
}

// headerWriter sets a fault's headers over the API's when the answer's
// header is written.
type headerWriter struct {
	http.ResponseWriter
	h     http.Header
	wrote bool
}

func (w *headerWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		for k, v := range w.h {
			w.ResponseWriter.Header()[http.CanonicalHeaderKey(k)] = v
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *headerWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *headerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RecordedDir returns the directory of the recorded answers,
// supplychain/testdata, in this module's source tree: next to this
// package's source when the binary was built from it, else found by
// walking up from the working directory to the module root (for test
// binaries built with -trimpath).
func RecordedDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "..", "testdata")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return filepath.Clean(dir), nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("supplytest: recorded data: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			td := filepath.Join(dir, "supplychain", "testdata")
			if st, err := os.Stat(td); err == nil && st.IsDir() {
				return td, nil
			}
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return "", errors.New("supplytest: recorded data: supplychain/testdata not found next to the package source nor above " + wd)
}

func isModuleRoot(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`) == "github.com/verifymcp/verifymcp"
		}
	}
	return false
}

// Recorded returns the recorded answers of one API as a file system:
// sub is "osv/records", "socket" or "github", below RecordedDir. It panics
// when the recorded data cannot be found.
func Recorded(sub string) fs.FS {
	dir, err := RecordedDir()
	if err != nil {
		panic(err)
	}
	return os.DirFS(filepath.Join(dir, filepath.FromSlash(sub)))
}

// mustRead reads one recorded file; a missing one is a broken test setup.
func mustRead(fsys fs.FS, name string) []byte {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		panic(fmt.Errorf("supplytest: recorded data: %w", err))
	}
	return b
}

package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/web"
)

// TestConfigServe serves a page folder on a free loopback port, fetches
// its index with the page's policy, and stops on the context's end with
// exit 0. Bad addresses and folders are usage errors.
func TestConfigServe(t *testing.T) {
	dir := t.TempDir()
	for _, f := range web.Files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("page "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Run(ctx, []string{"config", "serve", "--addr", "127.0.0.1:0", "--dir", dir}, pw, io.Discard)
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q", lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "page index.html" || resp.Header.Get("Content-Security-Policy") != web.Policy {
		t.Errorf("GET /: %q, policy %q", body, resp.Header.Get("Content-Security-Policy"))
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d after the context ended", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:8765", "--dir", dir}, "not a loopback address"},
		{[]string{"--addr", "127.0.0.1:0", "--dir", t.TempDir()}, "index.html is missing"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		code, _, stderr := run(t, append([]string{"config", "serve"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("config serve %q: exit %d, %s", tt.args, code, stderr)
		}
	}
}

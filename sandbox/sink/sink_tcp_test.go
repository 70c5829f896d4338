//go:build linux

package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHTTPRequest(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		target      string
		body        func() io.Reader // nil: no body
		header      http.Header
		capture     int
		wantBody    string // with wantTrunc, a prefix of the body
		wantTrunc   bool
		wantHeaders map[string][]string
	}{
		{
			name:   "post_with_body_and_header",
			method: http.MethodPost, target: "/collect?id=1",
			body:        func() io.Reader { return strings.NewReader("token=CANARY-123") },
			header:      http.Header{"X-Exfil": {"CANARY-HDR"}, "Content-Type": {"application/x-www-form-urlencoded"}},
			wantBody:    "token=CANARY-123",
			wantHeaders: map[string][]string{"X-Exfil": {"CANARY-HDR"}, "Content-Type": {"application/x-www-form-urlencoded"}, "Content-Length": {"16"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "chunked_body_is_decoded",
			method: http.MethodPut, target: "/up",
			// An io.Reader of unknown length makes the client chunk it.
			body:        func() io.Reader { return io.MultiReader(strings.NewReader("part1-"), strings.NewReader("part2")) },
			wantBody:    "part1-part2",
			wantHeaders: map[string][]string{"Transfer-Encoding": {"chunked"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "expect_continue_gets_the_body",
			method: http.MethodPost, target: "/c",
			body:        func() io.Reader { return strings.NewReader("after-100") },
			header:      http.Header{"Expect": {"100-continue"}},
			wantBody:    "after-100",
			wantHeaders: map[string][]string{"Expect": {"100-continue"}, "Content-Length": {"9"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "large_body_cut_at_capture",
			method: http.MethodPost, target: "/big",
			body:        func() io.Reader { return strings.NewReader(strings.Repeat("B", 5000)) },
			capture:     1000,
			wantBody:    "BBBB",
			wantTrunc:   true,
			wantHeaders: map[string][]string{"Content-Length": {"5000"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "get_without_body",
			method: http.MethodGet, target: "/x",
			wantHeaders: map[string][]string{"Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startSink(t, Config{MaxCapture: tc.capture})
			var port int
			client := &http.Client{
				Timeout: 5 * time.Second,
				Transport: &http.Transport{
					DisableKeepAlives:     true,
					ExpectContinueTimeout: 5 * time.Second,
					DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
						c, err := (&net.Dialer{}).DialContext(ctx, "tcp4", addr)
						if err == nil {
							port = localPort(c)
						}
						return c, err
					},
				},
			}
			var body io.Reader
			if tc.body != nil {
				body = tc.body()
			}
			url := fmt.Sprintf("http://127.0.0.1:%d%s", h.cfg.TCPPort, tc.target)
			req, err := http.NewRequest(tc.method, url, body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("request to sink: %v", err)
			}
			respBody, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || len(respBody) != 0 {
				t.Errorf("response = %d with %d body bytes, want 200 with none", resp.StatusCode, len(respBody))
			}

			ev := h.wait(bySrcPort(TypeTCP, port), 3*time.Second)
			host := "127.0.0.1:" + strconv.Itoa(h.cfg.TCPPort)
			if ev.HTTPMethod != tc.method || ev.HTTPTarget != tc.target || ev.HTTPHost != host {
				t.Errorf("request line = %s %s host %s, want %s %s host %s", ev.HTTPMethod, ev.HTTPTarget, ev.HTTPHost, tc.method, tc.target, host)
			}
			if diff := cmp.Diff(tc.wantHeaders, ev.HTTPHeaders); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if tc.wantTrunc {
				if !strings.HasPrefix(string(ev.Body), tc.wantBody) || !ev.Truncated || len(ev.Data) != tc.capture {
					t.Errorf("body = %d bytes %q..., truncated = %v, data = %d bytes; want a cut body, truncated, data at the %d-byte capture",
						len(ev.Body), ev.Body[:min(len(ev.Body), 8)], ev.Truncated, len(ev.Data), tc.capture)
				}
				if !bytes.HasSuffix(ev.Data, ev.Body) {
					t.Errorf("body is not the end of the captured data")
				}
			} else if string(ev.Body) != tc.wantBody || ev.Truncated {
				t.Errorf("body = %q truncated = %v, want %q and not truncated", ev.Body, ev.Truncated, tc.wantBody)
			}
			wantStart := tc.method + " " + tc.target + " HTTP/1.1\r\n"
			if !bytes.HasPrefix(ev.Data, []byte(wantStart)) {
				t.Errorf("data starts %q, want %q", ev.Data[:min(len(ev.Data), 40)], wantStart)
			}
			if ev.Error != "" {
				t.Errorf("error = %q, want none", ev.Error)
			}
		})
	}
}

func TestRawTCP(t *testing.T) {
	tests := []struct {
		name      string
		payload   []byte
		capture   int
		wantData  []byte
		wantTrunc bool
	}{
		{name: "binary_kept_exactly", payload: []byte("\x00\x01\x02hello\xff\r\n"), wantData: []byte("\x00\x01\x02hello\xff\r\n")},
		{name: "lowercase_text_is_not_http", payload: []byte("get / http/1.1\r\n\r\n"), wantData: []byte("get / http/1.1\r\n\r\n")},
		{name: "cut_at_capture_but_counted", payload: bytes.Repeat([]byte{0xAB}, 5000), capture: 1024, wantData: bytes.Repeat([]byte{0xAB}, 1024), wantTrunc: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startSink(t, Config{MaxCapture: tc.capture})
			c := dialTCP(t, h)
			if _, err := c.Write(tc.payload); err != nil {
				t.Fatal(err)
			}
			_ = c.CloseWrite()
			ev := h.wait(bySrcPort(TypeTCP, localPort(c)), 3*time.Second)
			if !bytes.Equal(ev.Data, tc.wantData) {
				t.Errorf("data = %q, want %q", ev.Data[:min(len(ev.Data), 64)], tc.wantData[:min(len(tc.wantData), 64)])
			}
			if ev.Bytes != int64(len(tc.payload)) || ev.Truncated != tc.wantTrunc {
				t.Errorf("bytes = %d truncated = %v, want %d %v", ev.Bytes, ev.Truncated, len(tc.payload), tc.wantTrunc)
			}
			if ev.HTTPMethod != "" || ev.SNI != "" || ev.Error != "" {
				t.Errorf("raw stream parsed as something: %+v", ev)
			}
		})
	}
}

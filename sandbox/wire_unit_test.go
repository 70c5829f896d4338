package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// scriptedServer is the far end of one stdio connection: it reads the
// client's frames and answers each request with what answer returns for
// it (nothing when answer returns ""), in order, after startDelay (a slow
// start: requests queue meanwhile).
type scriptedServer struct {
	in         *io.PipeReader // what the client wrote
	out        *io.PipeWriter // what the server writes, for the frame filter
	startDelay time.Duration
	answer     func(method string, id json.RawMessage) string
	got        chan string // methods received, in order
}

func (s *scriptedServer) run() {
	// Read at once, as a kernel pipe buffers what the client writes; only
	// the answering waits for the start.
	lines := make(chan []byte, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(s.in)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	time.Sleep(s.startDelay)
	for line := range lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		s.got <- m.Method
		if len(m.ID) == 0 {
			continue
		}
		if a := s.answer(m.Method, m.ID); a != "" {
			fmt.Fprintf(s.out, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", m.ID, a)
		}
	}
}

const (
	initResult     = `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{}},"experimental":{"x":{}}},"serverInfo":{"name":"slow","version":"1.0.0","title":"Slow","description":"A slow server","websiteUrl":"https://example.com","icons":[{"src":"https://example.com/i.png"}]},"instructions":"hi","_meta":{"k":1}}`
	discoverResult = `"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"hi","ttlMs":0,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"slow","version":"1.0.0"}}}`
	toolsResult    = `"result":{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"optional"},"_meta":{"m":2},"x-extra":true}]}`
	notFound       = `"error":{"code":-32601,"message":"Method not found"}`
)

// handshakeWith runs the sandbox's handshake and listing against a
// scripted server and returns the session evidence and contract.
func handshakeWith(t *testing.T, startDelay time.Duration, answer func(method string, id json.RawMessage) string) (sess sessionResult) {
	t.Helper()
	cin, cout := io.Pipe() // client -> server
	sin, sout := io.Pipe() // server -> client
	srv := &scriptedServer{in: cin, out: sout, startDelay: startDelay, answer: answer, got: make(chan string, 64)}
	go srv.run()
	t.Cleanup(func() { cin.Close(); sout.Close() })
	s := &Sandbox{opts: Options{HandshakeTimeout: 5 * time.Second, DiscoverProbe: 300 * time.Millisecond, ListTimeout: 2 * time.Second}}
	s.opts.defaults()
	wr := newWire()
	filter := newFrameFilter()
	filter.oversize = wr.salvage
	go filter.run(sin, 1<<30)
	ss, path, err := s.handshake(context.Background(), filter, wr, cout)
	sess.path, sess.err = path, err
	if err == nil {
		sess.contract, sess.listErr = s.list(context.Background(), ss, &sess.ev)
		ss.cs.Close()
	}
	sess.late, _ = wr.lateAnswers()
	close(srv.got)
	for m := range srv.got {
		sess.methods = append(sess.methods, m)
	}
	return sess
}

// TestHandshakeMatchesAnswersByID: a server that starts after the
// server/discover probe's deadline answers the queued discover and then
// the fallback initialize. Both go-sdk sessions number their requests from
// 1, so before the wire renumbered them the late discover result was read
// as the answer to initialize ("unsupported protocol version").
func TestHandshakeMatchesAnswersByID(t *testing.T) {
	t.Run("late_discover_result_then_initialize", func(t *testing.T) {
		got := handshakeWith(t, 800*time.Millisecond, func(method string, id json.RawMessage) string {
			switch method {
			case "server/discover":
				return discoverResult
			case "initialize":
				return initResult
			case "tools/list":
				return toolsResult
			}
			return notFound
		})
		if got.err != nil || got.path != "initialize_fallback" {
			t.Fatalf("handshake: path %q, err %v; want the fallback initialize to succeed", got.path, got.err)
		}
		if len(got.late) != 1 || got.late[0].Method != "server/discover" || got.late[0].Err != nil {
			t.Errorf("late answers %+v, want the discover result, recorded and dropped", got.late)
		}
		if got.listErr != nil || got.contract == nil || len(got.contract.Tools) != 1 {
			t.Fatalf("listing: %v, %+v", got.listErr, got.contract)
		}
	})
	t.Run("late_discover_result_and_initialize_refused", func(t *testing.T) {
		got := handshakeWith(t, 800*time.Millisecond, func(method string, id json.RawMessage) string {
			switch method {
			case "server/discover":
				return discoverResult
			case "tools/list":
				return toolsResult
			}
			return notFound
		})
		if got.err != nil || got.path != "discover_retry" {
			t.Fatalf("handshake: path %q, err %v (server got %v); want server/discover asked again", got.path, got.err, got.methods)
		}
		if got.contract == nil || got.contract.ServerInfo.Name != "slow" || got.contract.ProtocolVersion != "2026-07-28" {
			t.Errorf("contract header %+v", got.contract)
		}
	})
	t.Run("late_rejection_of_discover", func(t *testing.T) {
		got := handshakeWith(t, 800*time.Millisecond, func(method string, id json.RawMessage) string {
			switch method {
			case "initialize":
				return initResult
			case "tools/list":
				return toolsResult
			}
			return notFound
		})
		if got.err != nil || got.path != "initialize_fallback" {
			t.Fatalf("handshake: path %q, err %v", got.path, got.err)
		}
		if len(got.late) != 1 || got.late[0].Method != "server/discover" || got.late[0].Err == nil {
			t.Errorf("late answers %+v, want the discover rejection (server got %v)", got.late, got.methods)
		}
	})
}

// TestListingKeepsWhatTheServerSent: serverInfo's title, description,
// website and icons, the tasks and experimental capabilities, _meta, a
// tool's execution and unknown fields all reach the contract; a hint the
// server left out stays absent.
func TestListingKeepsWhatTheServerSent(t *testing.T) {
	got := handshakeWith(t, 0, func(method string, id json.RawMessage) string {
		switch method {
		case "initialize":
			return initResult
		case "tools/list":
			return toolsResult
		}
		return notFound
	})
	if got.err != nil || got.listErr != nil {
		t.Fatalf("session: %v / %v", got.err, got.listErr)
	}
	c := got.contract
	si := c.ServerInfo
	if si.Title != "Slow" || si.Description != "A slow server" || si.WebsiteURL != "https://example.com" || !strings.Contains(string(si.Icons), "i.png") {
		t.Errorf("server info %+v", si)
	}
	if !strings.Contains(string(c.Capabilities), `"tasks"`) || !strings.Contains(string(c.Capabilities), `"experimental"`) {
		t.Errorf("capabilities %s: tasks or experimental dropped", c.Capabilities)
	}
	if string(c.Meta) != `{"k":1}` {
		t.Errorf("result _meta %s", c.Meta)
	}
	tl := c.Tools[0]
	if string(tl.Execution) != `{"taskSupport":"optional"}` || string(tl.Meta) != `{"m":2}` || string(tl.Extra["x-extra"]) != "true" {
		t.Errorf("tool %+v: execution, _meta or an unknown field dropped", tl)
	}
	a := tl.Annotations
	if a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint != nil || a.IdempotentHint != nil || a.OpenWorldHint != nil {
		t.Errorf("annotations %+v: want readOnlyHint true and every other hint absent", a)
	}
}

type sessionResult struct {
	path     string
	err      error
	contract *contract.Contract
	listErr  error
	ev       evidence.Session
	late     []lateAnswer
	methods  []string
}

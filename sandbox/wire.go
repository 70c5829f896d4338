package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifymcp/verifymcp/contract"
)

// wire is the JSON-RPC traffic of the MCP sessions of one run phase, seen
// from below the go-sdk client (which speaks the protocol; this only
// watches and renumbers).
//
// Every request a session sends gets a wire id unique over the whole
// stdio connection, so an answer is matched to its request by id: a late
// answer to an earlier session's request (the server/discover probe, when
// a slow server answers it after the fallback initialize went out) is
// recognised as such, recorded and dropped, and can never be taken for
// the answer to the request the current session made under the same
// go-sdk id. Both go-sdk sessions number their requests from 1.
//
// It also hands over the raw result of the handshake and of every list
// page, so that the contract is built from exactly what the server sent:
// the go-sdk's structs drop the fields they do not know and write hints
// the server left out as false. A list page is read as it arrives and not
// kept (expect); the go-sdk decodes it without its items.
type wire struct {
	mu       sync.Mutex
	nextID   int64
	session  int
	calls    map[int64]*wireCall
	late     []lateAnswer
	unknown  int
	notified map[string]int // by method, at most maxNotifyMethods distinct
	// asked are the requests the server sent the client (wire_requests.go).
	asked []*serverRequest
	// cuts are the answers longer than the line bound, by wire id.
	cuts map[int64]*oversized
	// readers read the next answer to a list request of a session (see
	// expect), by session and method.
	readers map[readerKey]func(json.RawMessage, *oversized) string
}

type readerKey struct {
	session int
	method  string
}

// oversized is an answer longer than the line bound, of which the items
// before the cut were kept.
type oversized struct {
	size int64
}

// wireCall is one request on the wire.
type wireCall struct {
	id      int64
	session int
	method  string
	sdkID   jsonrpc.ID
	sent    time.Time
	// answered is set when the answer arrived: its raw result or error.
	// The raw result is kept for the handshake only (keptResult): a list
	// page is read as it arrives (expect) and a call's result is the
	// go-sdk's, so neither is held for the rest of the run.
	answered bool
	result   json.RawMessage
	err      error
}

// lateAnswer is an answer that came after its session was given up.
type lateAnswer struct {
	Method string
	After  time.Duration // since the request was sent
	Err    error         // nil for a result
}

func newWire() *wire {
	return &wire{calls: map[int64]*wireCall{}, cuts: map[int64]*oversized{}, readers: map[readerKey]func(json.RawMessage, *oversized) string{}}
}

// keptResult reports whether the raw result of a method is kept: the
// handshake's, which the contract's header and the handshake path are read
// from.
func keptResult(method string) bool { return method == "initialize" || method == "server/discover" }

// expect sets read to read the next answer of session to method, a list
// request, as it arrives: read gets the raw result, as the server sent it,
// and whether the answer was cut (see salvage), and returns the page's next
// cursor; the go-sdk gets the page without its items (see reduced). A nil read removes the reader.
// The raw page is dropped as soon as read returns, so a page of 100,000
// items or a 50 MB description is never held beside the go-sdk's decoding
// of it.
func (w *wire) expect(session int, method string, read func(json.RawMessage, *oversized) string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := readerKey{session, method}
	if read == nil {
		delete(w.readers, k)
		return
	}
	w.readers[k] = read
}

// transport returns the transport of a new session over inner.
func (w *wire) transport(inner mcp.Transport) mcp.Transport {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.session++
	return &wireTransport{w: w, session: w.session, inner: inner}
}

// send registers an outgoing request of a session and returns its wire id.
func (w *wire) send(session int, req *jsonrpc.Request) jsonrpc.ID {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextID++
	w.calls[w.nextID] = &wireCall{id: w.nextID, session: session, method: req.Method, sdkID: req.ID, sent: time.Now()}
	id, _ := jsonrpc.MakeID(float64(w.nextID))
	return id
}

// wireIDOf returns the wire id a session's go-sdk id was sent under.
func (w *wire) wireIDOf(session int, sdkID any) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, c := range w.calls {
		if c.session == session && fmt.Sprint(c.sdkID.Raw()) == fmt.Sprint(sdkID) {
			return id, true
		}
	}
	return 0, false
}

// receive matches an answer to its request. It returns the request when
// the answer belongs to session; otherwise the answer is recorded (late,
// or matching nothing sent) and must be dropped.
func (w *wire) receive(session int, resp *jsonrpc.Response) (*wireCall, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, ok := wireNumber(resp.ID.Raw())
	c := w.calls[id]
	if !ok || c == nil || c.answered {
		w.unknown++
		return nil, false
	}
	c.answered, c.err = true, resp.Error
	if keptResult(c.method) {
		c.result = resp.Result
	}
	if c.session != session {
		w.late = append(w.late, lateAnswer{Method: c.method, After: time.Since(c.sent), Err: resp.Error})
		return nil, false
	}
	return c, true
}

// reader takes the reader set for an answered list request (expect), and
// whether the answer was cut.
func (w *wire) reader(c *wireCall) (func(json.RawMessage, *oversized) string, *oversized) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := readerKey{c.session, c.method}
	read := w.readers[k]
	if read == nil {
		return nil, nil
	}
	delete(w.readers, k)
	cut := w.cuts[c.id]
	delete(w.cuts, c.id)
	return read, cut
}

// early reads a list page in the frame as it is read from the server's
// stdout, before the go-sdk's transport gets it: when frame is the answer
// to a list request a reader is set for (expect), the reader gets its
// result, a slice of frame (no copy), and the frame handed on is the
// answer with the page's items left out. Otherwise frame is handed on as
// it is. A 50 MB page is then held once, as the line read, instead of in
// the transport's buffer, its decoded message and its result besides.
func (w *wire) early(frame []byte) []byte {
	var id, result json.RawMessage
	other := false
	if contract.EachMember(frame, func(k string, v json.RawMessage) {
		switch k {
		case "id":
			id = v
		case "result":
			result = v
		case "method", "error":
			other = true
		}
	}) != nil || other || id == nil || result == nil {
		return frame
	}
	var num float64
	if json.Unmarshal(id, &num) != nil {
		return frame
	}
	n, ok := wireNumber(num)
	if !ok {
		return frame
	}
	w.mu.Lock()
	c := w.calls[n]
	if c == nil || c.answered {
		w.mu.Unlock()
		return frame
	}
	method := c.method
	w.mu.Unlock()
	read, cut := w.reader(c)
	if read == nil {
		return frame
	}
	next := read(result, cut)
	out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "result": reduced(method, next)})
	if err != nil {
		return frame
	}
	return out
}

// reduced is the result the go-sdk gets for a list page that was read as
// it arrived: the page without its items, with its next cursor. Without
// items the go-sdk decodes nothing large, and without the server's ttlMs
// it caches nothing, so every page of a second listing is asked again.
func reduced(method, next string) json.RawMessage {
	page := map[string]any{listKey(method): []any{}}
	if next != "" {
		page["nextCursor"] = next
	}
	out, _ := json.Marshal(page)
	return out
}

// wireNumber reads a wire id as the server echoed it.
func wireNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), float64(int64(n)) == n
	}
	return 0, false
}

// result returns the raw result of the last answered request of a session
// with the given method, and whether it was cut (see salvage).
func (w *wire) result(session int, method string) (json.RawMessage, *oversized, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var best int64
	var raw json.RawMessage
	for id, c := range w.calls {
		if c.session == session && c.method == method && c.answered && c.err == nil && id > best {
			best, raw = id, c.result
		}
	}
	return raw, w.cuts[best], best > 0
}

// salvage turns the first bytes of a line longer than the line bound into
// a frame, when they are the start of an answer to a list request: the
// items complete before the cut become the answer's page (with no next
// cursor), so that a padded listing keeps what came before the padding.
// The answer is matched by its id, or, when the cut came before the id
// (many servers write the result first), to the one list request the
// current session is waiting for. It returns nil for anything else, which
// is then protocol noise.
func (w *wire) salvage(prefix []byte, size int64) []byte {
	id, key, items, ok := salvagePage(prefix)
	if !ok {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n, known := wireNumber(id)
	if !known {
		for cid, c := range w.calls {
			if !c.answered && c.session == w.session && listKey(c.method) == key {
				if known {
					return nil // two candidates: do not guess
				}
				n, known = cid, true
			}
		}
	}
	c := w.calls[n]
	if !known || c == nil || c.answered || listKey(c.method) != key {
		return nil
	}
	itemsJSON, err := json.Marshal(items)
	if err != nil {
		return nil
	}
	frame, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      n,
		"result":  map[string]json.RawMessage{key: itemsJSON},
	})
	if err != nil {
		return nil
	}
	w.cuts[n] = &oversized{size: size}
	return frame
}

// listKey is the result key of a list method's items.
func listKey(method string) string {
	switch method {
	case "tools/list":
		return "tools"
	case "prompts/list":
		return "prompts"
	case "resources/list":
		return "resources"
	case "resources/templates/list":
		return "resourceTemplates"
	}
	return ""
}

// salvagePage reads what it can of the start of a JSON-RPC answer whose
// result holds a list: its id (when it came before the cut), the list's
// key, and every item complete before the cut.
func salvagePage(prefix []byte) (id any, key string, items []json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, "", nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := t.(string)
		switch k {
		case "id":
			var v any
			if dec.Decode(&v) != nil {
				return id, key, items, key != ""
			}
			if num, isNum := v.(json.Number); isNum {
				f, _ := num.Float64()
				v = f
			}
			id = v
		case "result":
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				return id, key, items, key != ""
			}
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					return id, key, items, key != ""
				}
				rk, _ := t.(string)
				if listKey("tools/list") != rk && listKey("prompts/list") != rk && listKey("resources/list") != rk && listKey("resources/templates/list") != rk {
					var skip json.RawMessage
					if dec.Decode(&skip) != nil {
						return id, key, items, key != ""
					}
					continue
				}
				key = rk
				if t, err := dec.Token(); err != nil || t != json.Delim('[') {
					return id, key, items, true
				}
				for dec.More() {
					var it json.RawMessage
					if dec.Decode(&it) != nil {
						return id, key, items, true
					}
					items = append(items, it)
				}
				if _, err := dec.Token(); err != nil { // ']'
					return id, key, items, true
				}
			}
			if _, err := dec.Token(); err != nil { // '}'
				return id, key, items, key != ""
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return id, key, items, key != ""
			}
		}
	}
	return id, key, items, key != ""
}

// lateAnswers returns the answers that came after their session was given
// up, and how many answers matched no request at all.
func (w *wire) lateAnswers() ([]lateAnswer, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]lateAnswer(nil), w.late...), w.unknown
}

// maxNotifyMethods bounds the distinct notification methods counted; the
// rest are counted under "(other)".
const maxNotifyMethods = 100

// notify counts one notification the server sent.
func (w *wire) notify(method string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.notified == nil {
		w.notified = map[string]int{}
	}
	method = clip(method, 100)
	if _, ok := w.notified[method]; !ok && len(w.notified) >= maxNotifyMethods {
		method = "(other)"
	}
	w.notified[method]++
}

// notifications returns how many notifications the server sent, by method.
func (w *wire) notifications() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.notified)
}

type wireTransport struct {
	w       *wire
	session int
	inner   mcp.Transport
}

func (t *wireTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireConn{Connection: c, w: t.w, session: t.session}, nil
}

type wireConn struct {
	mcp.Connection
	w       *wire
	session int
}

func (c *wireConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.w.clientAnswer(resp)
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		switch {
		case req.ID.IsValid():
			out := *req
			out.ID = c.w.send(c.session, req)
			msg = &out
		case req.Method == "notifications/cancelled":
			// A cancellation names the request by the id it went out under.
			if out, ok := c.renumberCancel(req); ok {
				msg = out
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *wireConn) renumberCancel(req *jsonrpc.Request) (*jsonrpc.Request, bool) {
	var p map[string]any
	if json.Unmarshal(req.Params, &p) != nil {
		return nil, false
	}
	id, ok := c.w.wireIDOf(c.session, p["requestId"])
	if !ok {
		return nil, false
	}
	p["requestId"] = id
	params, err := json.Marshal(p)
	if err != nil {
		return nil, false
	}
	out := *req
	out.Params = params
	return &out, true
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			call, ok := c.w.receive(c.session, m)
			if !ok {
				continue
			}
			out := *m
			out.ID = call.sdkID
			if read, cut := c.w.reader(call); read != nil && m.Error == nil {
				out.Result = reduced(call.method, read(m.Result, cut))
				m.Result = nil
			}
			return &out, nil
		case *jsonrpc.Request:
			if !m.ID.IsValid() {
				c.w.notify(m.Method)
			} else {
				c.w.serverRequest(m)
			}
		}
		return msg, nil
	}
}

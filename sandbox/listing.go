package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// Bounds of a listing. What fits is kept and every cut is recorded, with
// its counts, as a truncation: a padded listing must not hide what came
// before the padding.
const (
	// maxListItems bounds each list (tools, prompts, resources, templates).
	maxListItems = 5000
	// maxListPages bounds the pages of one list, against a server that
	// hands out cursors forever.
	maxListPages = 1000
	// maxText bounds one text field (a name, title, description, the
	// instructions) in bytes.
	maxText = 64 << 10
	// maxRaw bounds one JSON value kept as sent (a schema, _meta, icons, an
	// unknown field) in bytes; a larger one is left out.
	maxRaw = 256 << 10
)

// session is an established MCP session and how its results are read.
type session struct {
	cs   *mcp.ClientSession
	w    *wire
	mask *masker
	id   int
	// method is the handshake request that established it: initialize
	// or server/discover.
	method string
}

// list captures the header and every page of tools, prompts, resources and
// templates the server declared a capability for, from the results as the
// server sent them. A list call that fails is recorded, not fatal; a server
// that dies while listing is.
func (s *Sandbox) list(ctx context.Context, ss session, sess *evidence.Session) (*contract.Contract, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ListTimeout)
	defer cancel()
	b := &bounded{mask: ss.mask}
	c := b.header(ss)
	caps := &mcp.ServerCapabilities{}
	if init := ss.cs.InitializeResult(); init != nil && init.Capabilities != nil {
		caps = init.Capabilities
	}
	fail := func(method string, err error) error {
		if errors.Is(context.Cause(ctx), errExited) || errors.Is(err, mcp.ErrConnectionClosed) {
			return fmt.Errorf("%s: %w", method, err)
		}
		if ctx.Err() != nil {
			sess.Truncated = true
			b.cut(evidence.Truncation{List: method, Reason: "the list timeout of " + s.opts.ListTimeout.String() + " passed"})
		}
		if sess.ListErrors == nil {
			sess.ListErrors = map[string]string{}
		}
		msg := err.Error()
		// The SDK's error text is the server's message only; the code
		// tells Method not found apart from a failure, whatever the
		// message says.
		if we := (*jsonrpc.Error)(nil); errors.As(err, &we) && !strings.Contains(msg, fmt.Sprint(we.Code)) {
			msg += fmt.Sprintf(" (JSON-RPC error %d)", we.Code)
		}
		sess.ListErrors[method] = msg
		return nil
	}
	var lists []lister
	if caps.Tools != nil {
		lists = append(lists, newLister("tools/list", "tools", func(cur string) (string, error) {
			r, err := ss.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cur})
			return cursorOf(err, func() string { return r.NextCursor })
		}, contract.ParseTool, (*bounded).tool, &c.Tools))
	}
	if caps.Prompts != nil {
		lists = append(lists, newLister("prompts/list", "prompts", func(cur string) (string, error) {
			r, err := ss.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cur})
			return cursorOf(err, func() string { return r.NextCursor })
		}, contract.ParsePrompt, (*bounded).prompt, &c.Prompts))
	}
	if caps.Resources != nil {
		lists = append(lists, newLister("resources/list", "resources", func(cur string) (string, error) {
			r, err := ss.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cur})
			return cursorOf(err, func() string { return r.NextCursor })
		}, contract.ParseResource, (*bounded).resource, &c.Resources),
			newLister("resources/templates/list", "resourceTemplates", func(cur string) (string, error) {
				r, err := ss.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cur})
				return cursorOf(err, func() string { return r.NextCursor })
			}, contract.ParseTemplate, (*bounded).template, &c.Templates))
	}
	for _, l := range lists {
		cursor, offered := "", 0
		seen := map[string]bool{}
	pages:
		for page := 0; ; page++ {
			// The page is read as it arrives, on the go-sdk's reading
			// goroutine, and its raw form dropped there (wire.expect);
			// the go-sdk gets it without its items.
			slot := &pageSlot{}
			room := maxListItems - l.count()
			ss.w.expect(ss.id, l.method, func(raw json.RawMessage, cut *oversized) string {
				pg := l.read(raw, room, ss.mask)
				pg.cut = cut
				return slot.put(pg)
			})
			next, err := l.call(cursor)
			ss.w.expect(ss.id, l.method, nil)
			pg := slot.take()
			if err == nil && pg == nil {
				err = errors.New("the page's answer was not read")
			}
			if err == nil {
				err = pg.err
			}
			if err != nil {
				if ferr := fail(l.method, err); ferr != nil {
					return nil, ferr
				}
				break
			}
			if pg.cut != nil {
				// The answer was longer than the line bound: only the
				// items before the cut reached us.
				b.cut(evidence.Truncation{List: l.method, Kept: l.count() + min(pg.offered, room), Bytes: pg.cut.size, MorePages: next != "",
					Reason: fmt.Sprintf("the answer was %d bytes, more than the %d-byte bound of one message; the %d complete items before the cut were read", pg.cut.size, maxLine, pg.offered)})
			}
			b.cuts = append(b.cuts, pg.cuts...)
			offered += pg.offered
			pg.keep()
			if pg.addErr != nil {
				_ = fail(l.method, pg.addErr)
				break pages
			}
			switch {
			case next == "":
				if offered > l.count() {
					b.cut(evidence.Truncation{List: l.method, Kept: l.count(), Offered: offered,
						Reason: fmt.Sprintf("more than %d items", maxListItems)})
				}
				break pages
			case l.count() >= maxListItems:
				b.cut(evidence.Truncation{List: l.method, Kept: l.count(), Offered: offered, MorePages: true,
					Reason: fmt.Sprintf("more than %d items; the server offered more pages", maxListItems)})
				break pages
			case seen[next] || page+1 >= maxListPages:
				b.cut(evidence.Truncation{List: l.method, Kept: l.count(), Offered: offered, MorePages: true,
					Reason: fmt.Sprintf("the server kept offering pages (%d read, cursor repeated: %v)", page+1, seen[next])})
				break pages
			}
			seen[next] = true
			cursor = next
		}
	}
	sess.Truncations = append(sess.Truncations, b.cuts...)
	if len(b.cuts) > 0 {
		sess.Truncated = true
	}
	if err := contract.Normalize(c); err != nil {
		return nil, err
	}
	return c, nil
}

// lister reads one list: the go-sdk makes each page's request (call
// returns its next cursor), and the items are read from the page as the
// server sent it (read parses and bounds at most room of them).
type lister struct {
	method string
	call   func(cursor string) (string, error)
	read   func(raw json.RawMessage, room int, mask *masker) *page
	count  func() int
}

// page is one page of a list, read and bounded.
type page struct {
	// offered counts the page's items, read or not.
	offered int
	// keep appends the items read to the list.
	keep func()
	// cuts are the bounds the items read were cut by.
	cuts []evidence.Truncation
	// next is the page's next cursor.
	next string
	// err is set when the page could not be read, addErr when one of its
	// items could not (the items before it are kept).
	err, addErr error
	// cut is set when the answer was longer than the line bound.
	cut *oversized
}

// pageSlot hands a page from the go-sdk's reading goroutine to the list
// loop; a page that comes after the loop gave up its call is dropped.
type pageSlot struct {
	mu     sync.Mutex
	pg     *page
	closed bool
}

func (s *pageSlot) put(pg *page) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.pg = pg
	}
	return pg.next
}

func (s *pageSlot) take() *page {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.pg
}

func newLister[T any](method, key string, call func(string) (string, error), parse func(json.RawMessage) (T, error), bound func(*bounded, T) T, dst *[]T) lister {
	return lister{method: method, call: call,
		read: func(raw json.RawMessage, room int, mask *masker) *page {
			b := &bounded{mask: mask}
			pg := &page{}
			var kept []T
			pg.next, pg.err = pageItems(raw, key, func(it json.RawMessage) {
				pg.offered++
				if len(kept) >= room || pg.addErr != nil {
					return
				}
				v, err := parse(it)
				if err != nil {
					pg.addErr = err
					return
				}
				kept = append(kept, bound(b, v))
			})
			pg.cuts = b.cuts
			pg.keep = func() { *dst = append(*dst, kept...) }
			return pg
		},
		count: func() int { return len(*dst) }}
}

// cursorOf returns the next cursor of a list call that succeeded.
func cursorOf(err error, next func() string) (string, error) {
	if err != nil {
		return "", err
	}
	return next(), nil
}

// pageItems calls item with each item of one page as the server sent it,
// a slice of raw (nothing of the page is copied), and returns its next
// cursor. The last of repeated keys counts, as in encoding/json.
func pageItems(raw json.RawMessage, key string, item func(json.RawMessage)) (string, error) {
	var items, next json.RawMessage
	err := contract.EachMember(raw, func(k string, v json.RawMessage) {
		switch {
		case k == key && key != "":
			items = v
		case k == "nextCursor":
			next = v
		}
	})
	if err != nil {
		return "", fmt.Errorf("read the page as sent: %w", err)
	}
	var cursor string
	if len(next) > 0 && string(next) != "null" {
		if err := json.Unmarshal(next, &cursor); err != nil {
			return "", fmt.Errorf("read the page's nextCursor as sent: %w", err)
		}
	}
	if len(items) > 0 && string(items) != "null" {
		if err := contract.EachElement(items, item); err != nil {
			return "", fmt.Errorf("read the page's %s as sent: %w", key, err)
		}
	}
	return cursor, nil
}

// bounded applies the per-field bounds to what a listing keeps, and
// collects the cuts.
type bounded struct {
	cuts []evidence.Truncation
	// mask masks a field before it is cut, so that the cut leaves no part
	// of a secret (the whole contract is masked again afterwards).
	mask *masker
}

func (b *bounded) cut(t evidence.Truncation) { b.cuts = append(b.cuts, t) }

// text keeps at most maxText bytes of s, at a character boundary.
func (b *bounded) text(list, item, field, s string) string {
	if len(s) <= maxText {
		return s
	}
	size := len(s)
	s = b.mask.text(s[:maxText+1024], "contract")
	cut := min(maxText, len(s))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	b.cut(evidence.Truncation{List: list, Item: clip(item, 200), Field: field, Bytes: int64(size), Kept: cut,
		Reason: fmt.Sprintf("longer than %d bytes; the first %d were kept", maxText, cut)})
	// A copy: the kept part must not hold the whole string.
	return strings.Clone(s[:cut])
}

// raw keeps a JSON value of at most maxRaw bytes and leaves out a larger one.
func (b *bounded) raw(list, item, field string, v json.RawMessage) json.RawMessage {
	if len(v) <= maxRaw {
		return v
	}
	b.cut(evidence.Truncation{List: list, Item: clip(item, 200), Field: field, Bytes: int64(len(v)),
		Reason: fmt.Sprintf("longer than %d bytes; left out", maxRaw)})
	return nil
}

func (b *bounded) extra(list, item string, e contract.Extra) contract.Extra {
	for k, v := range e {
		if kept := b.raw(list, item, "extra."+clip(k, 100), v); kept == nil {
			delete(e, k)
		}
	}
	return e
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func (b *bounded) header(ss session) *contract.Contract {
	c := &contract.Contract{}
	init := ss.cs.InitializeResult()
	if init != nil {
		c.ProtocolVersion = init.ProtocolVersion
	}
	raw, _, ok := ss.w.result(ss.id, ss.method)
	var res struct {
		Capabilities json.RawMessage            `json:"capabilities"`
		Instructions string                     `json:"instructions"`
		ServerInfo   json.RawMessage            `json:"serverInfo"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	if ok && json.Unmarshal(raw, &res) == nil {
		info := res.ServerInfo
		if len(info) == 0 {
			// server/discover carries the server's description in _meta.
			info = res.Meta[mcp.MetaKeyServerInfo]
		}
		if len(info) > 0 {
			if impl, err := contract.ParseImplementation(info); err == nil {
				c.ServerInfo = impl
			}
		}
		c.Capabilities = b.raw("initialize", "", "capabilities", res.Capabilities)
		c.Instructions = b.text("initialize", "", "instructions", res.Instructions)
		if len(res.Meta) > 0 {
			m, _ := json.Marshal(res.Meta)
			c.Meta = b.raw("initialize", "", "_meta", m)
		}
	} else if init != nil {
		// No raw result (it cannot happen over the wire; kept for safety):
		// what the go-sdk parsed.
		c.Instructions = init.Instructions
		if init.ServerInfo != nil {
			c.ServerInfo = contract.Implementation{Name: init.ServerInfo.Name, Title: init.ServerInfo.Title, Version: init.ServerInfo.Version}
		}
	}
	if len(c.Capabilities) == 0 {
		c.Capabilities = json.RawMessage(`{}`)
	}
	c.ServerInfo.Name = b.text("initialize", "", "serverInfo.name", c.ServerInfo.Name)
	c.ServerInfo.Description = b.text("initialize", "", "serverInfo.description", c.ServerInfo.Description)
	c.ServerInfo.Icons = b.raw("initialize", "", "serverInfo.icons", c.ServerInfo.Icons)
	c.ServerInfo.Extra = b.extra("initialize", "", c.ServerInfo.Extra)
	return c
}

func (b *bounded) tool(t contract.Tool) contract.Tool {
	const l = "tools/list"
	name := t.Name
	t.Name = b.text(l, name, "name", t.Name)
	t.Title = b.text(l, name, "title", t.Title)
	t.Description = b.text(l, name, "description", t.Description)
	t.InputSchema = b.raw(l, name, "inputSchema", t.InputSchema)
	t.OutputSchema = b.raw(l, name, "outputSchema", t.OutputSchema)
	t.Icons = b.raw(l, name, "icons", t.Icons)
	t.Execution = b.raw(l, name, "execution", t.Execution)
	t.Meta = b.raw(l, name, "_meta", t.Meta)
	t.Extra = b.extra(l, name, t.Extra)
	if a := t.Annotations; a != nil {
		a.Title = b.text(l, name, "annotations.title", a.Title)
		a.Extra = b.extra(l, name, a.Extra)
	}
	return t
}

func (b *bounded) prompt(p contract.Prompt) contract.Prompt {
	const l = "prompts/list"
	name := p.Name
	p.Name = b.text(l, name, "name", p.Name)
	p.Title = b.text(l, name, "title", p.Title)
	p.Description = b.text(l, name, "description", p.Description)
	p.Icons = b.raw(l, name, "icons", p.Icons)
	p.Meta = b.raw(l, name, "_meta", p.Meta)
	p.Extra = b.extra(l, name, p.Extra)
	if len(p.Arguments) > maxListItems {
		b.cut(evidence.Truncation{List: l, Item: clip(name, 200), Field: "arguments", Kept: maxListItems, Offered: len(p.Arguments),
			Reason: fmt.Sprintf("more than %d arguments", maxListItems)})
		p.Arguments = p.Arguments[:maxListItems]
	}
	for i := range p.Arguments {
		a := &p.Arguments[i]
		a.Name = b.text(l, name, "arguments.name", a.Name)
		a.Title = b.text(l, name, "arguments.title", a.Title)
		a.Description = b.text(l, name, "arguments.description", a.Description)
		a.Extra = b.extra(l, name, a.Extra)
	}
	return p
}

func (b *bounded) resource(r contract.Resource) contract.Resource {
	const l = "resources/list"
	uri := r.URI
	r.URI = b.text(l, uri, "uri", r.URI)
	r.Name = b.text(l, uri, "name", r.Name)
	r.Title = b.text(l, uri, "title", r.Title)
	r.Description = b.text(l, uri, "description", r.Description)
	r.MIMEType = b.text(l, uri, "mimeType", r.MIMEType)
	r.Annotations = b.raw(l, uri, "annotations", r.Annotations)
	r.Icons = b.raw(l, uri, "icons", r.Icons)
	r.Meta = b.raw(l, uri, "_meta", r.Meta)
	r.Extra = b.extra(l, uri, r.Extra)
	return r
}

func (b *bounded) template(t contract.Template) contract.Template {
	const l = "resources/templates/list"
	uri := t.URITemplate
	t.URITemplate = b.text(l, uri, "uriTemplate", t.URITemplate)
	t.Name = b.text(l, uri, "name", t.Name)
	t.Title = b.text(l, uri, "title", t.Title)
	t.Description = b.text(l, uri, "description", t.Description)
	t.MIMEType = b.text(l, uri, "mimeType", t.MIMEType)
	t.Annotations = b.raw(l, uri, "annotations", t.Annotations)
	t.Icons = b.raw(l, uri, "icons", t.Icons)
	t.Meta = b.raw(l, uri, "_meta", t.Meta)
	t.Extra = b.extra(l, uri, t.Extra)
	return t
}

// listChangedMethods are the notifications by which a server says a list
// of its surface changed.
var listChangedMethods = []string{
	"notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
}

// relist lists the surface a second time, in the same session and on the
// same path as the first listing (list: the go-sdk, every page, the same
// bounds), and compares it with first, the first listing: a surface that
// changes after start-up (a rug pull within the session) is seen whether
// or not the server said so with a list_changed notification, which is
// only a hint. firstEnd is when the first listing ended.
//
// Nothing of the second listing reaches sess: its truncations and list
// errors are its own, and any of them makes it a failed relisting
// (Error), not compared, since a cut or failed list would read as removed
// tools. The first contract stays as it was, but masked: both are masked
// before they are compared, so that no secret reaches the changes.
func (s *Sandbox) relist(ctx context.Context, ss session, first *contract.Contract, firstErrors map[string]string, firstEnd time.Time) *evidence.Relist {
	start := time.Now()
	rl := &evidence.Relist{AfterMS: start.Sub(firstEnd).Milliseconds(), Changes: []contract.Change{}}
	notified := ss.w.notifications()
	for _, m := range listChangedMethods {
		rl.ListChanged += notified[m]
	}
	if ctx.Err() != nil {
		rl.Error = "the second listing was not made: " + exitedOr(ctx)
		return rl
	}
	own := &evidence.Session{}
	second, err := s.list(ctx, ss, own)
	if err != nil && errors.Is(context.Cause(ctx), errExited) {
		err = fmt.Errorf("the server exited (%w)", err)
	}
	return compareRelist(rl, ss.mask, first, second, own, firstErrors, err)
}

// exitedOr says why ctx ended: the server exited, or the context's cause.
func exitedOr(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), errExited) {
		return "the server exited"
	}
	return context.Cause(ctx).Error()
}

// compareRelist fills rl from the second listing: second and own, the
// session evidence that listing wrote, and err, what it returned. A list
// call that failed the first time as well (firstErrors: a method the
// server does not implement, such as resources/templates/list on
// server-puppeteer) left both listings without that list, which compares
// as no change; one that answered the first time and failed now makes the
// second listing incomparable. first is
// masked in place (the masking of the result finds nothing more in it);
// second is masked before it is hashed, compared or kept, counted in the
// masking record only when something of it is kept.
func compareRelist(rl *evidence.Relist, mask *masker, first, second *contract.Contract, own *evidence.Session, firstErrors map[string]string, err error) *evidence.Relist {
	failed := map[string]string{}
	for m, e := range own.ListErrors {
		if _, before := firstErrors[m]; !before {
			failed[m] = e
		}
	}
	switch {
	case err != nil:
		rl.Error = "the second listing failed: " + err.Error()
		return rl
	case len(own.Truncations) > 0 || own.Truncated:
		cuts := make([]string, 0, len(own.Truncations))
		for _, t := range own.Truncations {
			cuts = append(cuts, t.List+": "+t.Reason)
		}
		rl.Error = "the second listing was cut by a bound, so it was not compared (a cut list would read as removed tools): " + strings.Join(cuts, "; ")
		return rl
	case len(failed) > 0:
		methods := make([]string, 0, len(failed))
		for m := range failed {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for i, m := range methods {
			methods[i] = m + ": " + failed[m]
		}
		rl.Error = "a list call of the second listing failed, so it was not compared: " + strings.Join(methods, "; ")
		return rl
	}
	quiet := mask.fork()
	if err := maskContract(mask, first, "contract"); err != nil {
		rl.Error = "the second listing was not compared: " + err.Error()
		return rl
	}
	if err := maskContract(quiet, second, "session"); err != nil {
		rl.Error = "the second listing was not compared: " + err.Error()
		return rl
	}
	rl.SchemaHash = second.SchemaHash
	if second.SchemaHash != first.SchemaHash {
		rl.Contract = second
	}
	if ch := contract.Classify(first, second); len(ch) > 0 {
		rl.Changes = ch
	}
	if rl.Contract != nil || len(rl.Changes) > 0 {
		mask.merge(quiet)
	}
	return rl
}

// maskContract masks c in place, as the masking of the result masks the
// contract, and computes its schema hash again over the masked surface.
func maskContract(m *masker, c *contract.Contract, where string) error {
	if m != nil {
		if err := m.value(c, where); err != nil {
			return err
		}
	}
	return contract.Normalize(c)
}

// fork returns a masker that masks what m masks but counts on its own,
// for what may not be kept; merge adds its counts to m's.
func (m *masker) fork() *masker {
	if m == nil {
		return nil
	}
	return &masker{known: m.known, shapes: m.shapes, canary: m.canaries(), counts: map[string]map[string]int{}}
}

func (m *masker) merge(o *masker) {
	if m == nil || o == nil || m == o {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for marker, wheres := range o.counts {
		if m.counts[marker] == nil {
			m.counts[marker] = map[string]int{}
		}
		for where, n := range wheres {
			m.counts[marker][where] += n
		}
	}
}

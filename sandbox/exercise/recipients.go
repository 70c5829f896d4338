package exercise

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
)

// Bounds of Recipients.
const (
	maxBody       = 1 << 20
	maxWalk       = 32
	maxRecipients = 10
)

// recipientFields are the names of recipient fields, lower-cased without
// "_", "-" and a trailing "[]".
var recipientFields = map[string]bool{
	"to": true, "cc": true, "bcc": true, "recipient": true, "recipients": true,
	"toaddress": true, "toaddresses": true, "ccaddress": true, "ccaddresses": true,
	"bccaddress": true, "bccaddresses": true, "toaddr": true, "bccaddr": true, "ccaddr": true,
	"torecipients": true, "ccrecipients": true, "bccrecipients": true,
	"bcclist": true, "cclist": true, "tolist": true,
}

// rawFields are the names of fields that may hold a whole MIME message, as
// text or base64 (the Gmail API's raw, SES's RawMessage.Data, Mailgun's
// message).
var rawFields = map[string]bool{"raw": true, "message": true, "mime": true, "data": true, "rawmessage": true}

// addrRE recognises a mail address conservatively: local@domain.tld.
var addrRE = regexp.MustCompile(`(?i)[a-z0-9._%+-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.[a-z]{2,24}`)

// field normalises a field name for the lookups above.
func field(k string) string {
	k = strings.TrimSuffix(strings.ToLower(k), "[]")
	return strings.NewReplacer("_", "", "-", "").Replace(k)
}

// collector gathers distinct lower-cased addresses in order, up to the bound.
type collector struct {
	seen map[string]bool
	out  []string
}

func (c *collector) full() bool { return len(c.out) >= maxRecipients }

// text collects the addresses of a field's text: "a@b", "Name <a@b>" or a
// comma-separated list.
func (c *collector) text(s string) {
	var found []string
	if list, err := mail.ParseAddressList(s); err == nil {
		for _, a := range list {
			found = append(found, addrRE.FindAllString(a.Address, -1)...)
		}
	} else {
		found = addrRE.FindAllString(s, -1)
	}
	for _, a := range found {
		a = strings.ToLower(a)
		if c.full() || c.seen[a] {
			continue
		}
		c.seen[a] = true
		c.out = append(c.out, a)
	}
}

// Recipients returns the mail addresses a request body names in a recipient
// field, lower-cased, deduplicated, in order of appearance, at most 10. It
// reads JSON bodies, form bodies (urlencoded or multipart) and raw MIME
// messages, bare or in a JSON or form field.
func Recipients(body []byte, contentType string) []string {
	if len(body) > maxBody {
		body = body[:maxBody]
	}
	c := &collector{seen: map[string]bool{}}
	c.body(body, contentType, 0)
	return c.out
}

// maxParts bounds the nesting of multipart bodies read.
const maxParts = 3

// body reads a body by its media type; a JSON type on a body that is not
// JSON, and an unknown or empty type, are sniffed: JSON, a MIME message,
// else a form.
func (c *collector) body(body []byte, contentType string, depth int) {
	mt, params, _ := mime.ParseMediaType(contentType)
	trimmed := bytes.TrimSpace(body)
	isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
	switch {
	case isJSON && (mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json") || strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json")):
		c.json(trimmed)
	case mt == "application/x-www-form-urlencoded":
		c.form(string(body))
	case strings.HasPrefix(mt, "multipart/"):
		if depth < maxParts {
			c.multipart(body, params["boundary"], depth)
		}
	case mt == "message/rfc822" || looksLikeMIME(body):
		c.mime(body)
	case isJSON:
		c.json(trimmed)
	case mt == "" || strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json"):
		c.form(string(body))
	}
}

// json walks a JSON body, up to its first syntax error: a body cut at
// maxBody is read up to the cut.
func (c *collector) json(body []byte) {
	v, _ := decode(body)
	c.walk(v, 0)
}

// walk looks for recipient and raw-message fields at any depth.
func (c *collector) walk(v any, depth int) {
	if depth > maxWalk || c.full() {
		return
	}
	switch x := v.(type) {
	case *object:
		for _, k := range x.keys {
			f := field(k)
			switch {
			case recipientFields[f]:
				c.all(x.vals[k], depth+1)
			case rawFields[f]:
				if s, ok := x.vals[k].(string); ok {
					c.raw(s)
				} else {
					c.walk(x.vals[k], depth+1)
				}
			default:
				c.walk(x.vals[k], depth+1)
			}
		}
	case []any:
		for _, e := range x {
			c.walk(e, depth+1)
		}
	}
}

// all collects every address in a recipient field's value: strings, arrays
// and objects such as {"email": ..., "name": ...}.
func (c *collector) all(v any, depth int) {
	if depth > maxWalk || c.full() {
		return
	}
	switch x := v.(type) {
	case string:
		c.text(x)
	case []any:
		for _, e := range x {
			c.all(e, depth+1)
		}
	case *object:
		for _, k := range x.keys {
			c.all(x.vals[k], depth+1)
		}
	}
}

// form reads an urlencoded body's recipient and raw-message fields, in order.
func (c *collector) form(body string) {
	for _, pair := range strings.Split(body, "&") {
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		c.formField(k, v)
	}
}

// formField reads one form field: a recipient field's addresses, or the
// MIME message a raw-message field holds.
func (c *collector) formField(k, v string) {
	f := field(k)
	switch {
	case recipientFields[f]:
		c.text(v)
	case rawFields[f]:
		c.raw(v)
	}
}

// multipart reads a multipart body: the fields of multipart/form-data
// (Mailgun) and the parts of any other (a Gmail upload's message/rfc822).
func (c *collector) multipart(body []byte, boundary string, depth int) {
	if boundary == "" {
		return
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for range 1000 {
		p, err := r.NextPart()
		if err != nil || c.full() {
			return
		}
		name := p.FormName()
		f := field(name)
		v, _ := io.ReadAll(io.LimitReader(p, maxBody))
		switch {
		case recipientFields[f] || rawFields[f]:
			c.formField(name, string(v))
		case name == "":
			c.body(v, p.Header.Get("Content-Type"), depth+1)
		}
		p.Close()
	}
}

// raw reads a field that may hold a MIME message, as text or in base64 or
// base64url, padded or not.
func (c *collector) raw(s string) {
	if looksLikeMIME([]byte(s)) {
		c.mime([]byte(s))
		return
	}
	compact := strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(compact); err == nil {
			if looksLikeMIME(b) {
				c.mime(b)
			}
			return
		}
	}
}

// headerLineRE is a header line: a field name, a colon.
var headerLineRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,76}:`)

// looksLikeMIME reports whether a body starts with header lines, one of
// them an address header or a subject.
func looksLikeMIME(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if !headerLineRE.Match(line) {
		return false
	}
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return false
	}
	for _, h := range []string{"To", "Cc", "Bcc", "From", "Subject"} {
		if _, ok := msg.Header[h]; ok {
			return true
		}
	}
	return false
}

// mime collects the To, Cc and Bcc headers of a MIME message.
func (c *collector) mime(b []byte) {
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return
	}
	dec := new(mime.WordDecoder)
	for _, h := range []string{"To", "Cc", "Bcc"} {
		for _, v := range msg.Header[h] {
			if d, err := dec.DecodeHeader(v); err == nil {
				v = d
			}
			c.text(v)
		}
	}
}

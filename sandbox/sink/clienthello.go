//go:build linux

package sink

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errShortHello is returned for a ClientHello that ends inside a field.
var errShortHello = errors.New("tls: ClientHello truncated")

// helloReader reads the length-prefixed fields of a handshake message.
type helloReader struct{ b []byte }

func (r *helloReader) skip(n int) bool {
	if n > len(r.b) {
		return false
	}
	r.b = r.b[n:]
	return true
}

// vector returns the next field with an n-byte big-endian length prefix.
func (r *helloReader) vector(n int) ([]byte, bool) {
	if len(r.b) < n {
		return nil, false
	}
	var l int
	for _, c := range r.b[:n] {
		l = l<<8 | int(c)
	}
	r.b = r.b[n:]
	if l > len(r.b) {
		return nil, false
	}
	v := r.b[:l]
	r.b = r.b[l:]
	return v, true
}

// parseClientHello returns the host name of the server_name extension of
// a ClientHello body (the handshake message without its 4-byte header),
// or "" when it has none. Only the structure up to that extension is
// checked; the sink wants the name, not to validate the handshake.
func parseClientHello(body []byte) (string, error) {
	r := helloReader{body}
	// legacy_version, random
	if !r.skip(2 + 32) {
		return "", errShortHello
	}
	// session_id, cipher_suites, compression_methods
	for _, n := range []int{1, 2, 1} {
		if _, ok := r.vector(n); !ok {
			return "", errShortHello
		}
	}
	if len(r.b) == 0 {
		return "", nil // no extensions
	}
	exts, ok := r.vector(2)
	if !ok {
		return "", errShortHello
	}
	er := helloReader{exts}
	for len(er.b) > 0 {
		if len(er.b) < 2 {
			return "", errShortHello
		}
		typ := binary.BigEndian.Uint16(er.b)
		er.b = er.b[2:]
		data, ok := er.vector(2)
		if !ok {
			return "", errShortHello
		}
		if typ != 0 { // server_name
			continue
		}
		dr := helloReader{data}
		list, ok := dr.vector(2)
		if !ok {
			return "", fmt.Errorf("tls: malformed server_name extension")
		}
		lr := helloReader{list}
		for len(lr.b) > 0 {
			nameType := lr.b[0]
			lr.b = lr.b[1:]
			name, ok := lr.vector(2)
			if !ok {
				return "", fmt.Errorf("tls: malformed server_name extension")
			}
			if nameType == 0 { // host_name
				return string(name), nil
			}
		}
		return "", nil
	}
	return "", nil
}

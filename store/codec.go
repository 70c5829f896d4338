package store

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
)

// Results are stored compressed: S2 (a faster Snappy) takes a result's
// JSON from about 10 KB to about 4 KB in 6 to 9 µs and gives it back in
// about 1 µs. A rescoring pass writes a result for every run, and on
// SQLite each byte is written twice (to the write-ahead log, then into
// the database) and written back by the kernel; measured side by side,
// compressing took the insert pass from 9,600-10,600 to 10,700-11,700
// results/s, and Postgres saving from 5,200-5,600 to 6,700-7,800. A stored
// result is the JSON itself (results saved before this encoding) or
// storedS2 followed by the S2 block of the JSON; JSON text never starts
// with a NUL byte, so the two cannot be confused.
//
// Bundles are stored the same way from schema 6 (14.5 KB of JSON in about
// 6 KB): a pass reads every run's bundle; SQLite had stored them whole,
// and Postgres, which had compressed them itself (lz4, in TOAST), spent a
// quarter of its reading decompressing them and sending the 14.5 KB. A
// bundle's digest (bundle_sha256) is still that of its JSON, and reading
// a run gives back exactly the bytes saved; bundles saved before stay
// plain JSON and read as such.
const storedS2 = "\x00s2"

// compressBuffers are compressJSON's scratch buffers.
var compressBuffers = sync.Pool{New: func() any { return new([]byte) }}

// compressJSON returns the stored form of a result's or a bundle's JSON.
func compressJSON(j []byte) []byte {
	bp := compressBuffers.Get().(*[]byte)
	if n := s2.MaxEncodedLen(len(j)); cap(*bp) < n {
		*bp = make([]byte, n)
	}
	enc := s2.Encode((*bp)[:cap(*bp)], j)
	out := make([]byte, len(storedS2)+len(enc))
	copy(out, storedS2)
	copy(out[len(storedS2):], enc)
	if cap(*bp) <= 1<<20 {
		compressBuffers.Put(bp)
	}
	return out
}

// storedJSON returns the JSON of a stored result or bundle, whichever its
// form.
func storedJSON(stored []byte) ([]byte, error) { return storedJSONInto(nil, stored) }

// storedJSONInto is storedJSON decompressing into buf when it is large
// enough. The JSON is stored itself when it was saved plain.
func storedJSONInto(buf, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, []byte(storedS2)) {
		return stored, nil
	}
	j, err := s2.Decode(buf[:cap(buf)], stored[len(storedS2):])
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return j, nil
}

// jsonBuffer gives the JSON of stored results or bundles one after
// another, decompressing each into the buffer the one before used: the
// JSON it returns is valid until its next call.
type jsonBuffer struct{ buf []byte }

func (b *jsonBuffer) json(stored []byte) ([]byte, error) {
	j, err := storedJSONInto(b.buf, stored)
	if err == nil && bytes.HasPrefix(stored, []byte(storedS2)) && cap(j) <= 1<<20 {
		b.buf = j
	}
	return j, err
}

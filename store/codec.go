package store

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/verifymcp/verifymcp/rubric"
)

// Results are stored compressed: S2 (a faster Snappy) takes a result's
// JSON from about 10 KB to about 4 KB in 6 to 9 µs and gives it back in
// about 1 µs. A rescoring pass writes a result for every run, and on
// SQLite each byte is written twice (to the write-ahead log, then into
// the database) and written back by the kernel; measured side by side,
// compressing took the insert pass from 9,600-10,600 to 10,700-11,700
// results/s, and Postgres saving from 5,200-5,600 to 6,700-7,800. A stored
// result is the JSON itself (results saved before this encoding) or
// resultS2 followed by the S2 block of the JSON; JSON text never starts
// with a NUL byte, so the two cannot be confused.
const resultS2 = "\x00s2"

// compressBuffers are compressResult's scratch buffers.
var compressBuffers = sync.Pool{New: func() any { return new([]byte) }}

// compressResult returns the stored form of a result's JSON.
func compressResult(j []byte) []byte {
	bp := compressBuffers.Get().(*[]byte)
	if n := s2.MaxEncodedLen(len(j)); cap(*bp) < n {
		*bp = make([]byte, n)
	}
	enc := s2.Encode((*bp)[:cap(*bp)], j)
	out := make([]byte, len(resultS2)+len(enc))
	copy(out, resultS2)
	copy(out[len(resultS2):], enc)
	if cap(*bp) <= 1<<20 {
		compressBuffers.Put(bp)
	}
	return out
}

// resultJSON returns the JSON of a stored result, whichever its form.
func resultJSON(stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, []byte(resultS2)) {
		return stored, nil
	}
	j, err := s2.Decode(nil, stored[len(resultS2):])
	if err != nil {
		return nil, fmt.Errorf("decompress result: %w", err)
	}
	return j, nil
}

// encodeStoredResult returns res in its stored form: encodeResult's
// JSON, compressed straight from the encoder's buffer.
func encodeStoredResult(res *rubric.Result) ([]byte, error) {
	var out []byte
	err := withResultJSON(res, func(j []byte, _ bool) { out = compressResult(j) })
	return out, err
}

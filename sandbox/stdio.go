package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// frameFilter splits the server's stdout into lines. JSON lines are handed
// to the MCP session; anything else is protocol noise, counted and sampled
// (a server that prints logs to stdout corrupts the channel for every
// client). It stops at maxBytes, marking the output truncated.
type frameFilter struct {
	frames chan []byte

	mu        sync.Mutex
	nonJSON   int
	samples   []string
	truncated bool
	bytes     atomic.Int64
	anyFrame  atomic.Bool
}

const (
	maxNoiseSamples = 5
	maxSampleLen    = 200
	maxLine         = 8 << 20
)

func newFrameFilter() *frameFilter { return &frameFilter{frames: make(chan []byte, 16)} }

func (f *frameFilter) run(r io.Reader, maxBytes int64) {
	defer close(f.frames)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, maxLine)
		if len(line) > 0 {
			if f.bytes.Add(int64(len(line))) > maxBytes {
				f.mu.Lock()
				f.truncated = true
				f.mu.Unlock()
				_, _ = io.Copy(io.Discard, r)
				return
			}
			trimmed := bytes.TrimSpace(line)
			switch {
			case len(trimmed) == 0:
			case (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed):
				f.anyFrame.Store(true)
				f.frames <- append(trimmed, '\n')
			default:
				f.mu.Lock()
				f.nonJSON++
				if len(f.samples) < maxNoiseSamples {
					s := string(trimmed)
					if len(s) > maxSampleLen {
						cut := maxSampleLen
						for cut > 0 && !utf8.RuneStart(s[cut]) {
							cut--
						}
						s = s[:cut] + "…"
					}
					f.samples = append(f.samples, s)
				}
				f.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line; a line longer than limit is returned in pieces
// of at most limit bytes, which will not parse as JSON and count as noise.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if err == bufio.ErrBufferFull && len(out) < limit {
			continue
		}
		if err == bufio.ErrBufferFull {
			return out, nil
		}
		return out, err
	}
}

func (f *frameFilter) noise() (int, []string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nonJSON, append([]string{}, f.samples...), f.truncated
}

// frameReader is the read side of one MCP session over the shared filter.
// Closing it ends that session's reads without stopping the filter, so a
// second session can follow on the same stdout (the handshake fallback).
type frameReader struct {
	frames <-chan []byte
	done   chan struct{}
	once   sync.Once
	buf    []byte
	// skip, when set, drops the first frame it matches (once).
	skip func([]byte) bool
}

// lateProbeRejection reports whether a frame is a JSON-RPC error answer
// "method not found": the late rejection of server/discover by a server
// that was slow to start, which must not be taken as the fallback
// session's answer (both sessions number their requests from 1).
func lateProbeRejection(f []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(f, &m) == nil && m.Method == "" && len(m.ID) > 0 && m.Error != nil && m.Error.Code == -32601
}

func newFrameReader(frames <-chan []byte) *frameReader {
	return &frameReader{frames: frames, done: make(chan struct{})}
}

func (r *frameReader) Read(p []byte) (int, error) {
	// A closed reader must never take a frame meant for the next session.
	select {
	case <-r.done:
		return 0, io.EOF
	default:
	}
	for len(r.buf) == 0 {
		select {
		case f, ok := <-r.frames:
			if !ok {
				return 0, io.EOF
			}
			if r.skip != nil && r.skip(f) {
				r.skip = nil
				continue
			}
			r.buf = f
		case <-r.done:
			return 0, io.EOF
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *frameReader) Close() error {
	r.once.Do(func() { close(r.done) })
	return nil
}

// stdinWriter writes to the container's stdin. Closing a session does not
// close stdin; the run phase closes it once, at the end.
type stdinWriter struct {
	w      io.Writer
	closed atomic.Bool
}

var errSessionClosed = errors.New("session closed")

func (w *stdinWriter) Write(p []byte) (int, error) {
	if w.closed.Load() {
		return 0, errSessionClosed
	}
	return w.w.Write(p)
}

func (w *stdinWriter) Close() error {
	w.closed.Store(true)
	return nil
}

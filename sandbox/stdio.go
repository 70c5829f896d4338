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
// client). A line longer than maxLine is cut: its first maxLine bytes go to
// oversize, which may turn them into a frame. It stops at maxBytes, marking
// the output truncated.
type frameFilter struct {
	frames chan []byte
	// oversize, when set, gets the first maxLine bytes of a longer line and
	// the line's full size, and returns the frame to hand on, or nil.
	oversize func(prefix []byte, size int64) []byte
	// answer, when set, gets every frame before it is handed on, and
	// returns the frame to hand on in its stead: a list page is read
	// here, as the line was read, so that the go-sdk never decodes it
	// whole (see wire.early).
	answer func(frame []byte) []byte
	// sample, when set, masks the start of a noise line before it is cut
	// to a sample, so that the cut leaves no part of a secret.
	sample func(string) string

	// quit, once closed by drain, makes run drop the frames no session
	// will read, counting them in unread, so that the server's stdout is
	// read to its end whatever it sends after the session.
	quit     chan struct{}
	quitOnce sync.Once
	unread   atomic.Int64

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
	// maxLine bounds one message from the server. It is also the go-sdk
	// transport's bound, so a frame handed on is never refused there.
	maxLine = 64 << 20
)

func newFrameFilter() *frameFilter {
	return &frameFilter{frames: make(chan []byte, 16), quit: make(chan struct{})}
}

// drain ends the hand-over of frames: the sessions are over, and what the
// server still writes is read and dropped, counted in unread. Unread, the
// server's stdout would fill the attach stream, and the engine would hold
// the container, and every API call about it, until the stream drained.
func (f *frameFilter) drain() { f.quitOnce.Do(func() { close(f.quit) }) }

func (f *frameFilter) run(r io.Reader, maxBytes int64) {
	defer close(f.frames)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, size, cut, err := readLine(br, maxLine)
		if size > 0 {
			if f.bytes.Add(size) > maxBytes {
				f.mu.Lock()
				f.truncated = true
				f.mu.Unlock()
				_, _ = io.Copy(io.Discard, r)
				return
			}
			trimmed := bytes.TrimSpace(line)
			var frame []byte
			switch {
			case len(trimmed) == 0:
			case cut:
				if f.oversize != nil {
					frame = f.oversize(trimmed, size)
				}
			case (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed):
				frame = trimmed
			}
			if frame != nil && f.answer != nil {
				frame = f.answer(frame)
			}
			switch {
			case frame != nil:
				f.anyFrame.Store(true)
				select {
				case f.frames <- append(frame, '\n'):
				case <-f.quit:
					f.unread.Add(1)
				}
			case len(trimmed) > 0:
				f.noiseLine(trimmed)
			}
		}
		if err != nil {
			return
		}
	}
}

func (f *frameFilter) noiseLine(trimmed []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nonJSON++
	if len(f.samples) < maxNoiseSamples {
		// Enough past the cut that a secret across it is masked whole.
		s := string(trimmed[:min(len(trimmed), maxSampleLen+1024)])
		if f.sample != nil {
			s = f.sample(s)
		}
		if len(s) > maxSampleLen {
			cut := maxSampleLen
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut] + "…"
		}
		f.samples = append(f.samples, s)
	}
}

// readLine reads one line and returns at most limit bytes of it, with the
// line's full size and whether anything but its newline was dropped; the
// rest of a longer line is read and dropped.
func readLine(br *bufio.Reader, limit int) (line []byte, size int64, cut bool, err error) {
	var dropped int
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		room := max(limit-len(line), 0)
		line = append(line, chunk[:min(len(chunk), room)]...)
		dropped += len(chunk) - min(len(chunk), room)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil && dropped > 0 {
			dropped-- // the newline
		}
		return line, size, dropped > 0, err
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
			r.buf = f
		case <-r.done:
			return 0, io.EOF
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	if len(r.buf) == 0 {
		r.buf = nil // not to hold a 50 MB frame until the next one
	}
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

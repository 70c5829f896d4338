package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// unitDiff returns "" when want and got are deeply equal, else both values
// as (-want +got).
func unitDiff[T any](want, got T) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("\n-%#v\n+%#v", want, got)
}

// unitFiltered is everything a frameFilter reported for one input.
type unitFiltered struct {
	Frames    []string
	NonJSON   int
	Samples   []string
	Truncated bool
	Bytes     int64
	AnyFrame  bool
}

// unitFilter runs a frameFilter over r to the end and collects its output.
func unitFilter(t *testing.T, r io.Reader, maxBytes int64) unitFiltered {
	t.Helper()
	f := newFrameFilter()
	go f.run(r, maxBytes)
	got := unitFiltered{Frames: []string{}}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case fr, ok := <-f.frames:
			if !ok {
				got.NonJSON, got.Samples, got.Truncated = f.noise()
				got.Bytes = f.bytes.Load()
				got.AnyFrame = f.anyFrame.Load()
				return got
			}
			got.Frames = append(got.Frames, string(fr))
		case <-timeout:
			t.Fatal("frame filter did not close its frames channel")
		}
	}
}

func TestFrameFilter(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name     string
		in       string
		maxBytes int64
		want     unitFiltered
	}{
		{
			name: "json lines pass through trimmed with one newline",
			in:   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n  [{\"jsonrpc\":\"2.0\",\"method\":\"x\"}] \r\n",
			want: unitFiltered{
				Frames:   []string{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", "[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]\n"},
				Samples:  []string{},
				AnyFrame: true,
			},
		},
		{
			name: "log lines are counted and sampled, frames still pass",
			in:   "Secure MCP Filesystem Server running on stdio\n{\"id\":1}\nAllowed directories: [ '/tmp' ]\n",
			want: unitFiltered{
				Frames:   []string{"{\"id\":1}\n"},
				NonJSON:  2,
				Samples:  []string{"Secure MCP Filesystem Server running on stdio", "Allowed directories: [ '/tmp' ]"},
				AnyFrame: true,
			},
		},
		{
			name: "invalid json and json scalars are noise",
			in:   "{\"id\":1\n42\n\"hello\"\ntrue\n",
			want: unitFiltered{
				Frames:  []string{},
				NonJSON: 4,
				Samples: []string{"{\"id\":1", "42", "\"hello\"", "true"},
			},
		},
		{
			name: "blank lines are ignored",
			in:   "\n\n   \n\t\r\n{\"id\":2}\n\n",
			want: unitFiltered{Frames: []string{"{\"id\":2}\n"}, Samples: []string{}, AnyFrame: true},
		},
		{
			name: "at most five samples, every line counted",
			in:   "l1\nl2\nl3\nl4\nl5\nl6\nl7\n",
			want: unitFiltered{
				Frames:  []string{},
				NonJSON: 7,
				Samples: []string{"l1", "l2", "l3", "l4", "l5"},
			},
		},
		{
			name: "samples truncated to 200 bytes",
			in:   long + "\n",
			want: unitFiltered{
				Frames:  []string{},
				NonJSON: 1,
				Samples: []string{strings.Repeat("x", 200) + "…"},
			},
		},
		{
			name: "last line without newline is kept",
			in:   "{\"id\":1}\n{\"id\":2}",
			want: unitFiltered{Frames: []string{"{\"id\":1}\n", "{\"id\":2}\n"}, Samples: []string{}, AnyFrame: true},
		},
		{
			name:     "byte bound reached exactly is not truncation",
			in:       "{\"id\":1}\n{\"id\":2}\n",
			maxBytes: 18,
			want:     unitFiltered{Frames: []string{"{\"id\":1}\n", "{\"id\":2}\n"}, Samples: []string{}, AnyFrame: true},
		},
		{
			name:     "byte bound passed stops the filter and sets truncated",
			in:       "{\"id\":1}\nnoise\n{\"id\":2}\n{\"id\":3}\nmore noise\n",
			maxBytes: 20,
			want: unitFiltered{
				Frames:    []string{"{\"id\":1}\n"},
				NonJSON:   1,
				Samples:   []string{"noise"},
				Truncated: true,
				AnyFrame:  true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.maxBytes
			if limit == 0 {
				limit = 1 << 20
			}
			got := unitFilter(t, strings.NewReader(tt.in), limit)
			got.Bytes = 0 // checked by TestFrameFilterCountsBytes
			if d := unitDiff(tt.want, got); d != "" {
				t.Errorf("frameFilter(%q) (-want +got):%s", tt.in, d)
			}
		})
	}
}

func TestFrameFilterCountsBytes(t *testing.T) {
	in := "{\"id\":1}\n\nlog line\n"
	got := unitFilter(t, strings.NewReader(in), 1<<20)
	if got.Bytes != int64(len(in)) {
		t.Errorf("bytes = %d, want %d (every byte of stdout, blank lines included)", got.Bytes, len(in))
	}
}

func TestFrameFilterLongLines(t *testing.T) {
	t.Run("a 1 MiB frame, longer than the read buffer, passes whole", func(t *testing.T) {
		frame := `{"jsonrpc":"2.0","id":1,"result":{"blob":"` + strings.Repeat("a", 1<<20) + `"}}`
		got := unitFilter(t, strings.NewReader(frame+"\n{\"id\":2}\n"), 64<<20)
		if len(got.Frames) != 2 || got.Frames[0] != frame+"\n" || got.Frames[1] != "{\"id\":2}\n" {
			t.Errorf("got %d frames (first %d bytes), want the 1 MiB frame whole and then {\"id\":2}", len(got.Frames), len(got.Frames[0]))
		}
		if got.NonJSON != 0 {
			t.Errorf("nonJSON = %d, want 0", got.NonJSON)
		}
	})
	t.Run("a line over the bound that is no list answer is one line of noise", func(t *testing.T) {
		frame := `{"blob":"` + strings.Repeat("b", maxLine) + `"}`
		got := unitFilter(t, strings.NewReader(frame+"\n{\"id\":3}\n"), 256<<20)
		if d := unitDiff([]string{"{\"id\":3}\n"}, got.Frames); d != "" {
			t.Errorf("frames (-want +got):%s", d)
		}
		if got.NonJSON != 1 {
			t.Errorf("nonJSON = %d, want 1", got.NonJSON)
		}
		if got.Bytes != int64(len(frame)+1+len("{\"id\":3}\n")) {
			t.Errorf("bytes = %d, want every byte counted, the dropped ones too", got.Bytes)
		}
		for _, s := range got.Samples {
			if len(s) > maxSampleLen+len("…") {
				t.Errorf("sample of %d bytes, want at most %d", len(s), maxSampleLen+len("…"))
			}
		}
	})
	t.Run("a line of exactly the bound passes whole", func(t *testing.T) {
		frame := `{"blob":"` + strings.Repeat("c", maxLine-len(`{"blob":""}`)) + `"}`
		got := unitFilter(t, strings.NewReader(frame+"\n"), 256<<20)
		if len(got.Frames) != 1 || len(got.Frames[0]) != maxLine+1 || got.NonJSON != 0 {
			t.Errorf("got %d frames, %d noise lines; want the %d-byte frame whole", len(got.Frames), got.NonJSON, maxLine)
		}
	})
}

func TestFrameFilterDrainsAfterBound(t *testing.T) {
	pr, pw := io.Pipe()
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(pw, "{\"id\":1}\n"+strings.Repeat("spam spam spam\n", 1<<16))
		pw.Close()
		wrote <- err
	}()
	got := unitFilter(t, pr, 100)
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatalf("writer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writer blocked: the filter stopped reading after the byte bound")
	}
	if !got.Truncated {
		t.Error("truncated = false, want true")
	}
	if d := unitDiff([]string{"{\"id\":1}\n"}, got.Frames); d != "" {
		t.Errorf("frames (-want +got):%s", d)
	}
}

func TestFrameFilterSampleIsValidUTF8(t *testing.T) {
	// 100 euro signs are 300 bytes; byte 200 falls inside a rune.
	line := strings.Repeat("€", 100)
	got := unitFilter(t, strings.NewReader(line+"\n"), 1<<20)
	if len(got.Samples) != 1 {
		t.Fatalf("samples = %q, want one", got.Samples)
	}
	if !utf8.ValidString(got.Samples[0]) {
		t.Errorf("sample %q is not valid UTF-8", got.Samples[0])
	}
	if !strings.HasPrefix(line, strings.TrimSuffix(got.Samples[0], "…")) {
		t.Errorf("sample %q is not a prefix of the line", got.Samples[0])
	}
}

func unitRead(t *testing.T, r io.Reader, p []byte) (int, error) {
	t.Helper()
	type res struct {
		n   int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		n, err := r.Read(p)
		ch <- res{n, err}
	}()
	select {
	case r := <-ch:
		return r.n, r.err
	case <-time.After(5 * time.Second):
		t.Fatal("Read did not return")
		return 0, nil
	}
}

func TestFrameReader(t *testing.T) {
	t.Run("a frame is delivered across small reads", func(t *testing.T) {
		frames := make(chan []byte, 2)
		frames <- []byte("{\"jsonrpc\":\"2.0\",\"id\":7}\n")
		r := newFrameReader(frames)
		var got bytes.Buffer
		p := make([]byte, 5)
		for got.Len() < len("{\"jsonrpc\":\"2.0\",\"id\":7}\n") {
			n, err := unitRead(t, r, p)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			got.Write(p[:n])
		}
		if want := "{\"jsonrpc\":\"2.0\",\"id\":7}\n"; got.String() != want {
			t.Errorf("read %q, want %q", got.String(), want)
		}
	})

	t.Run("end of the filter is EOF", func(t *testing.T) {
		frames := make(chan []byte)
		close(frames)
		if _, err := unitRead(t, newFrameReader(frames), make([]byte, 8)); !errors.Is(err, io.EOF) {
			t.Errorf("Read after the filter ended = %v, want io.EOF", err)
		}
	})

	t.Run("Close ends a blocked read and a second reader gets later frames", func(t *testing.T) {
		frames := make(chan []byte, 4)
		first := newFrameReader(frames)
		errc := make(chan error, 1)
		go func() {
			_, err := first.Read(make([]byte, 64))
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond) // let Read block on the empty channel
		if err := first.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, io.EOF) {
				t.Errorf("blocked Read after Close = %v, want io.EOF", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not end the blocked Read")
		}
		if err := first.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}

		frames <- []byte("{\"id\":1}\n")
		second := newFrameReader(frames)
		p := make([]byte, 64)
		n, err := unitRead(t, second, p)
		if err != nil || string(p[:n]) != "{\"id\":1}\n" {
			t.Errorf("second reader got %q, %v; want the frame sent after the first closed", p[:n], err)
		}
	})

	t.Run("a closed reader never takes a pending frame", func(t *testing.T) {
		// The go-sdk's read loop may call Read once more after Close; a
		// frame meant for the next session must stay in the channel.
		frames := make(chan []byte, 1)
		first := newFrameReader(frames)
		first.Close()
		second := newFrameReader(frames)
		for i := range 100 {
			frame := fmt.Sprintf("{\"id\":%d}\n", i)
			frames <- []byte(frame)
			n, err := unitRead(t, first, make([]byte, 64))
			if !errors.Is(err, io.EOF) {
				t.Errorf("Read on a closed frameReader returned %d bytes, %v at try %d: it selects at random between done and a pending frame, so it can steal the next session's frame", n, err, i)
			}
			p := make([]byte, 64)
			n, err = unitRead(t, second, p)
			if err != nil || string(p[:n]) != frame {
				t.Fatalf("second reader got %q, %v; want %q", p[:n], err, frame)
			}
		}
	})
}

func TestStdinWriter(t *testing.T) {
	var stdin bytes.Buffer
	first := &stdinWriter{w: &stdin}
	if n, err := first.Write([]byte("a\n")); n != 2 || err != nil {
		t.Fatalf("Write = %d, %v; want 2, nil", n, err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := first.Write([]byte("late\n")); !errors.Is(err, errSessionClosed) {
		t.Errorf("Write after Close = %v, want errSessionClosed", err)
	}
	second := &stdinWriter{w: &stdin}
	if _, err := second.Write([]byte("b\n")); err != nil {
		t.Errorf("second session's Write after the first closed: %v", err)
	}
	if got, want := stdin.String(), "a\nb\n"; got != want {
		t.Errorf("stdin = %q, want %q", got, want)
	}
}

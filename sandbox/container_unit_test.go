package sandbox

import (
	"testing"
)

func TestHeadBuffer(t *testing.T) {
	tests := []struct {
		name        string
		max         int
		writes      []string
		want        string
		wantDropped int64
	}{
		{"under the bound", 16, []string{"hello ", "world"}, "hello world", 0},
		{"exactly the bound", 10, []string{"hello", "world"}, "helloworld", 0},
		{"a write across the bound is cut", 8, []string{"hello", "world"}, "hellowor", 2},
		{"writes after the bound are counted", 5, []string{"hello", "world", "!!"}, "hello", 7},
		{"zero bound keeps nothing", 0, []string{"abc"}, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &headBuffer{max: tt.max}
			for _, w := range tt.writes {
				// A short write would make stdcopy fail and lose the stream.
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
			}
			if got := string(h.Bytes()); got != tt.want {
				t.Errorf("Bytes = %q, want %q", got, tt.want)
			}
			if h.dropped != tt.wantDropped {
				t.Errorf("dropped = %d, want %d", h.dropped, tt.wantDropped)
			}
		})
	}
	t.Run("Bytes is a copy", func(t *testing.T) {
		h := &headBuffer{max: 8}
		h.Write([]byte("abc"))
		b := h.Bytes()
		b[0] = 'X'
		if got := string(h.Bytes()); got != "abc" {
			t.Errorf("after changing the returned slice, Bytes = %q, want %q", got, "abc")
		}
	})
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"under the bound", 16, []string{"npm ", "error"}, "npm error"},
		{"keeps the last bytes across writes", 5, []string{"abc", "defg"}, "cdefg"},
		{"one write longer than the bound", 4, []string{"0123456789"}, "6789"},
		{"many small writes", 3, []string{"a", "b", "c", "d", "e"}, "cde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &tailBuffer{max: tt.max}
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
			if got := string(b.Bytes()); got != tt.want {
				t.Errorf("Bytes = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("memory stays bounded over a long stream", func(t *testing.T) {
		b := &tailBuffer{max: 4096}
		chunk := make([]byte, 1000)
		for range 1000 {
			b.Write(chunk)
		}
		if len(b.buf) != 4096 || cap(b.buf) > 4*4096 {
			t.Errorf("after 1 MB of writes the buffer holds %d bytes in %d, want 4096 in at most %d", len(b.buf), cap(b.buf), 4*4096)
		}
	})
}

func TestSplitDir(t *testing.T) {
	tests := []struct {
		in, wantDir, wantFile string
	}{
		{".verifymcp/ca.pem", ".verifymcp", "ca.pem"},
		{".verifymcp/target.tgz", ".verifymcp", "target.tgz"},
		{"a/b/c.json", "a/b", "c.json"},
		{"plan.json", "", "plan.json"},
		{"dir/", "dir", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		dir, file := splitDir(tt.in)
		if dir != tt.wantDir || file != tt.wantFile {
			t.Errorf("splitDir(%q) = %q, %q; want %q, %q", tt.in, dir, file, tt.wantDir, tt.wantFile)
		}
	}
}

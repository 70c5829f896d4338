package sandbox

import (
	"io"
	"testing"
)

// TestLateProbeRejection: the fallback session drops the late "method not
// found" answer to server/discover (same id as its own initialize) once,
// and passes everything else.
func TestLateProbeRejection(t *testing.T) {
	frames := make(chan []byte, 3)
	frames <- []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}` + "\n")
	frames <- []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}` + "\n")
	frames <- []byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}` + "\n")
	close(frames)
	r := newFrameReader(frames)
	r.skip = lateProbeRejection
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}` + "\n"
	if string(got) != want {
		t.Errorf("read %q, want %q", got, want)
	}
	for _, f := range []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`not json`,
	} {
		if lateProbeRejection([]byte(f)) {
			t.Errorf("%s taken for a late probe rejection", f)
		}
	}
}

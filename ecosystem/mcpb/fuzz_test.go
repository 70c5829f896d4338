package mcpb_test

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
)

// FuzzOpen: no input makes Open, or what a bundle it accepts offers,
// panic.
func FuzzOpen(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("MCPB_SIG_V1\x00\x00\x00\x00MCPB_SIG_END"))
	f.Add(buildZip(f, []file{{name: "manifest.json", body: validManifest}}))
	f.Add(buildZip(f, []file{
		{name: "manifest.json", body: `{"manifest_version": "0.4", "name": "x", "version": "1", "description": "d", "author": {"name": "a"},
		"server": {"type": "uv", "entry_point": "s.py", "mcp_config": {"command": "${user_config.k}", "args": ["${user_config.k}", "${"],
		"platform_overrides": {"linux": {"env": {"A": "${HOME}${"}}}}},
		"user_config": {"k": {"type": "directory", "title": "t", "description": "d", "multiple": true, "default": ["${HOME}"]}},
		"tools": [{"name": "t"}], "prompts": [{"name": "p", "text": "x"}]}`},
		{name: "a/", mode: fs.ModeDir | 0o755}, {name: "a/b", body: "x"},
	}))
	if data, err := os.ReadFile("testdata/hello-signed.mcpb"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := mcpb.Open(bytes.NewReader(data), int64(len(data)), mcpb.Limits{Files: 64, Bytes: 1 << 20})
		if err != nil {
			return
		}
		_ = b.Verify(nil, time.Now())
		_ = b.WriteTar(io.Discard, "x", 1, 1)
		_ = b.Lockfile()
		values, _ := mcpb.Placeholders(b.Manifest, "/s")
		_, _, _ = b.Manifest.Command("/b", values, "linux")
		_ = mcpb.Compare(b.Manifest, []string{"t"}, nil)
	})
}

// Package web builds the config scan's browser page: index.html, its
// stylesheet and script (static/), Go's WebAssembly loader
// (wasm_exec.js, from the toolchain that compiled the module) and the
// module itself (configscan.wasm.js: the config scan of package
// web/configscan compiled by web/wasm, gzip-compressed and base64-encoded
// in a script, so that the page works opened from disk, where a browser
// refuses to fetch a .wasm file). Any static host, file://, or
// `verifymcp config serve` serves the folder.
package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed static
var static embed.FS

// Files are the names of the built page's files, the page first.
var Files = []string{"index.html", "style.css", "app.js", "wasm_exec.js", "configscan.wasm.js"}

// Build writes the page into dir (made if missing), its module naming
// version as the tool version of the reports it writes, as the CLI built
// with the same version would. It needs the go command that runs it.
func Build(ctx context.Context, dir, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	goroot, err := goEnv(ctx, "GOROOT")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "verifymcp-web-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	module := filepath.Join(tmp, "configscan.wasm")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w -buildid= -X main.version="+version,
		"-o", module, "github.com/verifymcp/verifymcp/web/wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("web: build the module: %v\n%s", err, out)
	}
	wasm, err := os.ReadFile(module)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(wasm); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	script := "// verifymcp config scan: the WebAssembly module (" + version + "), gzip and base64. app.js loads it.\n" +
		"globalThis.verifymcpWasmGzip = \"" + base64.StdEncoding.EncodeToString(gz.Bytes()) + "\";\n"
	loader, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return fmt.Errorf("web: Go's wasm_exec.js: %w", err)
	}
	out := map[string][]byte{"configscan.wasm.js": []byte(script), "wasm_exec.js": loader}
	if err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := static.ReadFile(p)
		out[strings.TrimPrefix(p, "static/")] = data
		return err
	}); err != nil {
		return err
	}
	for _, name := range Files {
		data, ok := out[name]
		if !ok {
			return fmt.Errorf("web: %s is missing", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func goEnv(ctx context.Context, name string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("web: go env %s: %w (building the page needs the go command)", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

//go:build js && wasm

// Command wasm is the config scan compiled to WebAssembly for the
// browser page (see package web): it sets globalThis.verifymcpConfigScan
// to {version, clients, catalog, scan(files)} and calls
// globalThis.verifymcpReady() when it is there. scan takes an array of
// {name, bytes: Uint8Array, client} and returns configscan.Result as JSON,
// or {"error": ...}. It has no network, storage or file access: the page
// hands it bytes and gets text back.
package main

import (
	"encoding/json"
	"syscall/js"
	"time"

	"github.com/verifymcp/verifymcp/web/configscan"
)

// version is the tool version the report names; the page's build sets it
// (-ldflags -X main.version=...) as the CLI's build sets its own.
var version = "0.1.0-dev"

func main() {
	api := js.Global().Get("Object").New()
	api.Set("version", version)
	api.Set("clients", marshal(configscan.Clients()))
	api.Set("catalog", marshal(configscan.Catalog()))
	api.Set("scan", js.FuncOf(scan))
	js.Global().Set("verifymcpConfigScan", api)
	if ready := js.Global().Get("verifymcpReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

func scan(_ js.Value, args []js.Value) any {
	if len(args) != 1 || args[0].Type() != js.TypeObject {
		return marshal(map[string]string{"error": "scan takes one array of {name, bytes, client}"})
	}
	list := args[0]
	files := make([]configscan.File, list.Length())
	for i := range files {
		o := list.Index(i)
		b := o.Get("bytes")
		data := make([]byte, b.Get("length").Int())
		js.CopyBytesToGo(data, b)
		files[i] = configscan.File{Name: str(o.Get("name")), Data: data, Client: str(o.Get("client"))}
	}
	res, err := configscan.Scan(files, version, time.Now())
	if err != nil {
		return marshal(map[string]string{"error": err.Error()})
	}
	return marshal(res)
}

func str(v js.Value) string {
	if v.Type() != js.TypeString {
		return ""
	}
	return v.String()
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return `{"error":"` + err.Error() + `"}`
	}
	return string(b)
}

package hostport

import (
	"net/url"
	"testing"
)

func TestOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://registry.npmjs.org/": "registry.npmjs.org:443",
		"http://127.0.0.1:4873/":      "127.0.0.1:4873",
		"http://mirror.example/npm/":  "mirror.example:80",
		"https://[::1]:8443/simple/":  "[::1]:8443",
		"https://pypi.org":            "pypi.org:443",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(u); got != want {
			t.Errorf("Of(%s) = %s, want %s", in, got, want)
		}
	}
}

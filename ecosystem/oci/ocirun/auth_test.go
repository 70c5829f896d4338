package ocirun

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/registry"
)

// fakeHelper writes docker-credential-NAME into dir: it answers get for
// the registries of creds (server URL to its JSON answer) and says it has
// none for any other, as a real helper does; it logs what it was asked.
func fakeHelper(t *testing.T, dir, name string, creds map[string]string) {
	t.Helper()
	var cases strings.Builder
	for url, answer := range creds {
		cases.WriteString("  '" + url + "') echo '" + answer + "' ;;\n")
	}
	script := "#!/bin/sh\n[ \"$1\" = get ] || exit 2\nread -r url\necho \"$url\" >> \"" + filepath.Join(dir, name+".log") + "\"\ncase \"$url\" in\n" +
		cases.String() + "  *) echo 'credentials not found in native keychain'; exit 1 ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "docker-credential-"+name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryAuth: the credential of a registry is found as the docker
// CLI finds it: the host's credHelpers entry, else credsStore, else auths;
// a helper's identity token is one; a helper that has none gives none; a
// helper that is not there is an error that names it.
func TestRegistryAuth(t *testing.T) {
	bin := t.TempDir()
	fakeHelper(t, bin, "store", map[string]string{
		"https://index.docker.io/v1/": `{"ServerURL":"https://index.docker.io/v1/","Username":"hubuser","Secret":"hub-secret"}`,
		"registry.example.com":        `{"ServerURL":"registry.example.com","Username":"<token>","Secret":"id-token"}`,
	})
	fakeHelper(t, bin, "gcr", map[string]string{"gcr.io": `{"ServerURL":"gcr.io","Username":"oauth2accesstoken","Secret":"gcr-secret"}`})
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	plain := base64.StdEncoding.EncodeToString([]byte("fileuser:file-secret"))
	for _, tc := range []struct {
		name, config, host string
		want               registry.AuthConfig
		err                string
	}{
		{"credsStore, Docker Hub", `{"credsStore": "store"}`, "docker.io",
			registry.AuthConfig{Username: "hubuser", Password: "hub-secret", ServerAddress: "docker.io"}, ""},
		{"credsStore, an identity token", `{"credsStore": "store"}`, "registry.example.com",
			registry.AuthConfig{IdentityToken: "id-token", ServerAddress: "registry.example.com"}, ""},
		{"credHelpers before credsStore", `{"credsStore": "store", "credHelpers": {"gcr.io": "gcr"}}`, "gcr.io",
			registry.AuthConfig{Username: "oauth2accesstoken", Password: "gcr-secret", ServerAddress: "gcr.io"}, ""},
		{"the helper has none", `{"credsStore": "store", "auths": {"ghcr.io": {"auth": "` + plain + `"}}}`, "ghcr.io", registry.AuthConfig{}, ""},
		{"auths without a helper", `{"auths": {"ghcr.io": {"auth": "` + plain + `"}}}`, "ghcr.io",
			registry.AuthConfig{Username: "fileuser", Password: "file-secret", ServerAddress: "ghcr.io"}, ""},
		{"a helper not installed", `{"credsStore": "desktop"}`, "ghcr.io", registry.AuthConfig{}, "docker-credential-desktop is not on PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("DOCKER_CONFIG", dir)
			enc, err := registryAuth(tc.host)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("registryAuth = %q, %v; want an error saying %q", enc, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got registry.AuthConfig
			if enc != "" {
				c, err := registry.DecodeAuthConfig(enc)
				if err != nil {
					t.Fatal(err)
				}
				got = *c
			}
			if got != tc.want {
				t.Errorf("registryAuth(%s) = %+v, want %+v", tc.host, got, tc.want)
			}
		})
	}
}

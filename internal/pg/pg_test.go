package pg

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestIsDSN(t *testing.T) {
	for _, target := range []string{"postgres://x", "postgresql://x", "/var/lib/verifymcp", "data", "host=db dbname=x"} {
		got := IsDSN(target)
		want := strings.HasPrefix(target, "postgres")
		if got != want {
			t.Errorf("IsDSN(%q) = %v, want %v", target, got, want)
		}
	}
}

// TestOpenInvalidDSN: a DSN that does not parse is ErrInvalidDSN, which
// quotes none of it.
func TestOpenInvalidDSN(t *testing.T) {
	const secret = "s3cr3t-Pw"
	_, _, err := Open("postgres://verifymcp:" + secret + "@127.0.0.1:notaport/db")
	if !errors.Is(err, ErrInvalidDSN) || strings.Contains(err.Error(), secret) {
		t.Errorf("got %v, want ErrInvalidDSN without the password", err)
	}
}

func TestRedact(t *testing.T) {
	const secret = "p@ss:w/rd ü"
	base := errors.New("boom")
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"plain", fmt.Errorf("login with %s failed: %w", secret, base), "login with xxxxx failed: boom"},
		{"query_escaped", fmt.Errorf("GET /?password=%s: %w", "p%40ss%3Aw%2Frd+%C3%BC", base), "GET /?password=xxxxx: boom"},
		{"userinfo_escaped", fmt.Errorf("dial postgres://u:%s@h: %w", "p%40ss%3Aw%2Frd%20%C3%BC", base), "dial postgres://u:xxxxx@h: boom"},
		{"absent", fmt.Errorf("no secret here: %w", base), "no secret here: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.err, secret)
			if got.Error() != tt.want {
				t.Errorf("got %q, want %q", got.Error(), tt.want)
			}
			if !errors.Is(got, base) {
				t.Error("the redacted error no longer unwraps")
			}
		})
	}
	if Redact(nil, secret) != nil {
		t.Error("Redact(nil) is not nil")
	}
}

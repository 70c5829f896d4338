package queue

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func TestPermanent(t *testing.T) {
	base := errors.New("npm install exited 1")
	tests := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"nil_stays_nil", Permanent(nil), false},
		{"plain_error_is_infrastructure", base, false},
		{"wrapped", Permanent(base), true},
		{"wrapped_then_wrapped_again", fmt.Errorf("scan: %w", Permanent(base)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var perm *PermanentError
			if got := errors.As(tt.err, &perm); got != tt.permanent {
				t.Errorf("errors.As(%v, *PermanentError) = %v, want %v", tt.err, got, tt.permanent)
			}
			if tt.permanent && !errors.Is(tt.err, base) {
				t.Errorf("%v does not unwrap to the handler's error", tt.err)
			}
		})
	}
}

// TestScanArgsKey: the unique key is the three tagged fields and nothing
// else, which is what River hashes under UniqueOpts.ByArgs.
func TestScanArgsKey(t *testing.T) {
	a := ScanArgs{Target: "npm:x@1.0.0", RubricVersion: "r1", ToolVersion: "v1", Options: json.RawMessage(`{"a":1}`)}
	b := a
	b.Options = json.RawMessage(`{"a":2}`)
	if a.key() != b.key() {
		t.Errorf("options changed the key: %v != %v", a.key(), b.key())
	}
	for _, c := range []ScanArgs{
		{Target: "npm:x@1.0.1", RubricVersion: "r1", ToolVersion: "v1"},
		{Target: "npm:x@1.0.0", RubricVersion: "r2", ToolVersion: "v1"},
		{Target: "npm:x@1.0.0", RubricVersion: "r1", ToolVersion: "v2"},
	} {
		if c.key() == a.key() {
			t.Errorf("%+v has the key of %+v", c, a)
		}
	}
	opts := a.InsertOpts()
	if !opts.UniqueOpts.ByArgs || opts.Queue != QueueScan {
		t.Errorf("InsertOpts() = %+v, want unique by args in queue %q", opts, QueueScan)
	}
	enc, err := json.Marshal(ScanArgs{Target: "t", RubricVersion: "r", ToolVersion: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(enc), `{"target":"t","rubric_version":"r","tool_version":"v"}`; got != want {
		t.Errorf("encoded args = %s, want %s", got, want)
	}
}

func TestScanArgsValidate(t *testing.T) {
	tests := []struct {
		name string
		args ScanArgs
		ok   bool
	}{
		{"complete", ScanArgs{Target: "npm:x@1.0.0", RubricVersion: "r1", ToolVersion: "v1"}, true},
		{"no_target", ScanArgs{RubricVersion: "r1", ToolVersion: "v1"}, false},
		{"blank_rubric", ScanArgs{Target: "npm:x@1.0.0", RubricVersion: " ", ToolVersion: "v1"}, false},
		{"no_tool_version", ScanArgs{Target: "npm:x@1.0.0", RubricVersion: "r1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.args.validate()
			if got := err == nil; got != tt.ok {
				t.Errorf("validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidArgs) {
				t.Errorf("validate() = %v, want ErrInvalidArgs", err)
			}
		})
	}
}

// TestNewClientConfig: configurations that would rescue live jobs, or that
// River would reject later, fail at construction. No connection is made.
func TestNewClientConfig(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{}, true},
		{"long_timeout_moves_rescue_default", Config{JobTimeout: 2 * time.Hour}, true},
		{"rescue_before_timeout", Config{JobTimeout: time.Hour, RescueStuckJobsAfter: time.Minute}, false},
		{"rescue_equal_to_timeout", Config{JobTimeout: time.Minute, RescueStuckJobsAfter: time.Minute}, false},
		{"schema_with_quote", Config{Schema: `a"b`}, false},
		{"negative_workers", Config{Workers: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(pool, tt.cfg)
			if got := err == nil; got != tt.ok {
				t.Errorf("NewClient(%+v) = %v, want ok=%v", tt.cfg, err, tt.ok)
			}
		})
	}
}

package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// identityRun is the fixture as run id of a server started with args and
// env (placeholder variable names), ending with outcome.
func identityRun(t *testing.T, id string, date time.Time, args, env []string, outcome evidence.Outcome) savedRun {
	t.Helper()
	_, b, res := run(t, id, date)
	b.Target.Args = args
	b.Target.EnvNames = env
	b.Sandbox.Outcome = outcome
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return savedRun{data: data, b: b, res: res}
}

type savedRun struct {
	data []byte
	b    *evidence.Bundle
	res  any
}

func (r savedRun) identity() Identity { return IdentityOf(r.b.Target) }

func saveRuns(t *testing.T, s *Store, runs ...savedRun) {
	t.Helper()
	for _, r := range runs {
		if err := s.SaveRun(context.Background(), r.data, r.b, r.res); err != nil {
			t.Fatalf("SaveRun %s: %v", r.b.Run.ID, err)
		}
	}
}

func TestIdentityKey(t *testing.T) {
	base := Identity{Ecosystem: "npm", Name: "@scope/server", Args: []string{"--root", "/data"}, EnvNames: []string{"B_TOKEN", "A_KEY"}}
	k := IdentityKey(base)
	if !strings.HasPrefix(k, "sha256:") || len(k) != len("sha256:")+64 {
		t.Fatalf("IdentityKey = %q, want sha256: and 64 hex digits", k)
	}
	same := []Identity{
		base,
		{Ecosystem: "npm", Name: "@scope/server", Args: []string{"--root", "/data"}, EnvNames: []string{"A_KEY", "B_TOKEN"}},
		{Ecosystem: "npm", Name: "@scope/server", Args: []string{"--root", "/data"}, EnvNames: []string{"A_KEY", "B_TOKEN", "A_KEY"}},
	}
	for _, id := range same {
		if got := IdentityKey(id); got != k {
			t.Errorf("IdentityKey(%+v) = %s, want %s (env names are a set)", id, got, k)
		}
	}
	if IdentityKey(base) != k {
		t.Error("IdentityKey is not stable")
	}
	if base.EnvNames[0] != "B_TOKEN" {
		t.Errorf("IdentityKey sorted its argument's env names: %v", base.EnvNames)
	}
	if a, b := IdentityKey(Identity{Ecosystem: "npm", Name: "x"}), IdentityKey(Identity{Ecosystem: "npm", Name: "x", Args: []string{}, EnvNames: []string{}}); a != b {
		t.Errorf("nil and empty slices give different keys: %s, %s", a, b)
	}
	different := []Identity{
		{Ecosystem: "npm", Name: "@scope/server", Args: []string{"/data", "--root"}, EnvNames: base.EnvNames},
		{Ecosystem: "npm", Name: "@scope/server", Args: []string{"--root"}, EnvNames: base.EnvNames},
		{Ecosystem: "npm", Name: "@scope/server", Args: base.Args, EnvNames: []string{"A_KEY"}},
		{Ecosystem: "pypi", Name: "@scope/server", Args: base.Args, EnvNames: base.EnvNames},
		{Ecosystem: "npm", Name: "@scope/other", Args: base.Args, EnvNames: base.EnvNames},
		// Not a concatenation: the boundary between arguments counts.
		{Ecosystem: "npm", Name: "@scope/server", Args: []string{"--root/data"}, EnvNames: base.EnvNames},
	}
	for _, id := range different {
		if got := IdentityKey(id); got == k {
			t.Errorf("IdentityKey(%+v) = the key of %+v", id, base)
		}
	}
	// The key is the SHA-256 of the canonical JSON.
	id := Identity{Ecosystem: "npm", Name: "x", EnvNames: []string{"B", "A"}}
	j, _ := json.Marshal(Identity{Ecosystem: "npm", Name: "x", Args: []string{}, EnvNames: []string{"A", "B"}})
	if string(j) != `{"ecosystem":"npm","name":"x","args":[],"env_names":["A","B"]}` {
		t.Fatalf("canonical JSON %s", j)
	}
	if got, want := IdentityKey(id), "sha256:"+sha256Hex(j); got != want {
		t.Errorf("IdentityKey = %s, want %s", got, want)
	}
}

func TestIdentityOf(t *testing.T) {
	tg := evidence.Target{Ecosystem: "npm", Name: "x", Version: "1.0.0", Args: []string{"a"}, EnvNames: []string{"K"}}
	id := IdentityOf(tg)
	if id.Ecosystem != "npm" || id.Name != "x" || strings.Join(id.Args, ",") != "a" || strings.Join(id.EnvNames, ",") != "K" {
		t.Errorf("IdentityOf = %+v", id)
	}
	tg.Version = "2.0.0"
	if IdentityKey(IdentityOf(tg)) != IdentityKey(id) {
		t.Error("the version changed the identity")
	}
}

// TestSaveRunIdentityKey: SaveRun records each run's identity key.
func TestSaveRunIdentityKey(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	r := identityRun(t, "run-a", day, []string{"--x"}, []string{"K2", "K1"}, evidence.OutcomeOK)
	saveRuns(t, s, r)
	var key string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT identity_key FROM runs WHERE run_id = ?`), "run-a").Scan(&key); err != nil {
		t.Fatal(err)
	}
	if want := IdentityKey(Identity{Ecosystem: "npm", Name: r.b.Target.Name, Args: []string{"--x"}, EnvNames: []string{"K1", "K2"}}); key != want {
		t.Errorf("identity_key = %s, want %s", key, want)
	}
}

func TestPinFirst(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a := identityRun(t, "run-a", day, nil, []string{"TOKEN"}, evidence.OutcomeOK)
	b := identityRun(t, "run-b", day.Add(time.Hour), nil, []string{"TOKEN"}, evidence.OutcomeOK)
	saveRuns(t, s, a, b)
	id := a.identity()
	key := IdentityKey(id)
	if _, err := s.CurrentPin(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("CurrentPin before any pin: %v, want ErrNotFound", err)
	}
	if h, err := s.PinHistory(ctx, key); err != nil || h == nil || len(h) != 0 {
		t.Fatalf("PinHistory before any pin = %v, %v; want empty", h, err)
	}
	at := day.Add(2 * time.Hour)
	p, created, err := s.PinFirst(ctx, id, "run-a", at)
	if err != nil || !created {
		t.Fatalf("PinFirst = %+v, %v, %v; want created", p, created, err)
	}
	want := Pin{
		Key:      key,
		Identity: Identity{Ecosystem: "npm", Name: a.b.Target.Name, Args: []string{}, EnvNames: []string{"TOKEN"}},
		Seq:      1, RunID: "run-a", RunDate: day, Version: a.b.Target.Version,
		PinnedBy: FirstScanPinner, PinnedAt: at,
	}
	checkPin(t, "PinFirst", p, want)

	p2, created, err := s.PinFirst(ctx, id, "run-b", at.Add(time.Hour))
	if err != nil || created {
		t.Fatalf("second PinFirst: created %v, %v; want the first pin, not created", created, err)
	}
	checkPin(t, "second PinFirst", p2, want)
	cur, err := s.CurrentPin(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	checkPin(t, "CurrentPin", cur, want)
	if h, err := s.PinHistory(ctx, key); err != nil || len(h) != 1 {
		t.Errorf("PinHistory = %d pins, %v; want 1", len(h), err)
	}
}

// TestPinRefusesRuns: a pin names a stored run of its identity that
// captured a contract.
func TestPinRefusesRuns(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a := identityRun(t, "run-a", day, []string{"one"}, nil, evidence.OutcomeOK)
	other := identityRun(t, "run-other", day, []string{"two"}, nil, evidence.OutcomeOK)
	failed := identityRun(t, "run-failed", day, []string{"one"}, nil, evidence.OutcomeStartCrashed)
	saveRuns(t, s, a, other, failed)
	id := a.identity()
	key := IdentityKey(id)
	if _, _, err := s.PinFirst(ctx, id, "run-nope", day); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "run-nope is not stored") {
		t.Errorf("PinFirst of an unknown run: %v, want ErrNotFound naming it", err)
	}
	if _, _, err := s.PinFirst(ctx, id, "run-other", day); !errors.Is(err, ErrNotIdentityRun) || !strings.Contains(err.Error(), "another identity") {
		t.Errorf("PinFirst of another identity's run: %v, want ErrNotIdentityRun", err)
	}
	if _, _, err := s.PinFirst(ctx, id, "run-failed", day); !errors.Is(err, ErrNotIdentityRun) || !strings.Contains(err.Error(), "no contract") {
		t.Errorf("PinFirst of a failed run: %v, want ErrNotIdentityRun", err)
	}
	if _, _, err := s.PinFirst(ctx, id, "run-a", day); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcceptPin(ctx, id, "run-nope", "alice", "r", day); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "run-nope is not stored") {
		t.Errorf("AcceptPin of an unknown run: %v, want ErrNotFound naming it", err)
	}
	if _, err := s.AcceptPin(ctx, id, "run-other", "alice", "r", day); !errors.Is(err, ErrNotIdentityRun) || !strings.Contains(err.Error(), "another identity") {
		t.Errorf("AcceptPin of another identity's run: %v, want ErrNotIdentityRun", err)
	}
	if _, err := s.AcceptPin(ctx, id, "run-failed", "alice", "r", day); !errors.Is(err, ErrNotIdentityRun) {
		t.Errorf("AcceptPin of a failed run: %v, want ErrNotIdentityRun", err)
	}
	if _, err := s.AcceptPin(ctx, id, "run-a", "", "r", day); err == nil {
		t.Error("AcceptPin by nobody succeeded")
	}
	if h, err := s.PinHistory(ctx, key); err != nil || len(h) != 1 {
		t.Errorf("PinHistory after refused pins = %d pins, %v; want 1", len(h), err)
	}
	if h, err := s.PinHistory(ctx, IdentityKey(other.identity())); err != nil || len(h) != 0 {
		t.Errorf("the other identity's history = %d pins, %v; want none", len(h), err)
	}
}

func TestAcceptPin(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a := identityRun(t, "run-a", day, []string{"--x"}, []string{"K"}, evidence.OutcomeOK)
	b := identityRun(t, "run-b", day.Add(24*time.Hour), []string{"--x"}, []string{"K"}, evidence.OutcomeOK)
	b.b.Target.Version = "9.9.9"
	b.data, _ = json.Marshal(b.b)
	saveRuns(t, s, a, b)
	id := a.identity()
	key := IdentityKey(id)
	first, _, err := s.PinFirst(ctx, id, "run-a", day.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	at := day.Add(25 * time.Hour)
	p, err := s.AcceptPin(ctx, id, "run-b", "alice@example.org", "new tool reviewed", at)
	if err != nil {
		t.Fatal(err)
	}
	want := Pin{
		Key: key, Identity: first.Identity, Seq: 2, RunID: "run-b", RunDate: day.Add(24 * time.Hour), Version: "9.9.9",
		PinnedBy: "alice@example.org", PinnedAt: at, Reason: "new tool reviewed",
	}
	checkPin(t, "AcceptPin", p, want)
	cur, err := s.CurrentPin(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	checkPin(t, "CurrentPin", cur, want)
	h, err := s.PinHistory(ctx, key)
	if err != nil || len(h) != 2 {
		t.Fatalf("PinHistory = %d pins, %v; want 2", len(h), err)
	}
	checkPin(t, "PinHistory[0]", &h[0], *first)
	checkPin(t, "PinHistory[1]", &h[1], want)
	// PinFirst on a pinned identity returns the current pin.
	if p, created, err := s.PinFirst(ctx, id, "run-a", at); err != nil || created || p.Seq != 2 {
		t.Errorf("PinFirst after an acceptance = %+v, %v, %v; want pin 2, not created", p, created, err)
	}
	// Accepting the first run again is a third pin.
	if p, err := s.AcceptPin(ctx, id, "run-a", "bob", "rollback", at.Add(time.Hour)); err != nil || p.Seq != 3 || p.RunID != "run-a" {
		t.Errorf("AcceptPin of the first run again = %+v, %v; want pin 3 of run-a", p, err)
	}
}

// TestAcceptPinWithoutPin: accepting a baseline for an identity with no
// pin makes it the first.
func TestAcceptPinWithoutPin(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a := identityRun(t, "run-a", day, nil, nil, evidence.OutcomeOK)
	saveRuns(t, s, a)
	p, err := s.AcceptPin(ctx, a.identity(), "run-a", "alice", "reviewed before first use", day)
	if err != nil || p.Seq != 1 || p.PinnedBy != "alice" {
		t.Fatalf("AcceptPin = %+v, %v; want pin 1 by alice", p, err)
	}
	if p, created, err := s.PinFirst(ctx, a.identity(), "run-a", day); err != nil || created || p.PinnedBy != "alice" {
		t.Errorf("PinFirst after = %+v, %v, %v; want alice's pin, not created", p, created, err)
	}
}

// TestPinsAppendOnly: the database refuses to change or remove a pin.
func TestPinsAppendOnly(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a := identityRun(t, "run-a", day, nil, nil, evidence.OutcomeOK)
	saveRuns(t, s, a)
	if _, _, err := s.PinFirst(ctx, a.identity(), "run-a", day); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE pins SET reason = 'changed'`,
		`UPDATE pins SET seq = 5`,
		`DELETE FROM pins`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: error %v, want the append-only refusal", q, err)
		}
	}
	if s.Postgres() {
		if _, err := s.db.ExecContext(ctx, `TRUNCATE pins`); err == nil {
			t.Error("TRUNCATE pins succeeded")
		}
	}
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO pins (identity_key, seq, ecosystem, target_name, args, env_names, run_id, pinned_by, pinned_at, reason)
		VALUES ('k', 1, 'npm', 'x', '[]', '[]', 'run-nope', 'me', 0, '')`)); err == nil || !strings.Contains(strings.ToLower(err.Error()), "foreign key") {
		t.Errorf("a pin naming no stored run: error %v, want a foreign key violation", err)
	}
	h, err := s.PinHistory(ctx, IdentityKey(a.identity()))
	if err != nil || len(h) != 1 || h[0].Reason != "" || h[0].Seq != 1 {
		t.Errorf("PinHistory after the refused writes = %+v, %v; want the first pin unchanged", h, err)
	}
}

// TestPinFirstConcurrent: processes racing to pin an identity first, each
// with a run of its own: exactly one pin is created, and every process
// gets it.
func TestPinFirstConcurrent(t *testing.T) {
	dir := t.TempDir()
	stores := make([]*Store, 2)
	for i := range stores {
		s, err := Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	testPinFirstConcurrent(t, stores)
}

func testPinFirstConcurrent(t *testing.T, stores []*Store) {
	ctx := context.Background()
	const n = 8
	var id Identity
	for i := range n {
		r := identityRun(t, fmt.Sprintf("run-%d", i), day.Add(time.Duration(i)*time.Minute), []string{"--port", "0"}, []string{"K"}, evidence.OutcomeOK)
		saveRuns(t, stores[0], r)
		id = r.identity()
	}
	pins := make([]*Pin, n)
	created := make([]bool, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			pins[i], created[i], errs[i] = stores[i%len(stores)].PinFirst(ctx, id, fmt.Sprintf("run-%d", i), day.Add(time.Hour))
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("PinFirst %d: %v", i, errs[i])
		}
		if created[i] {
			if winner >= 0 {
				t.Errorf("PinFirst %d and %d both created the pin", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no PinFirst created the pin")
	}
	for i, p := range pins {
		if p.Seq != 1 || p.RunID != fmt.Sprintf("run-%d", winner) {
			t.Errorf("PinFirst %d returned pin %d of %s, want the winner's: pin 1 of run-%d", i, p.Seq, p.RunID, winner)
		}
	}
	if h, err := stores[len(stores)-1].PinHistory(ctx, IdentityKey(id)); err != nil || len(h) != 1 {
		t.Errorf("PinHistory = %d pins, %v; want 1", len(h), err)
	}
}

// TestAcceptPinConcurrent: acceptances racing each take a sequence number
// of their own.
func TestAcceptPinConcurrent(t *testing.T) {
	testAcceptPinConcurrent(t, []*Store{openTemp(t)})
}

func testAcceptPinConcurrent(t *testing.T, stores []*Store) {
	ctx := context.Background()
	r := identityRun(t, "run-a", day, nil, nil, evidence.OutcomeOK)
	saveRuns(t, stores[0], r)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = stores[i%len(stores)].AcceptPin(ctx, r.identity(), "run-a", fmt.Sprintf("user-%d", i), "", day)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("AcceptPin %d: %v", i, err)
		}
	}
	h, err := stores[0].PinHistory(ctx, IdentityKey(r.identity()))
	if err != nil || len(h) != n {
		t.Fatalf("PinHistory = %d pins, %v; want %d", len(h), err, n)
	}
	by := map[string]bool{}
	for i, p := range h {
		if p.Seq != i+1 {
			t.Errorf("pin %d has seq %d", i, p.Seq)
		}
		by[p.PinnedBy] = true
	}
	if len(by) != n {
		t.Errorf("%d distinct acceptors in the history, want %d", len(by), n)
	}
}

// TestPinSurvivesReopen: pins are in the store, not in the process.
func TestPinSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	testPinSurvivesReopen(t, func() *Store {
		s, err := Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func testPinSurvivesReopen(t *testing.T, open func() *Store) {
	ctx := context.Background()
	s := open()
	a := identityRun(t, "run-a", day, []string{"serve"}, []string{"API_KEY"}, evidence.OutcomeOK)
	b := identityRun(t, "run-b", day.Add(time.Hour), []string{"serve"}, []string{"API_KEY"}, evidence.OutcomeOK)
	saveRuns(t, s, a, b)
	first, _, err := s.PinFirst(ctx, a.identity(), "run-a", day)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.AcceptPin(ctx, a.identity(), "run-b", "alice", "reviewed", day.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	key := IdentityKey(a.identity())
	cur, err := s.CurrentPin(ctx, key)
	if err != nil {
		t.Fatalf("CurrentPin after reopening: %v", err)
	}
	checkPin(t, "CurrentPin after reopening", cur, *second)
	h, err := s.PinHistory(ctx, key)
	if err != nil || len(h) != 2 {
		t.Fatalf("PinHistory after reopening = %d pins, %v; want 2", len(h), err)
	}
	checkPin(t, "PinHistory[0] after reopening", &h[0], *first)
	if p, created, err := s.PinFirst(ctx, a.identity(), "run-a", day); err != nil || created || p.Seq != 2 {
		t.Errorf("PinFirst after reopening = %+v, %v, %v; want pin 2, not created", p, created, err)
	}
}

func TestLatestRun(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	args := []string{"--mode", "ro"}
	ok1 := identityRun(t, "run-1", day, args, nil, evidence.OutcomeOK)
	ok2 := identityRun(t, "run-2", day.Add(time.Hour), args, nil, evidence.OutcomeOK)
	failed := identityRun(t, "run-3", day.Add(2*time.Hour), args, nil, evidence.OutcomeHandshakeTimeout)
	other := identityRun(t, "run-4", day.Add(3*time.Hour), []string{"--mode", "rw"}, nil, evidence.OutcomeOK)
	key := IdentityKey(ok1.identity())
	if _, err := s.LatestRun(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("LatestRun of an empty store: %v, want ErrNotFound", err)
	}
	saveRuns(t, s, failed)
	if _, err := s.LatestRun(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("LatestRun with only a failed run: %v, want ErrNotFound", err)
	}
	saveRuns(t, s, ok1, ok2, other)
	got, err := s.LatestRun(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != "run-2" || !got.Date.Equal(day.Add(time.Hour)) || got.Date.Location() != time.UTC || got.Outcome != evidence.OutcomeOK ||
		got.Name != ok2.b.Target.Name || got.Version != ok2.b.Target.Version || got.Ecosystem != "npm" {
		t.Errorf("LatestRun = %+v, want run-2, the newest ok run", got)
	}
	if got, err := s.LatestRun(ctx, IdentityKey(other.identity())); err != nil || got.RunID != "run-4" {
		t.Errorf("LatestRun of the other identity = %+v, %v; want run-4", got, err)
	}
}

// TestMigrateToPins: a schema-6 store opens as the current schema; its
// runs, saved before runs recorded their identity, keep no identity key:
// LatestRun does not see them and they cannot be pinned, while a run
// saved after the migration can.
func TestMigrateToPins(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:6] {
		if _, err := db.ExecContext(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	old := identityRun(t, "run-old", day, nil, nil, evidence.OutcomeOK)
	b := old.b
	if _, err := db.ExecContext(ctx, `INSERT INTO runs (run_id, schema_version, ecosystem, target_name, target_version, run_date,
	tool_name, tool_version, outcome, bundle_sha256, bundle) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.Run.ID, b.SchemaVersion, b.Target.Ecosystem, b.Target.Name, b.Target.Version, b.Run.Date.UnixNano(),
		b.Run.Tool.Name, b.Run.Tool.Version, string(b.Sandbox.Outcome), "digest", old.data); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `PRAGMA user_version = 6`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("open a schema-6 store: %v", err)
	}
	defer s.Close()
	testPinsAfterMigration(t, s)
}

func testPinsAfterMigration(t *testing.T, s *Store) {
	ctx := context.Background()
	var key sql.NullString
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT identity_key FROM runs WHERE run_id = ?`), "run-old").Scan(&key); err != nil || key.Valid {
		t.Fatalf("the old run's identity_key = %v, %v; want NULL", key, err)
	}
	old := identityRun(t, "run-old", day, nil, nil, evidence.OutcomeOK)
	id := old.identity()
	if _, err := s.LatestRun(ctx, IdentityKey(id)); !errors.Is(err, ErrNotFound) {
		t.Errorf("LatestRun seeing only a run saved before the migration: %v, want ErrNotFound", err)
	}
	if _, _, err := s.PinFirst(ctx, id, "run-old", day); !errors.Is(err, ErrNotIdentityRun) || !strings.Contains(err.Error(), "schema version 7") {
		t.Errorf("PinFirst of a run saved before the migration: %v, want ErrNotIdentityRun", err)
	}
	if _, err := s.AcceptPin(ctx, id, "run-old", "alice", "r", day); !errors.Is(err, ErrNotIdentityRun) {
		t.Errorf("AcceptPin of a run saved before the migration: %v, want ErrNotIdentityRun", err)
	}
	saveRuns(t, s, identityRun(t, "run-new", day.Add(time.Hour), nil, nil, evidence.OutcomeOK))
	if got, err := s.LatestRun(ctx, IdentityKey(id)); err != nil || got.RunID != "run-new" {
		t.Errorf("LatestRun = %+v, %v; want run-new", got, err)
	}
	if p, created, err := s.PinFirst(ctx, id, "run-new", day); err != nil || !created || p.RunID != "run-new" {
		t.Errorf("PinFirst of a run saved after the migration = %+v, %v, %v", p, created, err)
	}
}

func checkPin(t *testing.T, what string, got *Pin, want Pin) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: nil pin", what)
		return
	}
	if got.Key != want.Key || got.Seq != want.Seq || got.RunID != want.RunID || got.Version != want.Version ||
		got.PinnedBy != want.PinnedBy || got.Reason != want.Reason ||
		!got.RunDate.Equal(want.RunDate) || got.RunDate.Location() != time.UTC ||
		!got.PinnedAt.Equal(want.PinnedAt) || got.PinnedAt.Location() != time.UTC ||
		got.Identity.Ecosystem != want.Identity.Ecosystem || got.Identity.Name != want.Identity.Name ||
		fmt.Sprintf("%q", got.Identity.Args) != fmt.Sprintf("%q", want.Identity.Args) ||
		fmt.Sprintf("%q", got.Identity.EnvNames) != fmt.Sprintf("%q", want.Identity.EnvNames) ||
		got.Identity.Args == nil || got.Identity.EnvNames == nil {
		t.Errorf("%s = %+v\nwant %+v", what, *got, want)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// A pin is the baseline contract of one server identity: the package
// (ecosystem and name), the server arguments and the names of the
// placeholder environment variables it was started with. The baseline
// contract is the contract in the pinned run's bundle, so a pin names a
// run. Pins are append-only history: accepting a new baseline adds a pin
// with the next sequence number, and nothing is updated or deleted (the
// database refuses it, as it does for runs).
//
// Each run saved from schema version 7 on carries its identity key (see
// SaveRun). Runs saved before have none: LatestRun does not see them, and
// neither PinFirst nor AcceptPin pins them.

// FirstScanPinner is Pin.PinnedBy of an identity's first pin, made by the
// first scan of the identity (trust on first use).
const FirstScanPinner = "first scan (trust on first use)"

// ErrNotIdentityRun is returned by PinFirst and AcceptPin for a run that is
// not of the identity being pinned, or that has no identity key (saved
// before schema version 7), or captured no contract.
var ErrNotIdentityRun = errors.New("store: the run cannot be the identity's baseline")

// Identity is a server identity.
type Identity struct {
	Ecosystem string   `json:"ecosystem"`
	Name      string   `json:"name"`
	Args      []string `json:"args"`
	EnvNames  []string `json:"env_names"` // compared as a sorted set
}

// IdentityOf returns the identity of a bundle's target.
func IdentityOf(t evidence.Target) Identity {
	return Identity{
		Ecosystem: t.Ecosystem,
		Name:      t.Name,
		Args:      slices.Clone(t.Args),
		EnvNames:  slices.Clone(t.EnvNames),
	}
}

// canonical returns id with EnvNames sorted and de-duplicated and nil
// slices made empty; Args keep their order. It does not change id.
func (id Identity) canonical() Identity {
	c := Identity{Ecosystem: id.Ecosystem, Name: id.Name, Args: []string{}, EnvNames: []string{}}
	c.Args = append(c.Args, id.Args...)
	c.EnvNames = append(c.EnvNames, id.EnvNames...)
	slices.Sort(c.EnvNames)
	c.EnvNames = slices.Compact(c.EnvNames)
	return c
}

// IdentityKey returns "sha256:" + hex SHA-256 of the canonical JSON of id
// with EnvNames sorted and de-duplicated, nil slices as empty; Args keep
// their order.
func IdentityKey(id Identity) string {
	j, err := json.Marshal(id.canonical())
	if err != nil {
		// Strings and slices of strings always marshal.
		panic("store: identity key: " + err.Error())
	}
	sum := sha256.Sum256(j)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Pin is one baseline of an identity.
type Pin struct {
	Key      string
	Identity Identity // canonical: EnvNames sorted, no nil slices
	Seq      int      // 1 for the first pin, then 2, 3, ...
	RunID    string
	RunDate  time.Time // the pinned run's date (UTC)
	Version  string    // the pinned run's target version
	PinnedBy string    // FirstScanPinner or who accepted
	PinnedAt time.Time // UTC
	Reason   string    // empty for the first pin
}

// pinColumns reads a pin joined with its run (see scanPin).
const pinColumns = `
SELECT p.identity_key, p.seq, p.ecosystem, p.target_name, p.args, p.env_names, p.run_id,
	r.run_date, r.target_version, p.pinned_by, p.pinned_at, p.reason
FROM pins p JOIN runs r ON r.run_id = p.run_id`

type rowScanner interface{ Scan(dest ...any) error }

func scanPin(row rowScanner) (Pin, error) {
	var p Pin
	var args, env string
	var runDate, pinnedAt int64
	if err := row.Scan(&p.Key, &p.Seq, &p.Identity.Ecosystem, &p.Identity.Name, &args, &env, &p.RunID,
		&runDate, &p.Version, &p.PinnedBy, &pinnedAt, &p.Reason); err != nil {
		return Pin{}, err
	}
	if err := json.Unmarshal([]byte(args), &p.Identity.Args); err != nil {
		return Pin{}, fmt.Errorf("pin %s #%d: args: %w", p.Key, p.Seq, err)
	}
	if err := json.Unmarshal([]byte(env), &p.Identity.EnvNames); err != nil {
		return Pin{}, fmt.Errorf("pin %s #%d: env names: %w", p.Key, p.Seq, err)
	}
	p.Identity = p.Identity.canonical()
	p.RunDate = time.Unix(0, runDate).UTC()
	p.PinnedAt = time.Unix(0, pinnedAt).UTC()
	return p, nil
}

// CurrentPin returns the identity's newest pin, or ErrNotFound.
func (s *Store) CurrentPin(ctx context.Context, key string) (*Pin, error) {
	return s.currentPin(ctx, s.db, key)
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) currentPin(ctx context.Context, q querier, key string) (*Pin, error) {
	p, err := scanPin(q.QueryRowContext(ctx, s.q(pinColumns+` WHERE p.identity_key = ? ORDER BY p.seq DESC LIMIT 1`), key))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: pin of %s: %w", key, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: pin of %s: %w", key, s.redact(err))
	}
	return &p, nil
}

// PinHistory returns every pin of the identity, oldest first (empty, not an
// error, when none).
func (s *Store) PinHistory(ctx context.Context, key string) ([]Pin, error) {
	rows, err := s.db.QueryContext(ctx, s.q(pinColumns+` WHERE p.identity_key = ? ORDER BY p.seq`), key)
	if err != nil {
		return nil, fmt.Errorf("store: pin history of %s: %w", key, s.redact(err))
	}
	defer rows.Close()
	out := []Pin{}
	for rows.Next() {
		p, err := scanPin(rows)
		if err != nil {
			return nil, fmt.Errorf("store: pin history of %s: %w", key, s.redact(err))
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pin history of %s: %w", key, s.redact(err))
	}
	return out, nil
}

// PinFirst pins runID as the identity's first baseline when the identity
// has no pin, atomically: of processes racing, exactly one creates the pin,
// and the others get the winner's pin and created=false, as does a call
// for an identity already pinned (its current pin). The run must be
// stored, be of the identity (its identity key is id's) and have captured
// a contract (outcome "ok"); else the error wraps ErrNotFound or
// ErrNotIdentityRun. A zero at means now.
func (s *Store) PinFirst(ctx context.Context, id Identity, runID string, at time.Time) (pin *Pin, created bool, err error) {
	key := IdentityKey(id)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, fmt.Errorf("store: pin %s as the first baseline of %s: %w", runID, key, s.redact(err))
	}
	defer tx.Rollback()
	if err := s.checkPinRun(ctx, tx, key, runID); err != nil {
		return nil, false, fmt.Errorf("store: pin %s as the first baseline of %s: %w", runID, key, err)
	}
	// Sequence number 1 is the first pin's: the primary key lets one
	// process insert it, and another waits for it and inserts nothing.
	n, err := insertPin(ctx, s.sqlExec(tx), key, id, 1, runID, FirstScanPinner, "", at)
	if err != nil {
		return nil, false, fmt.Errorf("store: pin %s as the first baseline of %s: %w", runID, key, s.redact(err))
	}
	p, err := s.currentPin(ctx, tx, key)
	if err != nil {
		return nil, false, err
	}
	if err := tx.Commit(); err != nil {
		return nil, false, fmt.Errorf("store: pin %s as the first baseline of %s: commit: %w", runID, key, s.redact(err))
	}
	return p, n == 1, nil
}

// acceptTries bounds how often AcceptPin takes the next sequence number
// again when another process took it first.
const acceptTries = 20

// AcceptPin makes runID the identity's new baseline, recording who (by,
// required) and why (reason); its sequence number follows the current
// pin's, or is 1 when the identity has none. The run must be stored, be of
// the identity (its identity key is id's) and have captured a contract
// (outcome "ok"); else the error wraps ErrNotFound or ErrNotIdentityRun.
// Runs saved before schema version 7 have no identity key and are refused.
// Re-accepting the current pin's run adds a pin all the same: the history
// records every acceptance. A zero at means now.
func (s *Store) AcceptPin(ctx context.Context, id Identity, runID, by, reason string, at time.Time) (*Pin, error) {
	key := IdentityKey(id)
	if by == "" {
		return nil, fmt.Errorf("store: accept run %s as the baseline of %s: who accepts it is required", runID, key)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: accept run %s as the baseline of %s: %w", runID, key, s.redact(err))
	}
	defer tx.Rollback()
	if err := s.checkPinRun(ctx, tx, key, runID); err != nil {
		return nil, fmt.Errorf("store: accept run %s as the baseline of %s: %w", runID, key, err)
	}
	// SQLite's transactions hold the write lock from the start; on
	// Postgres another process may take the next number between reading it
	// and inserting, and then this one reads it again.
	for range acceptTries {
		var last int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COALESCE(MAX(seq), 0) FROM pins WHERE identity_key = ?`), key).Scan(&last); err != nil {
			return nil, fmt.Errorf("store: accept run %s as the baseline of %s: %w", runID, key, s.redact(err))
		}
		n, err := insertPin(ctx, s.sqlExec(tx), key, id, last+1, runID, by, reason, at)
		if err != nil {
			return nil, fmt.Errorf("store: accept run %s as the baseline of %s: %w", runID, key, s.redact(err))
		}
		if n == 0 {
			continue
		}
		p, err := s.currentPin(ctx, tx, key)
		if err != nil {
			return nil, err
		}
		if err := tx.Commit(); err != nil {
			return nil, fmt.Errorf("store: accept run %s as the baseline of %s: commit: %w", runID, key, s.redact(err))
		}
		return p, nil
	}
	return nil, fmt.Errorf("store: accept run %s as the baseline of %s: other processes kept taking the next pin", runID, key)
}

// checkPinRun checks that runID is stored, of the identity key and
// captured a contract.
func (s *Store) checkPinRun(ctx context.Context, tx *sql.Tx, key, runID string) error {
	var runKey sql.NullString
	var outcome string
	err := tx.QueryRowContext(ctx, s.q(`SELECT identity_key, outcome FROM runs WHERE run_id = ?`), runID).Scan(&runKey, &outcome)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("run %s is not stored: %w", runID, ErrNotFound)
	case err != nil:
		return s.redact(err)
	case !runKey.Valid:
		return fmt.Errorf("%w: run %s was saved before runs recorded their identity (schema version 7)", ErrNotIdentityRun, runID)
	case runKey.String != key:
		return fmt.Errorf("%w: run %s is of another identity (%s)", ErrNotIdentityRun, runID, runKey.String)
	case outcome != string(evidence.OutcomeOK):
		return fmt.Errorf("%w: run %s captured no contract (outcome %s)", ErrNotIdentityRun, runID, outcome)
	}
	return nil
}

// insertPin inserts a pin unless its (key, seq) is taken, and returns the
// number of rows inserted.
func insertPin(ctx context.Context, exec execFunc, key string, id Identity, seq int, runID, by, reason string, at time.Time) (int64, error) {
	c := id.canonical()
	args, err := json.Marshal(c.Args)
	if err != nil {
		return 0, err
	}
	env, err := json.Marshal(c.EnvNames)
	if err != nil {
		return 0, err
	}
	if at.IsZero() {
		at = time.Now()
	}
	return exec(ctx, `
INSERT INTO pins (identity_key, seq, ecosystem, target_name, args, env_names, run_id, pinned_by, pinned_at, reason)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (identity_key, seq) DO NOTHING`,
		key, seq, c.Ecosystem, c.Name, string(args), string(env), runID, by, at.UnixNano(), reason)
}

// LatestRun returns the newest stored run of the identity whose outcome is
// "ok" (a contract was captured), or ErrNotFound. Runs saved before schema
// version 7 have no identity key and are not seen. The summary's rubric
// fields (RubricVersion, RubricHash, Score) are left empty.
func (s *Store) LatestRun(ctx context.Context, key string) (RunSummary, error) {
	var rs RunSummary
	var date int64
	var outcome string
	err := s.db.QueryRowContext(ctx, s.q(`
SELECT run_id, ecosystem, target_name, target_version, run_date, tool_version, outcome
FROM runs WHERE identity_key = ? AND outcome = ?
ORDER BY run_date DESC, run_id DESC LIMIT 1`), key, string(evidence.OutcomeOK)).
		Scan(&rs.RunID, &rs.Ecosystem, &rs.Name, &rs.Version, &date, &rs.ToolVersion, &outcome)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return RunSummary{}, fmt.Errorf("store: latest run of %s: %w", key, ErrNotFound)
	case err != nil:
		return RunSummary{}, fmt.Errorf("store: latest run of %s: %w", key, s.redact(err))
	}
	rs.Date = time.Unix(0, date).UTC()
	rs.Outcome = evidence.Outcome(outcome)
	return rs, nil
}

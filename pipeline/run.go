package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/atomicfile"
	"github.com/verifymcp/verifymcp/rubric"
)

// Job is one target to run end to end. A scan needs Target (and Options);
// a recollection needs Recollect, and scans nothing.
type Job struct {
	Target  *Resolved
	Options Options
	// Recollect, when set, makes the run from a stored one (see
	// Pipeline.Recollect) instead of scanning Target.
	Recollect *RecollectJob
}

// RecollectJob names a stored run and the signals to collect again from
// it; Lockfile is the stored lockfile, needed only for OSV and Socket.
type RecollectJob struct {
	From     *evidence.Bundle
	Signals  []string
	Lockfile []byte
}

// Ran is a run that was collected, scored and saved.
type Ran struct {
	*Scanned
	Result rubric.Result
	// BundlePath is the bundle file the saver wrote, if any.
	BundlePath string
}

// Saver saves a scored run. It is called before anything is printed, so
// that nothing observed is lost if the output fails.
type Saver interface {
	Save(ctx context.Context, r *Ran) error
}

// RunStore is the part of the run store a StoreSaver writes to.
type RunStore interface {
	SaveArtifact(ctx context.Context, sha256hex string, data []byte) error
	SaveRun(ctx context.Context, bundleJSON []byte, b *evidence.Bundle, res rubric.Result) error
}

// StoreSaver saves a run into a run store: the lockfile (content
// addressed), the run record, then, when BundleDir is set, the bundle file
// BundleDir/<run id>.json.
type StoreSaver struct {
	Store     RunStore
	BundleDir string
	// BundleFileOptional makes a failure to write the bundle file a
	// warning (logged to Logger) rather than an error: the run is stored
	// either way.
	BundleFileOptional bool
	Logger             Logger
	// Detached saves even once ctx is cancelled (an interrupt): a run
	// that was collected is kept.
	Detached bool
}

// Logger is what a StoreSaver warns through (a *slog.Logger is one).
type Logger interface {
	Warn(msg string, args ...any)
}

// Save implements Saver.
func (s StoreSaver) Save(ctx context.Context, r *Ran) error {
	if s.Detached {
		ctx = context.WithoutCancel(ctx)
	}
	if len(r.Lockfile) > 0 {
		sum := sha256.Sum256(r.Lockfile)
		if err := s.Store.SaveArtifact(ctx, hex.EncodeToString(sum[:]), r.Lockfile); err != nil {
			return fmt.Errorf("save lockfile: %w", err)
		}
	}
	if err := s.Store.SaveRun(ctx, r.BundleJSON, r.Bundle, r.Result); err != nil {
		return fmt.Errorf("save run: %w", err)
	}
	s.pinFirst(ctx, r.Bundle)
	if s.BundleDir == "" {
		return nil
	}
	path := BundlePath(s.BundleDir, r.Bundle.Run.ID)
	if err := writeFileAtomic(path, r.BundleJSON); err != nil {
		if s.BundleFileOptional {
			if s.Logger != nil {
				s.Logger.Warn("could not write the bundle file", "path", path, "err", err)
			}
			return nil
		}
		return fmt.Errorf("save bundle file: %w", err)
	}
	r.BundlePath = path
	return nil
}

// BundlePath is where a StoreSaver writes a run's bundle file.
func BundlePath(dir, runID string) string { return filepath.Join(dir, runID+".json") }

// Run runs one job end to end: it scans the target in the prepared
// sandbox (or recollects from the stored run), scores the evidence under
// the pipeline's rubric (Config.Rubric), and saves the scored run
// through save. A failed save is returned with the scored run, which is
// then not stored.
func (p *Pipeline) Run(ctx context.Context, j Job, save Saver) (*Ran, error) {
	var (
		scanned *Scanned
		err     error
	)
	switch {
	case j.Recollect != nil:
		rc := j.Recollect
		scanned, err = p.Recollect(ctx, rc.From, rc.Signals, rc.Lockfile, j.Options.RunID)
	case j.Target != nil:
		scanned, err = p.Scan(ctx, j.Target, j.Options)
	default:
		return nil, errors.New("pipeline run: no target and no stored run")
	}
	if err != nil {
		return nil, err
	}
	r := &Ran{Scanned: scanned, Result: rubric.Evaluate(scanned.Bundle, p.cfg.Rubric)}
	if save != nil {
		if err := save.Save(ctx, r); err != nil {
			return r, err
		}
	}
	if p.cfg.Logger != nil && j.Recollect == nil && r.BundlePath != "" {
		p.cfg.Logger.Info("scan complete", "outcome", r.Bundle.Sandbox.Outcome, "run", r.Bundle.Run.ID, "bundle", r.BundlePath)
	}
	return r, nil
}

// writeFileAtomic writes data to path, creating its directory, so that a
// reader never sees a partial file.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}

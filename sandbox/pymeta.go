package sandbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/verifymcp/verifymcp/evidence"
)

// A dependency whose metadata only its build backend can give (an sdist
// with a setup.py and no static PKG-INFO 2.2 metadata) cannot be resolved
// in the fetch step, the one with network, which never runs package code.
// Such a tree is resolved in rounds (see docs/sandbox.md):
//
//   - the fetch step, when uv names the sdist it would have to build,
//     downloads that sdist and its build requirements (sha256-verified) and
//     ends asking for its metadata (ErrorKind "needs_metadata");
//   - the metadata step, with no network and watched like the build step
//     (it runs the sdist's build backend: package code, attributed as a
//     build in the scripts evidence), builds the sdist and reads the
//     built wheel's METADATA (drivers/pymeta.py);
//   - the fetch step runs again, with what was learned given to uv as its
//     dependency-metadata, so the resolver uses it instead of building.
//
// This repeats up to maxMetaRounds metadata steps. A tree still
// unresolved then, or a metadata build that fails or does not end, is a
// limit of the scanner (a user's uv builds the sdist with the network
// open, which the sandbox never does), recorded as a fetch failure whose
// error starts with pyMetaLimit, never as the package's failure.
//
// Such a tree is never kept in the tree cache: it depends on what package
// code said, not only on the key's inputs. Every scan of it builds the
// metadata again, watched.

//go:embed drivers/pymeta.py
var pyMetaDriver string

// pyNeedsMetadata is the fetch driver's error kind for a resolution that
// waits for an sdist's metadata.
const pyNeedsMetadata = "needs_metadata"

// maxMetaRounds bounds the metadata steps of one install (a variable for
// the tests).
var maxMetaRounds = 3

// pyMetaLimit starts the error of a tree the metadata rounds could not
// resolve (read by evidence.ScannerLimit).
const pyMetaLimit = "dynamic metadata: "

// pyMetadata is an sdist's core metadata, as the metadata step read it
// from the wheel it built, and as the fetch driver gives it to uv.
type pyMetadata struct {
	Name           string   `json:"name"`
	Version        string   `json:"version"`
	RequiresDist   []string `json:"requires_dist"`
	RequiresPython string   `json:"requires_python"`
	ProvidesExtras []string `json:"provides_extras"`
}

// pyMetaResult is the metadata driver's output (drivers/pymeta.py).
type pyMetaResult struct {
	OK      bool          `json:"ok"`
	Builds  []pyMetaBuild `json:"builds"`
	Cleaned bool          `json:"cleaned"`
	Error   string        `json:"error"`
}

type pyMetaBuild struct {
	pyRun
	Metadata *pyMetadata `json:"metadata"`
	Error    string      `json:"error"`
}

// pyDynamic is what the metadata rounds of one install leave for its
// evidence: the metadata builds (scripts, after the build step's) and what
// they learned. record adds them once the install's scripts are known.
type pyDynamic struct {
	scripts []evidence.Script
	learned []evidence.LearnedMetadata
	w       observer
	// winPos are the positions in w.windows of the metadata builds'
	// windows, whose Index counts from the first metadata build.
	winPos []int
}

// record appends the metadata builds to inst's scripts (after the build
// step's, whose indices match the build driver's) and what they learned,
// and points the builds' windows at their scripts.
func (dm *pyDynamic) record(inst *evidence.Install) {
	if dm == nil || inst == nil {
		return
	}
	base := len(inst.Scripts)
	inst.Scripts = append(inst.Scripts, dm.scripts...)
	inst.LearnedMetadata = append(inst.LearnedMetadata, dm.learned...)
	if len(dm.winPos) > 0 {
		dm.w.shiftWindows(dm.winPos, base)
	}
}

// metaKey names an sdist the fetch step asked about.
func metaKey(sd pySdist) string {
	if sd.Local || sd.Version == "" {
		return "file " + sd.Filename
	}
	return pkgspec.NormalizePyPIName(sd.Name) + "==" + sd.Version
}

// metaLimit is the fetch result of a tree the rounds could not resolve.
func metaLimit(msg, tail string) *pyFetchResult {
	return &pyFetchResult{ErrorKind: "dynamic_metadata", Error: pyMetaLimit + msg, LogTail: tail, Stage: "metadata"}
}

// learnedFrom checks what one metadata build gave against the sdist the
// fetch step asked about: its metadata, or why it is not usable.
func learnedFrom(sd pySdist, b pyMetaBuild) (*pyMetadata, string) {
	switch {
	case !b.Ran && b.TimedOut:
		return nil, fmt.Sprintf("no time was left to build %s for its metadata", sd.Filename)
	case b.TimedOut:
		return nil, fmt.Sprintf("the metadata build of %s did not end within the install timeout", sd.Filename)
	case b.exit() != 0:
		why := buildWhy(b.OutputTail)
		if why == "" {
			why = "no output"
		}
		return nil, fmt.Sprintf("the metadata build of %s failed (exit %d: %s)", sd.Filename, b.exit(), oneLineText(why))
	case b.Error != "":
		return nil, fmt.Sprintf("the metadata of the wheel built from %s could not be read: %s", sd.Filename, oneLineText(b.Error))
	case b.Metadata == nil:
		return nil, fmt.Sprintf("the metadata build of %s gave no metadata", sd.Filename)
	}
	m := *b.Metadata
	if pkgspec.NormalizePyPIName(m.Name) != pkgspec.NormalizePyPIName(sd.Name) {
		return nil, fmt.Sprintf("the wheel built from %s is named %q, not %q", sd.Filename, m.Name, sd.Name)
	}
	if sd.Version != "" && m.Version != sd.Version {
		return nil, fmt.Sprintf("the wheel built from %s has version %q, not the index's %q", sd.Filename, m.Version, sd.Version)
	}
	for _, req := range m.RequiresDist {
		if spec, _, _ := strings.Cut(req, ";"); strings.Contains(spec, "@") {
			// A direct reference: the fetch step fetches only from the
			// index, by design (as for a lockfile's VCS or URL source).
			return nil, fmt.Sprintf("the wheel built from %s declares a dependency by URL (%s), and the fetch step fetches only from the index", sd.Filename, oneLineText(req))
		}
	}
	if m.RequiresDist == nil {
		m.RequiresDist = []string{}
	}
	return &m, ""
}

// pyExceptionRe is the last line of a Python traceback: the exception.
var pyExceptionRe = regexp.MustCompile(`^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b(?::.*)?$`)

// buildWhy says in one line why a build failed, from its output: the last
// exception a traceback shows (what the build backend raised), else the
// last line.
func buildWhy(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); pyExceptionRe.MatchString(l) {
			return l
		}
	}
	return lastLine(out)
}

// resolveDynamic runs the metadata rounds of an install whose first fetch
// step asked for an sdist's metadata (fr), in the run's own tree volume.
// It returns the last fetch result (a metaLimit one when the rounds could
// not resolve the tree), whether a fetch step timed out, and the volume
// that holds the fetched tree.
func (s *Sandbox) resolveDynamic(ctx context.Context, r *run, tree string, t Target, fr *pyFetchResult, deadline time.Time, watchReady func() (observer, error)) (*pyDynamic, *pyFetchResult, bool, string, error) {
	dm := &pyDynamic{}
	fetches := 1
	if s.opts.TreeCacheDir != "" {
		// The first fetch ran into a cache volume, removed since: the
		// rounds run in the run's own volume, which is never cached.
		var (
			timedOut bool
			err      error
		)
		started := time.Now()
		fr, timedOut, err = s.pyFetchRound(ctx, r, tree, t, time.Until(deadline), fetches, nil)
		s.opts.Logger.Debug("PyPI fetch round", "round", 0, "uncached", true, "ms", time.Since(started).Milliseconds())
		fetches++
		if err != nil || timedOut || fr.ErrorKind != pyNeedsMetadata {
			return dm, fr, timedOut, tree, err
		}
	}
	var learned []pyMetadata
	asked := map[string]bool{}
	for round := 1; ; round++ {
		if len(fr.NeedsMetadata) == 0 {
			return dm, metaLimit("the fetch step asked for metadata without naming the sdist", fr.LogTail), false, tree, nil
		}
		need := fr.NeedsMetadata
		for _, sd := range need {
			if asked[metaKey(sd)] {
				return dm, metaLimit(fmt.Sprintf("uv asked again for the metadata of %s after the metadata step gave it", sd.Filename), fr.LogTail), false, tree, nil
			}
		}
		if round > maxMetaRounds {
			return dm, metaLimit(fmt.Sprintf("the tree still needs the metadata of %s after %d metadata steps, the sandbox's bound", need[0].Filename, maxMetaRounds), fr.LogTail), false, tree, nil
		}
		for _, sd := range need {
			asked[metaKey(sd)] = true
		}
		if time.Until(deadline) <= 0 {
			return dm, metaLimit(fmt.Sprintf("no time was left to build %s for its metadata", need[0].Filename), ""), false, tree, nil
		}
		w, err := watchReady()
		if err != nil {
			return dm, nil, false, "", err
		}
		dm.w = w
		started := time.Now()
		work, err := s.workTree(ctx, r, tree, w)
		if err != nil {
			return dm, nil, false, "", err
		}
		mr, timedOut, tail, err := s.pyMeta(ctx, r, work, need, time.Until(deadline), w, dm)
		s.opts.Logger.Debug("PyPI metadata step (with the tree's copy)", "round", round, "sdists", len(need), "ms", time.Since(started).Milliseconds(), "timed_out", timedOut)
		if err != nil {
			return dm, nil, false, "", err
		}
		if timedOut {
			return dm, metaLimit(fmt.Sprintf("the metadata step building %s did not end within the install timeout", need[0].Filename), tail), false, tree, nil
		}
		for i, sd := range need {
			var b pyMetaBuild
			if i < len(mr.Builds) {
				b = mr.Builds[i]
			}
			dm.scripts = append(dm.scripts, metaScript(r, sd, b))
			m, why := learnedFrom(sd, b)
			if m == nil {
				if why == "" || (i >= len(mr.Builds) && mr.Error != "") {
					why = "the metadata driver failed: " + oneLineText(mr.Error)
				}
				return dm, metaLimit(r.mask.text(why, "install"), tailString(r.mask.text(b.OutputTail, "install"), 4000)), false, tree, nil
			}
			learned = append(learned, *m)
			dm.learned = append(dm.learned, evidence.LearnedMetadata{
				Package: m.Name, Version: m.Version, Filename: sd.Filename, Round: round,
				RequiresDist: maskAll(r, m.RequiresDist), RequiresPython: r.mask.text(m.RequiresPython, "install"),
			})
		}
		if !mr.Cleaned {
			s.opts.Logger.Debug("the metadata step could not empty its tree", "err", mr.Error)
		}
		started = time.Now()
		fr, timedOut, err = s.pyFetchRound(ctx, r, tree, t, time.Until(deadline), fetches, learned)
		s.opts.Logger.Debug("PyPI fetch round", "round", round, "ms", time.Since(started).Milliseconds(), "needs_metadata", fr != nil && fr.ErrorKind == pyNeedsMetadata)
		fetches++
		if err != nil || timedOut || fr.ErrorKind != pyNeedsMetadata {
			return dm, fr, timedOut, tree, err
		}
	}
}

func maskAll(r *run, in []string) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = r.mask.text(v, "install")
	}
	return out
}

// metaScript is the scripts evidence of one metadata build: package code,
// an sdist's build backend, as the build step's builds are.
func metaScript(r *run, sd pySdist, b pyMetaBuild) evidence.Script {
	backend := sd.Backend
	if backend == "" {
		backend = "setuptools.build_meta:__legacy__"
	}
	cmd := "PEP 517 build_wheel with " + backend + ", for its metadata (the fetch step cannot read it statically)"
	if sd.BackendPath {
		cmd += " (an in-tree backend, backend-path)"
	}
	if sd.Default {
		cmd += " (no [build-system]: the PEP 517 default)"
	}
	version := sd.Version
	if version == "" && b.Metadata != nil {
		version = b.Metadata.Version
	}
	return evidence.Script{
		Package: sd.Name, Version: version, Path: sd.Filename, Event: "metadata", Command: cmd,
		Ran: b.Ran, ExitCode: b.exit(), Signal: b.Signal, TimedOut: b.TimedOut, LeftRunning: b.LeftRunning, DurationMS: b.DurationMS,
		OutputTail: tailString(r.mask.text(b.OutputTail, "install.scripts"), scriptTail),
	}
}

// pyMeta runs the metadata step in the bounded tree.
func (s *Sandbox) pyMeta(ctx context.Context, r *run, tree string, need []pySdist, timeout time.Duration, w observer, dm *pyDynamic) (*pyMetaResult, bool, string, error) {
	sdists := make([]pySdist, 0, len(need))
	for _, sd := range need {
		sdists = append(sdists, pySdist{Name: sd.Name, Version: sd.Version, Filename: sd.Filename})
	}
	arg, _ := json.Marshal(map[string]any{"python": sandboxPython, "sdists": sdists})
	cmd := []string{"python3", "-I", "-c", pyStepsLib + "\n" + pyMetaDriver, string(arg), fmt.Sprint(timeout.Milliseconds())}
	env := []string{"HOME=/tmp/home", "UV_CACHE_DIR=" + inputDir + "/uv-cache", "UV_PYTHON_DOWNLOADS=never", "UV_NO_PROGRESS=1", "UV_OFFLINE=1", "UV_CONCURRENT_BUILDS=1"}
	mr := &pyMetaResult{}
	var derr error
	first := len(dm.scripts)
	before := w.windowCount()
	res, err := s.watchedStep(ctx, r, tree, cmd, env, timeout, w, func(res stepResult) ([]scriptWindow, map[string]bool) {
		derr = decodeResult(res.Stdout, mr)
		w.setDriver(driverPID(res.Stdout))
		var windows []scriptWindow
		for i, b := range mr.Builds {
			if b.Ran {
				windows = append(windows, scriptWindow{Index: first + i, Package: b.Name, Start: time.UnixMilli(b.StartedAt), End: time.UnixMilli(b.EndedAt)})
			}
		}
		return windows, map[string]bool{}
	})
	if err != nil {
		return nil, false, "", err
	}
	for p := before; p < w.windowCount(); p++ {
		dm.winPos = append(dm.winPos, p)
	}
	if res.TimedOut {
		return nil, true, tailString(r.mask.text(tailString(string(res.Stdout)+string(res.Stderr), 3000), "install"), 2000), nil
	}
	if derr != nil {
		return nil, false, "", fmt.Errorf("metadata driver: %w (stderr: %s)", derr, tailString(r.mask.text(string(res.Stderr), "install"), 500))
	}
	return mr, false, "", nil
}

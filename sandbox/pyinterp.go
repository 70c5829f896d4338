package sandbox

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/textproto"
	"path"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pkgspec"
	"github.com/verifymcp/verifymcp/sandbox/image"
)

// The interpreters a PyPI target can be installed and run on. Each is the
// python3 of one Debian release, in its own image variant built from the
// same recipe on that release (see docs/sandbox.md): CPython 3.11 of
// bookworm, the default image, and CPython 3.13 of trixie. An interpreter
// runs with its own distribution's libc and libraries; the fetch and build
// drivers run the image's /usr/bin/python3 whichever image it is.
//
// The choice (choosePython): the default, 3.11, when the release's
// Requires-Python admits it or the release declares none (or one no PEP 440
// parser reads, which uv then judges); else the newest offered interpreter
// that satisfies it; when none does, the install is not assessed, and the
// reason names the requirement and what is offered. The default comes first
// when it fits so that a release's results stay comparable over time: its
// contract is compared with its pin, and Python 3.13 dedents docstrings, so
// moving a release that runs on both to 3.13 would change the description
// of every tool documented by a docstring, a drift the server never made.
// When the default cannot resolve the tree because a dependency needs a
// newer Python (one that needs 3.11.5, bookworm's being 3.11.2), the
// release is installed again on the newest offered interpreter that
// satisfies it (Scan), as a user's uv on that Python would.

// Python is one interpreter the sandbox offers PyPI targets.
type Python struct {
	// Version is the CPython version, X.Y.Z, as the recipe pins it.
	Version string
	// Image is the reference of the sandbox image whose python3 it is.
	Image string
}

// Pythons returns the interpreters the embedded recipe offers, the default
// (that of image.Ref) first.
func Pythons() []Python {
	var out []Python
	for _, v := range image.Variants() {
		out = append(out, Python{Version: v.Python, Image: v.Ref})
	}
	return out
}

// pythonChoice is what choosePython decided.
type pythonChoice struct {
	py   Python
	ok   bool   // false: no offered interpreter satisfies the requirement
	rule string // why this one, for the evidence
	// newer is the newest offered interpreter, newer than py, that also
	// satisfies the requirement: the one to try when py cannot resolve the
	// tree; nil when there is none.
	newer *Python
}

// choosePython picks the interpreter for a release whose Requires-Python
// is requires ("" when it declares none) among offered (the default
// first, as Pythons returns them).
func choosePython(requires string, offered []Python) pythonChoice {
	requires = strings.TrimSpace(requires)
	def := offered[0]
	if requires == "" {
		c := pythonChoice{py: def, ok: true, rule: "the release declares no Requires-Python: the default"}
		for i := range offered {
			if pkgspec.CompareVersions(offered[i].Version, def.Version) > 0 && (c.newer == nil || pkgspec.CompareVersions(offered[i].Version, c.newer.Version) > 0) {
				c.newer = &offered[i]
			}
		}
		return c
	}
	var best *Python
	defOK := false
	for i := range offered {
		ok, err := pkgspec.Satisfies(requires, offered[i].Version)
		if err != nil {
			return pythonChoice{py: def, ok: true, rule: "the release's Requires-Python " + quoteSpec(requires) + " is not a PEP 440 specifier set: the default, and uv judges it"}
		}
		if ok && i == 0 {
			defOK = true
		}
		if ok && (best == nil || pkgspec.CompareVersions(offered[i].Version, best.Version) > 0) {
			best = &offered[i]
		}
	}
	switch {
	case best == nil:
		return pythonChoice{py: def, ok: false}
	case defOK:
		c := pythonChoice{py: def, ok: true, rule: "the default, which satisfies Requires-Python " + quoteSpec(requires)}
		if best.Version != def.Version {
			c.newer = best
		}
		return c
	}
	return pythonChoice{py: *best, ok: true, rule: "the newest offered Python that satisfies Requires-Python " + quoteSpec(requires) + ", which the default does not"}
}

// retryRule is the rule of an install run again on a newer interpreter.
func retryRule(def Python, requires string) string {
	return "the newest offered Python that satisfies Requires-Python " + quoteSpec(requires) + ": the default, " + def.Version +
		", could not resolve the tree (a dependency needs a newer Python)"
}

// needsNewerPython reports whether an install failed because the tree
// needs a newer Python than the one it was resolved for (the fetch
// driver's requires_python failure; see pyFetchFailure).
func needsNewerPython(in *evidence.Install) bool {
	return in != nil && in.Outcome == evidence.InstallFailed && in.FailedStep == evidence.StepFetch &&
		strings.Contains(in.Error, "no release of the tree fits the sandbox's Python")
}

func quoteSpec(s string) string { return "\"" + s + "\"" }

// offeredVersions lists the versions of offered, for messages.
func offeredVersions(offered []Python) string {
	vs := make([]string, len(offered))
	for i, p := range offered {
		vs[i] = p.Version
	}
	return strings.Join(vs, ", ")
}

// noPythonError is the install error when no offered interpreter satisfies
// the release's Requires-Python; evidence.ScannerLimit reads it as an
// interpreter limit (pyNoPythonRe), so keep the two in step.
func noPythonError(who, requires string, offered []Python) string {
	return fmt.Sprintf("%s requires Python %s, which is satisfied by none of the sandbox's Pythons (CPython %s)", who, requires, offeredVersions(offered))
}

// pythons are the interpreters this sandbox offers: Options.Pythons, or,
// when the sandbox runs the embedded recipe's default image, every
// interpreter of the recipe; any other image offers its python3 alone, as
// the recipe's default version.
func (s *Sandbox) pythons() []Python {
	if len(s.opts.Pythons) > 0 {
		return s.opts.Pythons
	}
	all := Pythons()
	if s.opts.Image == all[0].Image {
		return all
	}
	return []Python{{Version: all[0].Version, Image: s.opts.Image}}
}

// forPython returns the sandbox that runs on py's image: s itself when it
// is s's image, otherwise a copy that differs in its image only, to which
// the prewarmed observer of runID moves.
func (s *Sandbox) forPython(runID string, py Python) *Sandbox {
	if py.Image == s.opts.Image {
		return s
	}
	c := &Sandbox{cli: s.cli, opts: s.opts}
	c.opts.Image = py.Image
	if wr, ok := s.takeWarm(runID); ok {
		c.warm = map[string]*warmRun{runID: wr}
	}
	return c
}

// pickedPython is the interpreter chosen for a PyPI target.
type pickedPython struct {
	py    Python
	ev    *evidence.Python
	image *image.Image      // the image, when it is not the sandbox's own
	none  *evidence.Install // set when no offered interpreter fits
	newer *Python           // see pythonChoice.newer
}

// pickPython chooses the interpreter of a PyPI target and makes sure its
// image is there.
func (s *Sandbox) pickPython(ctx context.Context, t Target) (pickedPython, error) {
	offered := s.pythons()
	requires, who := t.RequiresPython, t.Name+"=="+t.Version
	switch {
	case t.PyProject:
		who = t.Name + " (a project)"
	case t.Tarball != nil:
		who = t.Filename
		requires = localRequiresPython(t.Filename, t.Tarball)
	}
	c := choosePython(requires, offered)
	if !c.ok {
		ev := &evidence.Python{RequiresPython: requires, Offered: offeredVersions(offered),
			Rule: "none of the offered Pythons satisfies Requires-Python " + quoteSpec(requires)}
		return pickedPython{ev: ev, none: &evidence.Install{
			Outcome: evidence.InstallFailed, FailedStep: evidence.StepFetch, Scripts: []evidence.Script{},
			Integrity: evidence.Integrity{Expected: t.Integrity}, Error: noPythonError(who, requires, offered), Python: ev,
		}}, nil
	}
	p := pickedPython{py: c.py, ev: &evidence.Python{Version: c.py.Version, RequiresPython: requires, Offered: offeredVersions(offered), Rule: c.rule}, newer: c.newer}
	img, err := s.pythonImage(ctx, c.py)
	if err != nil {
		return p, err
	}
	p.image = img
	s.opts.Logger.Info("python", "version", c.py.Version, "image", c.py.Image, "rule", c.rule)
	return p, nil
}

// pythonImage makes sure the image of py is there and returns it, or nil
// when it is the sandbox's own.
func (s *Sandbox) pythonImage(ctx context.Context, py Python) (*image.Image, error) {
	if py.Image == s.opts.Image {
		return nil, nil
	}
	if s.opts.PythonImage != nil {
		img, err := s.opts.PythonImage(ctx, py.Version)
		if err != nil {
			return nil, fmt.Errorf("sandbox image for Python %s: %w", py.Version, err)
		}
		return &img, nil
	}
	resp, err := s.cli.ImageInspect(ctx, py.Image)
	if err != nil {
		return nil, fmt.Errorf("sandbox image %s for Python %s: %w (`verifymcp sandbox build` builds it)", py.Image, py.Version, err)
	}
	return &image.Image{Ref: py.Image, ID: resp.ID, Python: py.Version}, nil
}

// localRequiresPython reads Requires-Python from a local wheel's METADATA
// or an sdist's PKG-INFO ("" when it has none or cannot be read: the
// default interpreter, and the fetch step says what is wrong with it).
func localRequiresPython(filename string, data []byte) string {
	var meta []byte
	switch {
	case strings.HasSuffix(filename, ".whl"):
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return ""
		}
		for _, f := range zr.File {
			dir, base := path.Split(f.Name)
			if base == "METADATA" && strings.HasSuffix(strings.TrimSuffix(dir, "/"), ".dist-info") && strings.Count(f.Name, "/") == 1 {
				meta = readBounded(f.Open)
				break
			}
		}
	case strings.HasSuffix(filename, ".tar.gz"):
		gz, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return ""
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if path.Base(h.Name) == "PKG-INFO" && strings.Count(strings.Trim(h.Name, "/"), "/") == 1 {
				meta, _ = io.ReadAll(io.LimitReader(tr, 1<<20))
				break
			}
		}
	}
	if meta == nil {
		return ""
	}
	// The headers end at the first blank line (the description follows).
	hdr, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(meta))).ReadMIMEHeader()
	if err != nil && len(hdr) == 0 {
		return ""
	}
	return strings.TrimSpace(hdr.Get("Requires-Python"))
}

func readBounded(open func() (io.ReadCloser, error)) []byte {
	rc, err := open()
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	return b
}

// scan picks the Python the target runs on and scans it there; when the
// default interpreter cannot resolve the tree because a dependency needs a
// newer Python, it installs again, under the same run, on the newest that
// fits.
func (pypiInstaller) scan(ctx context.Context, s *Sandbox, runID string, t Target) (*Result, error) {
	p, err := s.pickPython(ctx, t)
	if err == nil && p.none != nil {
		// No interpreter the sandbox offers fits: nothing is installed.
		err = s.Discard(context.WithoutCancel(ctx), runID)
		return &Result{Outcome: evidence.OutcomeInstallFailed, Install: p.none}, err
	}
	if err != nil {
		if derr := s.Discard(context.WithoutCancel(ctx), runID); derr != nil {
			s.opts.Logger.Warn("could not remove the prepared sandbox", "err", derr)
		}
		return nil, err
	}
	res, err := s.forPython(runID, p.py).scan(ctx, runID, t)
	if err == nil && res != nil && p.newer != nil && needsNewerPython(res.Install) {
		// The default could not resolve the tree: a dependency needs a
		// newer Python. The run's objects are gone; install again, under
		// the same run, on the newest interpreter that fits.
		s.opts.Logger.Info("python: the tree needs a newer Python than the default", "default", p.py.Version, "again on", p.newer.Version)
		img, ierr := s.pythonImage(ctx, *p.newer)
		if ierr != nil {
			return nil, ierr
		}
		p.image, p.py = img, *p.newer
		p.ev.Version, p.ev.Rule = p.newer.Version, retryRule(s.pythons()[0], p.ev.RequiresPython)
		res, err = s.forPython(runID, p.py).scan(ctx, runID, t)
	}
	if res != nil {
		res.Image = p.image
		if res.Install != nil {
			res.Install.Python = p.ev
		}
	}
	return res, err
}

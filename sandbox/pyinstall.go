package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/verifymcp/verifymcp/evidence"
)

// A PyPI target is installed in the same two steps as an npm one, with the
// same promise (see docs/sandbox.md):
//
//   - the fetch step, with egress to the index only (its host and, for
//     pypi.org, files.pythonhosted.org), resolves the exact release and its
//     tree with uv into a pylock.toml (the lockfile evidence) and
//     downloads every file, verified against the index's sha256. No
//     package code runs there: uv reads sdist metadata statically, and
//     every Python but the driver's own starts with a PYTHONHOME that
//     does not exist, so a build backend cannot start.
//   - the build step, with no network and watched as npm's script step
//     is, builds each sdist (its build backend: where a Python package's
//     install-time code runs) and installs the whole tree into a venv.
//
// The run phase starts a console script of the venv (see choosePyScript).

//go:embed drivers/pyfetch.py
var pyFetchDriver string

//go:embed drivers/pybuild.py
var pyBuildDriver string

// pyStepsLib is what the build and metadata drivers share; each runs with
// it put before its own text.
//
//go:embed drivers/pysteps.py
var pyStepsLib string

// UVCacheVolume is uv's cache, shared by PyPI fetch steps only (no package
// code runs there).
const UVCacheVolume = "verifymcp-uv-cache"

// sandboxPython is the interpreter of the sandbox image that PyPI targets
// are resolved for and run on (Debian's python3).
const sandboxPython = "/usr/bin/python3"

// pyFetchResult is the PyPI fetch driver's output (drivers/pyfetch.py).
type pyFetchResult struct {
	OK             bool             `json:"ok"`
	Stage          string           `json:"stage"`
	Preflight      *preflightResult `json:"preflight"`
	UVExit         *int             `json:"uv_exit"`
	LogTail        string           `json:"log_tail"`
	Error          string           `json:"error"`
	ErrorKind      string           `json:"error_kind"`
	Lockfile       string           `json:"lockfile"`
	BuildLockfiles []string         `json:"build_lockfiles"`
	Packages       int              `json:"packages"`
	Target         *pyFile          `json:"target"`
	Files          []pyFile         `json:"files"`
	Sdists         []pySdist        `json:"sdists"`
	// ArchiveEscapes: an archive uv refused for a member outside its tree.
	ArchiveEscapes []evidence.ArchiveEscape `json:"archive_escapes"`
	// NeedsMetadata: the sdist whose metadata the resolution needs
	// (ErrorKind "needs_metadata", see pymeta.go).
	NeedsMetadata []pySdist `json:"needs_metadata"`
}

type pyFile struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Filename string `json:"filename"`
	Kind     string `json:"kind"` // wheel, sdist, archive
	SHA256   string `json:"sha256"`
	Computed string `json:"computed"`
	Role     string `json:"role"` // tree, build:<package>
	Local    bool   `json:"local"`
}

type pySdist struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Filename    string   `json:"filename"`
	Requires    []string `json:"requires"`
	Backend     string   `json:"backend"`
	BackendPath bool     `json:"backend_path"`
	Default     bool     `json:"default"`
	Local       bool     `json:"local"`
}

// pyBuildResult is the PyPI build driver's output (drivers/pybuild.py).
type pyBuildResult struct {
	OK             bool              `json:"ok"`
	Venv           *pyRun            `json:"venv"`
	Builds         []pyRun           `json:"builds"`
	Install        *pyRun            `json:"install"`
	ConsoleScripts map[string]string `json:"console_scripts"`
	DistInfo       string            `json:"dist_info"`
	Error          string            `json:"error"`
	// ArchiveEscapes and StartupHooks: see evidence.Install.
	ArchiveEscapes []evidence.ArchiveEscape `json:"archive_escapes"`
	StartupHooks   []evidence.StartupHook   `json:"startup_hooks"`
}

type pyRun struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Filename    string `json:"filename"`
	Ran         bool   `json:"ran"`
	ExitCode    *int   `json:"exit_code"`
	Signal      string `json:"signal"`
	TimedOut    bool   `json:"timed_out"`
	LeftRunning bool   `json:"left_running"`
	OutputTail  string `json:"output_tail"`
	DurationMS  int64  `json:"duration_ms"`
	StartedAt   int64  `json:"started_at"`
	EndedAt     int64  `json:"ended_at"`
}

func (p *pyRun) exit() int {
	if p == nil || p.ExitCode == nil {
		return -1
	}
	return *p.ExitCode
}

// indexHosts returns the host:port pairs the PyPI fetch step may reach:
// the index's, and the files host of pypi.org, which serves its files
// from files.pythonhosted.org. A mirror serves its files from its own
// host.
func indexHosts(index string) ([]string, string, error) {
	hp, err := registryHostPort(index)
	if err != nil {
		return nil, "", err
	}
	u, _ := url.Parse(index)
	if strings.EqualFold(u.Hostname(), "pypi.org") {
		return []string{hp, "files.pythonhosted.org:443"}, "files.pythonhosted.org", nil
	}
	return []string{hp}, "", nil
}

// pyRequirements are what the fetch step resolves: NAME==VERSION, the
// local file, or a project's dependencies.
func (t Target) pyRequirements() []string {
	reqs := []string{} // a list in the driver's JSON, when empty too
	switch {
	case t.Tarball != nil:
		reqs = []string{inputDir + "/input/" + t.Filename}
	case !t.PyProject:
		reqs = []string{t.Name + "==" + t.Version}
	}
	if t.PyProject {
		reqs = append(reqs, t.PyRequirements...)
	}
	return reqs
}

// pyTarget is the distribution the tree must hold (PEP 503 normalised);
// "" for a project's dependencies alone, which hold none of their own.
func (t Target) pyTarget() string {
	if t.PyProject && t.Tarball == nil {
		return ""
	}
	return pkgspec.NormalizePyPIName(t.Name)
}

// pyProbe is the project whose simple page the fetch step's preflight
// asks the index for: the target, or a project's first dependency (pip
// when it has none: the preflight checks that the index answers, and a
// 404 is an answer).
func (t Target) pyProbe() string {
	if !t.PyProject || t.Tarball != nil {
		return pkgspec.NormalizePyPIName(t.Name)
	}
	for _, r := range t.PyRequirements {
		if n := pkgspec.PyPINameHead(strings.TrimSpace(r)); n != "" {
			return pkgspec.NormalizePyPIName(n)
		}
	}
	return "pip"
}

// pypiInstaller is the sandbox's part of the PyPI ecosystem (see
// installer); its scan, which picks the interpreter, is in pyinterp.go.
type pypiInstaller struct{}

func (pypiInstaller) chooseBin(t Target, tgt *targetInfo) (*evidence.Bin, error) {
	return choosePyScript(t.Name, tgt.Bin, t.Bin)
}

// baseEnv puts the venv's scripts first, as an activated venv has them;
// the tree is read-only, so no bytecode is written.
func (pypiInstaller) baseEnv() []string {
	return []string{"HOME=/tmp/home", "PATH=" + treeDir + "/venv/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV=" + treeDir + "/venv", "PYTHONDONTWRITEBYTECODE=1"}
}

// treeKey: the project (PEP 503) and version, the index, the image (uv
// and Python) and the fetch driver, the files the index listed, and a
// local file's name and digest.
func (pypiInstaller) treeKey(s *Sandbox, h hash.Hash, t Target) {
	driver := sha256.Sum256([]byte(pyFetchDriver))
	fmt.Fprintf(h, "verifymcp-tree/pypi/1\n%s\n%s\n%s\n%s\n%x\n", pkgspec.NormalizePyPIName(t.Name), t.Version, s.opts.IndexURL, s.opts.Image, driver)
	if t.PyProject {
		// A project's dependencies, in their order (uv reads them so).
		fmt.Fprintf(h, "project %q\n", t.PyRequirements)
	}
	names := make([]string, 0, len(t.PyPIFiles))
	for n := range t.PyPIFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "index-file %s %s\n", n, t.PyPIFiles[n])
	}
	if t.Tarball != nil {
		sum := sha256.Sum256(t.Tarball)
		fmt.Fprintf(h, "file %s %x\n", t.Filename, sum)
	}
}

// pyInstall is the install phase of a PyPI target: the fetch step (uv
// resolves and downloads the tree, or a cached tree is reused) and the
// build step (sdists built, the venv made), in the run's own volumes. Its
// work is the volume the run phase mounts read-only.
func (s *Sandbox) pyInstall(ctx context.Context, r *run, tree string, t Target, watchReady func() (observer, error)) (*pyInstalled, error) {
	inst := &evidence.Install{Outcome: evidence.InstallOK, Scripts: []evidence.Script{}, Integrity: evidence.Integrity{Expected: t.Integrity}}
	deadline := time.Now().Add(s.opts.InstallTimeout)
	started := time.Now()
	fr, timedOut, fetched, err := fetchStep(ctx, s, r, tree, t, inst,
		func(vol string) (*pyFetchResult, bool, error) {
			return s.pyFetch(ctx, r, vol, t, s.opts.InstallTimeout)
		},
		func(fr *pyFetchResult) bool { return fr.OK && (fr.Target != nil || t.pyTarget() == "") })
	var dm *pyDynamic
	if err == nil && !timedOut && fr != nil && fr.ErrorKind == pyNeedsMetadata {
		dm, fr, timedOut, fetched, err = s.resolveDynamic(ctx, r, tree, t, fr, deadline, watchReady)
		defer dm.record(inst)
	}
	inst.FetchMS = time.Since(started).Milliseconds()
	if err != nil {
		return nil, err
	}
	if timedOut {
		s.fetchTimedOut(inst)
		return &pyInstalled{inst: inst}, nil
	}
	lock := recordLockfile(inst, fr.Lockfile)
	inst.Packages = fr.Packages
	if fr.Target != nil {
		setPyIntegrity(&inst.Integrity, fr.Target, t)
	}
	inst.ArchiveEscapes = maskEscapes(r, fr.ArchiveEscapes)
	if !fr.OK {
		inst.LogTail = r.mask.text(fr.LogTail, "install")
		inst.Outcome, inst.FailedStep = evidence.InstallFailed, evidence.StepFetch
		inst.Error = r.mask.text(pyFetchFailure(fr), "install")
		return &pyInstalled{inst: inst, lock: lock}, nil
	}
	if !t.PyProject && t.Tarball == nil && (pkgspec.NormalizePyPIName(fr.Target.Name) != pkgspec.NormalizePyPIName(t.Name) || fr.Target.Version != t.Version) {
		fetchedOther(inst, t, "resolved", fr.Target.Name, fr.Target.Version)
		return &pyInstalled{inst: inst, lock: lock}, nil
	}
	for _, sd := range fr.Sdists {
		cmd := "PEP 517 build_wheel with " + sd.Backend
		if sd.BackendPath {
			cmd += " (an in-tree backend, backend-path)"
		}
		if sd.Default {
			cmd += " (no [build-system]: the PEP 517 default)"
		}
		inst.Scripts = append(inst.Scripts, evidence.Script{Package: sd.Name, Version: sd.Version, Path: sd.Filename, Event: "build", Command: cmd})
	}
	started = time.Now()
	// The build runs in a bounded copy of the fetched tree (cached or not).
	work, w, ok, err := s.codeStep(ctx, r, fetched, "build", deadline, inst, watchReady)
	if err != nil || !ok {
		return &pyInstalled{inst: inst, lock: lock}, err
	}
	br, timedOut, tail, err := s.pyBuild(ctx, r, work, t, fr, time.Until(deadline), w)
	inst.ScriptsMS = time.Since(started).Milliseconds()
	if err != nil {
		return nil, err
	}
	if timedOut {
		inst.Outcome, inst.FailedStep = evidence.InstallTimeout, evidence.StepScripts
		inst.Error = fmt.Sprintf("build step exceeded the install timeout of %s", s.opts.InstallTimeout)
		inst.LogTail = tail
		return &pyInstalled{inst: inst, lock: lock}, nil
	}
	inst.ArchiveEscapes = append(inst.ArchiveEscapes, maskEscapes(r, br.ArchiveEscapes)...)
	for _, h := range br.StartupHooks {
		h.Line = r.mask.text(h.Line, "install")
		inst.StartupHooks = append(inst.StartupHooks, h)
	}
	s.recordPyBuilds(r, inst, br.Builds)
	if inst.Outcome != evidence.InstallOK {
		return &pyInstalled{inst: inst, lock: lock}, nil
	}
	if !br.OK {
		inst.Outcome, inst.FailedStep = evidence.InstallFailed, evidence.StepScripts
		inst.Error = r.mask.text(pyBuildFailure(br), "install")
		if br.Install != nil {
			inst.LogTail = tailString(r.mask.text(br.Install.OutputTail, "install"), 4000)
		} else if br.Venv != nil {
			inst.LogTail = tailString(r.mask.text(br.Venv.OutputTail, "install"), 4000)
		}
		return &pyInstalled{inst: inst, lock: lock}, nil
	}
	inst.DeclaredBins = br.ConsoleScripts
	w.treeInstalled(ctx, inst)
	tgt := &targetInfo{Name: t.Name, Version: t.Version, Bin: br.ConsoleScripts}
	if fr.Target != nil {
		tgt.Name, tgt.Version = fr.Target.Name, fr.Target.Version
	}
	return &pyInstalled{inst: inst, tgt: tgt, lock: lock, work: work, fr: fr, br: br, dynamic: dm != nil}, nil
}

// setPyIntegrity fills in the integrity of the fetched target file: the
// lockfile's hash (the computed one for a local file), the computed one,
// the one the registry listed for its filename (for a registry target),
// and whether all three agree.
func setPyIntegrity(in *evidence.Integrity, f *pyFile, t Target) {
	in.Lockfile = sriHex(f.SHA256)
	in.Computed = sriHex(f.Computed)
	if f.Local {
		in.Lockfile = in.Computed
	}
	if want, ok := t.PyPIFiles[f.Filename]; ok && t.Tarball == nil {
		in.Expected = sriHex(want)
	}
	in.Match = in.Expected != "" && in.Computed == in.Expected && in.Lockfile == in.Expected
}

// recordPyBuilds records the result of each sdist's build in the script
// of inst it belongs to (in order), its output masked; a build that was
// still running at the deadline makes the install time out.
func (s *Sandbox) recordPyBuilds(r *run, inst *evidence.Install, builds []pyRun) {
	for i := range inst.Scripts {
		if i >= len(builds) {
			break
		}
		sc, b := &inst.Scripts[i], builds[i]
		sc.Ran, sc.ExitCode, sc.Signal, sc.TimedOut, sc.LeftRunning, sc.DurationMS = b.Ran, b.exit(), b.Signal, b.TimedOut, b.LeftRunning, b.DurationMS
		sc.OutputTail = tailString(r.mask.text(b.OutputTail, "install.scripts"), scriptTail)
		if b.TimedOut {
			inst.Outcome, inst.FailedStep = evidence.InstallTimeout, evidence.StepScripts
			inst.Error = fmt.Sprintf("the build of %s was running when the build step exceeded the install timeout of %s", sc.Path, s.opts.InstallTimeout)
		}
	}
}

// maskEscapes masks what a package wrote in its member names.
func maskEscapes(r *run, in []evidence.ArchiveEscape) []evidence.ArchiveEscape {
	out := make([]evidence.ArchiveEscape, 0, len(in))
	for _, e := range in {
		e.Member, e.File = r.mask.text(e.Member, "install"), r.mask.text(e.File, "install")
		out = append(out, e)
	}
	return out
}

// sriHex writes a hex sha256 as the SRI string the evidence keeps.
func sriHex(h string) string {
	sum, err := hex.DecodeString(h)
	if err != nil || len(sum) != sha256.Size {
		return ""
	}
	return "sha256-" + base64.StdEncoding.EncodeToString(sum)
}

// pyFetch runs the PyPI fetch step into tree.
func (s *Sandbox) pyFetch(ctx context.Context, r *run, tree string, t Target, timeout time.Duration) (*pyFetchResult, bool, error) {
	return s.pyFetchRound(ctx, r, tree, t, timeout, 0, nil)
}

// pyFetchRound is pyFetch's round of a dynamic resolution (pymeta.go):
// round 0 is the first; meta is the metadata learned so far.
func (s *Sandbox) pyFetchRound(ctx context.Context, r *run, tree string, t Target, timeout time.Duration, round int, meta []pyMetadata) (*pyFetchResult, bool, error) {
	part := "fetch"
	if round > 0 {
		part = fmt.Sprintf("fetch-%d", round)
	}
	if _, err := s.cli.VolumeCreate(ctx, volume.CreateOptions{Name: UVCacheVolume, Labels: map[string]string{LabelCache: "uv"}}); err != nil {
		return nil, false, fmt.Errorf("create uv cache volume: %w", err)
	}
	allow, filesHost, err := indexHosts(s.opts.IndexURL)
	if err != nil {
		return nil, false, fmt.Errorf("index url: %w", err)
	}
	proxy, stopProxy, err := s.egress(ctx, r, part, allow...)
	if err != nil {
		return nil, false, err
	}
	defer stopProxy()
	env := []string{
		"HOME=/tmp/home",
		"HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "ALL_PROXY=" + proxy,
		"UV_CACHE_DIR=/cache/uv",
		"UV_PYTHON_DOWNLOADS=never",
		"UV_NO_PROGRESS=1",
		"UV_HTTP_TIMEOUT=60",
		"UV_CONCURRENT_BUILDS=1",
		// Every Python uv could start for a build backend fails to start:
		// its standard library is not where this points. The driver runs
		// isolated (-I), which ignores it.
		"PYTHONHOME=/nonexistent/verifymcp-fetch-step-runs-no-package-code",
	}
	var files []fileIn
	if len(s.opts.CABundle) > 0 {
		files = append(files, fileIn{Dir: treeDir, Name: ".verifymcp/ca.pem", Data: s.opts.CABundle, UID: 65534})
		env = append(env, "SSL_CERT_FILE="+inputDir+"/ca.pem")
	}
	if t.Tarball != nil {
		files = append(files, fileIn{Dir: treeDir, Name: ".verifymcp/input/" + t.Filename, Data: t.Tarball, UID: 65534})
	}
	arg, _ := json.Marshal(map[string]any{
		"requirements": t.pyRequirements(), "target": t.pyTarget(), "probe": t.pyProbe(),
		"index": strings.TrimRight(s.opts.IndexURL, "/"), "files_host": filesHost, "python": sandboxPython, "metadata": meta,
	})
	hc := hardened()
	hc.NetworkMode = container.NetworkMode(r.name(part))
	hc.Mounts = []mount.Mount{
		{Type: mount.TypeVolume, Source: tree, Target: treeDir},
		{Type: mount.TypeVolume, Source: UVCacheVolume, Target: "/cache/uv"},
	}
	hc.Resources = container.Resources{Memory: 2 << 30, PidsLimit: int64Ptr(1024)}
	res, err := r.runStep(ctx, step{
		Part: part,
		Config: &container.Config{
			Image: s.opts.Image, User: sandboxUser, Env: env, WorkingDir: treeDir,
			Cmd: []string{"python3", "-I", "-c", pyFetchDriver, string(arg)},
		},
		Host: hc, Files: files, Timeout: timeout, MaxOut: 64 << 20, MaxErr: 8 << 10,
	})
	if err != nil {
		return nil, false, err
	}
	if res.TimedOut {
		return nil, true, nil
	}
	fr := &pyFetchResult{}
	if err := decodeResult(res.Stdout, fr); err != nil {
		return &pyFetchResult{ErrorKind: "driver", Error: "the fetch driver printed no result",
			LogTail: tailString(r.mask.text(tailString(string(res.Stdout)+string(res.Stderr), 6000), "install"), 4000)}, false, nil
	}
	if fault := classifyPyFetch(fr, allow[0], len(s.opts.CABundle) > 0); fault != nil {
		s.opts.Logger.Debug("PyPI fetch step: environment fault", "kind", fault.Kind, "code", fault.Code, "host", fault.Host, "log", fr.LogTail)
		return nil, false, fault
	}
	return fr, false, nil
}

// classifyPyFetch turns what the PyPI fetch driver reported into an
// environment fault, or nil when the failure (if any) is the package's.
func classifyPyFetch(fr *pyFetchResult, indexHost string, caGiven bool) *EnvironmentError {
	if p := fr.Preflight; p != nil && !p.OK {
		host := p.Host
		if host == "" {
			host = indexHost
		}
		return preflightFault(p, host, caGiven)
	}
	if !fr.OK && diskFull(fr.Error, fr.LogTail) {
		return diskFault("uv")
	}
	switch fr.ErrorKind {
	case "tls":
		f := &EnvironmentError{Kind: FaultTLS, Host: indexHost, Code: "UNKNOWN_ISSUER", Fix: fixCA,
			Cause: "uv in the fetch step does not trust the TLS certificate of the index, as happens behind a TLS-intercepting proxy (" + oneLineText(fr.Error) + ")"}
		if caGiven {
			f.Fix = fixCAGiven
		}
		return f
	case "network":
		return &EnvironmentError{Kind: FaultUnreachable, Host: indexHost, Code: "network",
			Cause: "the fetch step could not reach the index " + indexHost + " (" + oneLineText(fr.Error) + ")", Fix: fixNetwork}
	}
	return nil
}

// pyFetchFailure says in one line why a PyPI fetch step failed, when it
// was not the environment.
func pyFetchFailure(fr *pyFetchResult) string {
	msg := oneLineText(fr.Error)
	switch fr.ErrorKind {
	case "hash_mismatch":
		return "integrity: " + msg
	case "unsafe_archive":
		return msg
	case "requires_python", "dynamic_metadata", "not_found", "resolution":
		return "uv could not resolve the tree: " + msg
	}
	if msg == "" {
		return "the fetch step failed"
	}
	return msg
}

// pyBuildFailure says in one line why the build step did not give an
// installed tree.
func pyBuildFailure(br *pyBuildResult) string {
	for _, b := range br.Builds {
		if b.exit() != 0 {
			return fmt.Sprintf("the build of %s failed (exit %d), so the tree could not be installed", b.Filename, b.exit())
		}
	}
	if br.Install != nil && br.Install.exit() != 0 {
		return fmt.Sprintf("uv pip install of the fetched tree failed (exit %d): %s", br.Install.exit(), lastLine(br.Install.OutputTail))
	}
	if br.Error != "" {
		return br.Error
	}
	return "the build step failed"
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "hint") {
			return l
		}
	}
	return ""
}

// pyBuild runs the PyPI build step in the bounded tree.
func (s *Sandbox) pyBuild(ctx context.Context, r *run, tree string, t Target, fr *pyFetchResult, timeout time.Duration, w observer) (*pyBuildResult, bool, string, error) {
	reqs := []string{} // a list in the driver's JSON, when empty too
	for _, f := range fr.Files {
		if f.Role == "tree" {
			reqs = append(reqs, f.Name+"=="+f.Version)
		}
	}
	sort.Strings(reqs)
	sdists := make([]pySdist, 0, len(fr.Sdists))
	for _, sd := range fr.Sdists {
		sdists = append(sdists, pySdist{Name: sd.Name, Version: sd.Version, Filename: sd.Filename})
	}
	arg, _ := json.Marshal(map[string]any{"target": t.pyTarget(), "python": sandboxPython, "requirements": reqs, "sdists": sdists})
	cmd := []string{"python3", "-I", "-c", pyStepsLib + "\n" + pyBuildDriver, string(arg), fmt.Sprint(timeout.Milliseconds())}
	env := []string{"HOME=/tmp/home", "UV_CACHE_DIR=" + inputDir + "/uv-cache", "UV_PYTHON_DOWNLOADS=never", "UV_NO_PROGRESS=1", "UV_OFFLINE=1", "UV_CONCURRENT_BUILDS=1"}
	br := &pyBuildResult{}
	var derr error
	res, err := s.watchedStep(ctx, r, tree, cmd, env, timeout, w, func(res stepResult) ([]scriptWindow, map[string]bool) {
		derr = decodeResult(res.Stdout, br)
		w.setDriver(driverPID(res.Stdout))
		var windows []scriptWindow
		for i, b := range br.Builds {
			if b.Ran {
				windows = append(windows, scriptWindow{Index: i, Package: b.Name, Start: time.UnixMilli(b.StartedAt), End: time.UnixMilli(b.EndedAt)})
			}
		}
		return windows, map[string]bool{}
	})
	if err != nil {
		return nil, false, "", err
	}
	if res.TimedOut {
		return nil, true, tailString(r.mask.text(tailString(string(res.Stdout)+string(res.Stderr), 3000), "install"), 2000), nil
	}
	if derr != nil {
		return nil, false, "", fmt.Errorf("build driver: %w (stderr: %s)", derr, tailString(r.mask.text(string(res.Stderr), "install"), 500))
	}
	return br, false, "", nil
}

// driverMark starts the line on which the build driver reports its own
// PID, in the observer's PID namespace (the step joins it), before it runs
// anything.
const driverMark = "VERIFYMCP-DRIVER-PID "

// driverPID reads the PID the build driver reported as its output's first
// line; 0 when there is none.
func driverPID(stdout []byte) int {
	line, _, _ := bytes.Cut(stdout, []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte(driverMark))
	if !ok {
		return 0
	}
	pid, err := strconv.Atoi(string(rest))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// choosePyScript picks the entry point of a PyPI target by a fixed rule,
// documented in the README, over the console scripts of the installed
// distribution's entry_points.txt:
//  1. --bin, when given, must name a console script;
//  2. the script named like the project (PEP 503 names compared);
//  3. the only console script;
//  4. the first, in byte order, whose name contains "mcp";
//  5. the first in byte order.
func choosePyScript(pkg string, scripts map[string]string, override string) (*evidence.Bin, error) {
	keys := make([]string, 0, len(scripts))
	for k := range scripts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	binPath := func(k string) string { return path.Join(treeDir, "venv", "bin", k) }
	if override != "" {
		if _, ok := scripts[override]; ok {
			return &evidence.Bin{Name: override, Path: binPath(override), Rule: "--bin"}, nil
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("%w: --bin %q: %s declares no console script", ErrBadBin, override, pkg)
		}
		return nil, fmt.Errorf("%w: --bin %q is not a console script of %s (it declares: %s)", ErrBadBin, override, pkg, strings.Join(keys, ", "))
	}
	for _, k := range keys {
		if pkgspec.NormalizePyPIName(k) == pkgspec.NormalizePyPIName(pkg) {
			return &evidence.Bin{Name: k, Path: binPath(k), Rule: "console script named like the project"}, nil
		}
	}
	switch {
	case len(keys) == 1:
		return &evidence.Bin{Name: keys[0], Path: binPath(keys[0]), Rule: "single console script"}, nil
	case len(keys) > 1:
		for _, k := range keys {
			if strings.Contains(k, "mcp") {
				return &evidence.Bin{Name: k, Path: binPath(k), Rule: "first console script containing \"mcp\""}, nil
			}
		}
		return &evidence.Bin{Name: keys[0], Path: binPath(keys[0]), Rule: "first console script in byte order"}, nil
	}
	return nil, fmt.Errorf("%w: %s declares no console script (entry_points.txt [console_scripts]); name a module to run is not supported", ErrBadBin, pkg)
}

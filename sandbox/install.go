package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/hostport"
)

// NPMCacheVolume is the npm cache shared by fetch steps. Only the fetch step
// mounts it, and no package code runs there, so sharing it between scans is
// safe; it is what makes warm scans fast.
const NPMCacheVolume = "verifymcp-npm-cache"

const (
	treeDir     = "/work/tree"
	inputDir    = "/work/tree/.verifymcp"
	resultMark  = "VERIFYMCP-RESULT "
	egressAlias = "egress"
	egressPort  = "3128"
	sandboxUser = "65534:65534"
)

// fetchResult is the fetch driver's output (see drivers/fetch.js).
type fetchResult struct {
	OK        bool         `json:"ok"`
	NPMExit   *int         `json:"npm_exit"`
	LogTail   string       `json:"log_tail"`
	Lockfile  string       `json:"lockfile"`
	Packages  int          `json:"packages"`
	Target    *targetInfo  `json:"target"`
	Scripts   []scriptInfo `json:"scripts"`
	Integrity struct {
		Expected  string `json:"expected"`
		Lockfile  string `json:"lockfile"`
		Computed  string `json:"computed"`
		PackError string `json:"pack_error"`
	} `json:"integrity"`
	// Preflight is the driver's check that it reaches the registry; nil in
	// results recorded before it existed.
	Preflight *preflightResult `json:"preflight"`
	// NPMError is npm's --json error when npm failed; GitWanted the git
	// URLs npm asked for (the sandbox fetches only from the registry).
	NPMError  *npmError `json:"npm_error"`
	GitWanted []string  `json:"git_wanted"`
}

type targetInfo struct {
	Name    string            `json:"name"`
	Version string            `json:"version"`
	Bin     map[string]string `json:"bin"`
	Engines map[string]string `json:"engines"`
	Main    string            `json:"main"`
}

type scriptInfo struct {
	Package  string `json:"package"`
	Version  string `json:"version"`
	Path     string `json:"path"`
	Event    string `json:"event"`
	Command  string `json:"command"`
	Implicit bool   `json:"implicit"`
}

type scriptRun struct {
	Path     string `json:"path"`
	Event    string `json:"event"`
	Ran      bool   `json:"ran"`
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal"`
	TimedOut bool   `json:"timed_out"`
	OOM      bool   `json:"oom"`
	// OOMUncounted: the driver could not read the cgroup's kill count.
	OOMUncounted bool   `json:"oom_uncounted"`
	LeftRunning  bool   `json:"left_running"`
	OutputTail   string `json:"output_tail"`
	DurationMS   int64  `json:"duration_ms"`
	StartedAt    int64  `json:"started_at"` // ms since the epoch, container clock
	EndedAt      int64  `json:"ended_at"`
}

// hardened returns the host configuration every sandbox container shares:
// no capabilities, no privilege escalation, read-only root, tmpfs scratch.
func hardened() *container.HostConfig {
	return &container.HostConfig{
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"},
		Init:           boolPtr(true),
	}
}

func boolPtr(b bool) *bool { return &b }

// npmInstaller is the sandbox's part of the npm ecosystem (see installer).
type npmInstaller struct{}

func (npmInstaller) scan(ctx context.Context, s *Sandbox, runID string, t Target) (*Result, error) {
	return s.scan(ctx, runID, t)
}

func (npmInstaller) chooseBin(t Target, tgt *targetInfo) (*evidence.Bin, error) {
	return chooseBin(t.Name, tgt, t.Bin)
}

func (npmInstaller) baseEnv() []string {
	return []string{"HOME=/tmp/home", "PATH=" + treeDir + "/node_modules/.bin:/usr/local/bin:/usr/bin:/bin"}
}

// treeKey: the exact version and its integrity, the registry, the image
// (node and npm) and the fetch driver, and a local tarball's digest.
func (npmInstaller) treeKey(s *Sandbox, h hash.Hash, t Target) {
	driver := sha256.Sum256([]byte(fetchDriver))
	fmt.Fprintf(h, "verifymcp-tree/1\n%s\n%s\n%s\n%s\n%s\n%x\n", t.Name, t.Version, t.Integrity, s.opts.Registry, s.opts.Image, driver)
	if t.Tarball != nil {
		sum := sha256.Sum256(t.Tarball)
		fmt.Fprintf(h, "file %x\n", sum)
	}
}

// install runs the fetch step (or reuses a cached tree) and the script
// step. It returns the volume the run phase mounts read-only.
func (npmInstaller) install(ctx context.Context, s *Sandbox, r *run, tree string, t Target, watchReady func() (observer, error)) (*evidence.Install, *targetInfo, []byte, string, error) {
	inst := &evidence.Install{Outcome: evidence.InstallOK, Scripts: []evidence.Script{}, Integrity: evidence.Integrity{Expected: t.Integrity}}
	deadline := time.Now().Add(s.opts.InstallTimeout)

	started := time.Now()
	fr, timedOut, fetched, err := fetchStep(ctx, s, r, tree, t, inst,
		func(vol string) (*fetchResult, bool, error) { return s.fetch(ctx, r, vol, t, s.opts.InstallTimeout) },
		func(fr *fetchResult) bool { return fr.OK && fr.Target != nil })
	inst.FetchMS = time.Since(started).Milliseconds()
	if err != nil {
		return nil, nil, nil, "", err
	}
	if timedOut {
		s.fetchTimedOut(inst)
		return inst, nil, nil, "", nil
	}
	inst.LogTail = fr.LogTail
	if !fr.OK || fr.Target == nil {
		// Environment faults were returned by fetch; what is left is the
		// package's: a dependency that does not exist, an integrity
		// mismatch, a dependency from a host other than the registry.
		inst.Outcome, inst.FailedStep = evidence.InstallFailed, evidence.StepFetch
		inst.Error = fetchFailure(fr, s.opts.Registry)
		return inst, nil, nil, "", nil
	}
	inst.Packages = fr.Packages
	inst.Integrity.Lockfile = fr.Integrity.Lockfile
	inst.Integrity.Computed = fr.Integrity.Computed
	inst.Integrity.Match = t.Integrity != "" && fr.Integrity.Computed == t.Integrity &&
		(fr.Integrity.Lockfile == "" || fr.Integrity.Lockfile == t.Integrity)
	inst.DeclaredBins = fr.Target.Bin
	inst.DeclaredEngines = fr.Target.Engines
	lock := recordLockfile(inst, fr.Lockfile)
	if t.Tarball == nil && (fr.Target.Name != t.Name || fr.Target.Version != t.Version) {
		fetchedOther(inst, t, "installed", fr.Target.Name, fr.Target.Version)
		return inst, nil, lock, "", nil
	}

	plan := orderScripts(fr.Scripts)
	optional := optionalPackages(lock)
	for _, sc := range plan {
		inst.Scripts = append(inst.Scripts, evidence.Script{Package: sc.Package, Version: sc.Version, Path: sc.Path, Event: sc.Event, Command: sc.Command, Optional: optional[sc.Path]})
	}
	inst.LogTail = ""
	if len(plan) == 0 {
		// No package code will write to the tree: the run phase mounts the
		// fetched tree (cached or not) read-only.
		return inst, fr.Target, lock, fetched, nil
	}
	started = time.Now()
	// The scripts run in a bounded copy of the fetched tree (cached or
	// not), which the run phase then mounts read-only.
	work, w, ok, err := s.codeStep(ctx, r, fetched, "script", deadline, inst, watchReady)
	if err != nil || !ok {
		return inst, fr.Target, lock, "", err
	}
	runs, timedOut, stepOOM, tail, err := s.scripts(ctx, r, work, plan, time.Until(deadline), w)
	inst.ScriptsMS = time.Since(started).Milliseconds()
	if err != nil {
		return nil, nil, nil, "", err
	}
	for i := range inst.Scripts {
		if i < len(runs) {
			sc, run := &inst.Scripts[i], runs[i]
			sc.Ran, sc.ExitCode, sc.Signal, sc.TimedOut, sc.OOM = run.Ran, run.ExitCode, run.Signal, run.TimedOut, run.OOM
			// Masked whole, then cut to its bound, so that the cut leaves no
			// part of a secret.
			sc.LeftRunning, sc.DurationMS = run.LeftRunning, run.DurationMS
			sc.OutputTail = tailString(r.mask.text(run.OutputTail, "install.scripts"), scriptTail)
			// A kill for memory is read from the cgroup's kill count, not
			// from the time the script took: one that was killed for memory
			// and then ran into the timeout (a parent left waiting, a
			// thrashing step) is oom, not a timeout.
			switch {
			case run.OOM && !sc.Optional:
				// npm would have stopped the install here.
				if inst.Outcome != evidence.InstallOOM {
					inst.Outcome, inst.FailedStep = evidence.InstallOOM, evidence.StepScripts
					inst.Error = fmt.Sprintf("the %s script of %s was killed for exceeding the script step's memory limit of %s (besides the files kept in the tree, home and /tmp)", sc.Event, sc.Package, bytesText(scriptMemory))
				}
			case run.TimedOut:
				timedOut = true
			}
		}
	}
	if stepOOM && inst.Outcome != evidence.InstallOOM {
		// The step ended without the driver's account (it ran out of time
		// or was killed itself), and the kernel killed a process of it for
		// memory: that is the outcome, whatever time it took.
		inst.Outcome, inst.FailedStep = evidence.InstallOOM, evidence.StepScripts
		inst.Error = fmt.Sprintf("a process of the script step was killed for exceeding its memory limit of %s (besides the files kept in the tree, home and /tmp)", bytesText(scriptMemory))
		inst.LogTail = tail
	}
	if timedOut && inst.Outcome != evidence.InstallOOM {
		inst.Outcome, inst.FailedStep = evidence.InstallTimeout, evidence.StepScripts
		inst.Error = fmt.Sprintf("script step exceeded the install timeout of %s", s.opts.InstallTimeout)
		inst.LogTail = tail
		for _, sc := range inst.Scripts {
			if sc.TimedOut {
				inst.Error = fmt.Sprintf("the %s script of %s was running when the script step exceeded the install timeout of %s", sc.Event, sc.Package, s.opts.InstallTimeout)
			}
		}
	}
	// A script that fails is a finding, not a failed install: npm would stop,
	// but the tree is there and the server may still start.
	return inst, fr.Target, lock, work, nil
}

// scriptMemory is the script step's memory limit; scriptBackstop is how
// much longer than the driver's budget the step may run before the
// container is stopped from outside.
const (
	scriptMemory   = 2 << 30
	scriptBackstop = 20 * time.Second
	// scriptTail is how much of a script's output is kept; the driver
	// sends more, so that what is cut away here is masked first.
	scriptTail = 2000
)

// bytesText prints a byte count in binary units: 2 GiB.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// optionalPackages returns the tree paths the lockfile marks optional:
// npm goes on when a script of one of them fails, and leaves the package
// out.
func optionalPackages(lock []byte) map[string]bool {
	var l struct {
		Packages map[string]struct {
			Optional bool `json:"optional"`
		} `json:"packages"`
	}
	out := map[string]bool{}
	if json.Unmarshal(lock, &l) != nil {
		return out
	}
	for p, e := range l.Packages {
		if e.Optional {
			out[p] = true
		}
	}
	return out
}

// orderScripts returns lifecycle scripts in the order they run: deeper
// packages first (dependencies before the packages that need them, as far
// as the tree's layout tells), then by path, then preinstall, install,
// postinstall.
func orderScripts(in []scriptInfo) []scriptInfo {
	out := append([]scriptInfo(nil), in...)
	rank := map[string]int{"preinstall": 0, "install": 1, "postinstall": 2}
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := strings.Count(out[i].Path, "node_modules/"), strings.Count(out[j].Path, "node_modules/")
		if di != dj {
			return di > dj
		}
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return rank[out[i].Event] < rank[out[j].Event]
	})
	return out
}

// registryHostPort returns the host:port the egress proxy allows.
func registryHostPort(registry string) (string, error) {
	u, err := url.Parse(registry)
	if err != nil {
		return "", err
	}
	return hostport.Of(u), nil
}

// fetch runs the fetch step into tree. An environment fault (see
// fault.go) is returned as an *EnvironmentError; a failure of the
// package's is in the result.
func (s *Sandbox) fetch(ctx context.Context, r *run, tree string, t Target, timeout time.Duration) (*fetchResult, bool, error) {
	return s.fetchStep(ctx, r, tree, t, timeout, false)
}

// fetchStep is fetch; freshCache gives npm an empty cache of its own
// instead of the shared volume, so that everything comes from the
// registry (the doctor's check).
func (s *Sandbox) fetchStep(ctx context.Context, r *run, tree string, t Target, timeout time.Duration, freshCache bool) (*fetchResult, bool, error) {
	cacheDir := "/cache/npm"
	if freshCache {
		cacheDir = "/tmp/npm-cache"
	} else if _, err := s.cli.VolumeCreate(ctx, volume.CreateOptions{Name: NPMCacheVolume, Labels: map[string]string{LabelCache: "npm"}}); err != nil {
		return nil, false, fmt.Errorf("create npm cache volume: %w", err)
	}
	allow, err := registryHostPort(s.opts.Registry)
	if err != nil {
		return nil, false, fmt.Errorf("registry url: %w", err)
	}
	proxy, stopProxy, err := s.egress(ctx, r, "fetch", allow)
	if err != nil {
		return nil, false, err
	}
	defer stopProxy()

	env := []string{
		"HOME=/tmp/home",
		"NPM_CONFIG_CACHE=" + cacheDir,
		"NPM_CONFIG_REGISTRY=" + s.opts.Registry,
		"NPM_CONFIG_PROXY=" + proxy,
		"NPM_CONFIG_HTTPS_PROXY=" + proxy,
		"NPM_CONFIG_UPDATE_NOTIFIER=false",
		"NPM_CONFIG_FETCH_RETRIES=1",
	}
	var files []fileIn
	if len(s.opts.CABundle) > 0 {
		files = append(files, fileIn{Dir: treeDir, Name: ".verifymcp/ca.pem", Data: s.opts.CABundle, UID: 65534})
		env = append(env, "NPM_CONFIG_CAFILE="+inputDir+"/ca.pem", "NODE_EXTRA_CA_CERTS="+inputDir+"/ca.pem")
	}
	spec := t.Name + "@" + t.Version
	packSpec := spec
	if t.Tarball != nil {
		files = append(files, fileIn{Dir: treeDir, Name: ".verifymcp/target.tgz", Data: t.Tarball, UID: 65534})
		spec = inputDir + "/target.tgz"
		packSpec = ""
	}
	hc := hardened()
	hc.NetworkMode = container.NetworkMode(r.name("fetch"))
	hc.Mounts = []mount.Mount{{Type: mount.TypeVolume, Source: tree, Target: treeDir}}
	if !freshCache {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Source: NPMCacheVolume, Target: cacheDir})
	}
	hc.Resources = container.Resources{Memory: 2 << 30, PidsLimit: int64Ptr(1024)}
	res, err := r.runStep(ctx, step{
		Part: "fetch",
		Config: &container.Config{
			Image:      s.opts.Image,
			User:       sandboxUser,
			Env:        env,
			WorkingDir: treeDir,
			Cmd:        []string{"node", "-e", fetchDriver, spec, t.Name, t.Integrity, packSpec},
		},
		Host:    hc,
		Files:   files,
		Timeout: timeout,
		MaxOut:  64 << 20,
		MaxErr:  8 << 10,
	})
	if err != nil {
		return nil, false, err
	}
	if res.TimedOut {
		return nil, true, nil
	}
	fr := &fetchResult{}
	if err := decodeResult(res.Stdout, fr); err != nil {
		// The driver always prints a result unless node itself failed.
		return &fetchResult{LogTail: tailString(r.mask.text(tailString(string(res.Stdout)+string(res.Stderr), 6000), "install"), 4000)}, false, nil
	}
	if fault := classifyFetch(fr, s.opts.Registry, len(s.opts.CABundle) > 0); fault != nil {
		s.opts.Logger.Debug("fetch step: environment fault", "kind", fault.Kind, "code", fault.Code, "host", fault.Host, "log", fr.LogTail)
		return nil, false, fault
	}
	return fr, false, nil
}

func int64Ptr(v int64) *int64 { return &v }

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func decodeResult(stdout []byte, v any) error {
	i := bytes.LastIndex(stdout, []byte(resultMark))
	if i < 0 {
		return fmt.Errorf("driver printed no result")
	}
	line := stdout[i+len(resultMark):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return json.Unmarshal(line, v)
}

// startEgressProxy starts the registry-only proxy on the default bridge and
// the run's internal network, and waits until it listens.
func (s *Sandbox) startEgressProxy(ctx context.Context, r *run, internalNet string, allow ...string) (func(), error) {
	cmd := []string{"sandbox", "egress-proxy", "--listen", ":" + egressPort}
	for _, a := range allow {
		cmd = append(cmd, "--allow", a)
	}
	hc := &container.HostConfig{
		NetworkMode:    "bridge",
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		Resources:      container.Resources{Memory: 64 << 20, PidsLimit: int64Ptr(64)},
	}
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image:        s.opts.HelperImage,
		User:         sandboxUser,
		Cmd:          cmd,
		Labels:       r.labels(),
		AttachStdout: true,
		AttachStderr: true,
	}, hc, nil, nil, r.name("egress"))
	if err != nil {
		return nil, fmt.Errorf("create egress proxy: %w", err)
	}
	id := created.ID
	stop := func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		_ = r.cli.ContainerRemove(rmCtx, id, container.RemoveOptions{Force: true})
	}
	if err := r.cli.NetworkConnect(ctx, internalNet, id, &network.EndpointSettings{Aliases: []string{egressAlias}}); err != nil {
		stop()
		return nil, fmt.Errorf("connect egress proxy: %w", err)
	}
	att, err := r.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		stop()
		return nil, fmt.Errorf("attach egress proxy: %w", err)
	}
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		att.Close()
		stop()
		return nil, fmt.Errorf("start egress proxy: %w", err)
	}
	ready := make(chan error, 1)
	stderr := &tailBuffer{max: 4096}
	go func() {
		pr, pw := ioPipe()
		go func() {
			_, err := stdcopy.StdCopy(pw, stderr, att.Reader)
			pw.CloseWithError(err)
		}()
		sc := bufio.NewScanner(pr)
		first := true
		for sc.Scan() {
			if first {
				first = false
				if strings.Contains(sc.Text(), `"listening"`) {
					ready <- nil
				} else {
					ready <- fmt.Errorf("egress proxy said %q", sc.Text())
				}
			}
			s.opts.Logger.Debug("egress", "event", sc.Text())
		}
		if first {
			ready <- fmt.Errorf("egress proxy exited before listening: %s", stderr.String())
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			att.Close()
			stop()
			return nil, err
		}
	case <-time.After(20 * time.Second):
		att.Close()
		stop()
		return nil, fmt.Errorf("egress proxy did not start within 20s")
	case <-ctx.Done():
		att.Close()
		stop()
		return nil, ctx.Err()
	}
	return func() { att.Close(); stop() }, nil
}

// workTree returns the bounded tree the scripts run in, holding a copy of
// the fetched tree (see bounds.go). A watched scan's observer holds it
// mounted; an unwatched scan starts a holder. The copy runs in a container
// of its own, with no package code, so that the copied tree's pages count
// against no phase's memory.
func (s *Sandbox) workTree(ctx context.Context, r *run, fetched string, w observer) (string, error) {
	work, err := w.workTree(ctx, s, r)
	if err != nil {
		return "", err
	}
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Mounts = []mount.Mount{mountVolume(fetched, "/work/src", true), mountVolume(work, treeDir, false)}
	hc.Resources = container.Resources{Memory: s.opts.TreeSize + 256<<20, PidsLimit: int64Ptr(16)}
	started := time.Now()
	defer func() {
		s.opts.Logger.Debug("tree copied for the script step", "ms", time.Since(started).Milliseconds())
	}()
	res, err := r.runStep(ctx, step{Part: "copy-tree", Host: hc, Timeout: 5 * time.Minute, MaxOut: 1 << 10, MaxErr: 4 << 10,
		Config: &container.Config{Image: s.opts.Image, User: sandboxUser, Cmd: []string{"cp", "-a", "/work/src/.", treeDir + "/"}}})
	switch {
	case err != nil:
		return "", err
	case res.ExitCode != 0 && strings.Contains(string(res.Stderr), "No space left on device"):
		return "", fmt.Errorf("%w (%s, %d files): raise --tree-size", ErrTreeBound, bytesText(s.opts.TreeSize), treeFiles)
	case res.ExitCode != 0 || res.TimedOut:
		return "", fmt.Errorf("copy the installed tree for the script step: exit %d: %s", res.ExitCode, tailString(string(res.Stderr), 500))
	}
	return work, nil
}

// scripts runs the lifecycle scripts in the bounded tree, with no network.
//
// It also reports whether the step's container was killed for memory
// (the engine's oom_killed) when the driver gave no account of its
// scripts: the step's backstop ended it, or the kernel killed the driver.
// When the driver could not read the cgroup's kill count but the engine
// flags the container, the script that timed out, if one did, is marked.
func (s *Sandbox) scripts(ctx context.Context, r *run, tree string, plan []scriptInfo, timeout time.Duration, w observer) ([]scriptRun, bool, bool, string, error) {
	type item struct {
		Path     string `json:"path"`
		Event    string `json:"event"`
		Implicit bool   `json:"implicit"`
	}
	items := make([]item, len(plan))
	for i, p := range plan {
		items[i] = item{Path: p.Path, Event: p.Event, Implicit: p.Implicit}
	}
	planJSON, _ := json.Marshal(items)
	// The driver keeps the time budget itself, so that the script running
	// when it ends is recorded as timed out with its output; the step's own
	// timeout is a backstop for a driver that cannot.
	cmd := []string{"node", "-e", scriptsDriver, string(planJSON), fmt.Sprint(timeout.Milliseconds())}
	env := []string{"HOME=/tmp/home", "NPM_CONFIG_CACHE=/tmp/npm-cache", "NPM_CONFIG_OFFLINE=true", "NPM_CONFIG_UPDATE_NOTIFIER=false"}
	var runs []scriptRun
	var derr error
	res, err := s.watchedStep(ctx, r, tree, cmd, env, timeout, w, func(res stepResult) ([]scriptWindow, map[string]bool) {
		derr = decodeResult(res.Stdout, &runs)
		declared := map[string]bool{}
		var windows []scriptWindow
		for i, p := range plan {
			declared[p.Command] = true
			if i < len(runs) && runs[i].Ran {
				windows = append(windows, scriptWindow{Index: i, Package: p.Package, Start: time.UnixMilli(runs[i].StartedAt), End: time.UnixMilli(runs[i].EndedAt)})
			}
		}
		return windows, declared
	})
	if err != nil {
		return nil, false, false, "", err
	}
	if res.TimedOut || (derr != nil && res.OOM) {
		return nil, res.TimedOut, res.OOM, tailString(r.mask.text(tailString(string(res.Stdout)+string(res.Stderr), 3000), "install"), 2000), nil
	}
	if derr != nil {
		return nil, false, false, "", fmt.Errorf("script driver: %w (stderr: %s)", derr, tailString(r.mask.text(string(res.Stderr), "install"), 500))
	}
	if res.OOM && !slices.ContainsFunc(runs, func(r scriptRun) bool { return r.OOM }) {
		for i := range runs {
			if runs[i].TimedOut && runs[i].OOMUncounted {
				runs[i].OOM = true
			}
		}
	}
	return runs, false, false, "", nil
}

// watchedStep runs one step of package code in the install phase (npm's
// lifecycle scripts, the builds of Python sdists) in the bounded tree with
// no network, watched by w when it is not nil: the observer's namespaces,
// the canary home, the tracer and the file comparison, as the script step
// (evidence.PhaseScripts). attribute reads the step's result into the
// windows in which each package's code ran and the command lines the
// packages declare, which attribute the step's behaviour.
func (s *Sandbox) watchedStep(ctx context.Context, r *run, tree string, cmd, env []string, timeout time.Duration, w observer, attribute func(stepResult) ([]scriptWindow, map[string]bool)) (stepResult, error) {
	hc := hardened()
	hc.NetworkMode = "none"
	hc.Tmpfs["/tmp"] = s.opts.tmpfsOption()
	hc.Mounts = []mount.Mount{{Type: mount.TypeVolume, Source: tree, Target: treeDir}}
	mem := scriptMemory + w.extraMemory(evidence.PhaseScripts)
	hc.Resources = container.Resources{Memory: mem, MemorySwap: mem, NanoCPUs: s.opts.NanoCPUs, PidsLimit: int64Ptr(1024)}
	st := step{Part: "scripts", Host: hc, Timeout: timeout + scriptBackstop, MaxOut: 8 << 20, MaxErr: 8 << 10}
	env, cmd = w.prepare(hc, evidence.PhaseScripts, env, cmd, nil)
	done := w.scriptStep(r, &st)
	st.Config = &container.Config{Image: s.opts.Image, User: sandboxUser, Env: env, WorkingDir: treeDir, Cmd: cmd}
	res, err := r.runStep(ctx, st)
	if err != nil {
		return res, err
	}
	done(attribute(res))
	return res, nil
}

// chooseBin picks the entry point by a fixed rule, documented in the README:
//  1. --bin, when given, must name a bin entry;
//  2. a single bin entry;
//  3. the bin entry named like the package without its scope;
//  4. the first bin entry, in byte order, whose name contains "mcp";
//  5. the first bin entry in byte order;
//  6. no bin: the package's "main" file, started with node.
func chooseBin(pkg string, t *targetInfo, override string) (*evidence.Bin, error) {
	keys := make([]string, 0, len(t.Bin))
	for k := range t.Bin {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	binPath := func(k string) string { return treeDir + "/node_modules/.bin/" + k }
	if override != "" {
		if _, ok := t.Bin[override]; ok {
			return &evidence.Bin{Name: override, Path: binPath(override), Rule: "--bin"}, nil
		}
		return nil, fmt.Errorf("%w: --bin %q is not a bin of %s (it declares: %s)", ErrBadBin, override, pkg, strings.Join(keys, ", "))
	}
	unscoped := pkg
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		unscoped = pkg[i+1:]
	}
	switch {
	case len(keys) == 1:
		return &evidence.Bin{Name: keys[0], Path: binPath(keys[0]), Rule: "single bin entry"}, nil
	case len(keys) > 1:
		if _, ok := t.Bin[unscoped]; ok {
			return &evidence.Bin{Name: unscoped, Path: binPath(unscoped), Rule: "bin named like the package"}, nil
		}
		for _, k := range keys {
			if strings.Contains(k, "mcp") {
				return &evidence.Bin{Name: k, Path: binPath(k), Rule: "first bin containing \"mcp\""}, nil
			}
		}
		return &evidence.Bin{Name: keys[0], Path: binPath(keys[0]), Rule: "first bin in byte order"}, nil
	}
	if t.Main != "" {
		p := path.Join(treeDir, "node_modules", pkg, path.Clean("/"+t.Main))
		return &evidence.Bin{Name: "main", Path: p, Rule: "package main (no bin)"}, nil
	}
	return nil, fmt.Errorf("%w: %s declares neither bin nor main", ErrBadBin, pkg)
}

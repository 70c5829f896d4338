package clientconfig

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/ecosystem/npm"

	"github.com/verifymcp/verifymcp/ecosystem"

	"github.com/verifymcp/verifymcp/pkgspec"
)

// Reasons a server is not a package target.
const (
	NotScannedURL       = "a URL server: nothing to install"
	NotScannedLocal     = "a local script: no package to resolve"
	NotScannedExtension = "an editor extension's server: its command is not in the file"
	// NotScannedModule starts the reason of a python -m server: a module
	// name is no proof of the distribution that provides it.
	NotScannedModule = "python -m names a module, not a package"
)

// Targets maps each server of the file to what a scan takes, in file
// order. A stdio server whose command fetches an npm package
// (npx [-y|--yes] [-p PKG] PKG[@SPEC] ARGS..., bunx, bun x, pnpm dlx,
// pnpx, yarn dlx, npm exec) is the target npm:NAME@SPEC (SPEC "latest"
// when the command names none; Pinned when SPEC is an exact version);
// one that runs a PyPI package (uvx [--from REQ] REQ|CMD ARGS..., uv tool
// run, pipx run [--spec REQ]) is the target pypi:NAME[SPECIFIERS]
// (pypi:NAME for the latest release, pypi:NAME==VERSION when Pinned;
// Spec is the version or specifier set as the file writes it). Args are
// the arguments after the package (after the bin name with -p or
// --from, which is Bin), masked, with the client's variables replaced by
// sandbox stand-ins (see expandArgs; a variable with none makes the
// server not scanned); EnvNames the environment keys, sorted. A python
// -m MODULE server is not scanned: a module is not a distribution. Every other
// server has NotScanned saying why, and then Target is empty: a
// local script, a URL server, a name the registry
// would refuse, a package from outside the registry or another index, a
// Python requirement with extras, markers or more packages (--with), a
// command line this reader cannot follow.
func Targets(f *File) []Target {
	out := []Target{}
	for i := range f.Servers {
		s := &f.Servers[i]
		t := Target{Server: s.Name, File: f.Path, Line: s.Line, Args: []string{}, EnvNames: sortedEnvNames(s), Disabled: s.Disabled}
		switch s.Transport {
		case TransportHTTP, TransportSSE:
			t.NotScanned = NotScannedURL
			out = append(out, t)
			continue
		case TransportExtension:
			t.NotScanned = NotScannedExtension
			out = append(out, t)
			continue
		case TransportBundle:
			out = append(out, bundleTarget(t, s.bundle))
			continue
		}
		l := readLaunch(s)
		switch {
		case l == nil && len(s.args) == 0 && strings.ContainsAny(strings.TrimSpace(s.Command), " \t"):
			t.NotScanned = "the command has spaces and no args: how the client splits it is not known"
		case l != nil && l.module != "":
			t.NotScanned = NotScannedModule + " (" + l.launcher + " " + l.module + "): which distribution provides it, and at which version, is not in the file"
		case l == nil || l.local:
			t.NotScanned = NotScannedLocal
		case l.unknown != "":
			t.NotScanned = l.unknown
		default:
			t.Ecosystem, t.Name, t.Spec, t.Pinned, t.Bin = l.eco, l.name, l.spec, l.pinned, l.bin
			t.Args = restArgs(s, l.rest)
			switch {
			case l.notScanned != "":
				t.NotScanned = l.notScanned
			case l.eco == "oci":
				// The image as the line names it, with the variables -e
				// gives its container (the config's env block reaches only
				// the docker CLI); its other runtime flags (-v, -p) are
				// the client's: the scan runs the image alone, with
				// nothing of the host mounted.
				t.Target = "oci:" + l.token
				t.EnvNames = l.envNames
			case l.eco == "pypi":
				t.Target = "pypi:" + l.name + l.pySpec
			default:
				if err := pkgspec.ValidNPMName(l.name); err != nil {
					t.NotScanned = "not a valid npm package name: " + err.Error()
					break
				}
				if t.Spec == "" {
					t.Spec = "latest"
				}
				t.Target = "npm:" + t.Name + "@" + t.Spec
			}
			if t.Target != "" {
				var why string
				t.Args, t.Substituted, why = expandArgs(f.Client, s, l.rest)
				if why != "" {
					t.Target, t.NotScanned = "", why
				}
			}
		}
		out = append(out, t)
	}
	return out
}

func restArgs(s *Server, from int) []string {
	out := []string{}
	for i := from; i >= 0 && i < len(s.args); i++ {
		out = append(out, s.args[i].masked)
	}
	return out
}

// launch is what a stdio command line fetches, when its command is a
// launcher this reader knows.
type launch struct {
	launcher string // "npx", "pnpm dlx", "uvx", "docker run", ...
	eco      string // "npm", "pypi", "oci"
	name     string
	spec     string // version, tag or range as written; "" when none
	token    string // the package or image argument as written
	tokenIdx int    // its index in the server's args
	pinned   bool
	rest     int // index of the server's own first argument
	// local: the launcher runs a local path; notScanned: a package the
	// scan cannot take (outside the registry, an alias); unknown: a
	// command line this reader cannot follow (goes to File.Unknown).
	local      bool
	notScanned string
	unknown    string
	mounts     []mount
	// pySpec is a PyPI package's specifier as pypi: targets write it:
	// "" for the latest release, ==VERSION, ===VERSION or a specifier set.
	pySpec string
	// bin is the command run from the package when the line names it
	// (npx -p PKG BIN, uvx --from PKG CMD).
	bin string
	// module is the module of python -m MODULE.
	module string
	// envNames are the variables an image's container is given (docker
	// run -e NAME, -e NAME=VALUE, --env), sorted, without repeats.
	envNames []string
}

// mount is a container volume source.
type mount struct {
	idx int
	src string
}

// commandBase is a command's program name: base name, lower case, without
// a Windows extension.
func commandBase(c string) string {
	b := strings.ToLower(path.Base(strings.ReplaceAll(strings.TrimSpace(c), `\`, "/")))
	for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

// readLaunch reads a stdio server's command line; nil when the command is
// not a launcher this reader knows (a local program or script).
func readLaunch(s *Server) *launch {
	if s.Transport != TransportStdio {
		return nil
	}
	raw := make([]string, len(s.args))
	for i, a := range s.args {
		raw[i] = a.raw
	}
	base := commandBase(s.Command)
	k := 0
	if base == "cmd" && len(raw) >= 2 && strings.EqualFold(raw[0], "/c") {
		base, k = commandBase(raw[1]), 2
	}
	at := func(i int) string {
		if i < len(raw) {
			return raw[i]
		}
		return ""
	}
	switch {
	case base == "npx" || base == "bunx" || base == "pnpx":
		return npmLaunch(raw, k, base)
	case base == "bun" && at(k) == "x":
		return npmLaunch(raw, k+1, "bun x")
	case base == "pnpm" && at(k) == "dlx":
		return npmLaunch(raw, k+1, "pnpm dlx")
	case base == "yarn" && at(k) == "dlx":
		return npmLaunch(raw, k+1, "yarn dlx")
	case base == "npm" && (at(k) == "exec" || at(k) == "x"):
		return npmLaunch(raw, k+1, "npm "+at(k))
	case base == "uvx":
		return pyLaunch(raw, k, "uvx")
	case base == "uv" && at(k) == "tool" && at(k+1) == "run":
		return pyLaunch(raw, k+2, "uv tool run")
	case base == "pipx" && at(k) == "run":
		return pyLaunch(raw, k+1, "pipx run")
	case (base == "docker" || base == "podman") && at(k) == "run":
		return imageLaunch(raw, k+1, base+" run")
	case pythonRe.MatchString(base):
		return moduleLaunch(raw, k, base)
	}
	return nil
}

// pythonRe is a Python interpreter's program name.
var pythonRe = regexp.MustCompile(`^(?:python[0-9.]*|pythonw|py)$`)

// moduleLaunch reads python [OPTIONS] -m MODULE: nil when the interpreter
// runs a script, a command string or an option it does not know (a local
// program).
func moduleLaunch(args []string, k int, base string) *launch {
	for i := k; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args):
			return &launch{launcher: base + " -m", module: args[i+1], tokenIdx: -1, rest: i + 2}
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			return &launch{launcher: base + " -m", module: a[2:], tokenIdx: -1, rest: i + 1}
		case a == "-X" || a == "-W":
			i++
		case len(a) == 2 && a[0] == '-' && strings.ContainsRune("bBdEhiIOPqsSuvVx3", rune(a[1])):
		default:
			return nil
		}
	}
	return nil
}

var (
	npmBoolFlags = set("-y", "--yes", "--no", "-q", "--quiet", "--silent", "-s", "--prefer-online",
		"--prefer-offline", "--offline", "--ignore-existing", "--no-install", "--bun", "--verbose")
	npmValueFlags = set("-p", "--package", "--registry", "--cache", "--userconfig", "--allow-build")
	npmShellFlags = set("-c", "--call", "--shell-mode")
	exactSemverRe = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// flagScan walks a launcher's flags up to its first positional argument.
// It returns the index of that argument (len(args) if none), the values
// of the value flags by flag, and a non-empty reason when a flag is not
// understood.
func flagScan(args []string, k int, launcher string, boolFlags, valueFlags, refuse map[string]bool) (int, map[string][]valueAt, string) {
	vals := map[string][]valueAt{}
	i := k
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return i + 1, vals, ""
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return i, vals, ""
		}
		name, val, inline := strings.Cut(a, "=")
		switch {
		case refuse[name]:
			return i, vals, launcher + " " + name + " runs a command string: which package it fetches is not read"
		case boolFlags[name] && !inline:
		case valueFlags[name] && inline:
			vals[name] = append(vals[name], valueAt{val, i})
		case valueFlags[name]:
			if i+1 >= len(args) {
				return i, vals, launcher + " flag " + name + " has no value"
			}
			vals[name] = append(vals[name], valueAt{args[i+1], i + 1})
			i++
		default:
			return i, vals, launcher + " flag " + a + " is not understood: the package it runs is not read"
		}
	}
	return i, vals, ""
}

type valueAt struct {
	v   string
	idx int
}

func npmLaunch(args []string, k int, launcher string) *launch {
	l := &launch{launcher: launcher, eco: "npm", tokenIdx: -1}
	i, vals, why := flagScan(args, k, launcher, npmBoolFlags, npmValueFlags, npmShellFlags)
	if why != "" {
		l.unknown = why
		return l
	}
	pkgs := append(vals["-p"], vals["--package"]...)
	switch {
	case len(pkgs) > 1:
		l.unknown = launcher + " names several packages (-p): not one target"
		return l
	case len(pkgs) == 1:
		l.token, l.tokenIdx = pkgs[0].v, pkgs[0].idx
		if i >= len(args) {
			l.unknown = launcher + " -p with no command to run"
			return l
		}
		l.bin, l.rest = args[i], i+1
		if strings.Contains(l.bin, "$") {
			l.unknown = "the command run from the package is a reference (" + l.bin + "): what runs is not in the file"
			return l
		}
	case i >= len(args):
		l.unknown = launcher + " with no package"
		return l
	default:
		l.token, l.tokenIdx, l.rest = args[i], i, i+1
	}
	tok := l.token
	if strings.Contains(tok, "$") {
		l.unknown = "the package argument is a reference (" + tok + "): which version runs is not in the file"
		return l
	}
	switch {
	case strings.HasPrefix(tok, ".") || strings.HasPrefix(tok, "/") || strings.HasPrefix(tok, "~") || drivePrefixRe.MatchString(tok):
		l.local = true
		return l
	case hasAnyPrefix(tok, "file:", "git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:", "http:", "https:") ||
		(!strings.HasPrefix(tok, "@") && strings.Contains(tok, "/")):
		l.notScanned = "a package from outside the npm registry (" + tok + "): not resolved"
		return l
	}
	name, spec := npm.Ecosystem{}.Unpin(tok)
	l.name, l.spec = name, spec
	if strings.HasPrefix(spec, "npm:") {
		l.notScanned = "an npm alias (" + tok + "): the package it names is not resolved"
		return l
	}
	l.pinned = exactSemverRe.MatchString(spec)
	return l
}

func hasAnyPrefix(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

var (
	uvBoolFlags = set("-q", "--quiet", "-v", "--verbose", "--offline", "--no-cache", "-n", "--refresh",
		"--isolated", "--no-progress", "--native-tls", "--no-config", "--no-python-downloads",
		"--system-site-packages", "--no-python-version-warning")
	uvValueFlags = set("--from", "--with", "-w", "--with-editable", "--with-requirements", "--python", "-p",
		"--index", "--default-index", "--index-url", "-i", "--extra-index-url", "--prerelease",
		"--python-preference", "--directory", "--project", "--cache-dir", "--config-file",
		"--refresh-package", "--reinstall-package", "--upgrade-package", "--constraints", "-c",
		"--overrides", "--build-constraints", "-b", "--spec", "--pip-args", "--backend")
	pyNameRe = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(\[[A-Za-z0-9._,\s-]*\])?(.*)$`)
	// pyIndexFlags name another index, pyMoreFlags more packages or other
	// dependency pins than the one package a scan installs.
	pyIndexFlags = set("--index", "--default-index", "--index-url", "-i", "--extra-index-url", "--pip-args", "--config-file")
	pyMoreFlags  = set("--with", "-w", "--with-editable", "--with-requirements", "--constraints", "-c", "--overrides", "--build-constraints", "-b")
)

// pySpecSet checks a PEP 440 specifier set as pypi: targets and the
// scan's resolver read it (pkgspec), and returns it with its clauses
// trimmed ("" when it is not one).
func pySpecSet(spec string) string {
	set, _, ok := pkgspec.TrimSpecifierSet(spec)
	if !ok {
		return ""
	}
	if _, err := pkgspec.ParseVersionSpec(set); err != nil {
		return ""
	}
	return set
}

// pyVersion reports whether v, as written (no white space around it), is
// one PEP 440 version.
func pyVersion(v string) bool {
	if v != strings.TrimSpace(v) {
		return false
	}
	_, err := pkgspec.ParseVersion(v)
	return err == nil
}

// pyLaunch reads uvx / uv tool run (--from SPEC) and pipx run (--spec
// SPEC): the package is the option's value when given (and the command
// argument the bin), else the command argument; pinned by ==VERSION (or
// uvx's @VERSION).
func pyLaunch(args []string, k int, launcher string) *launch {
	l := &launch{launcher: launcher, eco: "pypi", tokenIdx: -1}
	i, vals, why := flagScan(args, k, launcher, uvBoolFlags, uvValueFlags, nil)
	if why != "" {
		l.unknown = why
		return l
	}
	if i >= len(args) {
		l.unknown = launcher + " with no package"
		return l
	}
	for _, f := range slices.Sorted(maps.Keys(vals)) {
		switch v := vals[f][0].v; {
		case pyIndexFlags[f]:
			l.notScanned = "a package from another index (" + launcher + " " + f + " " + v + "): scan it with verifymcp --index-url"
		case pyMoreFlags[f]:
			l.notScanned = launcher + " " + f + " " + v + " installs more than the one package a scan installs: not one target"
		}
	}
	from := append(vals["--from"], vals["--spec"]...)
	switch {
	case len(from) > 1:
		l.unknown = launcher + " names several --from packages: not one target"
		return l
	case len(from) == 1:
		l.token, l.tokenIdx, l.bin = from[0].v, from[0].idx, args[i]
		if strings.Contains(l.bin, "$") {
			l.unknown = "the command run from the package is a reference (" + l.bin + "): what runs is not in the file"
			return l
		}
		if pythonRe.MatchString(commandBase(l.bin)) {
			// uvx --from PKG python -m MODULE: the package is named, but
			// what runs is a module, and the scan starts a console script.
			mod := ""
			if m := moduleLaunch(args, i+1, ""); m != nil {
				mod = " -m " + m.module
			}
			l.notScanned = launcher + " runs " + l.bin + mod + " from " + l.token + ": the scan starts one of the package's console scripts, and running an interpreter or a module is not supported"
		}
	default:
		l.token, l.tokenIdx = args[i], i
	}
	l.rest = i + 1
	tok := l.token
	if strings.Contains(tok, "$") {
		l.unknown = "the package argument is a reference (" + tok + "): which version runs is not in the file"
		return l
	}
	if hasAnyPrefix(tok, ".", "/", "~") {
		l.local = true
		return l
	}
	m := pyNameRe.FindStringSubmatch(tok)
	if m == nil || strings.Contains(tok, "://") || strings.HasPrefix(tok, "git+") {
		l.notScanned = "a package from outside PyPI (" + tok + "): not resolved"
		return l
	}
	l.name = m[1]
	rest := strings.TrimSpace(m[3])
	switch {
	case rest == "":
	case strings.HasPrefix(rest, "==="):
		l.spec, l.pinned = strings.TrimPrefix(rest, "==="), true
		l.pySpec = "===" + strings.TrimSpace(l.spec)
	case strings.HasPrefix(rest, "=="):
		l.spec = rest
		v := strings.TrimSpace(strings.TrimPrefix(rest, "=="))
		if v != "" && !strings.ContainsAny(v, "*,;<>=!~ ") {
			// An exact version: Spec is the version itself.
			l.spec, l.pinned = v, true
		}
		l.pySpec = pySpecSet(rest)
	case strings.HasPrefix(rest, "@") && launcher != "pipx run":
		v := rest[1:]
		l.spec = v
		l.pinned = v != "latest" && pyVersion(v)
		if l.pinned {
			l.pySpec = "==" + v
		}
	default:
		l.spec = rest
		l.pySpec = pySpecSet(rest)
	}
	switch {
	case l.notScanned != "":
	case m[2] != "":
		l.notScanned = "a Python requirement with extras (" + tok + "): the scan installs the package alone"
	case strings.Contains(rest, ";"):
		l.notScanned = "a Python requirement with environment markers (" + tok + "): the scan installs the package alone"
	case l.pinned && !pyVersion(strings.TrimSpace(l.spec)) && !strings.HasPrefix(l.pySpec, "==="):
		l.notScanned = "not a PEP 440 version (" + tok + "): not resolved"
	case l.spec == "latest" && strings.HasPrefix(rest, "@"):
	case rest != "" && l.pySpec == "":
		l.notScanned = "not a PEP 440 version or specifier set (" + tok + "): not resolved"
	}
	return l
}

var (
	dockerBoolFlags = set("-i", "-t", "-d", "-it", "-ti", "-itd", "-dit", "--rm", "--init", "--privileged",
		"--interactive", "--tty", "--detach", "--read-only", "-P", "--publish-all", "--no-healthcheck",
		"-q", "--quiet", "--oom-kill-disable", "--sig-proxy", "--replace")
	dockerValueFlags = set("-e", "--env", "--env-file", "-v", "--volume", "-p", "--publish", "-w", "--workdir",
		"-u", "--user", "--name", "--network", "--net", "--mount", "--entrypoint", "-l", "--label",
		"--label-file", "-h", "--hostname", "-m", "--memory", "--memory-swap", "--cpus", "--cpu-shares", "-c",
		"--cpuset-cpus", "--add-host", "--cap-add", "--cap-drop", "--device", "--dns", "--platform", "--pull",
		"--restart", "--security-opt", "--tmpfs", "--ulimit", "--log-driver", "--log-opt", "--shm-size",
		"--pid", "--ipc", "--runtime", "--gpus", "--cidfile", "--stop-signal", "--stop-timeout", "--group-add",
		"--expose", "--link", "--volumes-from", "--cgroupns", "--uts", "--userns", "-a", "--attach",
		"--health-cmd", "--pids-limit", "--userns-mode")
	digestRe = regexp.MustCompile(`@sha256:[a-f0-9]{64}$`)
)

// imageLaunch reads docker/podman run: the image is the first argument
// after the flags; pinned only by an @sha256: digest (a tag can be moved).
func imageLaunch(args []string, k int, launcher string) *launch {
	l := &launch{launcher: launcher, eco: "oci", tokenIdx: -1}
	i, vals, why := flagScan(args, k, launcher, dockerBoolFlags, dockerValueFlags, nil)
	for _, f := range []string{"-v", "--volume"} {
		for _, v := range vals[f] {
			src, _, _ := strings.Cut(v.v, ":")
			if drivePrefixRe.MatchString(v.v) {
				// C:\x:/data: the drive letter's colon is not the separator.
				rest := v.v[2:]
				j := strings.IndexByte(rest, ':')
				src = v.v
				if j >= 0 {
					src = v.v[:2+j]
				}
			}
			l.mounts = append(l.mounts, mount{v.idx, src})
		}
	}
	l.envNames = []string{}
	for _, f := range []string{"-e", "--env"} {
		for _, v := range vals[f] {
			if name, _, _ := strings.Cut(v.v, "="); name != "" {
				l.envNames = append(l.envNames, name)
			}
		}
	}
	slices.Sort(l.envNames)
	l.envNames = slices.Compact(l.envNames)
	for _, v := range vals["--mount"] {
		for _, kv := range strings.Split(v.v, ",") {
			if key, val, ok := strings.Cut(kv, "="); ok && (key == "source" || key == "src") {
				l.mounts = append(l.mounts, mount{v.idx, val})
			}
		}
	}
	if why != "" {
		l.unknown = why
		return l
	}
	if i >= len(args) {
		l.unknown = launcher + " with no image"
		return l
	}
	l.token, l.tokenIdx, l.rest = args[i], i, i+1
	img := l.token
	if strings.Contains(img, "$") {
		l.unknown = "the image is a reference (" + img + "): which image runs is not in the file"
		return l
	}
	if m := digestRe.FindString(img); m != "" {
		l.name, l.spec, l.pinned = strings.TrimSuffix(img, m), strings.TrimPrefix(m, "@"), true
		return l
	}
	// A tag is after the last colon that follows the last slash (a
	// registry host may have a port).
	l.name = img
	slash := strings.LastIndexByte(img, '/')
	if c := strings.LastIndexByte(img, ':'); c > slash {
		l.name, l.spec = img[:c], img[c+1:]
	}
	return l
}

// IsPackage says whether the target runs the package ref names: npm:NAME
// or pypi:NAME (a bare NAME is npm's) at any version, or at the version
// the file pins with NAME@VERSION (npm) or NAME==VERSION (pypi). PyPI
// names are compared as PEP 503 normalises them.
func (t *Target) IsPackage(ref string) bool {
	eco, rest := ecosystem.MustOf(""), ref
	if p, r, ok := strings.Cut(ref, ":"); ok && p != "" {
		if e, known := ecosystem.Of(p); known {
			eco, rest = e, r
		}
	}
	if t.Name == "" || t.Ecosystem != eco.Name() {
		return false
	}
	name, version := eco.Unpin(rest)
	if eco.Normalize(strings.TrimSpace(name)) != eco.Normalize(t.Name) {
		return false
	}
	return version == "" || (t.Pinned && t.Spec == strings.TrimSpace(version))
}

// bundleTarget is t for an installed bundle: mcpb:DIR, named and pinned
// by its manifest (an installed bundle is one exact release), or not
// scanned when its manifest cannot be read.
func bundleTarget(t Target, b *bundleRef) Target {
	switch {
	case b == nil:
		t.NotScanned = NotScannedBundle
	case b.why != "":
		t.NotScanned = b.why
	default:
		t.Target, t.Ecosystem, t.Name, t.Spec, t.Pinned = "mcpb:"+b.dir, "mcpb", b.name, b.version, true
	}
	return t
}

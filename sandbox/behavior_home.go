package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/verifymcp/verifymcp/evidence"
)

// seed copies the home directory (canary files and a lived-in profile) into
// the created container's home volume, then waits for the observer, which
// the container joins when it starts.
func (w *watch) seed(ctx context.Context, id string) error {
	if err := w.seedHome(ctx, id); err != nil {
		return err
	}
	return w.obs.waitReady()
}

func (w *watch) seedHome(ctx context.Context, id string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	mod := time.Now().Add(-72 * time.Hour)
	files := w.seedFiles()
	for _, f := range files {
		for d := path.Dir(f.path); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var dl []string
	for d := range dirs {
		dl = append(dl, d)
	}
	sort.Strings(dl)
	for _, d := range dl {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o700, Uid: 65534, Gid: 65534, ModTime: mod, Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.path, Mode: f.mode, Size: int64(len(f.data)), Uid: 65534, Gid: 65534, ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := w.r.cli.CopyToContainer(ctx, id, homeDir, &buf, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("seed home: %w", err)
	}
	return nil
}

// maxFileEvents bounds the home changes listed per phase; sensitive files
// come first, and the rest are counted (Watch.Dropped["file"]).
const maxFileEvents = 500

// diffHome compares the stopped container's home with the seed. The home
// is bounded (bounds.go), so reading it is too.
func (w *watch) diffHome(ctx context.Context, id, phase string) ([]evidence.FileEvent, int, error) {
	rc, _, err := w.r.cli.CopyFromContainer(ctx, id, homeDir+"/.")
	if err != nil {
		return nil, 0, fmt.Errorf("read home: %w", err)
	}
	defer rc.Close()
	seed := map[string][]byte{}
	for _, f := range w.seedFiles() {
		seed[f.path] = f.data
	}
	seen := map[string]bool{}
	var out []evidence.FileEvent
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			kept, dropped := keepFileEvents(out)
			return kept, dropped, fmt.Errorf("read home: %w", err)
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		// The archive is rooted at the home directory itself (".").
		if i := strings.IndexByte(name, '/'); i >= 0 && (name[:i] == "." || name[:i] == "sandbox") {
			name = name[i+1:]
		}
		if name == "" || name == "." || name == "sandbox" || h.Typeflag == tar.TypeDir {
			continue
		}
		seen[name] = true
		orig, wasSeeded := seed[name]
		var data []byte
		if wasSeeded {
			data, _ = io.ReadAll(io.LimitReader(tr, int64(len(orig))+1))
		}
		switch {
		case !wasSeeded:
			out = append(out, fileEvent(phase, name, "created", h.ModTime))
		case !bytes.Equal(orig, data) || h.Typeflag != tar.TypeReg:
			out = append(out, fileEvent(phase, name, "modified", h.ModTime))
		}
	}
	for name := range seed {
		if !seen[name] {
			out = append(out, fileEvent(phase, name, "deleted", time.Time{}))
		}
	}
	kept, dropped := keepFileEvents(out)
	return kept, dropped, nil
}

// keepFileEvents keeps at most maxFileEvents, sensitive files first, in
// path order, and says how many it left out.
func keepFileEvents(evs []evidence.FileEvent) ([]evidence.FileEvent, int) {
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Sensitive != evs[j].Sensitive {
			return evs[i].Sensitive
		}
		return evs[i].Path < evs[j].Path
	})
	dropped := 0
	if len(evs) > maxFileEvents {
		dropped = len(evs) - maxFileEvents
		evs = evs[:maxFileEvents]
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Path < evs[j].Path })
	return evs, dropped
}

func fileEvent(phase, rel, op string, _ time.Time) evidence.FileEvent {
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

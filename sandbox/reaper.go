package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
)

// Leftover is an engine object a scan created and did not remove.
type Leftover struct {
	Kind  string // container, network or volume
	Name  string
	RunID string
	Owner string
	// Live is true when the owning process still runs on this host: the
	// object belongs to a scan in progress and is not a leftover to reap.
	Live bool
}

// Leftovers lists every object labelled by a scan, marking those whose
// owner is still alive.
func Leftovers(ctx context.Context, cli client.APIClient) ([]Leftover, error) {
	var out []Leftover
	f := filters.NewArgs(filters.Arg("label", LabelRun))
	add := func(kind, name string, labels map[string]string) {
		out = append(out, Leftover{Kind: kind, Name: name, RunID: labels[LabelRun], Owner: labels[LabelOwner], Live: ownerAlive(labels[LabelOwner])})
	}
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs {
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		add("container", name, c.Labels)
	}
	ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	for _, n := range ns {
		add("network", n.Name, n.Labels)
	}
	vs, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	for _, v := range vs.Volumes {
		add("volume", v.Name, v.Labels)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Reap removes every labelled object whose owning process is gone. It runs
// at the start of every scan, so a crashed run never leaves anything behind
// for long, and it never touches a concurrent scan's objects.
func Reap(ctx context.Context, cli client.APIClient) (int, error) {
	return prune(ctx, cli, false)
}

// Prune removes leftovers; with all set it also removes objects of scans
// that look alive (use only when no scan is running).
func Prune(ctx context.Context, cli client.APIClient, all bool) (int, error) {
	return prune(ctx, cli, all)
}

func prune(ctx context.Context, cli client.APIClient, all bool) (int, error) {
	left, err := Leftovers(ctx, cli)
	if err != nil {
		return 0, err
	}
	runs := map[string]bool{}
	for _, l := range left {
		if all || !l.Live {
			runs[l.RunID] = true
		}
	}
	var errs []error
	n := 0
	for id := range runs {
		before := 0
		for _, l := range left {
			if l.RunID == id {
				before++
			}
		}
		if err := removeLabelled(ctx, cli, LabelRun+"="+id, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		n += before
	}
	return n, errors.Join(errs...)
}

// ownerAlive reports whether "host/pid" names a running process on this
// host. Objects from another host are treated as alive (not ours to judge),
// and so are objects without an owner label only when pruning with all.
func ownerAlive(owner string) bool {
	host, pidStr, ok := strings.Cut(owner, "/")
	if !ok {
		return false
	}
	me, _ := os.Hostname()
	if host != me {
		return true
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

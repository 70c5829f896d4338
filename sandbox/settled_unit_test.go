package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// slowCreate is an engine whose container create takes 100 ms and does
// not stop when its client goes away, as dockerd's does not.
type slowCreate struct {
	client.APIClient
	made chan string
}

func (e *slowCreate) ContainerCreate(ctx context.Context, _ *container.Config, _ *container.HostConfig, _ *network.NetworkingConfig, _ *ocispec.Platform, name string) (container.CreateResponse, error) {
	select {
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
		// The client gave up; the engine makes it all the same.
		e.made <- name
		return container.CreateResponse{}, ctx.Err()
	}
	e.made <- name
	return container.CreateResponse{ID: "c-" + name}, nil
}

// TestSettledCreate: a create whose context ends mid-call is let finish
// before the run's code hears of the end, so that the run's cleanup, which
// comes after, finds the object; without it the call returns at once and
// the object appears after.
func TestSettledCreate(t *testing.T) {
	e := &slowCreate{made: make(chan string, 1)}
	r := newRun(e, "20261207t000000z-00000000", nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := r.cli.ContainerCreate(ctx, &container.Config{}, nil, nil, nil, r.name("egress"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the context's end", err)
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Errorf("the create returned after %s, before the engine had made the container", d)
	}
	select {
	case <-e.made:
	default:
		t.Error("the create returned before the engine made the container")
	}
}

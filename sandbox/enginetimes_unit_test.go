package sandbox

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func TestEngineOp(t *testing.T) {
	for in, want := range map[string]string{
		"POST /v1.41/containers/0123abcd/start": "POST /containers/{id}/start",
		"POST /v1.47/containers/create":         "POST /containers/create",
		"GET /v1.41/containers/json":            "GET /containers/json",
		"DELETE /v1.41/volumes/verifymcp-x-tmp": "DELETE /volumes/{id}",
		"GET /_ping":                            "GET /_ping",
		"HEAD /_ping":                           "HEAD /_ping",
		"not a request":                         "not a request",
	} {
		if got := engineOp(in); got != want {
			t.Errorf("engineOp(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEngineTimesSummary(t *testing.T) {
	et := &engineTimes{ops: map[string][]time.Duration{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(et))
	tr := tp.Tracer("test")
	start := time.Now()
	for i, d := range []time.Duration{10, 30, 20} {
		_, sp := tr.Start(context.Background(), "POST /v1.41/containers/c"+string(rune('0'+i))+"/start", trace.WithTimestamp(start))
		sp.End(trace.WithTimestamp(start.Add(d * time.Millisecond)))
	}
	_, sp := tr.Start(context.Background(), "POST /v1.41/volumes/create", trace.WithTimestamp(start))
	sp.End(trace.WithTimestamp(start.Add(time.Millisecond)))
	got := et.summary()
	if len(got) != 2 {
		t.Fatalf("summary %+v", got)
	}
	if s := got[0]; s.Op != "POST /containers/{id}/start" || s.Calls != 3 || s.TotalMS != 60 || s.MedianMS != 20 || s.MaxMS != 30 {
		t.Errorf("container starts: %+v", s)
	}
	if s := got[1]; s.Op != "POST /volumes/create" || s.Calls != 1 || s.TotalMS != 1 {
		t.Errorf("volume creation: %+v", s)
	}
}

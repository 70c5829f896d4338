package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/verifymcp/verifymcp/internal/atomicfile"
)

// Engine call times, for the benchmarks: with VERIFYMCP_ENGINE_TIMES set
// to a file, every engine API call this process makes is timed, as the
// client saw it (request sent to answer read), and the process writes a
// summary by operation to that file when it ends (WriteEngineTimes). The
// docker client times its calls through OpenTelemetry (one span per
// request, named "METHOD PATH"); the SDK's span processor hands each ended
// span to engineTimes. Nothing is recorded when the variable is unset.

// EngineTimesEnv names the variable.
const EngineTimesEnv = "VERIFYMCP_ENGINE_TIMES"

// EngineOp is one engine operation's calls: how many, and how long they
// took, in milliseconds.
type EngineOp struct {
	Op       string  `json:"op"`
	Calls    int     `json:"calls"`
	TotalMS  float64 `json:"total_ms"`
	MedianMS float64 `json:"median_ms"`
	P90MS    float64 `json:"p90_ms"`
	MaxMS    float64 `json:"max_ms"`
}

type engineTimes struct {
	mu  sync.Mutex
	ops map[string][]time.Duration
}

var (
	timesOnce sync.Once
	times     *engineTimes
	timesTP   *sdktrace.TracerProvider
)

// engineTimesOpt is the client option that times calls, when the variable
// is set.
func engineTimesOpt() []client.Opt {
	timesOnce.Do(func() {
		if os.Getenv(EngineTimesEnv) == "" {
			return
		}
		times = &engineTimes{ops: map[string][]time.Duration{}}
		timesTP = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(times))
	})
	if timesTP == nil {
		return nil
	}
	return []client.Opt{client.WithTraceProvider(timesTP)}
}

func (t *engineTimes) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (t *engineTimes) Shutdown(context.Context) error                  { return nil }
func (t *engineTimes) ForceFlush(context.Context) error                { return nil }

func (t *engineTimes) OnEnd(s sdktrace.ReadOnlySpan) {
	op := engineOp(s.Name())
	t.mu.Lock()
	t.ops[op] = append(t.ops[op], s.EndTime().Sub(s.StartTime()))
	t.mu.Unlock()
}

// engineOp names a call by its method and path, without the API version
// and with object names and IDs as {id}: "POST /containers/{id}/start".
func engineOp(name string) string {
	method, p, ok := strings.Cut(name, " ")
	if !ok || !strings.HasPrefix(p, "/") {
		return name
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) > 0 && strings.HasPrefix(parts[0], "v1.") {
		parts = parts[1:]
	}
	if len(parts) > 1 {
		switch parts[1] {
		case "create", "json", "prune":
		default:
			parts[1] = "{id}"
		}
	}
	return method + " /" + strings.Join(parts, "/")
}

// EngineTimes returns the calls timed so far, by operation, the most time
// first; nil when timing is off.
func EngineTimes() []EngineOp {
	if times == nil {
		return nil
	}
	return times.summary()
}

func (t *engineTimes) summary() []EngineOp {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]EngineOp, 0, len(t.ops))
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for op, ds := range t.ops {
		s := slices.Clone(ds)
		slices.Sort(s)
		var total time.Duration
		for _, d := range s {
			total += d
		}
		out = append(out, EngineOp{Op: op, Calls: len(s), TotalMS: ms(total), MedianMS: ms(s[len(s)/2]),
			P90MS: ms(s[min(len(s)-1, len(s)*9/10)]), MaxMS: ms(s[len(s)-1])})
	}
	slices.SortFunc(out, func(a, b EngineOp) int {
		if a.TotalMS != b.TotalMS {
			if a.TotalMS > b.TotalMS {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Op, b.Op)
	})
	return out
}

// WriteEngineTimes writes EngineTimes to the file VERIFYMCP_ENGINE_TIMES
// names, when it is set.
func WriteEngineTimes() error {
	path := os.Getenv(EngineTimesEnv)
	if path == "" || times == nil {
		return nil
	}
	b, err := json.MarshalIndent(EngineTimes(), "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("%s: %w", EngineTimesEnv, err)
	}
	return nil
}

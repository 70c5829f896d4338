//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/sandbox/sink"
	"github.com/verifymcp/verifymcp/sandbox/tracer"
)

// Observe is the program of the observer container (`verifymcp sandbox
// observe`). The observer starts first, with no network and a PID namespace
// of its own, and the watched containers join both of its namespaces; so it
// starts while the scan does other work, and one observer watches every
// phase. It runs the network sink (isolating the namespace: loopback only,
// with a default route into the redirect rules) and the exec tracer, and
// writes their events on out, one line each, prefixed with "sink " or
// "trace ". Control lines on in: "phase NAME" and "mark LABEL" go to the
// sink; "attach" makes the tracer attach to the processes that joined since,
// after which the tracer writes a ready line; "usage" writes one line,
// prefixed "usage ", with the use of every bounded place of the scan the
// observer holds mounted under heldDir (see bounds.go); "digest" writes one
// line, prefixed "digest ", with the digest of the held tree's venv and the
// paths changed since the last digest (see treedigest.go); "files" writes
// one line, prefixed "files ", with the files of the run phase's home and
// /tmp changed since the last "files" (see filewatch.go); "seed PART
// JSON" writes a home's seed into the held home PART and "home PART JSON"
// compares that home with its seed, each answered by one line prefixed
// "seed " or "home " (see homeplace.go). EOF on in stops
// both, after they flushed their events. The sink writes the run's CA
// certificate to caFile (the run's trust store, see trust.go) before it
// is ready.
func Observe(ctx context.Context, in io.Reader, out io.Writer, caFile string) error {
	// The scan stops the observer only after every watched container
	// stopped, so whatever was sent is queued already: a short drain will do.
	cfg := sink.Config{Advertise: sink.IsolatedAddr, NamePool: sink.IsolatedPool, DrainGrace: 50 * time.Millisecond, CAFile: caFile}
	if err := sink.Isolate(); err != nil {
		return err
	}
	if err := sink.Install(ctx, cfg); err != nil {
		return err
	}
	shared := &lockedWriter{w: out}
	sinkOut := &prefixWriter{prefix: "sink ", w: shared}
	traceOut := &prefixWriter{prefix: "trace ", w: shared}
	usageOut := &prefixWriter{prefix: "usage ", w: shared}
	digestOut := &prefixWriter{prefix: "digest ", w: shared}
	filesOut := &prefixWriter{prefix: "files ", w: shared}
	seedOut := &prefixWriter{prefix: "seed ", w: shared}
	homeOut := &prefixWriter{prefix: "home ", w: shared}
	var digester treeDigester
	watcher := fileWatcher{stamp: stampOf}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sinkCtl, sinkCtlW := io.Pipe()
	attach := make(chan chan<- int)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := sink.Serve(ctx, cfg, sinkCtl, sinkOut); err != nil {
			errs <- fmt.Errorf("sink: %w", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := tracer.Run(ctx, traceOut, tracer.Options{Attach: attach}); err != nil {
			errs <- fmt.Errorf("tracer: %w", err)
		}
	}()

	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxControlLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "attach":
			reply := make(chan int, 1)
			select {
			case attach <- reply:
				<-reply
			case <-ctx.Done():
			}
		case line == "usage":
			b, _ := json.Marshal(heldUsage(heldDir))
			_, _ = usageOut.Write(append(b, '\n'))
		case line == "digest":
			b, _ := json.Marshal(digester.digest(digestDir))
			_, _ = digestOut.Write(append(b, '\n'))
		case line == "files":
			b, _ := json.Marshal(watcher.look())
			_, _ = filesOut.Write(append(b, '\n'))
		case strings.HasPrefix(line, "seed "):
			answerJSON(seedOut, seedHome(strings.TrimPrefix(line, "seed ")))
		case strings.HasPrefix(line, "home "):
			answerJSON(homeOut, lookHome(strings.TrimPrefix(line, "home ")))
		case strings.HasPrefix(line, "phase "), strings.HasPrefix(line, "mark "):
			if _, err := io.WriteString(sinkCtlW, line+"\n"); err != nil {
				errs <- fmt.Errorf("sink control: %w", err)
			}
		}
	}
	// EOF: the sink flushes and returns; then the tracer detaches.
	sinkCtlW.Close()
	sinkDone := make(chan struct{})
	go func() { wg.Wait(); close(sinkDone) }()
	cancel()
	<-sinkDone
	traceOut.Flush()
	sinkOut.Flush()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// maxControlLine bounds one control line (a home's seed is a few KiB).
const maxControlLine = 4 << 20

// homeRequestOf reads "PART JSON", the argument of "seed" and "home": the
// held home's directory and the request.
func homeRequestOf[T any](arg string) (string, T, error) {
	var req T
	part, body, _ := strings.Cut(arg, " ")
	dir, err := homePart(part)
	if err == nil {
		err = json.Unmarshal([]byte(body), &req)
	}
	return dir, req, err
}

// seedHome serves "seed PART JSON".
func seedHome(arg string) homeAnswer {
	dir, s, err := homeRequestOf[homeSeed](arg)
	if err == nil {
		err = writeSeed(dir, s)
	}
	if err != nil {
		return homeAnswer{Error: "seed: " + err.Error()}
	}
	return homeAnswer{}
}

// lookHome serves "home PART JSON".
func lookHome(arg string) homeAnswer {
	dir, r, err := homeRequestOf[homeRequest](arg)
	if err != nil {
		return homeAnswer{Error: "home: " + err.Error()}
	}
	changes, err := compareHome(dir, r.Seed)
	a := homeAnswer{}
	a.Changes, a.More = keepHomeChanges(changes)
	if err != nil {
		a.Error = err.Error()
	}
	return a
}

func answerJSON(w *prefixWriter, v any) {
	b, _ := json.Marshal(v)
	_, _ = w.Write(append(b, '\n'))
}

// lockedWriter serialises whole writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter writes each complete line it is given, prefixed, in one
// write to w, so that lines of two sources never interleave.
type prefixWriter struct {
	mu     sync.Mutex
	prefix string
	w      io.Writer
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		line := append([]byte(p.prefix), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
	}
	return len(b), nil
}

// Flush writes a last line without its newline, if any.
func (p *prefixWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		_, _ = p.w.Write(append(append([]byte(p.prefix), p.buf...), '\n'))
		p.buf = nil
	}
}

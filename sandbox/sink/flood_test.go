//go:build linux

package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// countingWriter counts event lines by type without keeping them, so that
// the memory measured is the sink's.
type countingWriter struct {
	udp, tcp, other atomic.Int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	switch {
	case bytes.HasPrefix(p, []byte(`{"type":"udp"`)):
		w.udp.Add(1)
	case bytes.HasPrefix(p, []byte(`{"type":"tcp"`)):
		w.tcp.Add(1)
	default:
		w.other.Add(1)
	}
	return len(p), nil
}

// heapSampler records the largest HeapInuse seen while it runs.
type heapSampler struct {
	max  atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > s.max.Load() {
				s.max.Store(ms.HeapInuse)
			}
			select {
			case <-s.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return s
}

func (s *heapSampler) Stop() uint64 {
	close(s.stop)
	<-s.done
	return s.max.Load()
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestFloodMemoryBounded sends 10,000 datagrams of 8 KiB (80 MiB in all)
// and 2,000 connections of 32 KiB each (64 MiB) and checks that the heap
// never grows by anything like that: the sink must not queue what it has
// not yet written out. Figures are printed for the record.
func TestFloodMemoryBounded(t *testing.T) {
	const (
		datagrams = 10000
		dgramSize = 8 << 10
		conns     = 2000
		connSize  = 32 << 10
		// Far below the 80 MiB and 64 MiB sent, far above what bounded
		// buffers need (a 64 KiB read buffer, 256 connections' captures).
		maxGrowth = 40 << 20
	)
	var out countingWriter
	cfg := Config{
		TCPPort: freePort(t, "tcp"), UDPPort: freePort(t, "udp"), Advertise: testAdvertise,
		origDst: fixedDst("198.51.100.9:9999"),
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	base := heapInuse()
	go func() { done <- Serve(context.Background(), cfg, pr, &out) }()
	for out.other.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}

	t.Run("udp", func(t *testing.T) {
		sampler := sampleHeap()
		payload := bytes.Repeat([]byte("u"), dgramSize)
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Go(func() {
				c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: cfg.UDPPort})
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				for i := 0; i < datagrams/4; i++ {
					_, _ = c.Write(payload)
				}
			})
		}
		wg.Wait()
		settle(func() int64 { return out.udp.Load() })
		peak := sampler.Stop()
		got := out.udp.Load()
		t.Logf("udp flood: %d datagrams of %d bytes sent, %d recorded (the rest dropped by the kernel); heap in use before %.1f MiB, peak %.1f MiB, after GC %.1f MiB",
			datagrams, dgramSize, got, mib(base), mib(peak), mib(heapInuse()))
		if got == 0 {
			t.Errorf("no datagram recorded")
		}
		if peak > base+maxGrowth {
			t.Errorf("heap peaked at %.1f MiB, %.1f MiB over the start; want under %.0f MiB growth", mib(peak), mib(peak-base), mib(maxGrowth))
		}
		assertDNSAnswers(t, cfg)
	})

	t.Run("tcp", func(t *testing.T) {
		sampler := sampleHeap()
		payload := bytes.Repeat([]byte("t"), connSize)
		sem := make(chan struct{}, 64)
		var wg sync.WaitGroup
		for i := 0; i < conns; i++ {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				c, err := net.DialTCP("tcp4", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: cfg.TCPPort})
				if err != nil {
					return
				}
				defer c.Close()
				_, _ = c.Write(payload)
				_ = c.CloseWrite()
				_, _ = io.Copy(io.Discard, c)
			})
		}
		wg.Wait()
		settle(func() int64 { return out.tcp.Load() })
		peak := sampler.Stop()
		got := out.tcp.Load()
		t.Logf("tcp flood: %d connections of %d bytes, %d recorded; heap in use before %.1f MiB, peak %.1f MiB, after GC %.1f MiB",
			conns, connSize, got, mib(base), mib(peak), mib(heapInuse()))
		if got != conns {
			t.Errorf("recorded %d connections, want %d", got, conns)
		}
		if peak > base+maxGrowth {
			t.Errorf("heap peaked at %.1f MiB, %.1f MiB over the start; want under %.0f MiB growth", mib(peak), mib(peak-base), mib(maxGrowth))
		}
	})

	// The worst case the cap allows: every slot holds a connection that
	// has sent a full capture's worth and keeps the sink reading.
	t.Run("tcp_held_at_cap", func(t *testing.T) {
		sampler := sampleHeap()
		before := out.tcp.Load()
		head := fmt.Sprintf("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n", 1<<30)
		payload := append([]byte(head), bytes.Repeat([]byte("b"), DefaultMaxCapture)...)
		var held []*net.TCPConn
		for i := 0; i < DefaultMaxConns; i++ {
			c, err := net.DialTCP("tcp4", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: cfg.TCPPort})
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
			if _, err := c.Write(payload); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(500 * time.Millisecond)
		peak := sampler.Stop()
		for _, c := range held {
			c.Close()
		}
		settle(func() int64 { return out.tcp.Load() })
		t.Logf("%d connections held with %d bytes each: heap in use before %.1f MiB, peak %.1f MiB",
			DefaultMaxConns, len(payload), mib(base), mib(peak))
		if got := out.tcp.Load() - before; got != DefaultMaxConns {
			t.Errorf("recorded %d held connections, want %d", got, DefaultMaxConns)
		}
		if peak > base+maxGrowth {
			t.Errorf("heap peaked at %.1f MiB, %.1f MiB over the start; want under %.0f MiB growth", mib(peak), mib(peak-base), mib(maxGrowth))
		}
	})

	pw.Close()
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// settle waits until count stops changing for 200ms.
func settle(count func() int64) {
	last := int64(-1)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		n := count()
		if n == last {
			return
		}
		last = n
	}
}

func assertDNSAnswers(t *testing.T, cfg Config) {
	t.Helper()
	q := new(dns.Msg).SetQuestion("after-flood.example.", dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 3 * time.Second}).Exchange(q, fmt.Sprintf("127.0.0.1:%d", cfg.UDPPort))
	if err != nil || len(r.Answer) != 1 {
		t.Errorf("after the flood, DNS exchange = %v, %v; want one answer", r, err)
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

//go:build linux

package tracer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The tests run the tracer in a child process (this test binary, re-run
// in a helper mode), as the sandbox does: a tracer must not be the parent
// of its tracees, or it would reap their exit status.
const helperEnv = "VERIFYMCP_TRACER_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "tracer":
		os.Exit(tracerHelper())
	case "spawner":
		os.Exit(spawnerHelper())
	case "attacher":
		os.Exit(attacherHelper())
	}
	os.Exit(m.Run())
}

// tracerHelper traces the PIDs in VERIFYMCP_TRACER_TEST_ROOTS (all of its
// PID namespace if empty) until SIGTERM.
func tracerHelper() int {
	var roots []int
	for _, f := range strings.Fields(os.Getenv("VERIFYMCP_TRACER_TEST_ROOTS")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		roots = append(roots, pid)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	// For looking into the tracer's own cost, e.g. under BenchmarkExec200.
	if p := os.Getenv("VERIFYMCP_TRACER_TEST_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	if err := Run(ctx, os.Stdout, Options{Roots: roots}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// attacherHelper traces VERIFYMCP_TRACER_TEST_ROOTS in Attach mode: it
// starts with nothing to trace (every process excluded) and stays up; each
// line "attach" on stdin lifts the exclusion and asks it to attach.
func attacherHelper() int {
	var roots []int
	for _, f := range strings.Fields(os.Getenv("VERIFYMCP_TRACER_TEST_ROOTS")) {
		pid, _ := strconv.Atoi(f)
		roots = append(roots, pid)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var allowed atomic.Bool
	reqs := make(chan chan<- int)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "attach" {
				allowed.Store(true)
				reply := make(chan int, 1)
				reqs <- reply
				<-reply
			}
		}
	}()
	if err := Run(ctx, os.Stdout, Options{Roots: roots, Attach: reqs, Exclude: func(int) bool { return !allowed.Load() }}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// spawnerHelper is a multi-threaded tracee: four goroutines locked to
// threads of their own wait, it says "threads up" on stdout, and once
// released by a line on stdin each runs /bin/true five times (so the forks
// come from threads other than the leader).
func spawnerHelper() int {
	start := make(chan struct{})
	var up, wg sync.WaitGroup
	errs := make(chan error, 20)
	for g := range 4 {
		up.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			up.Done()
			<-start
			for i := range 5 {
				errs <- exec.Command("/bin/true", "spawn", strconv.Itoa(g), strconv.Itoa(i)).Run()
			}
		}()
	}
	up.Wait()
	fmt.Println("threads up")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 2
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// session is a target process held before its real work, as the sandbox's
// wrapper holds the package, and a tracer attached to it.
type session struct {
	t       testing.TB
	target  *exec.Cmd
	release io.WriteCloser
	out     *syncBuffer
	targetC chan error

	tracer     *exec.Cmd
	tracerErr  *syncBuffer
	mu         sync.Mutex
	events     []Event
	newEvent   chan struct{}
	tracerDone chan error
}

// wrapper is the sandbox's wrapper: it waits for one line on stdin, then
// execs the real command.
var wrapper = []string{"/bin/sh", "-c", `read -r _; exec "$@"`, "verifymcp-wait"}

// startSession starts argv behind the wrapper and a tracer on it, and waits
// until the tracer is attached. It skips the test if ptrace is not
// permitted here.
func startSession(t testing.TB, argv []string, env ...string) *session {
	t.Helper()
	return startTarget(t, append(slices.Clone(wrapper), argv...), env...)
}

// startTarget is startSession without the wrapper: argv must wait for a
// line on stdin itself.
func startTarget(t testing.TB, argv []string, env ...string) *session {
	t.Helper()
	return startTargetAfter(t, argv, "", env...)
}

// startTargetAfter is startTarget that starts the tracer only once the
// target has written marker.
func startTargetAfter(t testing.TB, argv []string, marker string, env ...string) *session {
	t.Helper()
	s := &session{t: t, out: &syncBuffer{}, tracerErr: &syncBuffer{}, newEvent: make(chan struct{}, 1), targetC: make(chan error, 1), tracerDone: make(chan error, 1)}
	s.target = exec.Command(argv[0], argv[1:]...)
	s.target.Env = append(os.Environ(), env...)
	s.target.Stdout, s.target.Stderr = s.out, s.out
	var err error
	if s.release, err = s.target.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.target.Start(); err != nil {
		t.Fatalf("start target: %v", err)
	}
	go func() { s.targetC <- s.target.Wait() }()
	t.Cleanup(func() {
		_ = s.target.Process.Kill()
		<-s.targetC
		s.targetC <- nil
	})

	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s.out.String(), marker); {
		if time.Now().After(deadline) {
			t.Fatalf("target did not write %q: %q", marker, s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.tracer = exec.Command(os.Args[0], "-test.run=^$")
	s.tracer.Env = append(os.Environ(), helperEnv+"=tracer", "VERIFYMCP_TRACER_TEST_ROOTS="+strconv.Itoa(s.target.Process.Pid))
	s.tracer.Stderr = s.tracerErr
	stdout, err := s.tracer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.tracer.Start(); err != nil {
		t.Fatalf("start tracer: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				s.t.Errorf("tracer wrote a line that is not an event: %q", sc.Text())
				continue
			}
			s.mu.Lock()
			s.events = append(s.events, ev)
			s.mu.Unlock()
			select {
			case s.newEvent <- struct{}{}:
			default:
			}
		}
		s.tracerDone <- s.tracer.Wait()
	}()
	t.Cleanup(func() {
		_ = s.tracer.Process.Kill()
		select {
		case <-s.tracerDone:
		case <-time.After(10 * time.Second):
		}
	})

	ready := s.waitFor(10*time.Second, func(ev Event) bool { return ev.Type == TypeReady })
	if ready.Failed > 0 || ready.Attached == 0 {
		for _, ev := range s.snapshot() {
			if ev.Type == TypeAttachError && strings.Contains(ev.Error, "operation not permitted") {
				t.Skipf("ptrace is not permitted here (%s); run as root or with CAP_SYS_PTRACE", ev.Error)
			}
		}
		t.Fatalf("tracer attached %d threads, %d failed: %v", ready.Attached, ready.Failed, s.snapshot())
	}
	return s
}

func (s *session) snapshot() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// waitFor waits for an event matching f and returns it.
func (s *session) waitFor(timeout time.Duration, f func(Event) bool) Event {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		for _, ev := range s.snapshot() {
			if f(ev) {
				return ev
			}
		}
		select {
		case <-s.newEvent:
		case <-deadline:
			s.t.Fatalf("no such event within %v; events %v; tracer stderr: %s", timeout, s.snapshot(), s.tracerErr.String())
		}
	}
}

func (s *session) releaseTarget() {
	s.t.Helper()
	if _, err := io.WriteString(s.release, "\n"); err != nil {
		s.t.Fatalf("release target: %v", err)
	}
	s.release.Close()
}

// waitTarget waits for the target to exit and returns its exit code.
func (s *session) waitTarget(timeout time.Duration) int {
	s.t.Helper()
	select {
	case <-s.targetC:
		s.targetC <- nil
	case <-time.After(timeout):
		s.t.Fatalf("target did not exit within %v; output %q", timeout, s.out.String())
	}
	return s.target.ProcessState.ExitCode()
}

// waitTracer waits for the tracer to exit and returns its events.
func (s *session) waitTracer(timeout time.Duration) []Event {
	s.t.Helper()
	select {
	case err := <-s.tracerDone:
		s.tracerDone <- err
		if err != nil {
			s.t.Errorf("tracer: %v; stderr: %s", err, s.tracerErr.String())
		}
	case <-time.After(timeout):
		s.t.Fatalf("tracer did not exit within %v; events %v", timeout, s.snapshot())
	}
	return s.snapshot()
}

func execs(evs []Event) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Type == TypeExec {
			out = append(out, ev)
		}
	}
	return out
}

func findExec(t *testing.T, evs []Event, argv ...string) Event {
	t.Helper()
	for _, ev := range execs(evs) {
		if slices.Equal(ev.Argv, argv) {
			return ev
		}
	}
	t.Fatalf("no exec of %q among %v", argv, execs(evs))
	return Event{}
}

func TestRun_recordsExecsWithParents(t *testing.T) {
	const script = `trap 'echo usr1' USR1; sleep 0.3; /bin/echo hi; sh -c "/bin/true a b"; exec /bin/sleep 0.2`
	s := startSession(t, []string{"/bin/sh", "-c", script})
	shell := s.target.Process.Pid
	s.releaseTarget()
	// The trap is set once sleep runs: a SIGUSR1 now must reach the shell
	// through the tracer (a signal-delivery-stop, re-injected).
	s.waitFor(5*time.Second, func(ev Event) bool { return ev.Type == TypeExec && len(ev.Argv) > 0 && ev.Argv[0] == "sleep" })
	if err := s.target.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if code := s.waitTarget(10 * time.Second); code != 0 {
		t.Fatalf("target exited %d: %s", code, s.out.String())
	}
	evs := s.waitTracer(10 * time.Second)

	if got, want := s.out.String(), "usr1\nhi\n"; got != want {
		t.Errorf("target output %q, want %q (was SIGUSR1 delivered?)", got, want)
	}
	if evs[0].Type != TypeReady {
		t.Errorf("first event %+v, want ready", evs[0])
	}
	if last := evs[len(evs)-1]; last.Type != TypeEnd || last.Reason != "no_tracees" {
		t.Errorf("last event %+v, want end because no tracees are left", last)
	}
	cwd, _ := os.Getwd()
	me := os.Getpid()

	entry := findExec(t, evs, "/bin/sh", "-c", script)
	sleep := findExec(t, evs, "sleep", "0.3")
	echo := findExec(t, evs, "/bin/echo", "hi")
	inner := findExec(t, evs, "sh", "-c", "/bin/true a b")
	trueEv := findExec(t, evs, "/bin/true", "a", "b")
	final := findExec(t, evs, "/bin/sleep", "0.2")
	// dash runs the last command of "sh -c" in place; other shells fork.
	wantTrueParent := inner.PID
	if trueEv.PID == inner.PID {
		wantTrueParent = shell
	}
	for _, tc := range []struct {
		name            string
		ev              Event
		wantPID, wantPP int
		exe             string
	}{
		{"wrapper execs the entry point", entry, shell, me, "sh"},
		{"sleep", sleep, sleep.PID, shell, "sleep"},
		{"echo", echo, echo.PID, shell, "echo"},
		{"inner shell", inner, inner.PID, shell, "sh"},
		{"true", trueEv, trueEv.PID, wantTrueParent, "true"},
		{"exec in place", final, shell, me, "sleep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			if ev.PID != tc.wantPID || ev.PPID != tc.wantPP {
				t.Errorf("pid %d ppid %d, want pid %d ppid %d", ev.PID, ev.PPID, tc.wantPID, tc.wantPP)
			}
			// /bin may be a link to /usr/bin, and sh to dash or bash.
			if !filepath.IsAbs(ev.Exe) || (tc.exe != "sh" && filepath.Base(ev.Exe) != tc.exe) {
				t.Errorf("exe %q, want an absolute path to %s", ev.Exe, tc.exe)
			}
			if ev.UID != os.Getuid() || ev.Cwd != cwd || ev.Time.IsZero() {
				t.Errorf("uid %d cwd %q time %v, want uid %d cwd %q and a time", ev.UID, ev.Cwd, ev.Time, os.Getuid(), cwd)
			}
		})
	}
	// Forks are reported for each child, exits for the shell.
	forks := map[int]int{}
	for _, ev := range evs {
		if ev.Type == TypeFork {
			forks[ev.PID] = ev.PPID
		}
	}
	for _, c := range []int{sleep.PID, echo.PID, inner.PID} {
		if forks[c] != shell {
			t.Errorf("no fork of %d by %d in %v", c, shell, forks)
		}
	}
	var exit *Event
	for i, ev := range evs {
		if ev.Type == TypeExit && ev.PID == shell {
			exit = &evs[i]
		}
	}
	if exit == nil || exit.Code != 0 || exit.Signal != "" {
		t.Errorf("exit of the shell = %+v, want code 0", exit)
	}
}

func TestRun_groupStopIsKept(t *testing.T) {
	// The shell writes a line every 20 ms. Stopped with SIGSTOP it must
	// stay stopped while traced, go on after SIGCONT, and stay stopped when
	// the tracer detaches from it while it is stopped.
	s := startSession(t, []string{"/bin/sh", "-c", `i=0; while [ $i -lt 1000 ]; do echo $i; /bin/sleep 0.02; i=$((i+1)); done`})
	pid := s.target.Process.Pid
	s.releaseTarget()
	time.Sleep(200 * time.Millisecond)
	assertStopped := func(when string) {
		t.Helper()
		time.Sleep(150 * time.Millisecond) // the running sleep finishes
		before := s.out.String()
		time.Sleep(400 * time.Millisecond)
		if after := s.out.String(); after != before {
			t.Errorf("%s: the stopped shell kept running: %d more bytes", when, len(after)-len(before))
		}
		if st := procState(pid); st != "t" && st != "T" {
			t.Errorf("%s: state of the stopped shell is %q, want stopped", when, st)
		}
	}
	assertResumes := func(when string) {
		t.Helper()
		before := s.out.String()
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if after := s.out.String(); len(after) <= len(before) {
			t.Errorf("%s: the shell did not resume after SIGCONT", when)
		}
	}

	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	assertStopped("traced")
	assertResumes("traced")

	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if err := s.tracer.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	evs := s.waitTracer(10 * time.Second)
	if tp := tracerOf(pid); tp != 0 {
		t.Errorf("shell still traced by %d", tp)
	}
	assertStopped("detached")
	assertResumes("detached")

	_ = syscall.Kill(pid, syscall.SIGTERM)
	s.waitTarget(10 * time.Second)
	if n := len(execs(evs)); n < 10 {
		t.Errorf("only %d execs recorded", n)
	}
	if last := evs[len(evs)-1]; last.Type != TypeEnd || last.Reason != "context" {
		t.Errorf("last event %+v, want end because the context ended", last)
	}
}

func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return f[0]
}

// TestRun_traceeSurvivesTracer ends the tracer while the target runs: the
// target must be detached (no longer traced) and finish normally.
func TestRun_traceeSurvivesTracer(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{
		{"context_ends", syscall.SIGTERM},
		{"tracer_killed", syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSession(t, []string{"/bin/sh", "-c", `sleep 0.6; /bin/echo after; exit 7`})
			pid := s.target.Process.Pid
			s.releaseTarget()
			s.waitFor(5*time.Second, func(ev Event) bool { return ev.Type == TypeExec && len(ev.Argv) > 0 && ev.Argv[0] == "sleep" })
			if tracerOf(pid) == 0 {
				t.Fatalf("target is not traced before the tracer stops")
			}
			if err := s.tracer.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-s.tracerDone:
				s.tracerDone <- err
				if tc.sig == syscall.SIGTERM && err != nil {
					t.Errorf("tracer: %v: %s", err, s.tracerErr.String())
				}
			case <-time.After(5 * time.Second):
				t.Fatal("tracer did not stop")
			}
			if tp := tracerOf(pid); tp != 0 {
				t.Errorf("target still traced by %d after the tracer stopped", tp)
			}
			if code := s.waitTarget(10 * time.Second); code != 7 {
				t.Errorf("target exited %d, want 7", code)
			}
			if got := s.out.String(); got != "after\n" {
				t.Errorf("target output %q, want %q", got, "after\n")
			}
			if tc.sig == syscall.SIGTERM {
				evs := s.snapshot()
				last := evs[len(evs)-1]
				if last.Type != TypeEnd || last.Reason != "context" || last.Detached < 2 {
					t.Errorf("last event %+v, want end, context, at least the shell and sleep detached", last)
				}
			}
		})
	}
}

// TestRun_multiThreadedTracee traces a Go program that is already running
// several threads when the tracer attaches, and then forks from any of
// them (os/exec uses vfork-style clones).
func TestRun_multiThreadedTracee(t *testing.T) {
	s := startTargetAfter(t, []string{os.Args[0], "-test.run=^$"}, "threads up\n", helperEnv+"=spawner")
	spawner := s.target.Process.Pid
	// Every thread is traced: those that existed were seized, any created
	// since were attached by the kernel as clones of traced ones.
	tids, err := threads(spawner)
	if err != nil || len(tids) < 5 {
		t.Fatalf("spawner threads %v (%v), want at least 5", tids, err)
	}
	if ready := s.snapshot()[0]; ready.Attached < 5 {
		t.Errorf("tracer attached %d threads, want at least 5", ready.Attached)
	}
	for _, tid := range tids {
		if tracerOf(tid) == 0 {
			t.Errorf("thread %d of %v is not traced", tid, tids)
		}
	}
	s.releaseTarget()
	if code := s.waitTarget(20 * time.Second); code != 0 {
		t.Fatalf("spawner exited %d: %s", code, s.out.String())
	}
	evs := s.waitTracer(10 * time.Second)
	n := 0
	for _, ev := range execs(evs) {
		if len(ev.Argv) == 4 && ev.Argv[0] == "/bin/true" && ev.Argv[1] == "spawn" {
			n++
			if ev.PPID != spawner {
				t.Errorf("exec %v has ppid %d, want %d", ev.Argv, ev.PPID, spawner)
			}
		}
	}
	if n != 20 {
		t.Errorf("%d execs of /bin/true recorded, want 20: %v", n, execs(evs))
	}
}

// TestRun_excludedAndGoneRootsEndAtOnce runs the tracer in this process: it
// attaches to nothing, so nothing is traced.
func TestRun_excludedAndGoneRootsEndAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"excluded", Options{Roots: []int{os.Getppid()}, Exclude: func(int) bool { return true }}},
		{"gone", Options{Roots: []int{1 << 30}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			readyCalled := false
			tc.opts.Ready = func() { readyCalled = true }
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := Run(ctx, &out, tc.opts); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var ev Event
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s %d %s", ev.Type, ev.Attached, ev.Reason))
			}
			want := []string{"ready 0 ", "end 0 no_tracees"}
			if !slices.Equal(got, want) || !readyCalled || ctx.Err() != nil {
				t.Errorf("events %q (Ready called: %v), want %q", got, readyCalled, want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestRun_writeErrorIsReturned(t *testing.T) {
	err := Run(context.Background(), failWriter{}, Options{Roots: []int{1 << 30}})
	if err == nil || !strings.Contains(err.Error(), io.ErrClosedPipe.Error()) {
		t.Errorf("Run = %v, want an error wrapping %v", err, io.ErrClosedPipe)
	}
}

func TestField(t *testing.T) {
	status := []byte("Name:\tsh\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t41\nPid:\t42\nPPid:\t7\nTracerPid:\t0\nUid:\t65534\t65534\t65534\t65534\n")
	for _, tc := range []struct {
		name string
		want int
		ok   bool
	}{
		{"Tgid:", 41, true},
		{"PPid:", 7, true},
		{"Pid:", 42, true},
		{"Uid:", 65534, true},
		{"TracerPid:", 0, true},
		{"Gid:", 0, false},
	} {
		got, ok := field(status, tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("field(%s) = %d, %v, want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRun_attachOnRequest: in Attach mode the tracer stays up with nothing
// to trace, and attaches to processes that appeared later when asked (the
// sandbox's observer joins containers to its PID namespace this way).
func TestRun_attachOnRequest(t *testing.T) {
	target := exec.Command("/bin/sh", "-c", "read -r _ && exec /bin/sh -c '/bin/echo later; /bin/true x'")
	release, err := target.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer target.Process.Kill()
	tr := exec.Command(os.Args[0], "-test.run=^$")
	tr.Env = append(os.Environ(), helperEnv+"=attacher", "VERIFYMCP_TRACER_TEST_ROOTS="+strconv.Itoa(target.Process.Pid))
	ctl, err := tr.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	tr.Stdout = out
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	defer tr.Process.Kill()
	waitLine := func(substr string, n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); strings.Count(out.String(), substr) < n; {
			if time.Now().After(deadline) {
				t.Fatalf("no %d× %q in tracer output: %s", n, substr, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitLine(`"type":"ready"`, 1)
	if !strings.Contains(out.String(), `"attached":0`) {
		t.Fatalf("first ready should attach nothing: %s", out.String())
	}
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(out.String(), `"type":"end"`) {
		t.Fatalf("the tracer ended with nothing to trace; in Attach mode it must wait: %s", out.String())
	}
	fmt.Fprintln(ctl, "attach")
	waitLine(`"type":"ready"`, 2)
	if strings.Count(out.String(), `"attached":0`) > 1 {
		t.Skipf("ptrace not permitted here: %s", out.String())
	}
	fmt.Fprintln(release, "go")
	waitLine(`"/bin/true","x"`, 1)
	if !strings.Contains(out.String(), `"argv":["/bin/echo","later"]`) {
		t.Errorf("exec of /bin/echo not recorded: %s", out.String())
	}
}

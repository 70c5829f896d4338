//go:build linux

// Package tracer records every program executed in a PID namespace, from
// outside the traced processes.
//
// The sandbox runs it in a container of its own that joins the watched
// container's PID namespace, as root with only CAP_SYS_PTRACE. It attaches
// to every process there with PTRACE_SEIZE, follows forks, vforks and
// clones automatically, and is told of each execve by a PTRACE_EVENT_EXEC
// stop; it never stops tracees on other system calls, so a traced program
// runs at full speed between execs. Events are written as JSON lines.
//
// The watched program runs as an unprivileged user without capabilities,
// so it can neither ptrace nor signal the tracer. Tracees are never killed
// by the tracer: PTRACE_O_EXITKILL is not used, and when the tracer stops
// (or dies) its tracees carry on untraced.
//
// Output, one JSON object per line, times in RFC 3339 UTC:
//
//	{"type":"ready","time":T,"attached":3,"failed":0}
//	{"type":"exec","time":T,"pid":12,"ppid":7,"uid":65534,"exe":"/usr/bin/node","argv":["node","x.js"],"cwd":"/home/sandbox"}
//	{"type":"fork","time":T,"pid":13,"ppid":12}
//	{"type":"exit","time":T,"pid":13,"code":0}
//	{"type":"exit","time":T,"pid":14,"code":137,"signal":"SIGKILL"}
//	{"type":"attach_error","time":T,"pid":9,"error":"ptrace seize 9: operation not permitted"}
//	{"type":"end","time":T,"reason":"context","detached":4}
//
// ready comes first (after any attach_error) and end last; "attached"
// and "detached" count threads. exec has "argv_truncated":true when the
// command line was longer than MaxArgvBytes. PIDs are those of the
// tracer's PID namespace.
package tracer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Options configure Run.
type Options struct {
	// Roots, when set, limits tracing to these processes and their
	// descendants. Empty means every process in /proc of the tracer's PID
	// namespace except the tracer itself, its ancestors and its descendants.
	Roots []int
	// Exclude, when set, is asked about each process found at attach time;
	// a process it returns true for is not traced (children it starts
	// later are not traced either).
	Exclude func(pid int) bool
	// Ready, when set, is called once every process found is attached,
	// right after the ready event is written.
	Ready func()
	// Attach, when set, keeps the tracer running while nothing is traced,
	// until ctx ends: each request received makes it attach to every
	// process found that it does not trace yet (processes that joined its
	// PID namespace from another container), write a ready event, and send
	// the number of threads attached on the request's channel.
	Attach <-chan chan<- int
}

// Event types written by Run, one JSON object per line.
const (
	// TypeReady is written once every process found at start is attached.
	TypeReady = "ready"
	// TypeExec is a successful execve.
	TypeExec = "exec"
	// TypeFork is a new process (not a thread).
	TypeFork = "fork"
	// TypeExit is the end of a traced process.
	TypeExit = "exit"
	// TypeAttachError is a process or thread that could not be attached.
	TypeAttachError = "attach_error"
	// TypeEnd is the last event: Reason says why tracing stopped.
	TypeEnd = "end"
)

// Event is the union of every event's fields, for readers of the output.
// Each event type sets the fields documented for it.
type Event struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// PID is the process (exec, fork: the child, exit, attach_error).
	PID int `json:"pid,omitempty"`
	// PPID is the parent at the time of the event (exec, fork).
	PPID int `json:"ppid,omitempty"`
	// UID is the real user ID after the exec.
	UID int `json:"uid"`
	// Exe is the executable the kernel loaded (the target of
	// /proc/PID/exe); Argv is the new command line; Cwd the working
	// directory. ArgvTruncated is set when the command line was longer
	// than MaxArgvBytes.
	Exe           string   `json:"exe,omitempty"`
	Argv          []string `json:"argv,omitempty"`
	Cwd           string   `json:"cwd,omitempty"`
	ArgvTruncated bool     `json:"argv_truncated,omitempty"`
	// Code is the exit status, or 128 plus the signal number when Signal
	// names the signal that killed the process (exit).
	Code   int    `json:"code,omitempty"`
	Signal string `json:"signal,omitempty"`
	// Attached and Failed count the threads attached and not (ready).
	Attached int `json:"attached,omitempty"`
	Failed   int `json:"failed,omitempty"`
	// Error says why a process could not be attached (attach_error).
	Error string `json:"error,omitempty"`
	// Reason says why tracing ended (end): "context", "no_tracees",
	// "write_error" or "error". Detached counts the threads detached.
	Reason   string `json:"reason,omitempty"`
	Detached int    `json:"detached,omitempty"`
}

// The JSON forms of each event type. UID is written for exec only, where
// 0 (root) is a meaningful value.
type (
	readyEvent struct {
		Type     string    `json:"type"`
		Time     time.Time `json:"time"`
		Attached int       `json:"attached"`
		Failed   int       `json:"failed"`
	}
	execEvent struct {
		Type          string    `json:"type"`
		Time          time.Time `json:"time"`
		PID           int       `json:"pid"`
		PPID          int       `json:"ppid"`
		UID           int       `json:"uid"`
		Exe           string    `json:"exe"`
		Argv          []string  `json:"argv"`
		Cwd           string    `json:"cwd,omitempty"`
		ArgvTruncated bool      `json:"argv_truncated,omitempty"`
	}
	forkEvent struct {
		Type string    `json:"type"`
		Time time.Time `json:"time"`
		PID  int       `json:"pid"`
		PPID int       `json:"ppid"`
	}
	exitEvent struct {
		Type   string    `json:"type"`
		Time   time.Time `json:"time"`
		PID    int       `json:"pid"`
		Code   int       `json:"code"`
		Signal string    `json:"signal,omitempty"`
	}
	attachErrorEvent struct {
		Type  string    `json:"type"`
		Time  time.Time `json:"time"`
		PID   int       `json:"pid"`
		Error string    `json:"error"`
	}
	endEvent struct {
		Type     string    `json:"type"`
		Time     time.Time `json:"time"`
		Reason   string    `json:"reason"`
		Detached int       `json:"detached"`
	}
)

// MaxArgvBytes bounds the command line read for an exec event.
const MaxArgvBytes = 128 << 10

// ptraceOptions follow every new process and thread and report execs.
// PTRACE_O_EXITKILL is deliberately absent: tracees outlive the tracer.
const ptraceOptions = unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK | unix.PTRACE_O_TRACECLONE

// ErrWrite wraps a failure to write an event; Run detaches and returns it.
var ErrWrite = errors.New("write event")

// Run attaches to the processes to trace, writes a ready event, then
// writes an event for every exec (and fork and exit) until ctx ends or no
// traced process is left. It then detaches from every tracee, leaving it
// running (or stopped, if it was stopped by a signal), writes an end event
// and returns nil. It returns an error only when tracing itself failed.
//
// All ptrace requests come from one locked OS thread, as ptrace requires.
// Run must be the only code in the process that waits for children with
// wait4(-1) or similar, and the traced processes must not be children of
// the calling process (the tracer would reap their exit status).
func Run(ctx context.Context, events io.Writer, opts Options) error {
	errc := make(chan error, 1)
	go func() {
		// The thread stays locked until the goroutine exits, and then
		// exits with it: if a tracee could not be detached, the kernel
		// detaches it when the thread that attached it exits.
		runtime.LockOSThread()
		errc <- run(ctx, events, opts)
	}()
	return <-errc
}

// tracee is one traced thread.
type tracee struct {
	tgid int
	// listening is set while the thread is in a group-stop (stopped by
	// SIGSTOP or the like) and was resumed with PTRACE_LISTEN.
	listening bool
}

type tracer struct {
	w       io.Writer
	opts    Options
	tracees map[int]*tracee // by thread ID
	// gone holds IDs whose exit was reported before anything else about
	// them: children killed before their first stop, and wake's children.
	gone map[int]bool
	self int
	tid  int // the tracer thread, as /proc/*/status TracerPid shows it
	err  error
	buf  []byte
	now  func() time.Time
}

func run(ctx context.Context, w io.Writer, opts Options) error {
	t := &tracer{w: w, opts: opts, tracees: map[int]*tracee{}, gone: map[int]bool{}, self: os.Getpid(), tid: unix.Gettid(), now: func() time.Time { return time.Now().UTC() }}

	attached, failed := t.attach()
	t.emit(readyEvent{Type: TypeReady, Time: t.now(), Attached: attached, Failed: failed})
	if t.err != nil {
		t.end("write_error")
		return t.err
	}
	if opts.Ready != nil {
		opts.Ready()
	}

	// The loop blocks in wait4 on this thread: a stop wakes it directly,
	// with no signal handler or goroutine hand-off in the way, which is
	// most of the cost of a stop. When ctx ends, wake makes wait4 return.
	done := make(chan struct{})
	defer close(done)
	defer context.AfterFunc(ctx, func() { wake(done) })()
	// Attach requests arrive on another goroutine; each one wakes wait4
	// (like the end of ctx does) until the loop has taken it.
	reqs := make(chan chan<- int, 16)
	if opts.Attach != nil {
		go func() {
			for {
				select {
				case r := <-opts.Attach:
					taken := make(chan struct{})
					reqs <- attachRequest(r, taken)
					go wake(taken)
				case <-done:
					return
				}
			}
		}()
	}
	serve := func(r chan<- int) {
		attached, failed := t.attach()
		t.emit(readyEvent{Type: TypeReady, Time: t.now(), Attached: attached, Failed: failed})
		r <- attached
	}
	for {
		if t.err != nil {
			t.end("write_error")
			return t.err
		}
		if ctx.Err() != nil {
			t.end("context")
			return t.err
		}
		if opts.Attach != nil {
			select {
			case r := <-reqs:
				serve(r)
				continue
			default:
			}
			if len(t.tracees) == 0 {
				// Nothing to wait for: block until asked to attach.
				select {
				case r := <-reqs:
					serve(r)
				case <-ctx.Done():
				}
				continue
			}
		} else if len(t.tracees) == 0 {
			t.end("no_tracees")
			return t.err
		}
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			// Nothing is traced any more.
			clear(t.tracees)
			continue
		case err != nil:
			t.end("error")
			return fmt.Errorf("wait for tracees: %w", err)
		}
		t.handle(pid, ws)
	}
}

// attachRequest wraps a reply channel so that taking the request from the
// queue stops the wake-ups it caused.
func attachRequest(r chan<- int, taken chan struct{}) chan<- int {
	out := make(chan int, 1)
	go func() {
		n := <-out
		close(taken)
		r <- n
	}()
	return out
}

// wake makes a blocking wait4(-1) in this process return, until done is
// closed: it starts a child that exits at once (its exec fails), whose
// exit wait4 reports. The child is retried, since the goroutine that
// started it may reap it first.
func wake(done <-chan struct{}) {
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{}}
	for {
		_, _ = syscall.ForkExec("/nonexistent/verifymcp-tracer-wake", []string{"verifymcp-tracer-wake"}, attr)
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// reap handles every stop and exit that is waiting.
func (t *tracer) reap() error {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			// Nothing is traced any more (each tracee's exit was seen).
			clear(t.tracees)
			return nil
		case err != nil:
			return fmt.Errorf("wait for tracees: %w", err)
		case pid == 0:
			return nil
		}
		t.handle(pid, ws)
	}
}

// handle deals with one wait status of thread pid and resumes it.
func (t *tracer) handle(pid int, ws unix.WaitStatus) {
	tr := t.tracees[pid]
	if tr == nil {
		if !ws.Stopped() {
			// Never a tracee we knew of: not ours, or killed before its
			// first stop, in which case its parent's fork event may still
			// be on its way and must not bring it back.
			t.gone[pid] = true
			return
		}
		// The first stop of a new child can come before its parent's
		// fork or clone event, which then says whether it is a thread.
		tr = &tracee{}
		t.tracees[pid] = tr
	}
	if tr.tgid == 0 && !ws.Stopped() {
		tr.tgid = pid // exited before we learnt more: count it a process
	}
	switch {
	case ws.Exited() || ws.Signaled():
		delete(t.tracees, pid)
		if pid == tr.tgid {
			ev := exitEvent{Type: TypeExit, Time: t.now(), PID: pid, Code: ws.ExitStatus()}
			if ws.Signaled() {
				ev.Code = 128 + int(ws.Signal())
				ev.Signal = unix.SignalName(ws.Signal())
			}
			t.emit(ev)
		}
		return
	case !ws.Stopped():
		return
	}
	tr.listening = false
	sig := ws.StopSignal()
	switch event := int(ws>>16) & 0xff; event {
	case unix.PTRACE_EVENT_EXEC:
		// If a thread other than the leader called execve, it has taken
		// over the leader's ID; its old ID is gone without an exit.
		if former, err := unix.PtraceGetEventMsg(pid); err == nil && int(former) != pid {
			delete(t.tracees, int(former))
		}
		tr.tgid = pid
		ev := t.execEvent(pid)
		t.resume(pid, 0)
		t.emit(ev)
	case unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK, unix.PTRACE_EVENT_CLONE:
		msg, err := unix.PtraceGetEventMsg(pid)
		child := int(msg)
		if err == nil && t.gone[child] {
			delete(t.gone, child)
			err = unix.ESRCH
		}
		if err == nil {
			ct := t.tracees[child]
			if ct == nil {
				ct = &tracee{}
				t.tracees[child] = ct
			}
			if ct.tgid == 0 {
				ct.tgid = child
				if event == unix.PTRACE_EVENT_CLONE {
					// A clone that shares the thread group is a thread.
					ct.tgid = tgidOf(child)
				}
			}
		}
		thread := err == nil && t.tracees[child].tgid != child
		t.resume(pid, 0)
		if err == nil && !thread {
			t.emit(forkEvent{Type: TypeFork, Time: t.now(), PID: child, PPID: tr.tgid})
		}
	case unix.PTRACE_EVENT_STOP:
		switch sig {
		case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
			// Group-stop: leave it stopped, but let the kernel tell us
			// when SIGCONT or another signal arrives.
			if ptrace(unix.PTRACE_LISTEN, pid, 0) == nil {
				tr.listening = true
			}
		default:
			// The first stop of an automatically attached child, or the
			// re-trap after SIGCONT ended a group-stop.
			t.resume(pid, 0)
		}
	case 0:
		// Signal-delivery-stop: deliver the signal as if untraced.
		t.resume(pid, sig)
	default:
		t.resume(pid, 0)
	}
}

// resume continues a stopped tracee, delivering sig (0 for none). A tracee
// that vanished in the meantime (killed) reports its exit later.
func (t *tracer) resume(pid int, sig unix.Signal) {
	_ = ptrace(unix.PTRACE_CONT, pid, uintptr(sig))
}

func ptrace(req, pid int, data uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), 0, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// attach seizes every thread of every process to trace. Processes may fork
// while it runs, so it looks again until a pass finds nothing new.
func (t *tracer) attach() (attached, failed int) {
	tried := map[int]bool{}
	for pass := 0; pass < 20; pass++ {
		// Children forked by threads already attached are attached by the
		// kernel; handling their stops first keeps them out of the way.
		_ = t.reap()
		news := 0
		for _, pid := range t.candidates() {
			if t.opts.Exclude != nil && t.opts.Exclude(pid) {
				continue
			}
			tids, err := threads(pid)
			if err != nil {
				continue // gone
			}
			for _, tid := range tids {
				if t.tracees[tid] != nil || tried[tid] {
					continue
				}
				tried[tid] = true
				news++
				err := ptrace(unix.PTRACE_SEIZE, tid, ptraceOptions)
				switch {
				case err == nil:
					t.tracees[tid] = &tracee{tgid: pid}
					attached++
				case errors.Is(err, unix.ESRCH):
					// Exited in the meantime.
				case errors.Is(err, unix.EPERM) && tracerOf(tid) == t.tid:
					// Attached already, by the kernel, as the child of a
					// tracee; its first stop has not been collected yet.
					t.tracees[tid] = &tracee{tgid: pid}
				default:
					failed++
					t.emit(attachErrorEvent{Type: TypeAttachError, Time: t.now(), PID: tid, Error: fmt.Sprintf("ptrace seize %d: %v", tid, err)})
				}
			}
		}
		if news == 0 {
			break
		}
	}
	return attached, failed
}

// candidates lists the processes to trace: the roots and their
// descendants, or everything except the tracer and its relatives.
func (t *tracer) candidates() []int {
	parents := processes()
	children := map[int][]int{}
	for pid, pp := range parents {
		children[pp] = append(children[pp], pid)
	}
	descend := func(roots []int) map[int]bool {
		out := map[int]bool{}
		stack := append([]int(nil), roots...)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if out[p] {
				continue
			}
			if _, ok := parents[p]; !ok {
				continue
			}
			out[p] = true
			stack = append(stack, children[p]...)
		}
		return out
	}
	var out []int
	if len(t.opts.Roots) > 0 {
		for pid := range descend(t.opts.Roots) {
			if pid != t.self {
				out = append(out, pid)
			}
		}
		return out
	}
	skip := descend([]int{t.self})
	for p := parents[t.self]; p > 0 && !skip[p]; p = parents[p] {
		skip[p] = true
	}
	for pid, pp := range parents {
		// Kernel threads (children of kthreadd, PID 2) only show up when
		// the tracer does not have a PID namespace of its own.
		if skip[pid] || pid == 2 || pp == 2 {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// processes maps every process in /proc to its parent.
func processes() map[int]int {
	out := map[int]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := statusField(pid, "PPid:"); ok {
			out[pid] = pp
		}
	}
	return out
}

func threads(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// statusField reads one numeric field (its first number) of
// /proc/PID/status; PID may be a thread ID.
func statusField(pid int, name string) (int, bool) {
	var buf [4096]byte
	b, err := readProc(buf[:], "/proc/"+strconv.Itoa(pid)+"/status")
	if err != nil {
		return 0, false
	}
	return field(b, name)
}

// readProc reads a small /proc file into buf with plain system calls: the
// os package would register every file with the poller and a finalizer,
// which costs more than the read on the exec path.
func readProc(buf []byte, path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

func readlink(path string) string {
	var buf [unix.PathMax]byte
	n, err := unix.Readlink(path, buf[:])
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

func field(status []byte, name string) (int, bool) {
	i := bytes.Index(status, []byte("\n"+name))
	if i < 0 {
		return 0, false
	}
	rest := status[i+1+len(name):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	f := strings.Fields(string(rest))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.Atoi(f[0])
	return v, err == nil
}

func tgidOf(tid int) int {
	if g, ok := statusField(tid, "Tgid:"); ok {
		return g
	}
	return tid
}

func tracerOf(tid int) int {
	v, _ := statusField(tid, "TracerPid:")
	return v
}

// execEvent describes the program pid has just executed. It is read while
// the process is stopped, so its PID cannot have been reused.
func (t *tracer) execEvent(pid int) execEvent {
	ev := execEvent{Type: TypeExec, Time: t.now(), PID: pid, Argv: []string{}}
	dir := "/proc/" + strconv.Itoa(pid)
	if cap(t.buf) < MaxArgvBytes+1 {
		t.buf = make([]byte, MaxArgvBytes+1)
	}
	if b, err := readProc(t.buf[:4096], dir+"/status"); err == nil {
		ev.PPID, _ = field(b, "PPid:")
		ev.UID, _ = field(b, "Uid:")
	}
	ev.Exe = readlink(dir + "/exe")
	ev.Cwd = readlink(dir + "/cwd")
	if b, err := readProc(t.buf[:MaxArgvBytes+1], dir+"/cmdline"); err == nil {
		if len(b) > MaxArgvBytes {
			b, ev.ArgvTruncated = b[:MaxArgvBytes], true
		}
		b = bytes.TrimSuffix(b, []byte{0})
		if len(b) > 0 {
			for _, a := range bytes.Split(b, []byte{0}) {
				ev.Argv = append(ev.Argv, string(a))
			}
		}
	}
	return ev
}

// emit writes one event as a JSON line. The first write error sticks.
func (t *tracer) emit(ev any) {
	if t.err != nil {
		return
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.err = fmt.Errorf("%w: %w", ErrWrite, err)
		return
	}
	if _, err := t.w.Write(append(b, '\n')); err != nil {
		t.err = fmt.Errorf("%w: %w", ErrWrite, err)
	}
}

// end detaches from every tracee and writes the end event.
func (t *tracer) end(reason string) {
	n := t.detachAll(2 * time.Second)
	t.emit(endEvent{Type: TypeEnd, Time: t.now(), Reason: reason, Detached: n})
}

// detachAll detaches from every tracee. A tracee can only be detached while
// stopped for the tracer, so each is interrupted and detached at its next
// stop, with the signal it was about to receive, if any; one in group-stop
// stays stopped, as its signal said. Exec,
// fork and exit events that happen meanwhile are still written. Threads
// that do not stop within the timeout stay attached until the tracer
// thread exits, which detaches them.
func (t *tracer) detachAll(timeout time.Duration) int {
	n := 0
	for tid, tr := range t.tracees {
		// Kernels before 5.18 detach a listening tracee as it is; later
		// ones refuse, and it re-traps when interrupted.
		if tr.listening && ptrace(unix.PTRACE_DETACH, tid, 0) == nil {
			delete(t.tracees, tid)
			n++
			continue
		}
		// A tracee that is gone reports its exit below.
		_ = ptrace(unix.PTRACE_INTERRUPT, tid, 0)
	}
	deadline := time.Now().Add(timeout)
	for len(t.tracees) > 0 && time.Now().Before(deadline) {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			clear(t.tracees)
			break
		}
		if pid == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		if !ws.Stopped() {
			t.handle(pid, ws) // an exit
			continue
		}
		if t.tracees[pid] == nil {
			t.tracees[pid] = &tracee{tgid: tgidOf(pid)}
		}
		var sig unix.Signal
		switch event := int(ws>>16) & 0xff; event {
		case unix.PTRACE_EVENT_EXEC:
			if former, err := unix.PtraceGetEventMsg(pid); err == nil && int(former) != pid {
				delete(t.tracees, int(former))
			}
			t.emit(t.execEvent(pid))
		case unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK, unix.PTRACE_EVENT_CLONE:
			// The new child is attached too; stop it so it can be
			// detached.
			if msg, err := unix.PtraceGetEventMsg(pid); err == nil && t.tracees[int(msg)] == nil {
				t.tracees[int(msg)] = &tracee{tgid: tgidOf(int(msg))}
				_ = ptrace(unix.PTRACE_INTERRUPT, int(msg), 0)
			}
		case 0:
			sig = ws.StopSignal()
		}
		// A failure means the tracee was killed meanwhile: either way it
		// is no longer ours to wait for.
		if ptrace(unix.PTRACE_DETACH, pid, uintptr(sig)) == nil {
			n++
		}
		delete(t.tracees, pid)
	}
	return n
}

package sandbox

import (
	"context"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// The watch's side of the exercise (exercise_run.go): the windows of the
// calls, the per-call file check, and the scratch directory of decoys
// seeded into the home.

func (w *watch) exercises() bool { return w.s.opts.exercising() }

func (w *watch) lookFiles(ctx context.Context) (fileLook, error) { return w.obs.look(ctx) }

// seededFiles are the canary files and the lived-in home the sandbox
// planted, by path inside the sandbox (the decoys are marked apart).
func (w *watch) seededFiles() map[string]bool {
	out := map[string]bool{}
	for _, f := range w.canary.Files() {
		out[path.Join(homeDir, path.Clean(f.Path))] = true
	}
	return out
}

// calling marks the start of call n: the events from now until the next
// call's start (or the end of the calls) are its.
func (w *watch) calling(n int) {
	w.calls = append(w.calls, time.Now())
	w.obs.control("mark call " + strconv.Itoa(n))
}

func (w *watch) callsDone() { w.callsEnd = time.Now() }

// callAt names the tool call in whose window a run-phase event at t came:
// from the call's start until the next one's, and after the last until
// the calls ended (or, failing that mark, the second listing or the
// shutdown began); 0 outside every call.
func (w *watch) callAt(phase string, t time.Time) int {
	if phase != evidence.PhaseRun || len(w.calls) == 0 || t.Before(w.calls[0]) {
		return 0
	}
	end := w.callsEnd
	for _, e := range []time.Time{w.relistAt, w.shutdownAt} {
		if end.IsZero() {
			end = e
		}
	}
	if !end.IsZero() && !t.Before(end) {
		return 0
	}
	n := 0
	for i, st := range w.calls {
		if !t.Before(st) {
			n = i + 1
		}
	}
	return n
}

// seedFile is one file the home is seeded with (sent to the observer,
// which writes it: homeplace.go).
type seedFile struct {
	Path string `json:"path"` // relative to the home
	Data []byte `json:"data"`
	Mode int64  `json:"mode"`
}

// seedFiles are the files the run's home starts with: the canary files
// and the lived-in profile, and when the tools are called, the scratch
// directory's decoys.
func (w *watch) seedFiles() []seedFile {
	var out []seedFile
	for _, f := range w.canary.Files() {
		mode := int64(f.Mode.Perm())
		if mode == 0 {
			mode = 0o600
		}
		out = append(out, seedFile{Path: path.Clean(f.Path), Data: f.Data, Mode: mode})
	}
	if w.exercises() {
		p := exercisePlaces
		if rel, ok := strings.CutPrefix(p.Scratch, homeDir+"/"); ok {
			for _, d := range p.Decoys {
				out = append(out, seedFile{Path: path.Join(rel, d.Path), Data: d.Data, Mode: 0o644})
			}
		}
	}
	return out
}

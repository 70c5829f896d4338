package sandbox

import (
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
)

// The per-call file check (the exercise). The observer holds the run
// phase's home and /tmp mounted read-only (bounds.go); before the first
// tool call and after each one the scan asks it for the files that changed
// since it last looked ("files"), so that each change is the doing of
// exactly one call: the calls are made one at a time. A file is compared
// by its metadata (size, modification and change times, inode, mode),
// never its content: writing a file moves its change time, which no
// process in the container can set back.

// watchedPlaces are the held places the file check covers, with where
// the run container sees them.
var watchedPlaces = []watchedPlace{
	{heldDir + "/home-run", homeDir},
	{heldDir + "/tmp-run", "/tmp"},
}

// watchedPlace is a held directory and where the run container sees it.
type watchedPlace struct{ held, seen string }

// maxWatchedFiles bounds the entries one look records: past it the check
// says it was incomplete.
const maxWatchedFiles = 20_000

// maxFileChanges bounds the changes one answer lists.
const maxFileChanges = 200

// fileStamp is what a look records of one file.
type fileStamp struct {
	size, mtime, ctime int64
	ino                uint64
	mode               fs.FileMode
}

// fileChange is one changed file, by its path inside the sandbox.
type fileChange struct {
	Path string `json:"path"`
	Op   string `json:"op"` // created, modified, deleted
}

// fileLook is the observer's answer to "files".
type fileLook struct {
	// Baseline is set on the first look, which has nothing to compare
	// with and lists no change.
	Baseline bool         `json:"baseline,omitempty"`
	Changes  []fileChange `json:"changes"`
	// More counts the changes past maxFileChanges; Incomplete is set when
	// a place held more than maxWatchedFiles entries or could not be read.
	More       int    `json:"more,omitempty"`
	Incomplete string `json:"incomplete,omitempty"`
}

// fileWatcher remembers the last look.
type fileWatcher struct {
	// places are the directories looked at (nil: watchedPlaces).
	places []watchedPlace
	last   map[string]fileStamp
	// stamp reads one entry's stamp (stampOf on Linux).
	stamp func(fs.FileInfo) fileStamp
}

// look walks the watched places and compares them with the last look.
func (fw *fileWatcher) look() fileLook {
	now := map[string]fileStamp{}
	var out fileLook
	places := fw.places
	if places == nil {
		places = watchedPlaces
	}
	for _, p := range places {
		err := filepath.WalkDir(p.held, func(fp string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				return nil
			}
			if len(now) >= maxWatchedFiles {
				out.Incomplete = "more than " + strconv.Itoa(maxWatchedFiles) + " files"
				return fs.SkipAll
			}
			info, err := e.Info()
			if err != nil {
				return nil // gone since it was listed
			}
			rel, _ := filepath.Rel(p.held, fp)
			now[path.Join(p.seen, filepath.ToSlash(rel))] = fw.stamp(info)
			return nil
		})
		if err != nil && out.Incomplete == "" {
			out.Incomplete = "read " + p.seen + ": " + err.Error()
		}
	}
	if fw.last == nil {
		fw.last = now
		out.Baseline = true
		out.Changes = []fileChange{}
		return out
	}
	out.Changes, out.More = compareLooks(fw.last, now)
	fw.last = now
	return out
}

// compareLooks lists what changed from before to now, in path order, at
// most maxFileChanges, and counts the rest.
func compareLooks(before, now map[string]fileStamp) ([]fileChange, int) {
	changes := []fileChange{}
	for p, st := range now {
		old, ok := before[p]
		switch {
		case !ok:
			changes = append(changes, fileChange{p, "created"})
		case old != st:
			changes = append(changes, fileChange{p, "modified"})
		}
	}
	for p := range before {
		if _, ok := now[p]; !ok {
			changes = append(changes, fileChange{p, "deleted"})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	more := 0
	if len(changes) > maxFileChanges {
		more = len(changes) - maxFileChanges
		changes = changes[:maxFileChanges]
	}
	return changes, more
}

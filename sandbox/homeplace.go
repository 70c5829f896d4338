package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
)

// The home's seed and its comparison, done by the observer. The observer
// holds each watched phase's home volume mounted (bounds.go), so it writes
// the seed into it before the phase's container starts ("seed") and, after
// the phase, compares what is there with the seed ("home"). Done through
// the engine instead (an archive copied into, then out of, the created
// container), each took a re-executed dockerd, a mount of the container's
// root filesystem and a tar stream: the two were about a fifth of a warm
// scan's CPU.

// homeSeed is the "seed" request: the files a home starts with.
type homeSeed struct {
	Files []seedFile `json:"files"`
	// UID owns every file and directory; MTime (Unix seconds) is their
	// modification time (a lived-in home's files are not new).
	UID   int   `json:"uid"`
	MTime int64 `json:"mtime"`
}

// homeRequest is the "home" request: the seeded files, by path relative
// to the home.
type homeRequest struct {
	Seed map[string]seedSum `json:"seed"`
}

// seedSum is what a seeded file held.
type seedSum struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func sumOf(data []byte) seedSum {
	h := sha256.Sum256(data)
	return seedSum{Size: int64(len(data)), SHA256: hex.EncodeToString(h[:])}
}

// homeAnswer is the observer's answer to "seed" (Error only) and to
// "home": the changes to the home since its seed.
type homeAnswer struct {
	// Changes are at most maxFileEvents, sensitive files kept first, in
	// path order (the answer is one line, however many files the package
	// made); More counts the others.
	Changes []fileChange `json:"changes,omitempty"`
	More    int          `json:"more,omitempty"`
	Error   string       `json:"error,omitempty"`
}

// keepHomeChanges keeps at most maxFileEvents changes, sensitive files
// first, in path order, and counts the rest.
func keepHomeChanges(cs []fileChange) ([]fileChange, int) {
	sort.SliceStable(cs, func(i, j int) bool {
		si, sj := sensitiveClass(cs[i].Path) != "", sensitiveClass(cs[j].Path) != ""
		if si != sj {
			return si
		}
		return cs[i].Path < cs[j].Path
	})
	more := 0
	if len(cs) > maxFileEvents {
		cs, more = cs[:maxFileEvents], len(cs)-maxFileEvents
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
	return cs, more
}

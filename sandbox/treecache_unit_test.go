package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/volume"
)

func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.lock")
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, %v; want it created with mode 0600", fi, err)
	}

	t.Run("a second locker gives up when its context ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		defer cancel()
		un, err := lockFile(ctx, path)
		if err == nil {
			un()
			t.Fatal("second lock succeeded while the first was held")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("second lock = %v, want context.DeadlineExceeded", err)
		}
	})

	t.Run("a cancelled context is honoured while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := lockFile(ctx, path); !errors.Is(err, context.Canceled) {
			t.Errorf("lock with a cancelled context = %v, want context.Canceled", err)
		}
	})

	t.Run("a second locker waits and gets the lock after unlock", func(t *testing.T) {
		got := make(chan func(), 1)
		errc := make(chan error, 1)
		go func() {
			un, err := lockFile(context.Background(), path)
			if err != nil {
				errc <- err
				return
			}
			got <- un
		}()
		select {
		case un := <-got:
			un()
			t.Fatal("second locker got the lock while the first held it")
		case err := <-errc:
			t.Fatalf("second locker: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		unlock()
		select {
		case un := <-got:
			un()
		case err := <-errc:
			t.Fatalf("second locker: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("second locker did not get the lock after unlock")
		}
	})

	t.Run("a missing directory is an error", func(t *testing.T) {
		if _, err := lockFile(context.Background(), filepath.Join(t.TempDir(), "no", "such.lock")); err == nil {
			t.Error("lockFile in a missing directory succeeded")
		}
	})
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "abc.json")
	for _, data := range []string{`{"key":"abc","volume":"verifymcp-tree-abc"}`, `{"key":"abc"}`} {
		if err := writeAtomic(path, []byte(data)); err != nil {
			t.Fatalf("writeAtomic: %v", err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != data {
			t.Errorf("file = %q, want %q", got, data)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "abc.json" {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %q, want only abc.json (no temporary files left)", names)
	}

	missing := filepath.Join(dir, "missing", "x.json")
	if err := writeAtomic(missing, []byte("x")); err == nil {
		t.Error("writeAtomic into a missing directory succeeded")
	}
}

func TestKnownTree(t *testing.T) {
	res := &fetchResult{}
	vol := volume.Volume{Name: "verifymcp-tree-k", CreatedAt: "2026-12-02T10:00:00Z", Labels: map[string]string{LabelTreeKey: "k", labelTreeFiller: "run1"}}
	good := treeIndex[fetchResult]{Key: "k", Volume: vol.Name, Run: "run1", Created: vol.CreatedAt, Result: res}
	if !knownTree(good, "k", vol) {
		t.Fatal("an index entry of the same volume is not known")
	}
	for name, mod := range map[string]func(*treeIndex[fetchResult], *volume.Volume){
		"another key":               func(i *treeIndex[fetchResult], _ *volume.Volume) { i.Key = "other" },
		"no result":                 func(i *treeIndex[fetchResult], _ *volume.Volume) { i.Result = nil },
		"no creation time recorded": func(i *treeIndex[fetchResult], _ *volume.Volume) { i.Created = "" },
		"the volume was made again": func(_ *treeIndex[fetchResult], v *volume.Volume) { v.CreatedAt = "2026-12-02T11:00:00Z" },
		"made again in the same second": func(_ *treeIndex[fetchResult], v *volume.Volume) {
			v.Labels = map[string]string{LabelTreeKey: "k", labelTreeFiller: "run2"}
		},
		"a volume without a filler label": func(i *treeIndex[fetchResult], v *volume.Volume) {
			i.Run = ""
			v.Labels = map[string]string{LabelTreeKey: "k"}
		},
		"the volume is of another key": func(_ *treeIndex[fetchResult], v *volume.Volume) {
			v.Labels = map[string]string{LabelTreeKey: "x", labelTreeFiller: "run1"}
		},
	} {
		idx, v := good, vol
		mod(&idx, &v)
		if knownTree(idx, "k", v) {
			t.Errorf("%s: an index entry that does not describe the volume counts as known", name)
		}
	}
}

func TestCompleteMarker(t *testing.T) {
	res := &pyFetchResult{}
	if !completeMarker(treeIndex[pyFetchResult]{Key: "k", Result: res}, true, "k") {
		t.Error("a marker of the key with a result is not complete")
	}
	for name, c := range map[string]struct {
		m  treeIndex[pyFetchResult]
		ok bool
	}{
		"no marker":           {treeIndex[pyFetchResult]{Key: "k", Result: res}, false},
		"a marker of another": {treeIndex[pyFetchResult]{Key: "x", Result: res}, true},
		"no result":           {treeIndex[pyFetchResult]{Key: "k"}, true},
	} {
		if completeMarker(c.m, c.ok, "k") {
			t.Errorf("%s: counted as complete", name)
		}
	}
}

func TestAbandonedTree(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	alive := func(owner string) bool { return owner == "host/1" }
	vol := func(owner string, age time.Duration) volume.Volume {
		return volume.Volume{CreatedAt: now.Add(-age).Format(time.RFC3339), Labels: map[string]string{LabelOwner: owner}}
	}
	for _, c := range []struct {
		name string
		v    volume.Volume
		want bool
	}{
		{"its filler lives, a fill under way", vol("host/1", time.Minute), false},
		{"its filler lives, just under the age", vol("host/1", staleTreeAge-time.Second), false},
		{"its filler lives, older than the age", vol("host/1", staleTreeAge+time.Second), true},
		{"its filler is gone", vol("host/2", time.Second), true},
		{"no owner label", vol("", time.Second), true},
		{"an unreadable creation time, filler alive", volume.Volume{CreatedAt: "yesterday", Labels: map[string]string{LabelOwner: "host/1"}}, false},
	} {
		got, why := abandonedTree(c.v, now, alive)
		if got != c.want || why == "" {
			t.Errorf("%s: abandoned %v (%q), want %v with a reason", c.name, got, why, c.want)
		}
	}
	// The real owner check: this process is alive, whatever the age says
	// about a fresh volume.
	if got, _ := abandonedTree(vol(ownerLabel(), time.Second), now, ownerAlive); got {
		t.Error("a fresh incomplete tree whose filler is this process is abandoned")
	}
}

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// Package atomicfile writes a file so that a reader never sees it partly
// written: the data goes to a temporary file in the same directory, which
// is then renamed over the path.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path atomically. The directory must exist.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

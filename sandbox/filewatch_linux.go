//go:build linux

package sandbox

import (
	"io/fs"
	"syscall"
)

// stampOf reads a file's stamp, its change time and inode included.
func stampOf(info fs.FileInfo) fileStamp {
	st := fileStamp{size: info.Size(), mtime: info.ModTime().UnixNano(), mode: info.Mode()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.ctime = sys.Ctim.Nano()
		st.ino = sys.Ino
	}
	return st
}

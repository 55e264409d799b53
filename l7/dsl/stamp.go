package dsl

import (
	"os"
	"syscall"
	"time"
)

// A reload reads every file of the directory; with thousands of services
// that is most of its cost (four system calls and a buffer per file, on
// every change of any one). A file whose identity (device, inode, size,
// modification and change times) is what it was when it was last read is
// not read again, provided it had settled by then: the kernel stamps
// times at a coarse tick, so a file rewritten twice within one tick, same
// size, keeps its stamp. As git does with its index ("racy git"), a file
// modified less than settleTime before it was read is read again on every
// load until it is older. Any write changes the change time (which no
// tool can set back) and a file renamed into place has a new inode.

// settleTime is how old a file's modification must be, when it is read,
// for its stamp to vouch for its content afterwards.
const settleTime = time.Second

// fileStamp identifies a file's content without reading it.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
	ok           bool
}

// stampOf stats path (following symlinks, as a mounted ConfigMap's files
// are) and returns its stamp; a failed stat gives a stamp that matches
// nothing.
func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}
	}
	return fileStamp{dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ok: true}
}

// settledAs reports whether the file read into fs is still at path
// unchanged: it had settled when it was read (the read time is the
// machine's wall clock, the one the kernel stamps files with) and its
// stamp is the same now.
func (fs fileState) settledAs(path string) bool {
	if !fs.stamp.ok || fs.readAt.Sub(time.Unix(0, fs.stamp.mtime)) < settleTime {
		return false
	}
	return stampOf(path) == fs.stamp
}

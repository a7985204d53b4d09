//go:build linux

package fetch

import (
	"os"
	"syscall"
	"unsafe"
)

// The inode flag ioctls (linux/fs.h): _IOR('f', 1, long) and
// _IOW('f', 2, long).
const (
	fsIocGetflags = 2<<30 | uintptr(unsafe.Sizeof(uintptr(0)))<<16 | 'f'<<8 | 1
	fsIocSetflags = 1<<30 | uintptr(unsafe.Sizeof(uintptr(0)))<<16 | 'f'<<8 | 2
	fsImmutableFl = 0x10
)

// setImmutable sets or clears a directory's immutable flag, which binds
// root as well: nothing can be created in, removed from or renamed within
// an immutable directory. It fails where the file system or the process's
// capabilities do not allow it.
func setImmutable(dir string, on bool) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	var flags int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocGetflags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return e
	}
	if on {
		flags |= fsImmutableFl
	} else {
		flags &^= fsImmutableFl
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocSetflags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return e
	}
	return nil
}

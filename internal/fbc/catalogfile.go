package fbc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// OpenDir opens the catalog directory dir for reading by the catalog
// readers (Load, ScanDir, WalkBlobs, the serve cache's digest): through an
// os.Root, so a symbolic link that leads out of dir fails instead of being
// followed, and with files opened non-blocking, so a named pipe cannot
// stall the open (OpenFile then refuses it). Close the Closer when done.
func OpenDir(dir string) (fs.FS, io.Closer, error) {
	root, err := openCatalogRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return rootFS{root: root, fsys: root.FS()}, root, nil
}

// rootFS is an os.Root's file system whose Open does not block on a named
// pipe (O_NONBLOCK: without a writer, opening one for reading waits
// forever). O_NONBLOCK changes nothing for regular files and directories.
type rootFS struct {
	root *os.Root
	fsys fs.FS
}

func (r rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

func (r rootFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(r.fsys, name) }
func (r rootFS) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(r.fsys, name) }
func (r rootFS) ReadLink(name string) (string, error)       { return fs.ReadLink(r.fsys, name) }
func (r rootFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(r.fsys, name) }

// OpenFile opens the catalog file name of fsys, refusing what is not a
// regular file (named pipes, devices, sockets; a link is judged by its
// target) before opening it, where fsys can say, and again on the open
// file, in case it was replaced meanwhile. Every reader of catalog files
// opens them here: a pipe would hang it, a device such as /dev/zero be
// read until a size limit.
func OpenFile(fsys fs.FS, name string) (fs.File, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := regular(name, st); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := regular(name, st); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

func regular(name string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m.IsDir():
		what = "a directory"
	}
	return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%s, not a regular file: opm reads only regular files in a catalog; remove it, or list it in %s", what, IgnoreFile)}
}

// readIgnoreFile reads the .indexignore of directory dir, if any, within
// the file size limit.
func readIgnoreFile(fsys fs.FS, dir string) ([]byte, error) {
	data, err := readSmall(fsys, path.Join(dir, IgnoreFile), Limits{}.file())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// readSmall reads the regular file name of at most max bytes (OpenFile).
func readSmall(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := OpenFile(fsys, name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d bytes", max)}
	}
	return data, nil
}

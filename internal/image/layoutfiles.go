package image

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A mirror directory is carried from another machine, so it is read as
// untrusted input: only regular files are opened (a FIFO would block a
// read forever, a device or a symbolic link would read this machine's
// files), and the directories a layout holds must be directories here,
// not links to somewhere else.

// maxIndexSize bounds an index.json or a mirror report read whole (a
// catalog of thousands of images takes a few MB).
const maxIndexSize = 256 << 20

// notRegular says what path is when it is not a regular file, for an
// error naming it.
func notRegular(path string, mode fs.FileMode) error {
	what := "not a regular file"
	switch {
	case mode&fs.ModeSymlink != 0:
		what = "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode.IsDir():
		what = "a directory"
	}
	return fmt.Errorf("%s is %s; an image layout holds regular files only (was the directory changed after it was written?)", path, what)
}

// OpenRegular opens path for reading only when it is a regular file, not
// following a symbolic link and never blocking on a FIFO.
func OpenRegular(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	// The file may have been swapped between the Lstat and the open.
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		_ = f.Close()
		if err == nil {
			err = notRegular(path, st.Mode())
		}
		return nil, err
	}
	return f, nil
}

// ReadRegular reads the regular file at path whole, refusing one over
// limit bytes.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%s is over %d bytes", path, limit)
	}
	return raw, nil
}

// CheckLayoutDir refuses a layout directory whose blobs, blobs/sha256,
// index.json or oci-layout is a symbolic link or not what it should be (a
// write through a link would land outside dir, a read would read another
// file). What does not exist yet is fine.
func CheckLayoutDir(dir string) error {
	for _, c := range []struct {
		rel string
		dir bool
	}{{"blobs", true}, {filepath.Join("blobs", "sha256"), true}, {"index.json", false}, {"oci-layout", false}} {
		p := filepath.Join(dir, c.rel)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 || c.dir != st.IsDir() || !c.dir && !st.Mode().IsRegular() {
			if c.dir && st.Mode()&fs.ModeSymlink == 0 {
				return fmt.Errorf("%s is not a directory; an image layout keeps its blobs in it", p)
			}
			return notRegular(p, st.Mode())
		}
	}
	return nil
}

// removeTemps deletes the partial blobs a killed copy left in dir, of any
// age: the caller holds dir's lock, so no live copy is writing them.
func removeTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// ErrLayoutBusy is the error of a layout another run is writing.
var ErrLayoutBusy = errors.New("another opm run is writing to it (it holds the directory's lock); wait for that run to end, or give another directory")

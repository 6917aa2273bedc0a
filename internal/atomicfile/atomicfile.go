// Package atomicfile writes files so that readers see the old content or the
// new, never half of it: the data goes to a temporary file in the same
// directory, which is renamed over the target once complete.
package atomicfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what write produces, mode 0644. On any
// error the target is left as it was and the temporary file is removed.
func Write(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteFile is Write for data already in memory.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

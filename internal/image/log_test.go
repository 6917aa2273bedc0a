package image

import (
	"io"
	"io/fs"
	"log"
	"path/filepath"
)

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }

func walkAll(dir string, fn func(string)) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			fn(p)
		}
		return nil
	})
}

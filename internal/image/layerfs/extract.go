package layerfs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ExtractTo writes fsys (such as an image FS) under dir through os.Root, which
// refuses any path or link resolution leaving dir. Absolute symbolic links are
// rewritten relative to their place, so they point inside dir as they pointed
// inside the image. Only files, directories and symbolic links are written.
func ExtractTo(ctx context.Context, fsys fs.FS, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return root.MkdirAll(p, 0o755)
		case t&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			if err != nil {
				return err
			}
			if strings.HasPrefix(target, "/") {
				target = relativeTarget(p, target)
			}
			return root.Symlink(target, p)
		case t.IsRegular():
			return extractFile(root, fsys, p)
		default:
			return fmt.Errorf("extract %s: unsupported file type %s", p, t)
		}
	})
}

func extractFile(root *os.Root, fsys fs.FS, p string) error {
	src, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// relativeTarget turns an absolute link target into one relative to the
// link's directory, e.g. usr/bin/x -> /lib/y becomes ../../lib/y.
func relativeTarget(link, target string) string {
	depth := strings.Count(path.Dir(link), "/") + 1
	if path.Dir(link) == "." {
		depth = 0
	}
	rel := strings.TrimPrefix(path.Clean(target), "/")
	if rel == "" {
		rel = "."
	}
	return strings.Repeat("../", depth) + rel
}

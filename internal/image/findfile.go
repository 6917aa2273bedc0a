package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/opmkit/opm/internal/image/layerfs"
)

// FindFile reads one file by walking the layers from the top, so only the
// layers above and including the one holding it are fetched (for an index
// image: just the database layer). It returns the data and the index of the
// layer that held it. A whiteout of the file or of a parent directory, or an
// opaque parent, ends the search with fs.ErrNotExist. Hard and symbolic links
// fall back to flattening the whole image.
func (im *Image) FindFile(ctx context.Context, name string) ([]byte, int, error) {
	return im.findFile(ctx, name, false)
}

// FindDatabase is FindFile for an index image's database: its layer and the
// file are capped at --max-database-size instead of --max-layer-size.
func (im *Image) FindDatabase(ctx context.Context, name string) ([]byte, int, error) {
	return im.findFile(ctx, name, true)
}

func (im *Image) findFile(ctx context.Context, name string, db bool) ([]byte, int, error) {
	want := strings.Trim(path.Clean("/"+name), "/")
	if want == "" {
		return nil, -1, fmt.Errorf("find %s in %s: not a file", name, im.Ref)
	}
	for i := len(im.Manifest.Layers) - 1; i >= 0; i-- {
		data, found, hidden, err := im.scanLayer(ctx, i, want, db)
		if err != nil {
			if errors.Is(err, errNeedFlatten) {
				return im.findFlattened(ctx, want, db)
			}
			return nil, -1, fmt.Errorf("find %s in %s: %w", name, im.Ref, err)
		}
		if found {
			return data, i, nil
		}
		if hidden {
			break
		}
	}
	return nil, -1, fmt.Errorf("find %s in %s: %w", name, im.Ref, fs.ErrNotExist)
}

var errNeedFlatten = errors.New("entry is a link")

func (im *Image) findFlattened(ctx context.Context, want string, db bool) ([]byte, int, error) {
	opts := im.c.opts
	if db {
		// The whole image is read: its base layers and the database.
		opts.MaxLayerSize = max(opts.MaxLayerSize, opts.MaxDatabaseSize)
		opts.MaxImageSize = opts.MaxDatabaseSize + opts.MaxImageSize
	}
	f, err := im.fs(ctx, opts)
	if err != nil {
		return nil, -1, err
	}
	defer func() { _ = f.Close() }()
	data, err := f.ReadFile(want)
	if err != nil {
		return nil, -1, fmt.Errorf("find %s in %s: %w", want, im.Ref, err)
	}
	return data, -1, nil
}

func (im *Image) scanLayer(ctx context.Context, i int, want string, db bool) (data []byte, found, hidden bool, err error) {
	limit, flag := im.c.opts.MaxLayerSize, FlagMaxLayerSize
	open := im.OpenLayer
	if db {
		limit, flag = im.c.opts.MaxDatabaseSize, FlagMaxDBSize
		open = im.OpenDatabaseLayer
	}
	lr, err := open(ctx, i)
	if err != nil {
		return nil, false, false, err
	}
	defer func() { _ = lr.Close() }()
	digest := lr.Digest()
	parents := map[string]bool{}
	for d := path.Dir(want); d != "."; d = path.Dir(d) {
		parents[d] = true
	}
	tr := tar.NewReader(lr)
	for {
		if err := ctx.Err(); err != nil {
			return nil, false, false, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, false, layerfs.Errorf(digest, "", "bad tar stream: %v", err)
		}
		comps, err := layerfs.EntryPath(digest, hdr.Name, hdr.Name)
		if err != nil {
			return nil, false, false, err
		}
		p := strings.Join(comps, "/")
		dir, base := path.Dir(p), path.Base(p)
		switch {
		case base == layerfs.WhiteoutOpaque && (parents[dir] || dir == "."):
			hidden = true
		case strings.HasPrefix(base, layerfs.WhiteoutPrefix):
			if victim := path.Join(dir, strings.TrimPrefix(base, layerfs.WhiteoutPrefix)); victim == want || parents[victim] {
				hidden = true
			}
		case p == want:
			switch hdr.Typeflag {
			case tar.TypeReg, tar.TypeGNUSparse:
			case tar.TypeLink, tar.TypeSymlink:
				return nil, false, false, errNeedFlatten
			default:
				return nil, false, true, nil // a directory or other non-file hides it
			}
			if hdr.Size > limit {
				return nil, false, false, layerfs.Errorf(digest, hdr.Name, "size %s is over the %s limit (--%s)", layerfs.HumanSize(hdr.Size), layerfs.HumanSize(limit), flag)
			}
			data = make([]byte, hdr.Size)
			if _, err := io.ReadFull(tr, data); err != nil {
				return nil, false, false, layerfs.Truncated(digest, hdr.Name, err)
			}
			found = true
		case parents[p] && hdr.Typeflag != tar.TypeDir:
			hidden = true // a parent replaced by a file or link
		}
	}
	if found {
		// An opaque parent in the same layer hides only lower layers.
		return data, true, false, lr.Verify()
	}
	return nil, false, hidden, lr.Verify()
}

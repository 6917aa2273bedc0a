// Package fbcsource reads file-based catalogs from where they live — a
// file system (a directory) or the directory an FBC index image's configs
// label names — whole or part by part, with upstream's migrations applied
// as read; and names the image of a bundle rendered from a directory with
// upstream's --alpha-image-ref-template.
package fbcsource

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
)

// Load reads the catalog under fsys and migrates it to level (migrations
// apply to a catalog as read, whatever its source). With each set, the
// catalog is handed to each part by part (fbc.LoadEach: memory follows the
// largest part) and Load returns an empty catalog.
func Load(fsys fs.FS, level fbc.MigrateLevel, each func(*fbc.Catalog) error) (*fbc.Catalog, error) {
	return LoadWith(fsys, level, fbc.LoadOptions{}, each)
}

// Dir is LoadWith on the directory dir, read through an os.Root: a link
// that leads out of it is a finding, not followed.
func Dir(dir string, level fbc.MigrateLevel, opts fbc.LoadOptions, each func(*fbc.Catalog) error) (*fbc.Catalog, error) {
	fsys, root, err := fbc.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }() // read-only
	return LoadWith(fsys, level, opts, each)
}

// DirEach reads the catalog in directory dir a package at a time, each
// package whole however its blobs are spread over files, and hands each
// to each (migrated to level) in the order fbc.Write prints packages:
// memory holds a few packages, not the catalog (fbc.ScanDir). The error
// is what Dir returns for the same directory; a catalog with load errors
// is handed over no further than its first, so a caller that writes as it
// goes must keep what it wrote until DirEach returns nil.
func DirEach(ctx context.Context, dir string, level fbc.MigrateLevel, opts fbc.LoadOptions, each func(*fbc.Catalog) error) error {
	if opts.Package != "" {
		// Dir decodes that one package and nothing else: one call.
		c, err := Dir(dir, level, opts, nil)
		if err != nil {
			return err
		}
		return each(c)
	}
	s, err := fbc.ScanDir(dir, opts)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }() // only a temporary file to release
	if err := s.Err(); err != nil {
		// Problems found by the scan (syntax, limits) fail the catalog
		// before any package is handed over; reading the packages adds
		// those of decoding them, in Load's order.
		if !s.Cut() {
			_ = s.EachInWriteOrder(ctx, func(string, *fbc.Catalog) error { return nil })
		}
		return s.Err()
	}
	failed := false
	err = s.EachInWriteOrder(ctx, func(_ string, c *fbc.Catalog) error {
		if failed || s.Err() != nil {
			failed = true // go on reading: every problem is reported
			return nil
		}
		if err := fbc.Migrate(c, level); err != nil {
			return err
		}
		return each(c)
	})
	if err != nil {
		return err
	}
	return s.Err()
}

// LoadWith is Load with load options (the limits on what is read).
func LoadWith(fsys fs.FS, level fbc.MigrateLevel, opts fbc.LoadOptions, each func(*fbc.Catalog) error) (*fbc.Catalog, error) {
	if each != nil {
		return &fbc.Catalog{}, fbc.LoadEachWith(fsys, opts, func(c *fbc.Catalog) error {
			if err := fbc.Migrate(c, level); err != nil {
				return err
			}
			return each(c)
		})
	}
	c, err := fbc.LoadWith(fsys, opts)
	if err != nil {
		return nil, err
	}
	return c, fbc.Migrate(c, level)
}

// Image is Load on the directory an FBC index image's configs label names,
// in the flattened image.
func Image(ctx context.Context, im *image.Image, level fbc.MigrateLevel, each func(*fbc.Catalog) error) (*fbc.Catalog, error) {
	dir := strings.Trim(path.Clean("/"+im.Labels()[indeximage.ConfigsLabel]), "/")
	if dir == "" {
		return nil, fmt.Errorf("%s: label %s names no directory", im.Ref, indeximage.ConfigsLabel)
	}
	fsys, err := im.FS(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fsys.Close() }()
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	if st, err := fs.Stat(fsys, dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: label %s=/%s, but the image has no such directory", im.Ref, indeximage.ConfigsLabel, dir)
	}
	c, err := Load(sub, level, each)
	if err != nil {
		return nil, fmt.Errorf("catalog /%s of %s: %w", dir, im.Ref, err)
	}
	return c, nil
}

// ImageRef executes an image reference template (upstream's
// --alpha-image-ref-template) for a rendered bundle blob: the template sees
// its {{.Package}}, {{.Name}} and {{.Version}} (of its olm.package
// property).
func ImageRef(tmpl *template.Template, b *fbc.Bundle) (string, error) {
	data := struct{ Package, Name, Version string }{Package: b.Package, Name: b.Name}
	for _, p := range b.Properties {
		var v fbc.PackageValue
		if p.Type == fbc.PropertyPackage && json.Unmarshal(p.Value, &v) == nil {
			data.Version = v.Version
			break
		}
	}
	var ref strings.Builder
	if err := tmpl.Execute(&ref, data); err != nil {
		return "", fmt.Errorf("image reference template: %w", err)
	}
	return ref.String(), nil
}

// IsBundleDir reports whether dir looks like a bundle (manifests/ or
// metadata/annotations.yaml) rather than a file-based catalog.
func IsBundleDir(dir string) bool {
	if st, err := os.Stat(filepath.Join(dir, "metadata", "annotations.yaml")); err == nil && !st.IsDir() {
		return true
	}
	st, err := os.Stat(filepath.Join(dir, "manifests"))
	return err == nil && st.IsDir()
}

// Package catalogsource is how commands open a catalog named on the command
// line (render, migrate): a sqlite index database file, a file-based catalog
// directory, a bundle directory, or an image holding any of those (a sqlite
// index image, an FBC index image, a bundle image).
package catalogsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/indeximage"
)

// Kind says what a source turned out to be.
type Kind string

// Kinds of source.
const (
	Database      Kind = "sqlite database"
	CatalogDir    Kind = "file-based catalog directory"
	BundleDir     Kind = "bundle directory"
	DatabaseImage Kind = "sqlite index image"
	CatalogImage  Kind = "file-based catalog image"
	BundleImage   Kind = "bundle image"
)

// Catalog is a loaded source.
type Catalog struct {
	*fbc.Catalog
	Kind Kind
	// Warnings say what rendering filled in (see fbc.FromIndex).
	Warnings []string
}

// Opener opens sources through one image client, made on first use.
type Opener struct {
	// Limits bound what is read from file-based catalogs.
	Limits  fbc.Limits
	f       *factory.Factory
	opts    image.Options
	render  fbc.RenderOptions
	bundles *bundlesource.Opener
}

// NewOpener opens sources with image options opts, rendering databases and
// bundles with render.
func NewOpener(f *factory.Factory, opts image.Options, render fbc.RenderOptions) *Opener {
	return &Opener{f: f, opts: opts, render: render, bundles: bundlesource.NewOpener(opts, f.ImageClient)}
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

// Open loads arg, whatever kind of source it is. accept, when not empty,
// lists the kinds the caller can use; any other is refused with a message
// naming what was found.
func (o *Opener) Open(ctx context.Context, arg string, accept ...Kind) (*Catalog, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		if IsBundleDir(arg) {
			if err := check(arg, BundleDir, accept); err != nil {
				return nil, err
			}
			return o.bundleDir(ctx, arg)
		}
		if err := check(arg, CatalogDir, accept); err != nil {
			return nil, err
		}
		c, err := fbc.LoadDirWith(arg, fbc.LoadOptions{Limits: o.Limits})
		if err != nil {
			return nil, fmt.Errorf("load catalog %s: %w\n(`opm validate %s` lists every problem)", arg, err, arg)
		}
		return &Catalog{Catalog: c, Kind: CatalogDir}, nil
	case err == nil:
		if err := check(arg, Database, accept); err != nil {
			return nil, err
		}
		c, warns, err := fbc.RenderIndexFile(ctx, arg, o.render)
		if err != nil {
			return nil, err
		}
		return &Catalog{Catalog: c, Kind: Database, Warnings: warns}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case !image.LooksLikeReference(arg):
		return nil, fmt.Errorf("%s: no such file or directory, and not an image reference", arg)
	}
	return o.openImage(ctx, arg, accept)
}

func check(arg string, k Kind, accept []Kind) error {
	if len(accept) == 0 {
		return nil
	}
	var names []string
	for _, a := range accept {
		if a == k {
			return nil
		}
		names = append(names, string(a))
	}
	return fmt.Errorf("%s is a %s; this command takes a %s", arg, k, strings.Join(names, " or "))
}

func (o *Opener) bundleDir(ctx context.Context, arg string) (*Catalog, error) {
	ob, err := o.bundles.Open(ctx, arg)
	if err != nil {
		return nil, fmt.Errorf("load bundle %s: %w", arg, err)
	}
	return renderBundle(ob.Bundle, "", BundleDir, o.render)
}

func renderBundle(b *bundle.Bundle, ref string, k Kind, opts fbc.RenderOptions) (*Catalog, error) {
	blob, err := fbc.RenderBundle(b, ref, opts)
	if err != nil {
		return nil, err
	}
	return &Catalog{Catalog: &fbc.Catalog{Bundles: []fbc.Bundle{*blob}}, Kind: k}, nil
}

func (o *Opener) openImage(ctx context.Context, arg string, accept []Kind) (*Catalog, error) {
	ref, err := image.ParseReference(arg)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid image reference: %w", arg, err)
	}
	if err := o.opts.Validate(); err != nil {
		return nil, err
	}
	client, err := o.f.ImageClient(o.opts)
	if err != nil {
		return nil, err
	}
	im, err := client.Open(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer func() { _ = im.Close() }()
	labels := im.Labels()
	switch {
	case labels[indeximage.DatabaseLabel] != "":
		if err := check(arg, DatabaseImage, accept); err != nil {
			return nil, err
		}
		// Only the database layer is fetched, as index export does.
		b, err := indeximage.New(client, o.opts.TempDir)
		if err != nil {
			return nil, err
		}
		defer func() { _ = b.Close() }()
		if err := b.FetchDatabase(ctx, arg); err != nil {
			return nil, err
		}
		c, warns, err := fbc.RenderIndexFile(ctx, b.DatabasePath(), o.render)
		if err != nil {
			return nil, fmt.Errorf("database of %s: %w", arg, err)
		}
		return &Catalog{Catalog: c, Kind: DatabaseImage, Warnings: warns}, nil
	case labels[indeximage.ConfigsLabel] != "":
		if err := check(arg, CatalogImage, accept); err != nil {
			return nil, err
		}
		c, err := ImageCatalog(ctx, im)
		if err != nil {
			return nil, err
		}
		return &Catalog{Catalog: c, Kind: CatalogImage}, nil
	case labels[bundle.AnnotationMediaType] != "":
		if err := check(arg, BundleImage, accept); err != nil {
			return nil, err
		}
		fsys, err := im.FS(ctx)
		if err != nil {
			return nil, fmt.Errorf("read bundle image %s: %w", arg, err)
		}
		defer func() { _ = fsys.Close() }()
		b, err := bundle.Load(fsys)
		if err != nil {
			return nil, fmt.Errorf("load bundle %s: %w", arg, err)
		}
		b.Labels = labels
		return renderBundle(b, arg, BundleImage, o.render)
	}
	return nil, fmt.Errorf("%s is neither an index image (no %s or %s label) nor a bundle image (no %s label)",
		arg, indeximage.DatabaseLabel, indeximage.ConfigsLabel, bundle.AnnotationMediaType)
}

// ImageCatalog loads the file-based catalog of an FBC index image: the
// directory its configs label names, from the flattened image.
func ImageCatalog(ctx context.Context, im *image.Image) (*fbc.Catalog, error) {
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
	c, err := fbc.Load(sub)
	if err != nil {
		return nil, fmt.Errorf("catalog /%s of %s: %w", dir, im.Ref, err)
	}
	return c, nil
}

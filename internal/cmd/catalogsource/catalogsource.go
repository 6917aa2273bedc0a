// Package catalogsource is how commands open a catalog named on the command
// line (render, migrate): a sqlite index database file, a file-based catalog
// directory, a bundle directory, or an image holding any of those (a sqlite
// index image, an FBC index image, a bundle image).
package catalogsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/template"

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

// Catalogs are the kinds of source that are catalogs rather than bundles:
// what alpha list, render-graph and diff read, as upstream's list did.
var Catalogs = []Kind{Database, DatabaseImage, CatalogDir, CatalogImage}

// Catalog is a loaded source.
type Catalog struct {
	*fbc.Catalog
	Kind Kind
	// Warnings say what rendering filled in (see fbc.FromIndex).
	Warnings []string
}

// Opener opens sources through one image client, made on first use.
type Opener struct {
	// ImageRefTemplate, when set, names the image of a bundle rendered from
	// a directory (which has none): executed with the bundle's Package, Name
	// and Version, as upstream's --alpha-image-ref-template.
	ImageRefTemplate *template.Template

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
		c, err := fbc.LoadDir(arg)
		if err != nil {
			return nil, fmt.Errorf("load catalog %s: %w\n(`opm validate %s` lists every problem)", arg, err, arg)
		}
		// Migrations apply to a catalog as read, whatever its source.
		if err := fbc.Migrate(c, o.render.Migrate); err != nil {
			return nil, fmt.Errorf("migrate catalog %s: %w", arg, err)
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

// OpenEach is Open for a reader that takes a catalog part by part (fn):
// a file-based catalog, in a directory or an image, is read one top-level
// directory at a time (fbc.LoadEach), so that memory follows the largest
// package rather than the catalog; any other source is handed over whole.
// The returned Catalog holds the kind and warnings, not the blobs.
func (o *Opener) OpenEach(ctx context.Context, arg string, fn func(*fbc.Catalog) error, accept ...Kind) (*Catalog, error) {
	each := func(fsys fs.FS, where string) error {
		err := fbc.LoadEach(fsys, func(c *fbc.Catalog) error {
			if err := fbc.Migrate(c, o.render.Migrate); err != nil {
				return err
			}
			return fn(c)
		})
		if err != nil {
			return fmt.Errorf("load catalog %s: %w", where, err)
		}
		return nil
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() && !IsBundleDir(arg) {
		if err := check(arg, CatalogDir, accept); err != nil {
			return nil, err
		}
		if err := each(os.DirFS(arg), arg); err != nil {
			return nil, fmt.Errorf("%w\n(`opm validate %s` lists every problem)", err, arg)
		}
		return &Catalog{Catalog: &fbc.Catalog{}, Kind: CatalogDir}, nil
	} else if err == nil || !errors.Is(err, fs.ErrNotExist) || !image.LooksLikeReference(arg) {
		c, err := o.Open(ctx, arg, accept...)
		if err != nil {
			return nil, err
		}
		return &Catalog{Catalog: &fbc.Catalog{}, Kind: c.Kind, Warnings: c.Warnings}, fn(c.Catalog)
	}
	// An image: an FBC image is read part by part from its flattened
	// filesystem; others are opened as Open does.
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
	if im.Labels()[indeximage.ConfigsLabel] == "" || im.Labels()[indeximage.DatabaseLabel] != "" {
		_ = im.Close()
		c, err := o.Open(ctx, arg, accept...)
		if err != nil {
			return nil, err
		}
		return &Catalog{Catalog: &fbc.Catalog{}, Kind: c.Kind, Warnings: c.Warnings}, fn(c.Catalog)
	}
	defer func() { _ = im.Close() }()
	if err := check(arg, CatalogImage, accept); err != nil {
		return nil, err
	}
	sub, done, err := imageCatalogFS(ctx, im)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := each(sub, im.Ref.String()); err != nil {
		return nil, err
	}
	return &Catalog{Catalog: &fbc.Catalog{}, Kind: CatalogImage}, nil
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
	c, err := renderBundle(ob.Bundle, "", BundleDir, o.render)
	if err != nil || o.ImageRefTemplate == nil {
		return c, err
	}
	// The template sees the rendered bundle's package, name and version;
	// the bundle is then rendered again as the image it names.
	b := &c.Bundles[0]
	data := struct{ Package, Name, Version string }{Package: b.Package, Name: b.Name}
	for _, p := range b.Properties {
		var v fbc.PackageValue
		if p.Type == fbc.PropertyPackage && json.Unmarshal(p.Value, &v) == nil {
			data.Version = v.Version
			break
		}
	}
	var ref strings.Builder
	if err := o.ImageRefTemplate.Execute(&ref, data); err != nil {
		return nil, fmt.Errorf("bundle %s: image reference template: %w", arg, err)
	}
	return renderBundle(ob.Bundle, ref.String(), BundleDir, o.render)
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
		if err := fbc.Migrate(c, o.render.Migrate); err != nil {
			return nil, fmt.Errorf("migrate catalog of %s: %w", arg, err)
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
	sub, done, err := imageCatalogFS(ctx, im)
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := fbc.Load(sub)
	if err != nil {
		return nil, fmt.Errorf("catalog %s of %s: %w", "/"+configsDir(im), im.Ref, err)
	}
	return c, nil
}

func configsDir(im *image.Image) string {
	return strings.Trim(path.Clean("/"+im.Labels()[indeximage.ConfigsLabel]), "/")
}

// imageCatalogFS is the directory an FBC image's configs label names, in
// its flattened filesystem; done releases the filesystem.
func imageCatalogFS(ctx context.Context, im *image.Image) (fs.FS, func(), error) {
	dir := configsDir(im)
	if dir == "" {
		return nil, nil, fmt.Errorf("%s: label %s names no directory", im.Ref, indeximage.ConfigsLabel)
	}
	fsys, err := im.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	done := func() { _ = fsys.Close() }
	if st, err := fs.Stat(fsys, dir); err != nil || !st.IsDir() {
		done()
		return nil, nil, fmt.Errorf("%s: label %s=/%s, but the image has no such directory", im.Ref, indeximage.ConfigsLabel, dir)
	}
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		done()
		return nil, nil, err
	}
	return sub, done, nil
}

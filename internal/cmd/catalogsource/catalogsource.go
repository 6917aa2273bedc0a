// Package catalogsource is how commands (render, migrate, alpha list and
// render-graph, diff) open a source: a sqlite database file, a file-based catalog
// directory, a bundle directory, or an image holding any of those (a sqlite
// index image, an FBC index image, a bundle image).
package catalogsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/template"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbcsource"
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
	Labels   map[string]string // of an index image: what catalogd reads first
}

// Opener opens sources through one image client, made on first use.
type Opener struct {
	// ImageRefTemplate, when set, names the image of a bundle rendered from
	// a directory (which has none): executed with the bundle's Package, Name
	// and Version, as upstream's --alpha-image-ref-template.
	ImageRefTemplate *template.Template
	Limits           fbc.Limits // on what is read from catalog directories
	// Package, when set, loads only that package's blobs from a catalog
	// directory (a reader that looks at one package of a large catalog).
	Package       string
	PreferCatalog bool // open an image holding both by its FBC, as catalogd does

	f       *factory.Factory
	opts    image.Options
	render  fbc.RenderOptions
	bundles *bundlesource.Opener
	// each, when set, takes file-based catalogs in images part by part
	// (OpenEach), eachDir catalog directories and eachDB sqlite ones a
	// package at a time (Each, OpenEach).
	each    func(*fbc.Catalog) error
	eachDir func(*fbc.Catalog) error
	eachDB  func(Kind, *fbc.Catalog, []string) error
}

// NewOpener opens sources with image options opts, rendering databases and
// bundles with render.
func NewOpener(f *factory.Factory, opts image.Options, render fbc.RenderOptions) *Opener {
	return &Opener{f: f, opts: opts, render: render, bundles: bundlesource.NewOpener(opts, f.ImageClient)}
}

// Open loads arg, whatever kind of source it is. accept, when not empty,
// lists the kinds the caller can use; any other is refused with a message
// naming what was found.
func (o *Opener) Open(ctx context.Context, arg string, accept ...Kind) (*Catalog, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		if fbcsource.IsBundleDir(arg) {
			if err := check(arg, BundleDir, accept); err != nil {
				return nil, err
			}
			return o.bundleDir(ctx, arg)
		}
		if err := check(arg, CatalogDir, accept); err != nil {
			return nil, err
		}
		load := fbc.LoadOptions{Limits: o.Limits, Package: o.Package}
		if o.eachDir != nil {
			if err := fbcsource.DirEach(ctx, arg, o.render.Migrate, load, o.eachDir); err != nil {
				return nil, fmt.Errorf("load catalog %s: %w\n(`opm validate %s` lists every problem)", arg, err, arg)
			}
			return &Catalog{Catalog: &fbc.Catalog{}, Kind: CatalogDir}, nil
		}
		c, err := fbcsource.Dir(arg, o.render.Migrate, load, o.each)
		if err != nil {
			return nil, fmt.Errorf("load catalog %s: %w\n(`opm validate %s` lists every problem)", arg, err, arg)
		}
		return &Catalog{Catalog: c, Kind: CatalogDir}, nil
	case err == nil:
		if err := check(arg, Database, accept); err != nil {
			return nil, err
		}
		return o.renderDB(ctx, arg, Database)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case !image.LooksLikeReference(arg):
		return nil, fmt.Errorf("%s: no such file or directory, and not an image reference", arg)
	}
	return o.openImage(ctx, arg, accept)
}

// OpenEach is Open for a reader that takes a catalog part by part (fn):
// a catalog directory and a sqlite database, as a file or in an image, are
// read one package at a time, a file-based catalog in an image one
// top-level directory at a time (fbc.LoadEach), so that memory follows the
// largest package rather than the catalog; any other source is handed
// over whole.
// The returned Catalog holds the kind and warnings, not the blobs.
func (o *Opener) OpenEach(ctx context.Context, arg string, fn func(*fbc.Catalog) error, accept ...Kind) (*Catalog, error) {
	each := *o
	each.each, each.eachDir = fn, fn
	var warns []string
	each.eachDB = func(_ Kind, c *fbc.Catalog, w []string) error { warns = append(warns, w...); return fn(c) }
	c, err := each.Open(ctx, arg, accept...)
	if err != nil {
		return nil, err
	}
	c.Warnings = append(c.Warnings, warns...)
	if c.Kind != CatalogDir && c.Kind != CatalogImage && c.Kind != Database && c.Kind != DatabaseImage {
		if err := fn(c.Catalog); err != nil {
			return nil, err
		}
	}
	return &Catalog{Catalog: &fbc.Catalog{}, Kind: c.Kind, Warnings: c.Warnings, Labels: c.Labels}, nil
}

// Each is Open handing the catalog to f a package at a time, in the order
// fbc.Write prints packages, for a sqlite database, an index image or a
// catalog directory (memory then holds a few packages, not the catalog);
// any other source whole, in one call. A catalog directory with load
// errors may have handed over packages before Each returns the error.
func (o *Opener) Each(ctx context.Context, arg string, accept []Kind, f func(Kind, *fbc.Catalog, []string) error) (Kind, error) {
	each := *o
	each.eachDB = f
	each.eachDir = func(c *fbc.Catalog) error { return f(CatalogDir, c, nil) }
	c, err := each.Open(ctx, arg, accept...)
	if err == nil && c.Kind != Database && c.Kind != DatabaseImage && c.Kind != CatalogDir {
		err = f(c.Kind, c.Catalog, c.Warnings)
	}
	if err != nil {
		return "", err
	}
	return c.Kind, nil
}

// renderDB renders the database at path: whole, or into eachDB.
func (o *Opener) renderDB(ctx context.Context, path string, k Kind) (*Catalog, error) {
	if o.eachDB != nil {
		err := fbc.EachIndexFile(ctx, path, o.render, func(c *fbc.Catalog, w []string) error { return o.eachDB(k, c, w) })
		return &Catalog{Catalog: &fbc.Catalog{}, Kind: k}, err
	}
	c, warns, err := fbc.RenderIndexFile(ctx, path, o.render)
	return &Catalog{Catalog: c, Kind: k, Warnings: warns}, err
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
	ref, err := fbcsource.ImageRef(o.ImageRefTemplate, &c.Bundles[0])
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", arg, err)
	}
	// Rendered again as the image the template names.
	return renderBundle(ob.Bundle, ref, BundleDir, o.render)
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
	case labels[indeximage.DatabaseLabel] != "" && (!o.PreferCatalog || labels[indeximage.ConfigsLabel] == ""):
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
		c, err := o.renderDB(ctx, b.DatabasePath(), DatabaseImage)
		if err != nil {
			return nil, fmt.Errorf("database of %s: %w", arg, err)
		}
		c.Labels = labels
		return c, nil
	case labels[indeximage.ConfigsLabel] != "":
		if err := check(arg, CatalogImage, accept); err != nil {
			return nil, err
		}
		c, err := fbcsource.Image(ctx, im, o.render.Migrate, o.each)
		if err != nil {
			return nil, err
		}
		return &Catalog{Catalog: c, Kind: CatalogImage, Labels: labels}, nil
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
